/**
 * The value parsers of the settings (see `settings.ts`): each validates one raw value, from a flag,
 * the environment, the config file or a library option, and throws `BadValue` with a plain message;
 * the caller prefixes the setting's name as the user spelled it.
 */
import { RATE_FORMS, rateText } from '../links/create-limit.ts';
import { badHost } from '../links/domains.ts';

/** A value parser, carrying the values it accepts as `--help` shows them. */
export interface Parser<T> {
  (raw: unknown): T;
  readonly accepts: string;
}

function parser<T>(accepts: string, parse: (raw: unknown) => T): Parser<T> {
  return Object.assign(parse, { accepts });
}

export class BadValue extends Error {}

function text(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw new BadValue('must be a string');
}

export function integer(min: number, max: number): Parser<number> {
  return parser(`an integer from ${min} to ${max}`, (raw) => {
    const s = text(raw).trim();
    if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
      throw new BadValue(`must be an integer from ${min} to ${max}`);
    }
    return Number(s);
  });
}

export const boolean = parser('true or false (also 1/0, yes/no, on/off)', (raw) => {
  const s = text(raw).trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  throw new BadValue('must be true or false');
});

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return parser(`one of ${values.join(', ')}`, (raw) => {
    const s = text(raw).trim().toLowerCase();
    if (!(values as readonly string[]).includes(s)) throw new BadValue(`must be one of ${values.join(', ')}`);
    return s as T;
  });
}

/** Comma-separated in env and flags; a JSON array or a comma-separated string in the file. */
export const list = parser('a comma-separated list', (raw): string[] => {
  const items = Array.isArray(raw) ? raw.map(text) : text(raw).split(',');
  return items.map((s) => s.trim()).filter((s) => s.length > 0);
});

/** Host names (`go.example`, `s.example:8443`), lower-cased: the extra short domains (docs/api.md, domains). */
export const hosts = parser('a comma-separated list of host names, each with an optional :port', (raw): string[] =>
  list(raw).map((item) => {
    const host = item.toLowerCase();
    const bad = badHost(host);
    if (bad !== undefined) throw new BadValue(bad);
    return host;
  }),
);

export const nonEmpty = parser('any non-empty text', (raw) => {
  const s = text(raw).trim();
  if (s === '') throw new BadValue('must not be empty');
  return s;
});

/** A create rate limit (`60/min`), kept in one spelling; empty = off (links/create-limit.ts). */
export const rate = parser(RATE_FORMS, (raw) => {
  try {
    return rateText(text(raw));
  } catch (err) {
    if (err instanceof RangeError) throw new BadValue(err.message);
    throw err;
  }
});

/** Any text, or empty (a setting that is off when empty, such as a file path). */
export const optionalText = parser('any text, or empty', (raw) => text(raw).trim());

/**
 * An HTTP header name (an RFC 9110 token), or empty; lower case, as node:http keys
 * `req.headers`, so a request's header is one property read.
 */
export const headerName = parser("an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), or empty", (raw) => {
  const s = text(raw).trim();
  if (s !== '' && !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s))
    throw new BadValue("must be an HTTP header name such as CF-IPCountry (letters, digits and !#$%&'*+-.^_`|~), or empty");
  return s.toLowerCase();
});

/**
 * A gate token must arrive unchanged in an `Authorization` header: the HTTP parser strips spaces at
 * the ends of a header value and reads bytes as latin1, so a token with spaces, control characters
 * or non-ASCII could never match, and the gate would refuse everyone.
 */
export const bearerToken = parser('printable ASCII without spaces, or empty', (raw) => {
  const s = text(raw);
  if (s !== '' && !/^[\x21-\x7e]+$/.test(s)) {
    throw new BadValue('must be printable ASCII without spaces (RFC 6750 suggests letters, digits and - . _ ~ + / =)');
  }
  return s;
});

/** True when `part` percent-decodes (every `%` starts an escape of UTF-8). */
function decodes(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

/**
 * A `postgres://` (or `postgresql://`) URL, or empty (the log store). Never echoed: it may hold a
 * password. The driver percent-decodes the user, the password and the host (the text between `@`
 * and the first `/` or `?`, as it cuts it) when it connects, and a `%` that starts no escape there
 * would end start-up with an uncaught `URIError`; the database name is decoded for the logs.
 */
export const databaseUrl = parser('a postgres:// or postgresql:// URL, or empty', (raw) => {
  const s = text(raw).trim();
  if (s === '') return s;
  let url: URL | undefined;
  try {
    url = new URL(s);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    throw new BadValue('must be a postgres:// or postgresql:// URL (or empty for the log store)');
  }
  const authority = s.slice(s.indexOf('://') + 3).split(/[?/]/)[0]!;
  if (![url.username, url.password, authority.slice(authority.indexOf('@') + 1), url.pathname].every(decodes)) {
    throw new BadValue('must be a postgres:// or postgresql:// URL whose user, password, host and database name decode: write a % in them as %25');
  }
  return s;
});

/** An absolute http(s) URL without userinfo, query or fragment; returned without a trailing slash. */
export const publicUrl = parser('an http:// or https:// URL, without a query or fragment', (raw) => parseBaseUrl(raw));

export function parseBaseUrl(raw: unknown): string {
  const s = text(raw).trim();
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new BadValue('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue('must use http:// or https://');
  if (url.username || url.password) throw new BadValue('must not contain a user name or password');
  if (url.search || url.hash || s.includes('?') || s.includes('#')) {
    throw new BadValue('must not have a query or fragment');
  }
  if (url.pathname.split('/').some((seg) => seg === '.' || seg === '..' || /%2f|%00/i.test(seg))) {
    throw new BadValue('must have a plain path');
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

export const origins = parser('comma-separated http(s) origins', (raw): string[] =>
  list(raw).map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new BadValue(`"${item}" is not an origin like https://app.example`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`"${item}" is not an http(s) origin`);
    return url.origin;
  }),
);
