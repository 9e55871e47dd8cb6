/**
 * The referrer a visit keeps: the host of `Referer`, lower case, and never its path or query —
 * those can hold a search, a session or a private document's name, and the host is what a link's
 * owner asks ("from which sites").
 *
 * Only a web page (`http:`, `https:`) or an Android app (`android-app://<package>/`, the referrer
 * Android gives for a link opened from an app, e.g. `com.google.android.gm` for Gmail) has a host
 * worth keeping. Anything else — no header, an empty one, a string that is no URL, another scheme
 * (`file:`, `about:`, a browser extension's) — is `null`, as a direct visit is. A host is kept as
 * the URL parser writes it (lower case, international names in their `xn--` form, IPv4 as four
 * decimal numbers, IPv6 in brackets), without a trailing dot, and only up to a DNS name's 253
 * characters, so a forged header cannot make an event long.
 *
 * The URL parser lets a host hold much that no host has (`=`, `(`, `"`, `,`, `'`, `*`…), and a
 * referrer ends up in a CSV export that someone opens in a spreadsheet: `http://=cmd(…)/` would be
 * a formula planted by any visitor. So a host is kept only when it is what a host can be —
 * labels of letters, digits, `-` and `_` (real hosts and Android package names carry `_`)
 * separated by dots, or an IPv6 address — and anything else is `null`, as a string that is no URL.
 */
import { rememberRecent } from './recent-texts.ts';

/** The longest DNS name. */
export const MAX_HOST_LENGTH = 253;

/**
 * The common case, read without the URL parser: a plain host whose last label starts with a letter,
 * maybe a port, then the path. A last label that starts with a digit may be a number (`1.2.3`,
 * `0x7f.1`), which makes the host an IPv4 address the URL parser writes its own way (`1.2.0.3`,
 * `127.0.0.1`) or refuses (`999.1.1.1`): such a host takes the parser's way.
 */
const PLAIN = /^https?:\/\/((?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*)\.?(?::\d{1,4})?(?:[/?#]|$)/i;

/** What a kept host may be, in the URL parser's lower-case form: dotted labels or `[IPv6]`. */
const HOST = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:]+\])$/;

const KEPT_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'android-app:']);

/** The host of the `Referer` header `referer`, or `null` (rules above). */
export function referrerHost(referer: string | undefined): string | null {
  if (referer === undefined || referer === '') return null;
  const plain = PLAIN.exec(referer);
  if (plain !== null) return plain[1]!.length > MAX_HOST_LENGTH ? null : plain[1]!.toLowerCase();
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return null;
  }
  if (!KEPT_SCHEMES.has(url.protocol)) return null;
  const host = (url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname).toLowerCase();
  return host.length > MAX_HOST_LENGTH || !HOST.test(host) ? null : host;
}

/**
 * `read` (`referrerHost`; a test counts its calls) behind a cache of the last `max` distinct
 * `Referer` values (`rememberRecent`, recent-texts.ts), for the recorder: a site's visitors come
 * from a few hundred pages, so a returning value costs one lookup instead of the pattern, a new
 * string for the host and its lower case, and the store then finds the same host string again
 * (its hash computed once). The whole values, paths and queries included, stay in this process's
 * memory only, as the day's client addresses do (client-facts.ts): never written, logged or shown;
 * an event keeps the host alone.
 */
export function createReferrerReader(max = 4096, read: (referer: string) => string | null = referrerHost): (referer: string | undefined) => string | null {
  const remembered = rememberRecent(read, max);
  return function cachedReferrerHost(referer) {
    return referer === undefined ? null : remembered(referer);
  };
}

/**
 * Whether `host` is a referrer `referrerHost` gives, exactly: a `Referer` naming it gives it back.
 * The visits import takes no other, so a file cannot put into a store what a visit could not.
 */
export function isReferrerHost(host: string): boolean {
  return referrerHost(`http://${host}/`) === host || referrerHost(`android-app://${host}/`) === host;
}
