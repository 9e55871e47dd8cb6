/**
 * Shlink's REST API v3 (docs/compat.md), the routes its JS SDK and web client call, as a thin door
 * onto the service: each handler (`short-urls.ts`, `visits-and-tags.ts`) reads Shlink's parameters
 * (`params.ts`), asks the service, and answers in Shlink's shapes (`shapes.ts`) or with Shlink's
 * problem details (`problems.ts`, `answers.ts`).
 *
 * Credentials: every route but health needs `X-Api-Key`, one of the admin keys. The routes are
 * public to the bearer-token gate (`Route.public`): Shlink's clients cannot send `Authorization`,
 * so the key is this surface's own credential, checked here, and a request without it gets
 * Shlink's 401, never the gate's `{"detail"}`.
 */
import type { Ctx, RouteHandler } from '../../http/context.ts';
import type { Route } from '../../http/router.ts';
import type { DocumentedRoute } from '../../published/openapi.ts';
import type { Responder } from '../../http/respond.ts';
import type { Service } from '../../links/service.ts';
import { ok, send, thrownProblem, type Answer } from './answers.ts';
import { shlinkDocs } from './openapi.ts';
import { INVALID_KEY, MERCURE_OFF, MISSING_KEY, routeNotFound, type Problem } from './problems.ts';
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

export function shlinkRoutes(deps: ShlinkDeps): PeerRoute[] {
  const { service, reply } = deps;
  const host = new URL(deps.baseUrl).host.toLowerCase();
  const c: ShlinkContext = {
    service,
    limits: { minShortLength: deps.minShortLength, maxShortLength: deps.maxShortLength, host },
    seconds: () => Math.floor(deps.now() / 1000),
    maxBodyBytes: deps.maxBodyBytes,
  };

  /** Undefined when the request carries one of the admin keys, else Shlink's 401. */
  function credential(ctx: Ctx): Problem | undefined {
    const key = ctx.req.headers['x-api-key'];
    if (key === undefined || key === '') return MISSING_KEY;
    return typeof key === 'string' && service.isAdminKey(key) ? undefined : INVALID_KEY;
  }

  /**
   * A route's handler: the key first (unless `open`), then the work; a body refused by the reader
   * (too large, 413) and a store that cannot be read or written (a database down, 503) are
   * problems like any other answer of this surface, never the REST door's `{"detail"}`.
   */
  function handler(work: (ctx: Ctx) => Answer | Promise<Answer>, open = false): RouteHandler {
    return async function shlink(ctx) {
      const refused = open ? undefined : credential(ctx);
      if (refused !== undefined) return send(reply, ctx, refused);
      let answer: Answer;
      try {
        answer = await work(ctx);
      } catch (err) {
        const problem = thrownProblem(err);
        if (problem === undefined) throw err;
        answer = problem;
      }
      send(reply, ctx, answer);
    };
  }

  const health = handler(() => {
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
  }, true);

  const noRedirects = { baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null };
  const domains = { domains: { data: [{ domain: host, isDefault: true, redirects: noRedirects }], defaultRedirects: noRedirects } };

  /** Shlink's 404 of a path it has no route for; behind the gate only a caller with a key learns even that. */
  const unknown = handler((ctx) => routeNotFound(ctx.method, new URL(ctx.req.url ?? '/', 'http://x').pathname), !deps.gated);
  const anyMethod = { GET: unknown, POST: unknown, PUT: unknown, PATCH: unknown, DELETE: unknown };

  const documented = shlinkDocs(deps.gated, SHLINK_VERSION);
  const route = (path: string, methods: PeerRoute['methods']): PeerRoute => ({ path, methods, public: true, ...documented(path) });
  const v3 = '/rest/v3';
  return [
    route('/rest/health', { GET: health }),
    route(`${v3}/health`, { GET: health }),
    route(`${v3}/short-urls`, { GET: handler((ctx) => list(c, ctx)), POST: handler((ctx) => create(c, ctx)) }),
    route(`${v3}/short-urls/:code`, { GET: handler((ctx) => get(c, ctx)), PATCH: handler((ctx) => edit(c, ctx)), DELETE: handler((ctx) => remove(c, ctx)) }),
    route(`${v3}/short-urls/:code/visits`, { GET: handler((ctx) => visits(c, ctx)), DELETE: handler((ctx) => deleteVisits(c, ctx)) }),
    route(`${v3}/short-urls/:code/redirect-rules`, { GET: handler((ctx) => redirectRules(c, ctx)), POST: handler((ctx) => redirectRules(c, ctx)) }),
    route(`${v3}/visits`, { GET: handler(() => overview(c)) }),
    route(`${v3}/tags`, { GET: handler((ctx) => tags(c, ctx, false)) }),
    route(`${v3}/tags/stats`, { GET: handler((ctx) => tags(c, ctx, true)) }),
    route(`${v3}/domains`, { GET: handler(() => ok(domains)) }),
    route(`${v3}/mercure-info`, { GET: handler(() => MERCURE_OFF) }),
    // `rest` is this surface's first segment: no other path under it reaches the short links.
    route('/rest', anyMethod),
    route('/rest/*', anyMethod),
  ];
}
