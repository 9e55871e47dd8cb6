/**
 * Input rules of the shortening API (docs/api.md) as pure functions. Each returns the clean value or
 * throws `HttpError(400, reason)`; the reason is written for the person who sent the request. The
 * rules a create and an import share also come as `check…` functions that return a `Refusal`
 * instead of throwing: an import checks millions of rows, and an invalid one is an ordinary outcome
 * (a thrown error costs a stack trace each, which was most of the time of a file of bad rows).
 */
import { HttpError } from '../errors.ts';
import { normalizeTarget, stripBase } from '../paths.ts';
import { MAX_COUNT, MAX_DIGITS, MAX_RETENTION_DAYS, MAX_VISITS } from '../store/record-limits.ts';
import { isReserved } from './codes.ts';

export { MAX_COUNT, MAX_RETENTION_DAYS, MAX_VISITS };

/** Why a value was refused, as a plain value: no stack, nothing thrown. */
export class Refusal {
  constructor(readonly detail: string) {}
}

/** The value a `check…` rule accepted; a refusal becomes the `400` it stands for. */
export function accepted<T>(checked: T | Refusal): T {
  if (checked instanceof Refusal) throw new HttpError(400, checked.detail);
  return checked;
}

/**
 * A NUL, or a UTF-16 surrogate without its pair (the `u` flag matches a surrogate only when it is
 * alone). PostgreSQL's `text` cannot hold a NUL, and no UTF-8 text can hold a lone surrogate: the
 * driver and the log's writer would each turn it into U+FFFD, so what was stored or searched for
 * would quietly differ from what was sent.
 */
const UNSTORABLE = /[\0\uD800-\uDFFF]/u;

/**
 * Why `text` cannot be taken as `field` (docs/api.md, "Text every store can hold"), or undefined
 * when it can: the one rule for the text any door hands the service, whatever the store.
 */
export function unstorableText(text: string, field: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (found === null) return undefined;
  return found[0] === '\0' ? `${field} must not contain a NUL character` : `${field} must not contain a lone UTF-16 surrogate (it is not Unicode text)`;
}

export interface UrlRules {
  maxLength: number;
  /** `https://s.example/x`: links into this space would redirect to themselves. */
  baseUrl: string;
}

/**
 * `input` parsed once, or null: `URL.parse` (Node 20.18 and later) throws nothing for a bad URL, so
 * an import of many bad rows builds no stack per row; an older runtime pays the exception.
 */
const parseUrl: (input: string) => URL | null =
  typeof URL.parse === 'function'
    ? (input) => URL.parse(input)
    : (input) => {
        try {
          return new URL(input);
        } catch {
          return null;
        }
      };

/** Returns the WHATWG serialization (`new URL(input).href`) of an acceptable original URL. */
export function validateUrl(input: unknown, rules: UrlRules): string {
  return accepted(checkUrl(input, rules));
}

