/**
 * The route table of the shortening API and the UI (SPEC §4), as data: path, handlers by method,
 * and which methods are public when the gate is on (SPEC §5; a route without `public` is protected).
 * Handlers are small: parse, call the service, answer. The order matters only for `/:code`, which
 * comes last and never takes a reserved first segment.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, parseFields } from './body.ts';
import { RESERVED_SEGMENTS } from './codes.ts';
import { HttpError } from './errors.ts';
import { HTML_TYPE, TEXT_TYPE, htmlPage, type Responder } from './respond.ts';
import type { Route } from './router.ts';
import type { Service } from './service.ts';
import type { StaticFile } from './static.ts';
import { parsePaging } from './validate.ts';

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  params: Record<string, string>;
  /** The parsed query string (parsed on first use). */
  query(): URLSearchParams;
}

export type Handler = (ctx: Ctx) => void | Promise<void>;

export interface RouteDeps {
  service: Service;
  reply: Responder;
  production: boolean;
  files: ReadonlyMap<string, StaticFile>;
  /** True when the bearer-token gate is on (`GET /auth-check` tells the UI). */
  authRequired: boolean;
  /** Largest accepted request body, bytes. */
  maxBodyBytes: number;
}

const NOT_FOUND_PAGE = htmlPage('Link not found', 'There is no short link at this address. Check it for typos.');
const EXPIRED_PAGE = htmlPage('This link has expired', 'The owner of this short link gave it a limited lifetime, and it has passed.');
const NO_STORE = ['Cache-Control', 'private, no-store'];

/** `If-None-Match` per RFC 9110 §13.1.2: `*`, or a list of tags compared weakly (a `W/` prefix ignored). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

export function apiRoutes({ service, reply, production, files, authRequired, maxBodyBytes }: RouteDeps): Route<Handler>[] {
  /** The admin key: `X-API-Key` header, else the `api_key` query parameter. 403, empty, before anything else. */
  function requireAdmin(ctx: Ctx): void {
    const header = ctx.req.headers['x-api-key'];
    const key = typeof header === 'string' ? header : (ctx.query().get('api_key') ?? undefined);
    if (!service.isAdminKey(key)) throw new HttpError(403);
  }

  function serveFile(ctx: Ctx, name: string): void {
    const file = files.get(name);
    if (!file) throw new HttpError(404);
    const headers = ['ETag', file.etag, 'Cache-Control', 'no-cache'];
    if (etagMatches(ctx.req.headers['if-none-match'], file.etag)) return reply.empty(ctx.res, 304, headers);
    reply.send(ctx.res, 200, file.type, file.body, headers);
  }

  async function shorten(ctx: Ctx): Promise<void> {
    const query = ctx.query();
    const fields = parseFields(await readBody(ctx.req, maxBodyBytes), ctx.req.headers['content-type']);
    // A query parameter wins over the body field of the same name (SPEC §4).
    const fromQuery = query.has('retention_days');
    const record = await service.shorten({
      url: query.has('url') ? query.get('url') : fields.get('url'),
      retentionDays: fromQuery ? query.get('retention_days') : fields.get('retention_days'),
      textual: fromQuery || fields.textual,
    });
    reply.send(ctx.res, 201, TEXT_TYPE, record.short_url, ['Location', record.short_url]);
  }

  return [
    {
      path: '/',
      public: true,
      methods: {
        GET: (ctx) => {
          if (production) throw new HttpError(404);
          serveFile(ctx, 'index.html');
        },
      },
    },
    { path: '/static/*', public: true, methods: { GET: (ctx) => serveFile(ctx, ctx.params['*']!) } },
    // For load balancers and probes: public, and independent of the API's own /api/health.
    { path: '/healthz', public: true, methods: { GET: (ctx) => reply.json(ctx.res, 200, { status: 'ok' }) } },
    // Tells a UI whether to prompt for a token before calling the API (SPEC §5.6).
    { path: '/auth-check', public: true, methods: { GET: (ctx) => reply.json(ctx.res, 200, { auth_required: authRequired }) } },
    {
      path: '/api/health',
      methods: { GET: (ctx) => reply.json(ctx.res, 200, { status: 'ok', service: 'url-shortener' }) },
    },
    { path: '/api/shorten', methods: { GET: shorten, POST: shorten } },
    {
      path: '/api/urls',
      methods: {
        GET: (ctx) => {
          requireAdmin(ctx);
          const { total, urls } = service.list(parsePaging(ctx.query()));
          reply.json(ctx.res, 200, { count: urls.length, urls }, ['X-Total-Count', String(total)]);
        },
      },
    },
    {
      path: '/api/urls/:code',
      methods: {
        GET: (ctx) => {
          const record = service.get(ctx.params['code']!);
          if (!record) throw new HttpError(404);
          reply.json(ctx.res, 200, record);
        },
        DELETE: async (ctx) => {
          requireAdmin(ctx);
          if (!(await service.remove(ctx.params['code']!))) throw new HttpError(404);
          reply.empty(ctx.res, 204);
        },
      },
    },
    {
      path: '/api/lookup',
      methods: {
        GET: (ctx) => {
          const record = service.lookup(ctx.query().get('url') ?? undefined);
          if (!record) throw new HttpError(404);
          reply.json(ctx.res, 200, record);
        },
      },
    },
    {
      path: '/:code',
      accept: (segment) => !RESERVED_SEGMENTS.has(segment),
      // Short links exist to be opened by anyone; any other method on them stays behind the gate.
      public: ['GET', 'HEAD'],
      methods: {
        GET: (ctx) => {
          // HEAD is answered by this handler too, and does not count as a visit.
          const hit = service.visit(ctx.params['code']!, ctx.method === 'GET');
          if (hit.kind === 'found') return reply.empty(ctx.res, 302, ['Location', hit.url, ...NO_STORE]);
          if (hit.kind === 'expired') return reply.send(ctx.res, 410, HTML_TYPE, EXPIRED_PAGE, NO_STORE);
          reply.send(ctx.res, 404, HTML_TYPE, NOT_FOUND_PAGE, NO_STORE);
        },
      },
    },
  ];
}
