/**
 * The admin key of the routes that list, edit, delete or move links (docs/security.md#admin-keys):
 * the `X-API-Key` header, else the deprecated `api_key` query parameter, checked before anything
 * else so that a wrong key learns nothing (403, empty, also for an unknown code). An answer to a
 * request that used `api_key` carries the deprecation headers, errors included.
 */
import { HttpError } from '../errors.ts';
import { flatten, type HeaderPair } from '../http/headers.ts';
import type { Ctx, RouteHandler } from '../http/context.ts';
import type { Deprecations } from '../published/deprecations.ts';
import type { Service } from '../links/service.ts';

/** An error answering a deprecated usage still announces the deprecation. */
export function keepNotice(err: unknown, notice: readonly HeaderPair[]): unknown {
  return err instanceof HttpError && notice.length > 0 ? new HttpError(err.status, err.detail, [...err.headers, ...notice]) : err;
}

/**
 * Returns `requireAdmin(ctx)`, which throws the 403 or returns the deprecation headers the answer
 * must carry, and `adminOnly(handler)`, a route handler that runs `handler` with those headers
 * (flat, ready for the responder) once the key passed, and keeps them on any error it throws.
 */
export function adminKeyCheck(service: Pick<Service, 'isAdminKey'>, deprecations: Deprecations) {
  function requireAdmin(ctx: Ctx): readonly HeaderPair[] {
    const header = ctx.req.headers['x-api-key'];
    const fromQuery = typeof header !== 'string' && ctx.query().has('api_key');
    const notice = fromQuery ? deprecations.headers('api-key-query') : [];
    const key = typeof header === 'string' ? header : (ctx.query().get('api_key') ?? undefined);
    if (!service.isAdminKey(key)) throw new HttpError(403, undefined, notice);
    return notice;
  }

  function adminOnly(handler: (ctx: Ctx, notice: readonly string[]) => Promise<void>): RouteHandler {
    return async function admin(ctx) {
      const notice = requireAdmin(ctx);
      try {
        await handler(ctx, flatten(notice));
      } catch (err) {
        throw keepNotice(err, notice);
      }
    };
  }

  return { requireAdmin, adminOnly };
}
