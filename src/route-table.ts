/**
 * The whole route table: the shortening API (routes.ts) plus the machine-facing contracts — the
 * MCP endpoint, /openapi.json, /docs, the published schema, the deprecation notices — and the two
 * public probes. The OpenAPI document is built from this same table once it is complete, so what
 * is documented is what the router serves.
 */
import type { Config } from './config/config.ts';
import { DEPRECATIONS, createDeprecations, loadNoticeSchema } from './published/deprecations.ts';
import { renderDocs } from './published/docs.ts';
import type { Logger } from './log.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { createMcpEndpoint } from './mcp/endpoint.ts';
import { PROTOCOL_VERSIONS } from './mcp/protocol.ts';
import { TOOLS } from './mcp/tools.ts';
import { body, empty, json, ref } from './published/openapi-parts.ts';
import { openApiDocument } from './published/openapi.ts';
import { PROMETHEUS_TYPE, renderPrometheus } from './metrics/prometheus.ts';
import { HTML_TYPE, JSON_TYPE, type Responder } from './http/respond.ts';
import { domainRoutes } from './api/domain-routes.ts';
import { keyRoutes } from './api/key-routes.ts';
import { webhookRoutes } from './api/webhook-routes.ts';
import { createWebhooks, type Webhooks } from './webhooks/subscriptions.ts';
import { apiRoutes, type ApiRoute } from './api/routes.ts';
import type { Service } from './links/service.ts';
import type { StaticFile } from './http/static.ts';
import { transferRoutes } from './api/transfer-routes.ts';
import { visitRoutes } from './api/visit-routes.ts';
import { visitTransferRoutes } from './api/visit-transfer-routes.ts';
import type { Transfer } from './transfer/transfer.ts';
import { shlinkRoutes } from './peers/shlink/routes.ts';
import { VERSION } from './version.ts';
import { yourlsRoute } from './peers/yourls/route.ts';

/** The schema's own media type (JSON Schema draft-07 §11); it is JSON to anything that only knows JSON. */
const SCHEMA_TYPE = 'application/schema+json';

export interface TableDeps {
  service: Service;
  reply: Responder;
  files: ReadonlyMap<string, StaticFile>;
  /** `publicRedirects` absent: short links are behind the gate like the rest. */
  config: Pick<Config, 'production' | 'apiToken' | 'mcpAllowedOrigins' | 'maxBodyBytes'> &
    Partial<Pick<Config, 'publicRedirects' | 'apiKeys' | 'yourlsApi' | 'shlinkApi' | 'minShortLength' | 'maxShortLength'>> & { baseUrl: string };
  log: Logger;
  /** Readiness (docs/operations.md): undefined while ready, else why not (default: always ready). */
  readiness?: () => string | undefined;
  /** The notice schema file (default: the one shipped in `schemas/v2/`). */
  noticeSchema?: Buffer;
  /** What /metrics reports and the redirect route counts into (default: a registry of its own). */
  metrics?: Metrics;
  /** What `/api/export` and `/api/import` run on (default: none; they answer 500, for tables built only to be read). */
  transfer?: Transfer;
  /** The clock, milliseconds (default `Date.now`): YOURLS' timestamped signatures are checked against it, Shlink's `validUntil` counts from it. */
  now?: () => number;
  /** The webhooks' subscriptions (default: none kept; the routes are still there, for the documents). */
  webhooks?: Webhooks;
}

/** The webhooks of a table built without a store's (its routes answer that none are kept). */
const noWebhooks = (service: Service): Webhooks =>
  createWebhooks({ store: undefined, domains: service.domains, allowPrivate: false, clicksTracked: true, now: Date.now });

const NOT_ALLOWED = { 405: ref('responses', 'MethodNotAllowed') };