/** `validateUrl` that returns its refusal. */
export function checkUrl(input: unknown, rules: UrlRules): string | Refusal {
  if (input === undefined || input === null || input === '') return new Refusal('url is required');
  if (typeof input !== 'string') return new Refusal('url must be a string');
  const unstorable = unstorableText(input, 'url');
  if (unstorable !== undefined) return new Refusal(unstorable);
  if (input.length > rules.maxLength) {
    return new Refusal(`url is too long: ${input.length} characters, the limit is ${rules.maxLength}`);
  }
  const url = parseUrl(input);
  if (url === null) return new Refusal('url must be an absolute URL such as https://example.com/page');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return new Refusal(`url must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (!url.hostname) return new Refusal('url must have a host');
  if (url.username || url.password) {
    return new Refusal('url must not contain a user name or password (user@host URLs are a phishing pattern)');
  }
  if (url.href.length > rules.maxLength) {
    return new Refusal(`url is too long once normalized: ${url.href.length} characters, the limit is ${rules.maxLength}`);
  }
  if (isOwnShortLink(url, new URL(rules.baseUrl))) {
    return new Refusal('url points at this shortener itself; a short link to a short link would loop');
  }
  return url.href;
}

/**
 * Host names that reach this machine, as the WHATWG parser serializes them: it has already turned
 * `127.1`, `0x7f.0.0.1` and `2130706433` into `127.0.0.1`, `[0:0::1]` into `[::1]`,
 * `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`, `%6Cocalhost` and full-width letters into
 * `localhost`, and dropped a trailing dot after an IPv4 address. `*.localhost` is loopback by
 * RFC 6761 (browsers resolve it so without DNS); `0.0.0.0` and `[::]` are not loopback addresses,
 * but connecting to them reaches this machine on Linux and macOS, so a redirect there loops too, and
 * so does `[::ffff:0:0]` (`[::ffff:0.0.0.0]`), which a dual-stack socket connects to as `0.0.0.0`.
 * The deprecated IPv4-compatible form `[::7f00:1]` (RFC 4291) is routed off the machine, not here.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '[::1]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host) ||
    host === '0.0.0.0' ||
    host === '[::]' ||
    host === '[::ffff:0:0]'
  );
}

/** The port a client connects to: the written one, else the scheme's default. */
function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/**
 * True when `url` points into this service's own short-link space (docs/api.md), where a redirect would
 * lead back to the service itself. The host must be the base URL's host, whatever the scheme or port:
 * a TLS front or an http→https redirect puts every scheme and port of a public host on this service.
 * A loopback base is the exception: many services share one machine, so only the same port is this
 * one, but every loopback spelling of that port is. `host.` is the fully-qualified spelling of `host`.
 * The path must lie inside the base path, split and decoded exactly as the router does, so `/%73/x`
 * under base `/s` counts; a path the router refuses (400) cannot loop.
 */
export function isOwnShortLink(url: URL, base: URL): boolean {
  if (isLoopbackHost(base.hostname)) {
    if (!isLoopbackHost(url.hostname) || portOf(url) !== portOf(base)) return false;
  } else if (url.hostname.replace(/\.$/, '') !== base.hostname.replace(/\.$/, '')) {
    return false;
  }
  const path = normalizeTarget(url.pathname);
  const basePath = normalizeTarget(base.pathname);
  if (!path.ok || !basePath.ok) return false;
  return stripBase(path.target.segments, basePath.target.segments) !== undefined;
}

/**
 * `retention_days`: absent (undefined/null) = 0 = forever; otherwise an integer 0–36500. From a
 * query string or a form (`textual`) it arrives as decimal digits; in JSON it must be a number.
 */
export function parseRetention(raw: unknown, textual = false): number {
  return accepted(checkRetention(raw, textual));
}

/** `parseRetention` that returns its refusal. */
export function checkRetention(raw: unknown, textual = false): number | Refusal {
  if (raw === undefined || raw === null) return 0;
  const value = textual && typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETENTION_DAYS) {
    return new Refusal(`retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever)`);
  }
  return value;
}

/**
 * `retention_days` of an edit: present, so an integer 0–36500. Unlike `max_visits`, whose `null`
 * clears the limit, `null` is no retention: `0` is the one spelling of "forever", so a client
 * that meant "leave it" (or sent an empty form field) does not make a 30-day link permanent.
 */
export function parseRetentionChange(raw: unknown): number {
  if (raw === null) {
    throw new HttpError(400, `retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever), not null`);
  }
  return parseRetention(raw);
}

/** The characters a custom code may use (docs/api.md); generated codes use a subset. */
export const CUSTOM_CODE = /^[A-Za-z0-9_-]+$/;

/**
 * `code`: absent (undefined/null/'') = generate one; otherwise characters from `A-Z a-z 0-9 - _`,
 * a length in `min`..`max` (the limit holds for every code), and no reserved word in any case.
 * Codes are case-sensitive and kept as given.
 */
export function parseCustomCode(raw: unknown, min: number, max: number, reserved?: ReadonlySet<string>): string | undefined {
  return accepted(checkCustomCode(raw, min, max, reserved));
}

/** `parseCustomCode` that returns its refusal. `reserved`: the instance's reserved words (codes.ts `reservedWords`). */
export function checkCustomCode(raw: unknown, min: number, max: number, reserved?: ReadonlySet<string>): string | undefined | Refusal {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return new Refusal('code must be a string');
  if (!CUSTOM_CODE.test(raw)) return new Refusal('code may only use the letters A-Z and a-z, digits, "-" and "_"');
  if (raw.length < min || raw.length > max) {
    return new Refusal(`code must be ${min} to ${max} characters long (MIN_SHORT_LENGTH..MAX_SHORT_LENGTH), not ${raw.length}`);
  }
  if (isReserved(raw, reserved)) return new Refusal(`code "${raw}" is reserved for the service's own paths`);
  return raw;
}

