/**
 * The referrer a visit keeps: the host of `Referer`, lower case, and never its path or query —
 * those can hold a search, a session or a private document's name, and the host is what a link's
 * owner asks ("from which sites").
 *
 * Only a web page (`http:`, `https:`) or an Android app (`android-app://<package>/`, the referrer
 * Android gives for a link opened from an app, e.g. `com.google.android.gm` for Gmail) has a host
 * worth keeping. Anything else — no header, an empty one, a string that is no URL, another scheme
 * (`file:`, `about:`, a browser extension's) — is `null`, as a direct visit is. A host is kept as
 * the URL parser writes it (lower case, international names in their `xn--` form, IPv6 in
 * brackets), without a trailing dot, and only up to a DNS name's 253 characters, so a forged
 * header cannot make an event long.
 */

/** The longest DNS name. */
export const MAX_HOST_LENGTH = 253;

/** The common case, read without the URL parser: a plain host, maybe a port, then the path. */
const PLAIN = /^https?:\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*)\.?(?::\d{1,4})?(?:[/?#]|$)/i;

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
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return host === '' || host.length > MAX_HOST_LENGTH ? null : host.toLowerCase();
}
