/**
 * The route table of the shortening API (docs/api.md), as data: path, handlers by method, which
 * methods are public when the gate is on (docs/security.md; a route without `public` is protected, and
 * short links are public only with `publicRedirects`), and the documentation of each operation,
 * from which `openapi.ts` builds the OpenAPI document. Handlers are small: parse, call the service,
 * answer; a failed outcome becomes its status through `outcomes.ts`. The UI's routes come first
 * (`ui-routes.ts`); the order matters only for `/:code`, which comes last and never takes a
 * reserved first segment.
 */
import type { ServerResponse } from 'node:http';
import { readBody, parseFields } from '../http/body.ts';
import { RESERVED_SEGMENTS } from '../links/codes.ts';
import { flatten } from '../http/headers.ts';
import { adminKeyCheck, keepNotice } from './admin-key.ts';
import { HTML_PAGE, body, empty, json, ref } from '../published/openapi-parts.ts';
import { HTML_TYPE, TEXT_TYPE } from '../http/respond.ts';
import { answerVisit } from './redirect.ts';
import type { Visit } from '../links/service.ts';
import { readJsonObject } from './json-body.ts';
import { parsePaging, parseSearch, parseTagFilter } from '../links/validate.ts';
import type { Ctx } from '../http/context.ts';
import { sendList } from './list-json.ts';
import { failureError } from './outcomes.ts';
import { uiRoutes } from './ui-routes.ts';
import { qrRoute } from './qr-route.ts';
import type { ApiRoute, RouteDeps } from './route-types.ts';

export type { ApiRoute, RouteDeps } from './route-types.ts';

const SHORTENED = (deprecated: boolean) =>
  body('Created: the body is the short URL only.', TEXT_TYPE, { type: 'string' }, deprecated ? ['Location', 'Deprecation', 'Link'] : ['Location']);

const SHORTEN_ERRORS = {
  400: ref('responses', 'BadRequest'),
  409: ref('responses', 'Conflict'),
  413: ref('responses', 'PayloadTooLarge'),
  415: ref('responses', 'UnsupportedMediaType'),
  429: ref('responses', 'TooManyRequests'),
  503: ref('responses', 'Unavailable'),
};

const SHORTEN_PARAMS = [
  ref('parameters', 'shorten_url'),
  ref('parameters', 'retention_days'),
  ref('parameters', 'shorten_code'),
  ref('parameters', 'max_visits'),
  ref('parameters', 'title'),
  ref('parameters', 'tags'),
];

const VISITS =
  'GET counts a visit; HEAD answers as the next GET would, without counting. A link with max_visits redirects its first max_visits counted visits, then answers 410; a 410 is not a visit. ' +
  'Paths whose code has characters outside A-Z a-z 0-9 - _ are 404.';

const SHORTEN_DESCRIPTION =
  'Fields url (required), retention_days (0–36500, 0 or absent = forever), code (a custom code of A-Z a-z 0-9 - _, MIN_SHORT_LENGTH to MAX_SHORT_LENGTH characters, not a reserved word; absent = generated) ' +
  'max_visits (1–2147483647 counted visits, absent or null = unlimited), title (at most 512 characters; empty, null or absent = none) ' +
  'and tags (at most 20 distinct tags of 1–50 characters without commas, trimmed and kept sorted: a JSON array, or in a query string or form the field repeated, each value holding comma-separated tags) ' +
  "come as query parameters or as a JSON or form body (64 KiB at most); a query parameter wins over the body field (every tags parameter over the body's tags). " +
  'The same URL shortened twice gets two codes. A custom code held by a live link is 409; of concurrent requests for one code exactly one wins.';

