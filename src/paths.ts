/**
 * Request-target normalization (docs/api.md): the raw request target as path segments.
 *
 * The router and the gate (`http/gate.ts`) both decide on its output, so no spelling of a path can
 * reach a handler by a route the gate did not see; URL validation (`api/validate.ts`) splits a
 * URL's path the same way to tell whether it points back into this service. It refuses instead of
 * repairing: it never decodes `%2F` into a separator and never resolves `.`/`..`, because every
 * server that "helpfully" resolves them has at some point resolved its way past its own access
 * checks.
 */

export interface Target {
  /** Percent-decoded segments of the path; a trailing slash is dropped (every route accepts one). */
  segments: string[];
  /** True when the path ended in `/` (needed for the bare base path redirect). */
  trailingSlash: boolean;
  /** The raw query string without `?` ('' when absent). */
  query: string;
}

export type Normalized = { ok: true; target: Target } | { ok: false; detail: string };

/** Raw characters that never belong in a path we serve. */
const FORBIDDEN_RAW = /[\\\x00-\x1f\x7f]/;

export function normalizeTarget(raw: string): Normalized {
  let path = raw;
  // Absolute-form (`GET http://host/x HTTP/1.1`) is legal HTTP for proxies; serve its path.
  if (!path.startsWith('/')) {
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
    if (!m) return { ok: false, detail: 'bad request target' };
    path = path.slice(m[0].length) || '/';
    if (!path.startsWith('/')) path = `/${path}`;
  }
  const hash = path.indexOf('#');
  if (hash !== -1) path = path.slice(0, hash);
  const q = path.indexOf('?');
  const query = q === -1 ? '' : path.slice(q + 1);
  if (q !== -1) path = path.slice(0, q);

  if (FORBIDDEN_RAW.test(path)) return { ok: false, detail: 'bad path: control character or backslash' };
  const trailingSlash = path.length > 1 && path.endsWith('/');
  const parts = path.split('/').slice(1, trailingSlash ? -1 : undefined);
  if (path === '/') parts.length = 0;

  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') return { ok: false, detail: 'bad path: empty segment' };
    let seg: string;
    try {
      seg = part.includes('%') ? decodeURIComponent(part) : part;
    } catch {
      return { ok: false, detail: 'bad path: invalid percent-encoding' };
    }
    if (seg === '.' || seg === '..') return { ok: false, detail: 'bad path: dot segment' };
    if (seg.includes('/') || seg.includes('\\')) return { ok: false, detail: 'bad path: encoded slash' };
    if (FORBIDDEN_RAW.test(seg)) return { ok: false, detail: 'bad path: control character' };
    segments.push(seg);
  }
  return { ok: true, target: { segments, trailingSlash, query } };
}

/**
 * The segments below the base path, or `undefined` when the target lies outside it.
 * `/s/x` with base `['s']` → `['x']`; `/sx` → undefined.
 */
export function stripBase(segments: readonly string[], base: readonly string[]): string[] | undefined {
  if (segments.length < base.length) return undefined;
  for (let i = 0; i < base.length; i++) if (segments[i] !== base[i]) return undefined;
  return segments.slice(base.length);
}
