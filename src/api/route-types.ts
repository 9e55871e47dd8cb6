/**
 * What every route file of the API is built from: a route with its documentation, and what the
 * route table hands each part. Its own file so that the table (`routes.ts`) imports its parts
 * (`qr-route.ts`, `ui-routes.ts`, `transfer-routes.ts`) and none of them imports the table back.
 */
import type { Route } from '../http/router.ts';
import type { StaticFile } from '../http/static.ts';
import type { Responder } from '../http/respond.ts';
import type { Ctx, RouteHandler } from '../http/context.ts';
import type { Deprecations } from '../published/deprecations.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RouteDoc } from '../published/openapi.ts';
import type { Service } from '../links/service.ts';

/** The `?domain=` of a route of one link (docs/api.md, domains): absent, the default domain. */
export function domainParam(ctx: Ctx): string | undefined {
  return ctx.query().get('domain') ?? undefined;
}

/** A route with the documentation of each method it serves. */
export type ApiRoute = Route<RouteHandler> & { doc: RouteDoc };

export interface RouteDeps {
  service: Service;
  reply: Responder;
  production: boolean;
  /** With the gate on, anyone may open short links (docs/security.md); otherwise they are gated too. */
  publicRedirects: boolean;
  files: ReadonlyMap<string, StaticFile>;
  /** Largest accepted request body, bytes. */
  maxBodyBytes: number;
  deprecations: Deprecations;
  /** Where the redirect route counts its results. */
  metrics: Pick<Metrics, 'redirected'>;
}