/**
 * `max_visits`: absent or null = unlimited (null); otherwise an integer 1–2147483647. From a query
 * string or a form (`textual`) it arrives as decimal digits (or empty, or `null`, for unlimited).
 */
export function parseMaxVisits(raw: unknown, textual = false): number | null {
  return accepted(checkMaxVisits(raw, textual));
}

/** `parseMaxVisits` that returns its refusal. */
export function checkMaxVisits(raw: unknown, textual = false): number | null | Refusal {
  if (raw === undefined || raw === null) return null;
  if (textual && (raw === '' || raw === 'null')) return null;
  const value = textual && typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_VISITS) {
    return new Refusal(`max_visits must be an integer from 1 to ${MAX_VISITS}, or null for no limit`);
  }
  return value;
}

export const MAX_TITLE_LENGTH = 512;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;

/**
 * `title` (docs/api.md): absent, null or empty = no title (null); otherwise text of at most 512
 * characters (code points) that every store can hold. Any other character is kept as sent: a
 * page title may hold anything, and every door escapes what it writes.
 */
export function checkTitle(raw: unknown): string | null | Refusal {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') return new Refusal(`title must be a string of at most ${MAX_TITLE_LENGTH} characters, or null`);
  const unstorable = unstorableText(raw, 'title');
  if (unstorable !== undefined) return new Refusal(unstorable);
  if (raw.length > MAX_TITLE_LENGTH && [...raw].length > MAX_TITLE_LENGTH)
    return new Refusal(`title must be at most ${MAX_TITLE_LENGTH} characters long, not ${[...raw].length}`);
  return raw;
}

/** `checkTitle` that throws its refusal. */
export function parseTitle(raw: unknown): string | null {
  return accepted(checkTitle(raw));
}

/**
 * A tag as it is stored and compared (docs/api.md, titles and tags): in Unicode NFC, so `é` typed
 * as one code point or as `e` plus a combining accent is one tag, whichever door it came through.
 * Case is kept (`a` and `A` are two tags, as in Shlink), and letters of other scripts that look
 * alike (Latin `a`, Cyrillic `а`) stay apart: folding them would merge real words of other
 * languages.
 */
export function normalTag(text: string): string {
  return text.normalize('NFC');
}

/**
 * `tags` (docs/api.md): absent or null = none; otherwise an array of strings (JSON, MCP) or, as
 * text (`textual`: a query string, a form, a CSV cell), one string or several (a repeated field),
 * each holding tags separated by commas. Each tag is trimmed and put in NFC (`normalTag`) and must
 * then be 1 to 50 characters without a comma; duplicates are dropped, at most 20 remain, kept
 * sorted (by UTF-16 code units, as every store compares them), so two spellings of one set are one
 * value.
 */
