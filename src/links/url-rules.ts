/**
 * What an original URL may be (docs/api.md, creating links): an absolute http or https URL with a
 * host and no credentials, short enough before and after normalization, text every store can hold,
 * and not a link into this service's own short-link space, where a redirect would loop. Pure.
 */
import { normalizeTarget, stripBase } from '../paths.ts';
import { Refusal, unstorableText } from './refusal.ts';

export interface UrlRules {
  maxLength: number;
  /** `https://s.example/x`: links into this space would redirect to themselves. */
  baseUrl: string;
  /** The other domains' short URL spaces (`https://go.example/x`, links/domains.ts): a link into one loops too. */
  otherBases?: readonly string[] | undefined;
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

/** The WHATWG serialization (`new URL(input).href`) of an acceptable original URL, or why it is not one. */
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
  if (isOwnShortLink(url, new URL(rules.baseUrl)) || rules.otherBases?.some((base) => isOwnShortLink(url, new URL(base)))) {
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
