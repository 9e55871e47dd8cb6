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
import type { Domain } from '../links/domains.ts';
import type { MaybePromise } from '../links/service.ts';
import type { ApiRoute } from './route-types.ts';
import type { RouteDoc } from '../published/openapi.ts';

export interface UiRouteDeps {
  reply: Responder;
  production: boolean;
  files: ReadonlyMap<string, StaticFile>;
  /**
   * The domain of a request (null: the default one) and where its `GET /` goes when the UI is not
   * served there (docs/api.md, domains); absent: one domain, no redirect.
   */
  home?:
    | {
        domainOf(req: Ctx['req']): Domain;
        baseUrl(domain: Domain): MaybePromise<string | null>;
        /** Records the orphan visit of a `GET /` the UI does not answer (docs/analytics.md). */
        orphan(req: Ctx['req'], domain: Domain): void;
      }
    | undefined;
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

/** `GET /`: the UI, or another domain's base_url redirect. */
const UI_DOC: RouteDoc = {
  GET: {
    operationId: 'getUi',
    summary: 'The web UI',
    tag: 'ui',
    access: 'public',
    responses: {
      200: body('The UI page.', HTML_TYPE, HTML_PAGE),
      302: empty(
        "Where the domain's base_url redirect sends GET / where the UI is not served: on another domain than the default one, or with PRODUCTION=true.",
        ['Location'],
      ),
      404: empty('No UI here (another domain, or PRODUCTION=true) and no base_url redirect. Empty body.'),
    },
  },
};

export function uiRoutes({ reply, production, files, home }: UiRouteDeps): ApiRoute[] {
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
          // The UI is served on the default domain only; elsewhere, and with PRODUCTION, `/` is the
          // domain's base_url redirect when it has one, else a 404.
          const domain = home === undefined ? null : home.domainOf(ctx.req);
          if (!production && domain === null) return serveFile(ctx, 'index.html');
          if (ctx.method === 'GET') home?.orphan(ctx.req, domain);
          const to = home?.baseUrl(domain) ?? null;
          const answer = (url: string | null): void => {
            if (url === null) throw new HttpError(404);
            reply.found(ctx.res, url);
          };
          if (to instanceof Promise) return to.then(answer);
          answer(to);
        },
      },
      doc: UI_DOC,
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
