/**
 * The CORS and security headers every response carries (docs/api.md), as data. `baseHeaders()` is a
 * pure function of the one setting that changes them; the app flattens the result once at start-up
 * and hands the same array to every `writeHead`, so no response pays for building it.
 */

export type HeaderPair = readonly [name: string, value: string];

export const CORS_HEADERS: readonly HeaderPair[] = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key, Mcp-Session-Id, MCP-Protocol-Version'],
  ['Access-Control-Expose-Headers', 'Location, Mcp-Session-Id, Deprecation, Link, X-Total-Count, Content-Disposition'],
  ['Access-Control-Max-Age', '86400'],
];

/** helmet's defaults are the reference; the CSP allows only same-origin resources. */
export const SECURITY_HEADERS: readonly HeaderPair[] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Content-Security-Policy', "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"],
  ['X-DNS-Prefetch-Control', 'off'],
];

/** HSTS only makes sense, and is only honoured, when the public address is https. */
export const HSTS_HEADER: HeaderPair = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'];

export function baseHeaders(options: { https: boolean }): HeaderPair[] {
  return [...CORS_HEADERS, ...SECURITY_HEADERS, ...(options.https ? [HSTS_HEADER] : [])];
}

/** The `Retry-After` of a 429 (RFC 9110: whole seconds), as every door sends it. */
export function retryAfter(seconds: number): HeaderPair {
  return ['Retry-After', String(seconds)];
}

/** `[[a, 1], [b, 2]]` → `[a, 1, b, 2]`, the raw form `writeHead` accepts without copying into an object. */
export function flatten(pairs: readonly HeaderPair[]): string[] {
  return pairs.flat();
}
