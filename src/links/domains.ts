/**
 * Several short domains on one instance (docs/api.md, domains): the default domain (the host of
 * `base_url`) and the extra hosts of `domains`, each with its own codes.
 *
 * A link's key in the store is its code on the default domain and `<host>/<code>` on another: a
 * code never holds a `/` and a host never does, so the key names one `(domain, code)` and no two
 * pairs share one. Both stores keep their one key column, a default-domain link keeps the key it
 * always had (a log or a database written before domains reads as it is), and a domain's links
 * are the keys that start with `<host>/`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isCodeShaped } from './codes.ts';
import { NOT_FOUND, refused, type Invalid, type NotFound } from './outcomes.ts';
import { Refusal } from './refusal.ts';

/** A domain as the service names it: null for the default one, else its host (lower case, with its port if any). */
export type Domain = string | null;

/** A host as `domains` and a `Host` header spell it: a DNS name or IPv4 address, an optional port. */
const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$/;

/** The longest host a domain may have: a DNS name is at most 253 characters, and a port takes 6 more. */
const MAX_HOST_LENGTH = 259;

/** Why `host` cannot be a domain, or undefined when it can (it is then lower case already). */
export function badHost(host: string): string | undefined {
  if (host.length > MAX_HOST_LENGTH || !HOST.test(host))
    return `${JSON.stringify(host)} is not a host name (letters, digits, dots and hyphens, with an optional :port)`;
  return undefined;
}

/**
 * The store key of `code` on the domain a door's `domain` names, or the outcome to answer instead:
 * `invalid` for a domain that is not this service's, `not_found` for a code outside the code
 * alphabet (no store is asked).
 */
export type KeyOf = (code: string, domain: unknown) => string | Invalid | NotFound;

export interface Domains {
  /** The default domain's host: `base_url`'s, lower case with its port if any. */
  readonly defaultHost: string;
  /** Every domain's host, the default one first. */
  readonly hosts: readonly string[];
  /** More than the default domain. */
  readonly several: boolean;
  /** The domain a request's host names: an unlisted (or absent) host is the default domain. */
  ofHost(host: string | undefined): Domain;
  /**
   * The domain a request was sent to: its `Host`, or with `forwardedHost` its `X-Forwarded-Host`
   * (the first, when a chain of proxies listed several) when it has one. Read from `rawHeaders`,
   * so a redirect builds no header object for it; with one domain nothing is read at all.
   */
  ofRequest(req: { readonly rawHeaders?: readonly string[]; readonly headers: IncomingHttpHeaders }): Domain;
  /**
   * The domain a door's `domain` field or `?domain=` names: absent, null, empty, `default` or the
   * default host is the default domain; a listed host is that domain; anything else is refused.
   */
  named(input: unknown): Domain | Refusal;
  /** The host of the domain `input` names (`named`; the default one's host for it), or why none. */
  hostOf(input: unknown): string | Refusal;
  /** `KeyOf` over these domains. */
  keyOf: KeyOf;
  /** The store's key of `(domain, code)`. */
  key(code: string, domain: Domain): string;
  /** The domain of a store key. */
  domainOf(key: string): Domain;
  /** The code of a store key. */
  codeOf(key: string): string;
  /** The short URL of a store key: `<scheme of base_url>://<domain><base path>/<code>`. */
  shortUrl(key: string): string;
  /** Where a domain's short URLs start: `<scheme>://<host><base path>`. */
  origin(domain: Domain): string;
  /** `origin` of every domain but the default one. */
  readonly otherBases: readonly string[];
}

/**
 * The domain a list or an export is of: the one `input` names (absent or empty: every domain),
 * narrowed to the one the key of `who` acts on, if it acts on one: absent means that one, and
 * another is refused (a host no longer served names none, so such a key sees nothing).
 */
export function domainScope(named: Domains['named'], input: unknown, who?: { readonly domain?: string }): Domain | undefined | Refusal {
  const asked = input === undefined || input === '' ? undefined : named(input);
  if (asked instanceof Refusal || who?.domain === undefined) return asked;
  const own = named(who.domain);
  if (own instanceof Refusal || (asked !== undefined && asked !== own)) return new Refusal(`domain: this key acts on ${who.domain} only`);
  return own;
}

