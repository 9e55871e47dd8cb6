/**
 * Request-target normalization and the route matcher (SPEC §3).
 *
 * One function, `normalizeTarget`, turns the raw request target into path segments; the router and
 * the gate (`gate.ts`) both decide on its output, so no spelling of a path can reach a handler by a
 * route the gate did not see. It refuses instead of repairing: it never decodes `%2F` into a
 * separator and never resolves `.`/`..`, because every server that "helpfully" resolves them has at
 * some point resolved its way past its own access checks.
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
    if (!path.startsWith('/')) path = '/' + path;
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

export interface Route<H> {
  /** `/api/urls/:code`, `/static/*`; a `:param` matches one segment, `*` one or more. */
  path: string;
  /** Handlers by method. `HEAD` falls back to `GET`, unless `noHead`. */
  methods: Readonly<Partial<Record<string, H>>>;
  /**
   * `HEAD` is 405 here although `GET` is served: a `HEAD` must change nothing (RFC 9110 §9.2.1),
   * and this route's `GET` changes something (`GET /api/shorten` creates a link).
   */
  noHead?: true;
  /** Optional test a `:param` segment must pass (the redirect route skips reserved words). */
  accept?: (param: string) => boolean;
  /**
   * Who may call the route without the bearer token (SPEC §5): `true` for every method, or the list
   * of public methods. Absent means protected, so a route added without a thought is behind the gate.
   */
  public?: true | readonly string[];
  /**
   * The `Allow` header of this path's 405, when it must differ from the computed one: the MCP
   * transport (SPEC §7) names exactly `Allow: POST` for `/mcp`.
   */
  allow?: string;
}

export interface Match<H> {
  route: Route<H>;
  params: Record<string, string>;
  /** The handler for the method, or undefined (→ 405 with `allow`). */
  handler: H | undefined;
  allow: string;
}

interface Compiled<H> {
  route: Route<H>;
  parts: string[];
  allow: string;
}

export function allowHeader(methods: readonly string[]): string {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  set.add('OPTIONS');
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  return order.filter((m) => set.has(m)).join(', ');
}

/** Builds a matcher over the route table; routes are tried in table order. */
export function createRouter<H>(routes: readonly Route<H>[]): (method: string, segments: readonly string[]) => Match<H> | undefined {
  const table: Compiled<H>[] = routes.map((route) => ({
    route,
    parts: route.path === '/' ? [] : route.path.slice(1).split('/'),
    allow: route.allow ?? allowHeader(Object.keys(route.methods)),
  }));

  return function match(method, segments) {
    for (const { route, parts, allow } of table) {
      const params = matchParts(parts, segments, route.accept);
      if (!params) continue;
      const handler = route.methods[method] ?? (method === 'HEAD' && !route.noHead ? route.methods['GET'] : undefined);
      return { route, params, handler, allow };
    }
    return undefined;
  };
}

function matchParts(
  parts: readonly string[],
  segments: readonly string[],
  accept: ((param: string) => boolean) | undefined,
): Record<string, string> | undefined {
  const last = parts[parts.length - 1];
  const wildcard = last === '*';
  if (wildcard ? segments.length < parts.length : segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const seg = segments[i]!;
    if (part === '*') {
      params['*'] = segments.slice(i).join('/');
      return params;
    }
    if (part.startsWith(':')) {
      if (accept && !accept(seg)) return undefined;
      params[part.slice(1)] = seg;
    } else if (part !== seg) {
      return undefined;
    }
  }
  return params;
}
