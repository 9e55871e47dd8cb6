/**
 * The domains (docs/api.md, domains): `GET /api/domains` lists every domain of the instance with
 * its live links and its own redirects, `PATCH /api/domains/<host>` sets any of the three. Only an
 * admin key may.
 */
import { HttpError } from '../errors.ts';
import { jsonBodyError, mediaType, readJsonObject } from '../http/body.ts';
import type { RedirectsEdit } from '../links/domain-redirects.ts';
import { body, json, ref } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';
import { adminKeyCheck } from './admin-key.ts';
import { failureError } from './outcomes.ts';
import type { ApiRoute, RouteDeps } from './route-types.ts';

const URL_OR_NULL = { type: ['string', 'null'] } as const;
const REDIRECTS = {
  base_url: { ...URL_OR_NULL, description: 'Where GET / of the domain goes (the UI is served on the default domain only, unless PRODUCTION); null: a 404.' },
  not_found: { ...URL_OR_NULL, description: 'Where an unknown code goes instead of the 404 page; null: the page.' },
  expired: { ...URL_OR_NULL, description: 'Where an expired or used-up link goes instead of the 410 page; null: the page.' },
};
const DOMAIN_SCHEMA = {
  type: 'object',
  required: ['domain', 'is_default', 'links', 'redirects'],
  additionalProperties: false,
  properties: {
    domain: { type: 'string', description: "The host (with its port, if any); the default domain is base_url's." },
    is_default: { type: 'boolean' },
    links: { type: 'integer', minimum: 0, description: 'Its live links.' },
    redirects: { type: 'object', required: Object.keys(REDIRECTS), additionalProperties: false, properties: REDIRECTS },
  },
};

const DOMAINS_DOC: RouteDoc = {
  GET: {
    operationId: 'listDomains',
    summary: 'The domains, the default one first, with their redirects',
    tag: 'admin',
    access: 'admin',
    responses: {
      200: body('Every domain of DOMAINS and the default one.', 'application/json', {
        type: 'object',
        required: ['count', 'domains'],
        additionalProperties: false,
        properties: { count: { type: 'integer' }, domains: { type: 'array', items: DOMAIN_SCHEMA } },
      }),
      503: ref('responses', 'Unavailable'),
    },
  },
};

const DOMAIN_DOC: RouteDoc = {
  PATCH: {
    operationId: 'setDomainRedirects',
    summary: "Set a domain's redirects",
    description:
      'A JSON object holding any of base_url, not_found and expired: an absolute http(s) URL (checked as a link target is), or null to clear it; an absent field stays. ' +
      'Each redirect is a 302 and never a visit. Another field is 400.',
    tag: 'admin',
    access: 'admin',
    parameters: [ref('parameters', 'host')],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: REDIRECTS } } } },
    responses: {
      200: json('The domain as it is now.', DOMAIN_SCHEMA),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
      413: ref('responses', 'PayloadTooLarge'),
      415: ref('responses', 'UnsupportedMediaType'),
      503: ref('responses', 'Unavailable'),
    },
  },
};

/** The body's names, and the service's. */
const FIELDS: ReadonlyMap<string, keyof RedirectsEdit> = new Map([
  ['base_url', 'baseUrl'],
  ['not_found', 'notFound'],
  ['expired', 'expired'],
] as const);

export function domainRoutes({
  service,
  reply,
  deprecations,
  maxBodyBytes,
}: Pick<RouteDeps, 'service' | 'reply' | 'deprecations' | 'maxBodyBytes'>): ApiRoute[] {
  const { withKey } = adminKeyCheck(service, deprecations);
  return [
    {
      path: '/api/domains',
      methods: {
        GET: withKey('domains', async (ctx, notice) => {
          const listed = await service.listDomains();
          if (!listed.ok) throw failureError(listed);
          reply.json(ctx.res, 200, { count: listed.domains.length, domains: listed.domains }, notice);
        }),
      },
      doc: DOMAINS_DOC,
    },
    {
      path: '/api/domains/:host',
      methods: {
        PATCH: withKey('domains', async (ctx, notice) => {
          const read = await readJsonObject(ctx.req, maxBodyBytes);
          const type = mediaType(ctx.req.headers['content-type']);
          if (type !== 'application/json' && !type.endsWith('+json'))
            throw new HttpError(415, "send the domain's redirects as a JSON object (Content-Type: application/json)");
          if (!read.ok) throw jsonBodyError(read.fault);
          const edit: RedirectsEdit = {};
          for (const [name, value] of Object.entries(read.value)) {
            const field = FIELDS.get(name);
            if (field === undefined)
              throw new HttpError(400, `${JSON.stringify(name)} is not a redirect of a domain; a change may hold ${[...FIELDS.keys()].join(', ')}`);
            edit[field] = value;
          }
          const changed = await service.setRedirects(ctx.params['host']!, edit);
          if (!changed.ok) throw failureError(changed);
          reply.json(ctx.res, 200, changed.domain, notice);
        }),
      },
      doc: DOMAIN_DOC,
    },
  ];
}
