/**
 * The route table of the shortening API (docs/api.md), as data: path, handlers by method, which
 * methods are public when the gate is on (docs/security.md; a route without `public` is protected, and
 * short links are public only with `publicRedirects`), and the documentation of each operation
 * (`routes-openapi.ts`), from which `openapi.ts` builds the OpenAPI document. Handlers are small:
 * translate the request into the service's values, call the service, answer; a failed outcome
 * becomes its status through `outcomes.ts`. The UI's routes come first
 * (`ui-routes.ts`); the order matters only for `/:code`, which comes last and never takes a
 * reserved first segment.
 */
import { mediaType, readBody, parseFields } from '../http/body.ts';
import { HttpError } from '../errors.ts';
import { passwordFromForm } from './password-page.ts';
import { routingInputOf, type RoutingInput } from '../links/routing-input.ts';
import { RESERVED_SEGMENTS } from '../links/codes.ts';
import { flatten } from '../http/headers.ts';
import { adminKeyCheck, keepNotice } from './admin-key.ts';
import { TEXT_TYPE } from '../http/respond.ts';
import { answerVisitOn, CODE_ROUTE } from './redirect.ts';
import type { Domain } from '../links/domains.ts';
import type { ListQuery, OrphanType, Visit } from '../links/service.ts';
import { readEdit } from './json-body.ts';
import type { Ctx } from '../http/context.ts';
import { followDoc, HEALTH_DOC, LIST_DOC, LOOKUP_DOC, SHORTEN_DOC, URL_DOC } from './routes-openapi.ts';
import { sendList } from './list-json.ts';
import { failureError } from './outcomes.ts';
import { uiRoutes } from './ui-routes.ts';
import { qrRoute } from './qr-route.ts';
import { rulesRoute } from './rules-routes.ts';
import { domainParam, type ApiRoute, type RouteDeps } from './route-types.ts';

export type { ApiRoute, RouteDeps } from './route-types.ts';

