/**
 * Shlink's REST API v3 (docs/compat.md), the routes its JS SDK and web client call, as a thin door
 * onto the service: each handler (`short-urls.ts`, `visits-and-tags.ts`) reads Shlink's parameters
 * (`params.ts`), asks the service, and answers in Shlink's shapes (`shapes.ts`) or with Shlink's
 * problem details (`problems.ts`, `answers.ts`).
 *
 * Credentials: every route but health needs `X-Api-Key`, an API key of the service (a key of
 * `API_KEYS` or a stored key), whose role the service checks against what the route does
 * (`src/links/access.ts`): the same keys and roles as every other door. The routes are public to
 * the bearer-token gate (`Route.public`): Shlink's clients cannot send `Authorization`, so the key
 * is this surface's own credential, checked here, and a request without it gets Shlink's 401,
 * never the gate's `{"detail"}`.
 */
import type { Ctx, RouteHandler } from '../../http/context.ts';
import type { Route } from '../../http/router.ts';
import type { DocumentedRoute } from '../../published/openapi.ts';
import type { Responder } from '../../http/respond.ts';
import type { Action, Principal } from '../../links/access.ts';
import type { Service } from '../../links/service.ts';
import { ok, send, thrownProblem, unavailable, type Answer } from './answers.ts';
import { shlinkDocs } from './openapi.ts';
import { forbidden, INVALID_KEY, MERCURE_OFF, MISSING_KEY, Problem, routeNotFound } from './problems.ts';
import { create, edit, get, list, redirectRules, remove, type ShlinkContext } from './short-urls.ts';
import { deleteVisits, overview, tags, visits } from './visits-and-tags.ts';

/** The Shlink release whose REST API this surface implements, as `/rest/health` reports it (docs/compat.md). */
export const SHLINK_VERSION = '4.2.0';

const HEALTH_TYPE = 'application/health+json';

export interface ShlinkDeps {
  service: Service;
  reply: Responder;
  baseUrl: string;
  /** The bearer-token gate is on: an unknown path then answers only a caller with a key. */
  gated: boolean;
  /** Undefined while reads work, else why not (the readiness probe's question). */
  readiness: () => string | undefined;
  /** Milliseconds since the epoch: a `validUntil` becomes a retention counted from now. */
  now: () => number;
  maxBodyBytes: number;
  minShortLength: number;
  maxShortLength: number;
}

/**
 * A route of the table with its documentation (the REST door's own shape, spelled here so no peer
 * imports that door), and the surface it belongs to: the document describes it while it is on.
 */
type PeerRoute = Route<RouteHandler> & DocumentedRoute;

/**
 * What a route needs of the key: what it does as the roles table names it, `any` good key (the
 * domains, Mercure, an unknown path: nothing of the links), or `open` (health).
 */
type Access = Action | 'any' | 'open';

