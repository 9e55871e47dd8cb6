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
import { ref } from '../../published/openapi-parts.ts';
import type { Route } from '../../http/router.ts';
import type { RouteDoc } from '../../published/openapi.ts';
import { yourlsActions } from './actions.ts';
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

const PARAMETERS = [
  ['action', 'shorturl, expand, url-stats, stats, db-stats or version.'],
  ['format', 'xml (the default), json, jsonp (with callback) or simple (plain text).'],
  ['signature', 'An API_KEYS key; with timestamp, the hash of the timestamp and the key.'],
  ['timestamp', "Unix seconds, within 12 hours of the server's clock, for a hashed signature."],
  ['hash', 'md5 (the default), sha1 or sha256: how a timestamped signature is hashed.'],
  ['url', 'shorturl: the URL to shorten.'],
  ['keyword', 'shorturl: a custom code.'],
  ['title', "shorturl: the link's title."],
  ['shorturl', 'expand, url-stats: a code, or the whole short URL.'],
  ['filter', 'stats: top (the default), bottom, last or rand.'],
  ['limit', 'stats: how many links to list (none without it).'],
  ['start', 'stats: how many to skip first.'],
  ['callback', 'jsonp: the function to call.'],
  ['db', 'version: 1 adds db_version.'],
].map(([name, description]) => ({ name: name!, in: 'query', description: description!, schema: { type: 'string' } }));

/** YOURLS answers in the format asked for, whatever the status. */
const answer = (description: string) => ({
  description,
  content: Object.fromEntries(
    ['application/xml', 'application/json', 'application/javascript', 'text/plain'].map((type) => [type, { schema: { type: 'string' } }]),
  ),
});

const DESCRIPTION =
  "YOURLS' yourls-api.php, for its clients, when YOURLS_API is on: the parameters come as a query string or a url-encoded or multipart form (POST), " +
  'and every action needs signature. The status, shapes and messages are those YOURLS 1.10 answers with (docs/compat.md).';

/** A route of the table with its documentation (the REST door's `ApiRoute`, which a peer does not import). */
export type DocumentedRoute = Route<RouteHandler> & { doc: RouteDoc };

export function yourlsRoute({ service, reply, baseUrl, apiKeys, maxBodyBytes, now }: YourlsDeps): DocumentedRoute {
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

  const operation = (operationId: string, summary: string) => ({
    operationId,
    summary,
    description: DESCRIPTION,
    tag: 'links' as const,
    access: 'public' as const,
    parameters: PARAMETERS,
    responses: {
      200: answer('The action succeeded.'),
      400: answer('An unknown action, a refused or already shortened URL, a taken keyword, or a bad JSONP callback.'),
      403: answer('No valid signature.'),
      404: answer('expand or url-stats of an unknown link.'),
      413: ref('responses', 'PayloadTooLarge'),
      429: answer('shorturl past CREATE_RATE_LIMIT for this client address; Retry-After says when to try again.'),
      503: answer('The link could not be stored, or the links could not be read (a database down).'),
    },
  });

  return {
    path: '/yourls-api.php',
    methods: { GET: yourlsApi, POST: yourlsApi },
    // Its own credential, checked on every action (the gate would refuse YOURLS' clients).
    public: true,
    // `action=shorturl` creates a link, and a HEAD must change nothing.
    noHead: true,
    allow: 'GET, POST',
    doc: {
      GET: operation('yourlsApi', "YOURLS' API (when YOURLS_API is on)"),
      POST: {
        ...operation('yourlsApiForm', "YOURLS' API with a form body (when YOURLS_API is on)"),
        requestBody: {
          required: false,
          content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } }, 'multipart/form-data': { schema: { type: 'object' } } },
        },
      },
    },
  };
}
