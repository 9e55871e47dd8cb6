/**
 * `GET`/`POST /yourls-api.php` (docs/compat.md#yourls-api), served when `yourls_api` is on: YOURLS'
 * API for the clients written for it (ShareX, the WordPress plugins, browser extensions). Public
 * to the gate, because those clients cannot send a bearer token: the surface demands its own
 * credential on every action instead, and refuses in YOURLS' shape, in the requested format.
 */
import type { Ctx, RouteHandler } from '../../http/context.ts';
import { flatten } from '../../http/headers.ts';
import type { Responder } from '../../http/respond.ts';
import type { Principal } from '../../links/access.ts';
import type { Service, Unavailable, VisitRequest } from '../../links/service.ts';
import { unavailableOf } from '../../links/outcomes.ts';
import type { Route } from '../../http/router.ts';
import type { DocumentedRoute } from '../../published/openapi.ts';
import { ACCESS, yourlsActions } from './actions.ts';
import { YOURLS_DOCS } from './openapi.ts';
import { signatureKey } from './auth.ts';
import { render, type YourlsResult } from './output.ts';
import { requestParams } from './params.ts';
import { authError, INVALID_LOGIN, PLEASE_LOG_IN, unavailable, unknownAction, withCallback } from './shapes.ts';

export interface YourlsDeps {
  service: Service;
  reply: Responder;
  apiKeys: readonly string[];
  maxBodyBytes: number;
  /** Milliseconds since the epoch: signed timestamps are checked against it. */
  now: () => number;
}

/** A route of the table with its documentation (the REST door's `ApiRoute`, which a peer does not import). */
export type YourlsRoute = Route<RouteHandler> & DocumentedRoute;

export function yourlsRoute({ service, reply, apiKeys, maxBodyBytes, now }: YourlsDeps): YourlsRoute {
  const actions = yourlsActions({ service });

  /**
   * Who signed the request, when the key may do what the action does; else the refusal in YOURLS'
   * shape (`Please log in` for no good key: missing, wrong, revoked, expired, or a timestamped
   * signature of no `api_keys` key; the service's sentence for a role too low), or the store's
   * failure to read the keys.
   */
  async function signer(params: ReadonlyMap<string, string>, name: string | undefined): Promise<Principal | YourlsResult | Unavailable> {
    const key = signatureKey(params, apiKeys, Math.floor(now() / 1000));
    const access = name !== undefined && Object.hasOwn(ACCESS, name) ? ACCESS[name]! : 'any';
    const who = key === undefined ? undefined : access === 'any' ? await service.keys.identify(key) : await service.keys.authorize(key, access);
    // A refusal always names the callback, even empty, as YOURLS' does.
    const callback = params.get('callback') ?? '';
    if (who === undefined || ('ok' in who && who.error === 'forbidden' && who.detail === undefined)) {
      return authError(params.has('username') || params.has('password') ? INVALID_LOGIN : PLEASE_LOG_IN, callback);
    }
    if ('ok' in who && who.error === 'forbidden') return authError(who.detail!, callback);
    return who;
  }

  /** The answer to the request's action, before its format. */
  async function answer(params: ReadonlyMap<string, string>, from: VisitRequest): Promise<YourlsResult> {
    const name = params.get('action');
    const who = await signer(params, name);
    if ('fields' in who) return who;
    let result: YourlsResult;
    if ('ok' in who) {
      result = unavailable(name ?? '', who.detail);
    } else {
      try {
        result = name !== undefined && Object.hasOwn(actions, name) ? await actions[name]!(params, from, who) : unknownAction();
      } catch (err) {
        // A store that could not be read where no outcome carries it (a slice of the list on a
        // database that went down) is this surface's 503, in the format asked for, as an outcome is.
        const down = unavailableOf(err);
        if (down === undefined) throw err;
        result = unavailable(name ?? '', down.detail);
      }
    }
    const callback = params.get('callback') ?? params.get('jsonp');
    return callback === undefined ? result : withCallback(result, callback);
  }

  async function yourlsApi(ctx: Ctx): Promise<void> {
    const params = await requestParams(ctx, maxBodyBytes);
    const result = await answer(params, ctx.req);
    const { status, type, body: text } = render(params.get('format') ?? 'xml', result);
    reply.send(ctx.res, status, type, text, flatten(result.headers ?? []));
  }

  return {
    path: '/yourls-api.php',
    methods: { GET: yourlsApi, POST: yourlsApi },
    // Its own credential, checked on every action (the gate would refuse YOURLS' clients).
    public: true,
    // `action=shorturl` creates a link, and a HEAD must change nothing.
    noHead: true,
    allow: 'GET, POST',
    doc: YOURLS_DOCS.doc,
    surface: YOURLS_DOCS.surface,
  };
}
