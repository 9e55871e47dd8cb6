/**
 * The routes that serve files as they are: the web UI (`/`, docs/api.md), its static files, and
 * `robots.txt`. Same shape as the link routes (`routes.ts`): data, a small handler per method, and
 * the documentation of each operation.
 */
import { HttpError } from '../errors.ts';
import { HTML_PAGE, body, empty } from '../published/openapi-parts.ts';
import { HTML_TYPE, TEXT_TYPE, type Responder } from '../http/respond.ts';
import type { StaticFile } from '../http/static.ts';
import type { Ctx } from '../http/context.ts';
import type { ApiRoute } from './route-types.ts';

export interface UiRouteDeps {
  reply: Responder;
  production: boolean;
  files: ReadonlyMap<string, StaticFile>;
}

/** Crawlers would use up visit limits and, through the deprecated GET, create links: all is off limits. */
export const ROBOTS_TXT = 'User-agent: *\nDisallow: /\n';

/** `If-None-Match` per RFC 9110 §13.1.2: `*`, or a list of tags compared weakly (a `W/` prefix ignored). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

export function uiRoutes({ reply, production, files }: UiRouteDeps): ApiRoute[] {
  function serveFile(ctx: Ctx, name: string): void {
    const file = files.get(name);
    if (!file) throw new HttpError(404);
    const headers = ['ETag', file.etag, 'Cache-Control', 'no-cache'];
    if (etagMatches(ctx.req.headers['if-none-match'], file.etag)) return reply.empty(ctx.res, 304, headers);
    reply.send(ctx.res, 200, file.type, file.body, headers);
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
      doc: {
        GET: {
          operationId: 'getUi',
          summary: 'The web UI',
          tag: 'ui',
          access: 'public',
          responses: { 200: body('The UI page.', HTML_TYPE, HTML_PAGE), 404: empty('PRODUCTION=true: no UI. Empty body.') },
        },
      },
    },
    {
      path: '/static/*',
      public: true,
      methods: { GET: (ctx) => serveFile(ctx, ctx.params['*']!) },
      doc: {
        GET: {
          operationId: 'getStaticFile',
          summary: 'A file of the UI (and the stylesheet of /docs)',
          description: 'Served from memory with a strong ETag and Cache-Control: no-cache; If-None-Match revalidates.',
          tag: 'ui',
          access: 'public',
          responses: {
            200: body('The file, with its content type (text/css for docs.css).', '*/*', {}, ['ETag', 'Cache-Control']),
            304: empty('Not modified (If-None-Match matched).', ['ETag', 'Cache-Control']),
            404: empty('No such file. Empty body.'),
          },
        },
      },
    },
    {
      path: '/robots.txt',
      methods: { GET: (ctx) => reply.send(ctx.res, 200, TEXT_TYPE, ROBOTS_TXT) },
      doc: {
        GET: {
          operationId: 'getRobotsTxt',
          summary: 'Keeps crawlers out',
          description: 'Crawlers would use up visit limits and create links; every path is disallowed.',
          tag: 'service',
          access: 'gate',
          responses: { 200: body('`User-agent: *` and `Disallow: /`.', TEXT_TYPE, { type: 'string', const: ROBOTS_TXT }) },
        },
      },
    },
  ];
}