export function checkTags(raw: unknown, textual = false): string[] | Refusal {
  if (raw === undefined || raw === null) return [];
  let pieces: unknown[];
  if (textual && (typeof raw === 'string' || Array.isArray(raw))) {
    pieces = [];
    for (const item of typeof raw === 'string' ? [raw] : raw) {
      if (typeof item !== 'string') return new Refusal('tags must be strings');
      for (const piece of item.split(',')) if (piece.trim() !== '') pieces.push(piece);
    }
  } else if (Array.isArray(raw)) {
    pieces = raw;
  } else {
    return new Refusal(`tags must be an array of at most ${MAX_TAGS} strings`);
  }
  const tags = new Set<string>();
  for (const piece of pieces) {
    if (typeof piece !== 'string') return new Refusal('tags must be strings');
    const tag = normalTag(piece.trim());
    const length = [...tag].length;
    if (length < 1 || length > MAX_TAG_LENGTH)
      return new Refusal(`a tag must be 1 to ${MAX_TAG_LENGTH} characters long (after trimming spaces), not ${length}`);
    if (tag.includes(',')) return new Refusal(`a tag must not contain a comma: ${JSON.stringify(tag)}`);
    const unstorable = unstorableText(tag, 'a tag');
    if (unstorable !== undefined) return new Refusal(unstorable);
    tags.add(tag);
  }
  if (tags.size > MAX_TAGS) return new Refusal(`a link may have at most ${MAX_TAGS} distinct tags, not ${tags.size}`);
  return [...tags].sort();
}

/** `checkTags` that throws its refusal. */
export function parseTags(raw: unknown, textual = false): string[] {
  return accepted(checkTags(raw, textual));
}

/**
 * The list's `tag` filter: every `tag` parameter (repeatable; commas also separate), links having
 * all of them; undefined when there is none.
 */
export function parseTagFilter(query: URLSearchParams): string[] | undefined {
  const values = query.getAll('tag');
  if (values.length === 0) return undefined;
  const checked = checkTags(values, true);
  if (checked instanceof Refusal) throw new HttpError(400, checked.detail.replace(/^tags/, 'tag'));
  return checked.length === 0 ? undefined : checked;
}

const DIGITS = new RegExp(`^\\d{1,${MAX_DIGITS}}$`);

/**
 * `visit_count` of an imported link (the only door that sets one): absent or null = 0; otherwise an
 * integer from 0 to `MAX_COUNT`. As text (CSV) it is decimal digits, as many as `MAX_COUNT` has.
 */
export function checkVisitCount(raw: unknown, textual = false): number | Refusal {
  if (raw === undefined || raw === null) return 0;
  const value = textual && typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_COUNT) {
    return new Refusal(`visit_count must be an integer from 0 to ${MAX_COUNT}`);
  }
  return value;
}

export interface Paging {
  limit: number | undefined;
  offset: number;
}

export const MAX_LIMIT = 1000;

/** `limit` 1–1000 and `offset` ≥ 0, both optional; without `limit` the whole list is returned. */
export function parsePaging(query: URLSearchParams): Paging {
  const limit = query.get('limit');
  const offset = query.get('offset');
  const paging: Paging = { limit: undefined, offset: 0 };
  if (limit !== null) {
    if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT) {
      throw new HttpError(400, `limit must be an integer from 1 to ${MAX_LIMIT}`);
    }
    paging.limit = Number(limit);
  }
  if (offset !== null) {
    if (!/^\d{1,15}$/.test(offset)) throw new HttpError(400, 'offset must be an integer of 0 or more');
    paging.offset = Number(offset);
  }
  return paging;
}

export const MAX_SEARCH_LENGTH = 200;

/**
 * `q` of the list: absent = every live link; otherwise 1–200 characters (code points) that every
 * store can hold, matched case-insensitively against codes, original URLs and titles by the store.
 */
export function parseSearch(query: URLSearchParams): string | undefined {
  const q = query.get('q');
  if (q === null) return undefined;
  const length = [...q].length;
  if (length < 1 || length > MAX_SEARCH_LENGTH) throw new HttpError(400, `q must be 1 to ${MAX_SEARCH_LENGTH} characters long, not ${length}`);
  const unstorable = unstorableText(q, 'q');
  if (unstorable !== undefined) throw new HttpError(400, unstorable);
  return q;
}