/** The store key of `code` on `domain` (null: the default one): the one spelling of the rule above. */
export function storeKey(code: string, domain: Domain): string {
  return domain === null ? code : `${domain}/${code}`;
}

/** A store key read as its code and domain (null: the default one), whatever domains an instance has. */
export function splitKey(key: string): [code: string, domain: Domain] {
  const at = key.indexOf('/');
  return at < 0 ? [key, null] : [key.slice(at + 1), key.slice(0, at)];
}

/** The host a request was sent to (`Domains.ofRequest`), as it spelled it. */
function hostOf(req: { readonly rawHeaders?: readonly string[]; readonly headers: IncomingHttpHeaders }, forwardedHost: boolean): string | undefined {
  const raw = req.rawHeaders;
  if (raw === undefined) {
    const forwarded = forwardedHost ? req.headers['x-forwarded-host'] : undefined;
    return typeof forwarded === 'string' ? forwarded.split(',', 1)[0]!.trim() : req.headers.host;
  }
  let host: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && host === undefined && name.toLowerCase() === 'host') host = raw[i + 1];
    else if (forwardedHost && name.length === 16 && name.toLowerCase() === 'x-forwarded-host') {
      const value = raw[i + 1]!;
      const comma = value.indexOf(',');
      return (comma < 0 ? value : value.slice(0, comma)).trim();
    }
  }
  return host;
}

/**
 * The domains of `baseUrl` (the default one, `https://s.example/x`) and of `extra` hosts, each
 * checked (`badHost`) and lower-cased; the default host among them, or a host listed twice,
 * counts once.
 */
export function createDomains(baseUrl: string, extra: readonly string[] = [], forwardedHost = false): Domains {
  const base = new URL(baseUrl);
  const defaultHost = base.host.toLowerCase();
  const scheme = base.protocol;
  const basePath = baseUrl.slice(base.origin.length);
  const others: string[] = [];
  for (const raw of extra) {
    const host = raw.trim().toLowerCase();
    const bad = badHost(host);
    if (bad !== undefined) throw new RangeError(`domains: ${bad}`);
    if (host !== defaultHost && !others.includes(host)) others.push(host);
  }
  const listed: ReadonlySet<string> = new Set(others);
  const origin = (domain: Domain): string => `${scheme}//${domain ?? defaultHost}${basePath}`;
  const defaultOrigin = origin(null);

  function ofHost(host: string | undefined): Domain {
    if (host === undefined || others.length === 0) return null;
    if (listed.has(host)) return host;
    const name = host.toLowerCase();
    return listed.has(name) ? name : null;
  }

  function named(input: unknown): Domain | Refusal {
    if (input === undefined || input === null || input === '') return null;
    if (typeof input !== 'string') return new Refusal('domain must be a text');
    const name = input.toLowerCase();
    if (name === 'default' || name === defaultHost) return null;
    if (listed.has(name)) return name;
    return new Refusal(`domain must be one of this service's domains (${[defaultHost, ...others].join(', ')}), or absent for the default one`);
  }

  const key = storeKey;

  return {
    defaultHost,
    hosts: [defaultHost, ...others],
    several: others.length > 0,
    ofHost,
    ofRequest: (req) => (others.length === 0 ? null : ofHost(hostOf(req, forwardedHost))),
    named,
    hostOf(input) {
      const name = named(input);
      return name instanceof Refusal ? name : (name ?? defaultHost);
    },
    keyOf(code, domain) {
      const name = named(domain);
      if (name instanceof Refusal) return refused(name);
      return isCodeShaped(code) ? key(code, name) : NOT_FOUND;
    },
    key,
    domainOf: (key) => splitKey(key)[1],
    codeOf: (key) => splitKey(key)[0],
    shortUrl(key) {
      const [code, domain] = splitKey(key);
      return domain === null ? `${defaultOrigin}/${code}` : `${origin(domain)}/${code}`;
    },
    origin,
    otherBases: others.map(origin),
  };
}