export function shlinkRoutes(deps: ShlinkDeps): PeerRoute[] {
  const { service, reply } = deps;
  const host = new URL(deps.baseUrl).host.toLowerCase();
  const c: ShlinkContext = {
    service,
    limits: { minShortLength: deps.minShortLength, maxShortLength: deps.maxShortLength, host },
    seconds: () => Math.floor(deps.now() / 1000),
    maxBodyBytes: deps.maxBodyBytes,
  };

  /**
   * Who presents the request's key, when it may do `access`; else Shlink's 401 for a key missing,
   * wrong, revoked or expired (nothing tells them apart), a 403 with the service's sentence for a
   * role too low, or a 503 when the keys cannot be read.
   */
  async function credential(ctx: Ctx, access: Action | 'any'): Promise<Principal | Problem> {
    const key = ctx.req.headers['x-api-key'];
    if (key === undefined || key === '') return MISSING_KEY;
    if (typeof key !== 'string') return INVALID_KEY;
    const who = access === 'any' ? await service.keys.identify(key) : await service.keys.authorize(key, access);
    if (who === undefined) return MISSING_KEY;
    if (!('ok' in who)) return who;
    if (who.error === 'unavailable') return unavailable(who.detail);
    return who.detail === undefined ? INVALID_KEY : forbidden(who.detail);
  }

  /**
   * A route's handler: the key first (unless `open`), then the work with the key's principal; a
   * body refused by the reader (too large, 413) and a store that cannot be read or written (a
   * database down, 503) are problems like any other answer of this surface, never the REST door's
   * `{"detail"}`.
   */
  function handler(access: Access, work: (ctx: Ctx, principal: Principal | undefined) => Answer | Promise<Answer>): RouteHandler {
    return async function shlink(ctx) {
      const who = access === 'open' ? undefined : await credential(ctx, access);
      if (who instanceof Problem) return send(reply, ctx, who);
      let answer: Answer;
      try {
        answer = await work(ctx, who);
      } catch (err) {
        const problem = thrownProblem(err);
        if (problem === undefined) throw err;
        answer = problem;
      }
      send(reply, ctx, answer);
    };
  }

  const health = handler('open', () => {
    const down = deps.readiness();
    return {
      status: down === undefined ? 200 : 503,
      type: HEALTH_TYPE,
      body: {
        status: down === undefined ? 'pass' : 'fail',
        version: SHLINK_VERSION,
        links: { about: 'https://shlink.io', project: 'https://github.com/shlinkio/shlink' },
      },
    };
  });

  const noRedirects = { baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null };
  const domains = { domains: { data: [{ domain: host, isDefault: true, redirects: noRedirects }], defaultRedirects: noRedirects } };

  /** Shlink's 404 of a path it has no route for; behind the gate only a caller with a key learns even that. */
  const unknown = handler(deps.gated ? 'any' : 'open', (ctx) => routeNotFound(ctx.method, new URL(ctx.req.url ?? '/', 'http://x').pathname));
  const anyMethod = { GET: unknown, POST: unknown, PUT: unknown, PATCH: unknown, DELETE: unknown };

  const documented = shlinkDocs(deps.gated, SHLINK_VERSION);
  const route = (path: string, methods: PeerRoute['methods']): PeerRoute => ({ path, methods, public: true, ...documented(path) });
  const v3 = '/rest/v3';
  return [
    route('/rest/health', { GET: health }),
    route(`${v3}/health`, { GET: health }),
    route(`${v3}/short-urls`, { GET: handler('read', (ctx) => list(c, ctx)), POST: handler('create', (ctx, who) => create(c, ctx, who)) }),
    route(`${v3}/short-urls/:code`, {
      GET: handler('read', (ctx) => get(c, ctx)),
      PATCH: handler('edit', (ctx) => edit(c, ctx)),
      DELETE: handler('edit', (ctx) => remove(c, ctx)),
    }),
    route(`${v3}/short-urls/:code/visits`, { GET: handler('read', (ctx) => visits(c, ctx)), DELETE: handler('edit', (ctx) => deleteVisits(c, ctx)) }),
    route(`${v3}/short-urls/:code/redirect-rules`, {
      GET: handler('read', (ctx) => redirectRules(c, ctx)),
      POST: handler('edit', (ctx) => redirectRules(c, ctx)),
    }),
    route(`${v3}/visits`, { GET: handler('read', () => overview(c)) }),
    route(`${v3}/tags`, { GET: handler('read', (ctx) => tags(c, ctx, false)) }),
    route(`${v3}/tags/stats`, { GET: handler('read', (ctx) => tags(c, ctx, true)) }),
    route(`${v3}/domains`, { GET: handler('any', () => ok(domains)) }),
    route(`${v3}/mercure-info`, { GET: handler('any', () => MERCURE_OFF) }),
    // `rest` is this surface's first segment: no other path under it reaches the short links.
    route('/rest', anyMethod),
    route('/rest/*', anyMethod),
  ];
}
