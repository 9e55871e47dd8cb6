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
 * is this surface's own credential, checked by `keyed.ts`, and a request without it gets Shlink's
 * 401, never the gate's `{"detail"}`.
 */
import { listDomains, setDomainRedirects } from './domains.ts';
import { orphanVisits } from './orphans.ts';
import type { RouteHandler } from '../../http/context.ts';
import type { Route } from '../../http/router.ts';
import type { DocumentedRoute } from '../../published/openapi.ts';
import type { Responder } from '../../http/respond.ts';
import type { Service } from '../../links/service.ts';
import { shlinkHandler } from './keyed.ts';
import { shlinkDocs } from './openapi.ts';
import { MERCURE_OFF, routeNotFound } from './problems.ts';
import { create, edit, get, list, redirectRules, remove, setRedirectRules, type ShlinkContext } from './short-urls.ts';
import { deleteVisits, overview, tags, visits } from './visits-and-tags.ts';

/**
 * The Shlink release whose REST API this surface implements, as `/rest/health` reports it
 * (docs/compat.md, version): the newest all of whose features are served. Shlink's web client
 * turns features on by it, and each later release adds one this service lacks (a city condition in
 * 4.3, visit lists by domain in 4.6, the `android_browser` condition in 5.1).
 */
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
  /** Milliseconds since the epoch: which links are past their `validUntil`. */
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
  const c: ShlinkContext = {
    service,
    limits: { minShortLength: deps.minShortLength, maxShortLength: deps.maxShortLength },
    seconds: () => Math.floor(deps.now() / 1000),
    maxBodyBytes: deps.maxBodyBytes,
  };

  const handler = shlinkHandler(service, reply);

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

  /** Shlink's 404 of a path it has no route for; behind the gate only a caller with a key learns even that. */
  const unknown = handler(deps.gated ? 'any' : 'open', (ctx) => routeNotFound(ctx.method, new URL(ctx.req.url ?? '/', 'http://x').pathname));
  const anyMethod = { GET: unknown, POST: unknown, PUT: unknown, PATCH: unknown, DELETE: unknown };

  const documented = shlinkDocs(deps.gated, SHLINK_VERSION);
  const route = (path: string, methods: PeerRoute['methods']): PeerRoute => ({ path, methods, public: true, ...documented(path) });
  const v3 = '/rest/v3';
  return [
    route('/rest/health', { GET: health }),
    route(`${v3}/health`, { GET: health }),
    route(`${v3}/short-urls`, { GET: handler('list', (ctx, who) => list(c, ctx, who!)), POST: handler('create', (ctx, who) => create(c, ctx, who)) }),
    route(`${v3}/short-urls/:code`, {
      GET: handler('read', (ctx) => get(c, ctx)),
      PATCH: handler('edit', (ctx) => edit(c, ctx)),
      DELETE: handler('edit', (ctx) => remove(c, ctx)),
    }),
    route(`${v3}/short-urls/:code/visits`, { GET: handler('read', (ctx) => visits(c, ctx)), DELETE: handler('edit', (ctx) => deleteVisits(c, ctx)) }),
    route(`${v3}/short-urls/:code/redirect-rules`, {
      GET: handler('read', (ctx) => redirectRules(c, ctx)),
      POST: handler('edit', (ctx) => setRedirectRules(c, ctx)),
    }),
    route(`${v3}/visits`, { GET: handler('list', (_ctx, who) => overview(c, who!)) }),
    route(`${v3}/visits/orphan`, { GET: handler('read-all', (ctx) => orphanVisits(service, ctx)) }),
    route(`${v3}/tags`, { GET: handler('list', (ctx, who) => tags(c, ctx, false, who!)) }),
    route(`${v3}/tags/stats`, { GET: handler('list', (ctx, who) => tags(c, ctx, true, who!)) }),
    route(`${v3}/domains`, { GET: handler('any', () => listDomains(service)) }),
    route(`${v3}/domains/redirects`, { PATCH: handler('domains', (ctx) => setDomainRedirects(service, ctx, deps.maxBodyBytes)) }),
    route(`${v3}/mercure-info`, { GET: handler('any', () => MERCURE_OFF) }),
    // `rest` is this surface's first segment: no other path under it reaches the short links.
    route('/rest', anyMethod),
    route('/rest/*', anyMethod),
  ];
}