export function routeTable(deps: TableDeps): ApiRoute[] {
  const { service, reply, config, log } = deps;
  const deprecations = createDeprecations(config.baseUrl, log);
  const noticeSchema = deps.noticeSchema ?? loadNoticeSchema();
  const mcp = createMcpEndpoint({ service, baseUrl: config.baseUrl, allowedOrigins: config.mcpAllowedOrigins, log, reply, maxBodyBytes: config.maxBodyBytes });
  const notices = { notices: DEPRECATIONS.map((d) => d.notice) };
  const authCheck = { auth_required: config.apiToken !== '' };
  const metrics = deps.metrics ?? createMetrics({ links: () => 0 });
  const readiness = deps.readiness ?? (() => undefined);
  // The OpenAPI document and its HTML page, made at the first request for either, from the table
  // once complete: most instances are never asked, and made at start they were most of the work
  // of making the handler (docs/performance.md, "The documents are made when first asked").
  let documents: { openapi: string; docs: string } | undefined;
  const documented = (): { openapi: string; docs: string } => {
    if (documents === undefined) {
      // The peers' routes carry their surfaces (docs/compat.md): the document describes each while it is on.
      // The instance's code lengths: the UI says them under its code field before one is typed.
      const codeLengths = config.minShortLength && config.maxShortLength ? { min: config.minShortLength, max: config.maxShortLength } : undefined;
      const document = openApiDocument(table, {
        baseUrl: config.baseUrl,
        version: VERSION,
        noticeSchema: JSON.parse(noticeSchema.toString('utf8')),
        codeLengths,
      });
      documents = { openapi: JSON.stringify(document), docs: renderDocs(document) };
    }
    return documents;
  };

  const shlink = config.shlinkApi
    ? shlinkRoutes({
        service,
        reply,
        baseUrl: config.baseUrl,
        gated: config.apiToken !== '',
        readiness,
        now: deps.now ?? Date.now,
        maxBodyBytes: config.maxBodyBytes,
        minShortLength: config.minShortLength ?? 1,
        maxShortLength: config.maxShortLength ?? 64,
      })
    : [];

  const table: ApiRoute[] = [
    {
      path: '/healthz',
      // For load balancers and probes: public, and independent of the API's own /api/health. The
      // readiness probe lives here too, as `?ready`: the seed's public paths are exactly these.
      public: true,
      methods: {
        GET: (ctx) => {
          const notReady = ctx.query().has('ready') ? readiness() : undefined;
          if (notReady === undefined) reply.json(ctx.res, 200, { status: 'ok' });
          else reply.json(ctx.res, 503, { status: 'not ready', detail: notReady });
        },
      },
      doc: {
        GET: {
          operationId: 'getHealthz',
          summary: 'Liveness probe; with ?ready, the readiness probe',
          description:
            'Without ready: 200 while the process answers. With ready: 200 when every link is loaded and reads work, else 503, also from the moment a shutdown begins (load balancers drain).',
          tag: 'service',
          access: 'public',
          parameters: [{ name: 'ready', in: 'query', description: 'Ask for readiness instead of liveness; any value, or none.', schema: { type: 'string' } }],
          responses: {
            200: json('Up (and, with ready, ready).', 'Healthz'),
            503: json('Not ready (only with ready).', {
              type: 'object',
              properties: { status: { type: 'string', const: 'not ready' }, detail: { type: 'string', description: 'Why, e.g. shutting down.' } },
              required: ['status', 'detail'],
              additionalProperties: false,
            }),
          },
        },
      },
    },
    {
      path: '/auth-check',
      // Tells a UI whether to prompt for a token before calling the API (docs/security.md).
      public: true,
      methods: { GET: (ctx) => reply.json(ctx.res, 200, authCheck) },
      doc: {
        GET: {
          operationId: 'getAuthCheck',
          summary: 'Whether the gate needs a bearer token',
          description: 'The UI calls it on load and asks for a token when auth_required is true.',
          tag: 'service',
          access: 'public',
          responses: { 200: json('The gate status.', 'AuthCheck') },
        },
      },
    },
    {
      path: '/api/deprecations',
      methods: { GET: (ctx) => reply.json(ctx.res, 200, notices) },
      doc: {
        GET: {
          operationId: 'listDeprecations',
          summary: 'The deprecation notices of this service',
          tag: 'service',
          access: 'gate',
          responses: { 200: json('Every current notice, as DeprecationNoticeNotification payloads.', 'DeprecationList') },
        },
      },
    },
    {
      path: '/mcp',
      // The MCP transport names exactly POST; GET (an SSE stream) and DELETE (a session) do not exist.
      allow: 'POST',
      methods: { POST: (ctx) => mcp(ctx.req, ctx.res) },
      doc: {
        POST: {
          operationId: 'mcp',
          summary: 'Model Context Protocol (Streamable HTTP, stateless)',
          description:
            `One JSON-RPC message per POST. initialize negotiates ${PROTOCOL_VERSIONS.join(', ')} (an unsupported request gets ${PROTOCOL_VERSIONS[0]}); ` +
            'methods: initialize, ping, tools/list, tools/call. A request is answered with one JSON object; notifications and responses with 202 and no body. ' +
            'No sessions: Mcp-Session-Id is never sent. Batches (JSON arrays) are 400 with -32600.',
          tag: 'mcp',
          access: 'gate',
          parameters: [ref('parameters', 'mcp_protocol_version'), ref('parameters', 'origin')],
          requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'JsonRpcMessage') } } },
          responses: {
            200: json('The JSON-RPC response (a tool failure is a result with isError: true; -32601 and -32602 are errors).', 'JsonRpcResponse'),
            202: empty('A notification or response was accepted. No body.'),
            400: {
              description:
                'Unsupported MCP-Protocol-Version (`detail`), or a body that is not one JSON-RPC message (a JSON-RPC error: -32700 malformed JSON, -32600 invalid request).',
              content: { 'application/json': { schema: { oneOf: [ref('schemas', 'Error'), ref('schemas', 'JsonRpcResponse')] } } },
            },
            403: json('The Origin is not allowed (DNS rebinding protection).', 'Error'),
            406: json('Accept excludes application/json.', 'Error'),
            413: ref('responses', 'PayloadTooLarge'),
            415: ref('responses', 'UnsupportedMediaType'),
            429: json(
              'shorten_url past CREATE_RATE_LIMIT for this client address: the JSON-RPC error -32029, its data.retry_after the seconds Retry-After says. Nothing was created.',
              'JsonRpcResponse',
              ['Retry-After'],
            ),
          },
          extensions: {
            'x-mcp-tools': TOOLS.map(({ name, title, description, annotations }) => ({ name, title, description, annotations })),
          },
        },
        GET: { operationId: 'mcpGet', summary: 'No server-sent event stream', tag: 'mcp', access: 'gate', responses: NOT_ALLOWED },
        DELETE: { operationId: 'mcpDelete', summary: 'No sessions to end', tag: 'mcp', access: 'gate', responses: NOT_ALLOWED },
      },
    },
    {
      path: '/metrics',
      // Behind the gate like every non-public path: Prometheus sends `Authorization: Bearer`.
      methods: { GET: async (ctx) => reply.send(ctx.res, 200, PROMETHEUS_TYPE, renderPrometheus(await metrics.collect())) },
      doc: {
        GET: {
          operationId: 'getMetrics',
          summary: 'Metrics in the Prometheus text format',
          description:
            'Prometheus text format 0.0.4: HTTP requests by route, method and status; request durations by route; redirects by result; ' +
            'links created and held; store write (fsync) durations; process memory, CPU and event-loop lag. docs/operations.md lists every metric.',
          tag: 'service',
          access: 'gate',
          responses: { 200: body('The metrics.', PROMETHEUS_TYPE, { type: 'string' }) },
        },
      },
    },
    {
      path: '/openapi.json',
      methods: { GET: (ctx) => reply.send(ctx.res, 200, JSON_TYPE, documented().openapi) },
      doc: {
        GET: {
          operationId: 'getOpenApi',
          summary: 'This OpenAPI 3.1 document',
          tag: 'contracts',
          access: 'gate',
          responses: { 200: body('The document.', JSON_TYPE, { type: 'object' }) },
        },
      },
    },
    {
      path: '/docs',
      methods: { GET: (ctx) => reply.send(ctx.res, 200, HTML_TYPE, documented().docs) },
      doc: {
        GET: {
          operationId: 'getDocs',
          summary: 'This document as an HTML reference',
          description: 'Self-contained: no script, one same-origin stylesheet; #deprecations lists the deprecations.',
          tag: 'contracts',
          access: 'gate',
          responses: { 200: body('The reference.', HTML_TYPE, { type: 'string' }) },
        },
      },
    },
    {
      path: '/schemas/v2/DeprecationNoticeNotification.json',
      methods: { GET: (ctx) => reply.send(ctx.res, 200, SCHEMA_TYPE, noticeSchema) },
      doc: {
        GET: {
          operationId: 'getDeprecationNoticeSchema',
          summary: 'JSON Schema (draft-07) of DeprecationNoticeNotification',
          description: 'The file schemas/v2/DeprecationNoticeNotification.json of the package, byte for byte.',
          tag: 'contracts',
          access: 'gate',
          responses: { 200: body('The schema.', SCHEMA_TYPE, { type: 'object' }) },
        },
      },
    },
    ...transferRoutes({ service, reply, deprecations, transfer: deps.transfer, baseUrl: config.baseUrl }),
    ...keyRoutes({ service, reply, deprecations, maxBodyBytes: config.maxBodyBytes }),
    ...domainRoutes({ service, reply, deprecations, maxBodyBytes: config.maxBodyBytes }),
    ...webhookRoutes({ service, webhooks: deps.webhooks ?? noWebhooks(service), reply, deprecations, maxBodyBytes: config.maxBodyBytes }),
    ...visitRoutes({ service, reply, deprecations }),
    ...visitTransferRoutes({ service, reply, deprecations, transfer: deps.transfer, baseUrl: config.baseUrl }),
    // The peers' surfaces (docs/compat.md), only when turned on: off, their paths are what they were.
    // Before the short links: `rest` is a reserved word while Shlink's surface is on.
    ...shlink,
    ...(config.yourlsApi === true
      ? [yourlsRoute({ service, reply, apiKeys: config.apiKeys ?? [], maxBodyBytes: config.maxBodyBytes, now: deps.now ?? Date.now })]
      : []),
    // Last: the API's `/:code` must stay the final route (see routes.ts).
    ...apiRoutes({
      service,
      reply,
      production: config.production,
      publicRedirects: config.publicRedirects ?? false,
      files: deps.files,
      deprecations,
      maxBodyBytes: config.maxBodyBytes,
      metrics,
    }),
  ];

  return table;
}
