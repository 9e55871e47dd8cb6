/**
 * `GET`/`POST /yourls-api.php` (docs/compat.md#yourls-api), served when `yourls_api` is on: YOURLS'
 * API for the clients written for it (ShareX, the WordPress plugins, browser extensions). Public
 * to the gate, because those clients cannot send a bearer token: the surface demands its own
 * credential on every action instead, and refuses in YOURLS' shape, in the requested format.
 */
import type { Ctx, RouteHandler } from '../../http/context.ts';
import { flatten } from '../../http/headers.ts';
import type { Responder } from '../../http/respond.ts';
import type { Service } from '../../links/service.ts';
import { unavailableOf } from '../../links/outcomes.ts';
import type { Route } from '../../http/router.ts';
import type { DocumentedRoute } from '../../published/openapi.ts';
import { yourlsActions } from './actions.ts';
import { YOURLS_DOCS } from './openapi.ts';
import { signed } from './auth.ts';
import { render, type YourlsResult } from './output.ts';
import { requestParams } from './params.ts';
import { authError, INVALID_LOGIN, PLEASE_LOG_IN, unavailable, unknownAction, withCallback } from './shapes.ts';

export interface YourlsDeps {
  service: Service;
  reply: Responder;
  baseUrl: string;
  apiKeys: readonly string[];
  maxBodyBytes: number;
  /** Milliseconds since the epoch: signed timestamps are checked against it. */
  now: () => number;
}

/** A route of the table with its documentation (the REST door's `ApiRoute`, which a peer does not import). */
export type YourlsRoute = Route<RouteHandler> & DocumentedRoute;

export function yourlsRoute({ service, reply, baseUrl, apiKeys, maxBodyBytes, now }: YourlsDeps): YourlsRoute {
  const actions = yourlsActions({ service, baseUrl });
  const credentials = { keys: apiKeys, isAdminKey: (key: string) => service.isAdminKey(key) };

  async function yourlsApi(ctx: Ctx): Promise<void> {
    const params = await requestParams(ctx, maxBodyBytes);
    let result: YourlsResult;
    if (!signed(params, credentials, Math.floor(now() / 1000))) {
      result = authError(params.has('username') || params.has('password') ? INVALID_LOGIN : PLEASE_LOG_IN, params.get('callback') ?? '');
    } else {
      const name = params.get('action');
      try {
        result = name !== undefined && Object.hasOwn(actions, name) ? await actions[name]!(params, ctx.req) : unknownAction();
      } catch (err) {
        // A store that could not be read where no outcome carries it (a slice of the list on a
        // database that went down) is this surface's 503, in the format asked for, as an outcome is.
        const down = unavailableOf(err);
        if (down === undefined) throw err;
        result = unavailable(name ?? '', down.detail);
      }
      const callback = params.get('callback') ?? params.get('jsonp');
      if (callback !== undefined) result = withCallback(result, callback);
    }
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