export function apiRoutes({ service, reply, production, publicRedirects, files, deprecations, maxBodyBytes, metrics }: RouteDeps): ApiRoute[] {
  const { adminOnly } = adminKeyCheck(service, deprecations);

  function redirect(res: ServerResponse, hit: Visit): void {
    metrics.redirected(hit.kind);
    answerVisit(reply, res, hit, !production);
  }

  async function shorten(ctx: Ctx): Promise<void> {
    // A state-changing GET is deprecated: every answer to it says so, errors included.
    const notice = ctx.method === 'GET' ? deprecations.headers('shorten-with-get') : [];
    try {
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
      });
      if (!outcome.ok) throw failureError(outcome);
      const { short_url } = outcome.record;
      reply.send(ctx.res, 201, TEXT_TYPE, short_url, ['Location', short_url, ...flatten(notice)]);
    } catch (err) {
      throw keepNotice(err, notice);
    }
  }

  return [
    ...uiRoutes({ reply, production, files }),
    {
      path: '/api/health',
      methods: { GET: (ctx) => reply.json(ctx.res, 200, { status: 'ok', service: 'url-shortener' }) },
      doc: {
        GET: { operationId: 'getHealth', summary: 'Health check of the API', tag: 'service', access: 'gate', responses: { 200: json('Up.', 'Health') } },
      },
    },
    {
      path: '/api/shorten',
      methods: { GET: shorten, POST: shorten },
      // A prefetcher's HEAD must not create a link; docs/api.md writes this Allow exactly.
      noHead: true,
      allow: 'GET, POST',
      doc: {
        POST: {
          operationId: 'shortenUrl',
          summary: 'Create a short link',
          description: SHORTEN_DESCRIPTION,
          tag: 'links',
          access: 'gate',
          parameters: SHORTEN_PARAMS,
          requestBody: {
            required: false,
            content: {
              'application/json': { schema: ref('schemas', 'ShortenInput') },
              'application/x-www-form-urlencoded': { schema: ref('schemas', 'ShortenForm') },
            },
          },
          responses: { 201: SHORTENED(false), ...SHORTEN_ERRORS },
        },
        GET: {
          operationId: 'shortenUrlWithGet',
          summary: 'Create a short link with GET (deprecated)',
          description:
            'Deprecated: use POST. Behaves exactly as POST with query parameters; every response carries Deprecation and Link headers. HEAD is 405 with Allow: GET, POST (a HEAD must change nothing).',
          tag: 'links',
          access: 'gate',
          deprecated: true,
          parameters: SHORTEN_PARAMS,
          responses: { 201: SHORTENED(true), ...SHORTEN_ERRORS },
        },
      },
    },
    {
      path: '/api/urls',
      methods: {
        GET: adminOnly(async (ctx, notice) => {
          const query = ctx.query();
          const page = await service.listing({ ...parsePaging(query), q: parseSearch(query), tags: parseTagFilter(query) });
          try {
            await sendList(reply, ctx.res, page, ['X-Total-Count', String(page.total), ...notice]);
          } finally {
            page.release();
          }
        }),
      },
      doc: {
        GET: {
          operationId: 'listUrls',
          summary: 'List live links, newest first',
          description:
            'With q, only the links whose code, original URL or title contains it (case-insensitively); with tag (repeatable, or comma-separated), only the links having every tag named (compared exactly, case-sensitively). ' +
            'X-Total-Count counts the links the filters keep, all pages together.',
          tag: 'admin',
          access: 'admin',
          parameters: [ref('parameters', 'limit'), ref('parameters', 'offset'), ref('parameters', 'q'), ref('parameters', 'tag')],
          responses: {
            200: json('A page of links; Deprecation and Link only when the key came from api_key.', 'List', ['X-Total-Count', 'Deprecation', 'Link']),
            400: ref('responses', 'BadRequest'),
          },
        },
      },
    },
    {
      path: '/api/urls/:code',
      methods: {
        GET: async (ctx) => {
          const outcome = await service.get(ctx.params['code']!);
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record);
        },
        PATCH: adminOnly(async (ctx, notice) => {
          const outcome = await service.update(ctx.params['code']!, await readJsonObject(ctx.req, maxBodyBytes));
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record, notice);
        }),
        DELETE: adminOnly(async (ctx, notice) => {
          const outcome = await service.remove(ctx.params['code']!);
          if (!outcome.ok) throw failureError(outcome);
          reply.empty(ctx.res, 204, notice);
        }),
      },
      doc: {
        GET: {
          operationId: 'getUrl',
          summary: 'The record of one live link',
          tag: 'links',
          access: 'gate',
          responses: { 200: json('The record.', 'Record'), 404: ref('responses', 'NotFound') },
        },
        PATCH: {
          operationId: 'updateUrl',
          summary: 'Edit a link',
          description:
            'A JSON object holding any of url, retention_days, max_visits (null clears the limit), title (null or empty clears it) and tags (an array replacing the tags; [] clears them), each validated as on a create; any other field is 400. ' +
            'The code, created_at and visit_count never change; retention_days counts from created_at, so it can expire the link at once, and a max_visits at or below visit_count uses it up at once. ' +
            'The key is checked first (403), then the body (415, 400), then the code (404). On disk before the answer.',
          tag: 'admin',
          access: 'admin',
          requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'UpdateInput') } } },
          responses: {
            200: json('The updated record. Deprecation and Link only when the key came from api_key.', 'Record', ['Deprecation', 'Link']),
            400: ref('responses', 'BadRequest'),
            404: ref('responses', 'NotFound'),
            413: ref('responses', 'PayloadTooLarge'),
            415: ref('responses', 'UnsupportedMediaType'),
            503: ref('responses', 'Unavailable'),
          },
        },
        DELETE: {
          operationId: 'deleteUrl',
          summary: 'Delete a link',
          tag: 'admin',
          access: 'admin',
          responses: {
            204: empty('Deleted (on disk before the answer). Deprecation and Link only when the key came from api_key.', ['Deprecation', 'Link']),
            404: ref('responses', 'NotFound'),
            503: ref('responses', 'Unavailable'),
          },
        },
      },
    },
    qrRoute({ service, reply }),
    {
      path: '/api/lookup',
      methods: {
        GET: async (ctx) => {
          const outcome = await service.lookup(ctx.query().get('url') ?? undefined);
          if (!outcome.ok) throw failureError(outcome);
          reply.json(ctx.res, 200, outcome.record);
        },
      },
      doc: {
        GET: {
          operationId: 'lookupUrl',
          summary: 'The newest live link of an original URL',
          tag: 'links',
          access: 'gate',
          parameters: [ref('parameters', 'lookup_url')],
          responses: {
            200: json('The newest record whose original_url matches.', 'Record'),
            400: ref('responses', 'BadRequest'),
            404: ref('responses', 'NotFound'),
          },
        },
      },
    },
    {
      path: '/:code',
      accept: (segment) => !RESERVED_SEGMENTS.has(segment),
      // A gated instance is a private one, reached through a proxy that adds the token (docs/security.md):
      // its links are gated like the rest unless PUBLIC_REDIRECTS opens them — GET and HEAD only,
      // any other method on a link stays behind the gate.
      ...(publicRedirects ? { public: ['GET', 'HEAD'] as const } : {}),
      methods: {
        GET: (ctx) => {
          // HEAD is answered by this handler too, and does not count as a visit. `?go` is the
          // preview page's "Continue": a visit, never a preview (docs/api.md, link previews).
          const hit = service.visit(ctx.params['code']!, ctx.method === 'GET', ctx.req, ctx.query().has('go'));
          if (hit instanceof Promise) return hit.then((decided) => redirect(ctx.res, decided));
          redirect(ctx.res, hit);
        },
      },
      doc: {
        GET: {
          operationId: 'followLink',
          summary: 'Follow a short link',
          description: publicRedirects
            ? 'Public on this server (PUBLIC_REDIRECTS=true): anyone may open a short link, even with the gate on. ' + VISITS
            : 'Behind the gate like the API when the server runs with API_TOKEN (a gated instance is a private one, reached through a proxy that adds the header); PUBLIC_REDIRECTS=true makes short links public. ' +
              VISITS,
          tag: 'links',
          access: publicRedirects ? 'public' : 'gate',
          responses: {
            302: empty('Redirect to the original URL.', ['Location', 'Cache-Control']),
            404: body('No such link: a small "Link not found" page.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
            410: body(
              'The link has expired (a small "This link has expired" page), or its visit limit is used up (a small "This link has reached its visit limit" page; not counted as a visit).',
              HTML_TYPE,
              HTML_PAGE,
              ['Cache-Control'],
            ),
            503: json('A counted visit of a link with a visit limit could not be made durable (storage not writable); no visit was granted.', 'Error'),
          },
        },
      },
    },
  ];
}
