/**
 * The API key of the routes that need one (docs/security.md, keys with roles): the `X-API-Key`
 * header, else the deprecated `api_key` query parameter, checked before anything else so that a
 * wrong key learns nothing (403, empty, also for an unknown code). A key whose role lacks the
 * route's action is a 403 that says so. An answer to a request that used `api_key` carries the
 * deprecation headers, errors included.
 */
import { HttpError } from '../errors.ts';
import { flatten, type HeaderPair } from '../http/headers.ts';
import type { Ctx, RouteHandler } from '../http/context.ts';
import type { Deprecations } from '../published/deprecations.ts';
import type { Action, Principal } from '../links/access.ts';
import type { Service } from '../links/service.ts';
import { failureError } from './outcomes.ts';
import { domainParam } from './route-types.ts';

/** An error answering a deprecated usage still announces the deprecation. */
export function keepNotice(err: unknown, notice: readonly HeaderPair[]): unknown {
  return err instanceof HttpError && notice.length > 0 ? new HttpError(err.status, err.detail, [...err.headers, ...notice]) : err;
}

/** The key a request presents, and the deprecation headers its answer carries. */
function presentedKey(ctx: Ctx, deprecations: Deprecations): { key: string | undefined; notice: readonly HeaderPair[] } {
  const header = ctx.req.headers['x-api-key'];
  const fromQuery = typeof header !== 'string' && ctx.query().has('api_key');
  const notice = fromQuery ? deprecations.headers('api-key-query') : [];
  return { key: typeof header === 'string' ? header : (ctx.query().get('api_key') ?? undefined), notice };
}

/**
 * Returns `withKey(action, handler)`, a route handler that runs `handler` with the deprecation
 * headers (flat, ready for the responder) and the key's principal once the key may do `action`,
 * and keeps the headers on any error it throws; and `keyOf(ctx, action)`, the same check for a
 * handler of its own; `create-as-configured` is a create as `create_access` says (with `open`, no
 * key at all may create too, and the principal is then undefined).
 */
export function adminKeyCheck(service: Pick<Service, 'keys' | 'mayTouch'>, deprecations: Deprecations) {
  async function keyOf(ctx: Ctx, action: Action | 'create-as-configured'): Promise<{ principal: Principal | undefined; notice: readonly HeaderPair[] }> {
    const { key, notice } = presentedKey(ctx, deprecations);
    const who = action === 'create-as-configured' ? await service.keys.mayCreate(key) : await service.keys.authorize(key, action);
    if (who !== undefined && 'ok' in who) {
      if (who.error === 'forbidden') throw new HttpError(403, who.detail, notice);
      throw failureError(who, notice);
    }
    return { principal: who, notice };
  }

  function withKey(action: Action, handler: (ctx: Ctx, notice: readonly string[], principal: Principal) => Promise<void>): RouteHandler {
    return async function keyed(ctx) {
      const { principal, notice } = await keyOf(ctx, action);
      // A route of one link: an editor's key reaches only the links it made (404 for the others').
      const code = ctx.params['code'];
      const may = code === undefined ? true : await service.mayTouch(principal!, code, domainParam(ctx));
      if (may !== true) throw failureError(may, notice);
      try {
        await handler(ctx, flatten(notice), principal!);
      } catch (err) {
        throw keepNotice(err, notice);
      }
    };
  }

  return { keyOf, withKey };
}
