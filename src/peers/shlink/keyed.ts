/**
 * Who may call a route of Shlink's surface (docs/compat.md, keys and roles): `X-Api-Key` is an API
 * key of the service (a key of `API_KEYS` or a stored key), held by the service to the roles table
 * for what the route does (`src/links/access.ts`), and on a route of one link to the links its key
 * reaches. This door decides nothing: it says the service's verdict as Shlink's problems.
 */
import type { Ctx, RouteHandler } from '../../http/context.ts';
import type { Responder } from '../../http/respond.ts';
import type { Action, Principal } from '../../links/access.ts';
import type { Service } from '../../links/service.ts';
import { send, thrownProblem, unavailable, type Answer } from './answers.ts';
import { forbidden, INVALID_KEY, MISSING_KEY, Problem, shortUrlNotFound } from './problems.ts';

/**
 * What a route needs of the key: what it does as the roles table names it, `any` good key (the
 * domains, Mercure, an unknown path: nothing of the links), or `open` (health).
 */
export type Access = Action | 'any' | 'open';

/** What a route does once its key passed: the request, and who presented the key (none where `open`). */
export type Work = (ctx: Ctx, principal: Principal | undefined) => Answer | Promise<Answer>;

/** Returns `handler(access, work)`, a route's handler that checks the key for `access`, then runs `work`. */
export function shlinkHandler(service: Pick<Service, 'keys' | 'mayTouch'>, reply: Responder): (access: Access, work: Work) => RouteHandler {
  /**
   * Who presents the request's key, when it may do `access` (on the link of the path's code, when
   * there is one); else Shlink's 401 for a key missing, wrong, revoked or expired (nothing tells
   * them apart), a 403 with the service's sentence for a role too low, or a 503 when the keys
   * cannot be read.
   */
  async function credential(ctx: Ctx, access: Action | 'any'): Promise<Principal | Problem> {
    const key = ctx.req.headers['x-api-key'];
    if (key === undefined || key === '') return MISSING_KEY;
    if (typeof key !== 'string') return INVALID_KEY;
    const who = access === 'any' ? await service.keys.identify(key) : await service.keys.authorize(key, access);
    if (who === undefined) return MISSING_KEY;
    if (!('ok' in who)) return (await reached(ctx, who)) ?? who;
    if (who.error === 'unavailable') return unavailable(who.detail);
    return who.detail === undefined ? INVALID_KEY : forbidden(who.detail);
  }

  /**
   * On a route of one link: undefined when the key reaches the link of the path's code, else the
   * link's 404 as if it did not exist (an `editor` reaches only the links it made), or a 503.
   */
  async function reached(ctx: Ctx, who: Principal): Promise<Problem | undefined> {
    const code = ctx.params['code'];
    if (code === undefined) return undefined;
    const may = await service.mayTouch(who, code, ctx.query().get('domain') ?? undefined);
    if (may === true) return undefined;
    return may.error === 'unavailable' ? unavailable(may.detail) : shortUrlNotFound(code);
  }

  /**
   * A route's handler: the key first (unless `open`), then the work with the key's principal; a
   * body refused by the reader (too large, 413) and a store that cannot be read or written (a
   * database down, 503) are problems like any other answer of this surface, never the REST door's
   * `{"detail"}`.
   */
  return function handler(access, work) {
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
  };
}
