/**
 * The route matcher (docs/api.md): the route table's paths against the segments `paths.ts` made of the
 * request target.
 */

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
   * Who may call the route without the bearer token (docs/security.md): `true` for every method, or the list
   * of public methods. Absent means protected, so a route added without a thought is behind the gate.
   */
  public?: true | readonly string[];
  /**
   * The `Allow` header of this path's 405, when it must differ from the computed one: the MCP
   * transport (docs/mcp.md) names exactly `Allow: POST` for `/mcp`.
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
      // An own key only: the method is the request's text, and `constructor` is no handler.
      const own = Object.hasOwn(route.methods, method) ? route.methods[method] : undefined;
      const handler = own ?? (method === 'HEAD' && !route.noHead ? route.methods['GET'] : undefined);
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