/** The list's query string as the service takes it: the text as sent, every `tag` (each may hold several, comma-separated). */
function listQuery(query: URLSearchParams): ListQuery {
  const text = (name: string): string | undefined => query.get(name) ?? undefined;
  return { limit: text('limit'), offset: text('offset'), q: text('q'), tags: query.getAll('tag'), tagsAsText: true, domain: text('domain') };
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Routing fields as a query string or a form gives them: numbers as digits, booleans as words. */
const withText = (input: RoutingInput | undefined, textual: boolean): RoutingInput | undefined => (input === undefined ? undefined : { ...input, textual });
/** A password form's body: one field of at most 128 characters, escaped, fits many times over. */
const PASSWORD_FORM_LIMIT = 4096;

export function apiRoutes({ service, reply, production, publicRedirects, files, deprecations, maxBodyBytes, metrics }: RouteDeps): ApiRoute[] {
  const { keyOf, withKey } = adminKeyCheck(service, deprecations);

  function redirect(ctx: Ctx, hit: Visit, domain: Domain): void | Promise<void> {
    metrics.redirected(hit.kind);
    const orphan = ctx.method === 'GET' ? (type: OrphanType) => service.recordOrphan(type, domain, ctx.req) : undefined;
    return answerVisitOn(reply, ctx.res, hit, !production, (what) => service.elsewhere(domain, what), orphan);
  }

  async function shorten(ctx: Ctx): Promise<void> {
    // A state-changing GET is deprecated: every answer to it says so, errors included.
    const notice = ctx.method === 'GET' ? deprecations.headers('shorten-with-get') : [];
    try {
      // The key first (create_access): a wrong key, or a role that may not create, learns nothing more.
      const { principal } = await keyOf(ctx, 'create-as-configured');
      const query = ctx.query();
      const fields = parseFields(await readBody(ctx.req, maxBodyBytes), ctx.req.headers['content-type']);
      // A query parameter wins over the body field of the same name (docs/api.md).
      const field = (name: string): unknown => (query.has(name) ? query.get(name) : fields.get(name));
      // tags may repeat in a query string or a form (`tags=a&tags=b`): every value counts.
      const every = (name: string): unknown => (query.has(name) ? query.getAll(name) : fields.all(name));
      const textual = (name: string): boolean => query.has(name) || fields.textual;
      const outcome = await service.shorten({
        url: field('url'),
        retentionDays: field('retention_days'),
        code: field('code'),
        maxVisits: field('max_visits'),
        title: field('title'),
        tags: every('tags'),
        textual: { retentionDays: textual('retention_days'), maxVisits: textual('max_visits'), tags: textual('tags') },
        from: ctx.req,
        author: principal?.id,
        keyDomain: principal?.domain,
        domain: field('domain'),
        // From the body only: a password in a query string would reach access logs and histories.
        routing: withText(
          routingInputOf((name) => fields.get(name)),
          fields.textual,
        ),
      });
      if (!outcome.ok) throw failureError(outcome);
      const { short_url } = outcome.record;
      reply.send(ctx.res, 201, TEXT_TYPE, short_url, ['Location', short_url, ...flatten(notice)]);
    } catch (err) {
      throw keepNotice(err, notice);
    }
  }

  return [
    ...uiRoutes({
      reply,
      production,
      files,
      home: {
        domainOf: (req) => service.domains.ofRequest(req),
        baseUrl: (domain) => service.elsewhere(domain, 'baseUrl'),
        orphan: (req, domain) => service.recordOrphan('base_url', domain, req),
      },
    }),
    {
      path: '/api/health',
      methods: { GET: (ctx) => reply.json(ctx.res, 200, { status: 'ok', service: 'url-shortener' }) },
      doc: HEALTH_DOC,
    },
    {
      path: '/api/shorten',
      methods: { GET: shorten, POST: shorten },
      // A prefetcher's HEAD must not create a link; docs/api.md writes this Allow exactly.
      noHead: true,
      allow: 'GET, POST',
      doc: SHORTEN_DOC,
    },
    {
      path: '/api/urls',
      methods: {
        GET: withKey('list', async (ctx, notice, principal) => {
          const page = await service.listing(listQuery(ctx.query()), principal);
          if (!page.ok) throw failureError(page);
          try {
            await sendList(reply, ctx.res, page, ['X-Total-Count', String(page.total), ...notice]);
          } finally {
            page.release();
          }
        }),
      },
      doc: LIST_DOC,
    },
    {
      path: '/api/urls/:code',
      methods: {
        GET: async (ctx) => {
          const outcome = await service.get(ctx.params['code']!, domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record);
        },
        PATCH: withKey('edit', async (ctx, notice) => {
          const outcome = await service.update(ctx.params['code']!, await readEdit(ctx.req, maxBodyBytes), domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record, notice);
        }),
        DELETE: withKey('edit', async (ctx, notice) => {
          const outcome = await service.remove(ctx.params['code']!, domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.empty(ctx.res, 204, notice);
        }),
      },
      doc: URL_DOC,
    },
    qrRoute({ service, reply }),
    rulesRoute({ service, reply, maxBodyBytes }, withKey),
    {
      path: '/api/lookup',
      methods: {
        GET: async (ctx) => {
          const outcome = await service.lookup(ctx.query().get('url') ?? undefined, domainParam(ctx));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record);
        },
      },
      doc: LOOKUP_DOC,
    },
    {
      path: CODE_ROUTE,
      accept: (segment) => !RESERVED_SEGMENTS.has(segment),
      // A gated instance is a private one, reached through a proxy that adds the token (docs/security.md):
      // its links are gated like the rest unless PUBLIC_REDIRECTS opens them — GET, HEAD and a
      // password form's POST only, any other method on a link stays behind the gate.
      ...(publicRedirects ? { public: ['GET', 'HEAD', 'POST'] as const } : {}),
      methods: {
        GET: (ctx) => {
          // HEAD is answered by this handler too, and does not count as a visit. `?go` is the
          // preview page's "Continue": a visit, never a preview (docs/api.md, link previews).
          const domain = service.domains.ofRequest(ctx.req);
          const hit = service.visit(ctx.params['code']!, ctx.method === 'GET', ctx.req, ctx.query().has('go'), domain);
          if (hit instanceof Promise) return hit.then((decided) => redirect(ctx, decided, domain));
          return redirect(ctx, hit, domain);
        },
        // The password form of a protected link posts here (docs/api.md, password-protected
        // links); a link without a password answers as to a GET.
        POST: async (ctx) => {
          if (mediaType(ctx.req.headers['content-type']) !== FORM_TYPE) throw new HttpError(415, `send the password as a form (Content-Type: ${FORM_TYPE})`);
          const posted = passwordFromForm((await readBody(ctx.req, PASSWORD_FORM_LIMIT)).toString('utf8'));
          const domain = service.domains.ofRequest(ctx.req);
          const hit = await service.visit(ctx.params['code']!, true, ctx.req, true, domain, posted ?? '');
          return redirect(ctx, hit, domain);
        },
      },
      doc: followDoc(publicRedirects),
    },
  ];
}
