/**
 * `GET` and `PUT /api/urls/<code>/rules`: a link's redirect rules alone (docs/api.md, redirect
 * rules). `PUT` replaces the whole list, as the record's `rules` field does on an edit; `[]`
 * removes them all. The body and the answer are `{"rules": [...]}`, the record's own name.
 */
import { HttpError } from '../errors.ts';
import { jsonBodyError, mediaType, readJsonObject } from '../http/body.ts';
import type { RouteHandler } from '../http/context.ts';
import type { Action, Principal } from '../links/access.ts';
import type { Ctx } from '../http/context.ts';
import { MAX_RULES } from '../links/redirect-rules.ts';
import { json, ref } from '../published/openapi-parts.ts';
import { RULES_SCHEMA } from '../published/routing-schemas.ts';
import { failureError } from './outcomes.ts';
import { DOMAIN } from './routes-openapi.ts';
import { domainParam, type ApiRoute, type RouteDeps } from './route-types.ts';

type WithKey = (action: Action, handler: (ctx: Ctx, notice: readonly string[], principal: Principal) => Promise<void>) => RouteHandler;

const RULES_BODY = {
  type: 'object',
  properties: { rules: RULES_SCHEMA },
  required: ['rules'],
  additionalProperties: false,
} as const;

export function rulesRoute({ service, reply, maxBodyBytes }: Pick<RouteDeps, 'service' | 'reply' | 'maxBodyBytes'>, withKey: WithKey): ApiRoute {
  return {
    path: '/api/urls/:code/rules',
    methods: {
      GET: async (ctx) => {
        const outcome = await service.get(ctx.params['code']!, domainParam(ctx));
        if (!outcome.ok) throw failureError(outcome);
        reply.json(ctx.res, 200, { rules: outcome.record.rules });
      },
      PUT: withKey('edit', async (ctx, notice) => {
        const body = await readJsonObject(ctx.req, maxBodyBytes);
        const type = mediaType(ctx.req.headers['content-type']);
        if (type !== 'application/json' && !type.endsWith('+json'))
          throw new HttpError(415, 'send the rules as a JSON object {"rules": [...]} (Content-Type: application/json)');
        if (!body.ok) throw jsonBodyError(body.fault);
        const extra = Object.keys(body.value).find((name) => name !== 'rules');
        if (extra !== undefined || body.value['rules'] === undefined) {
          throw new HttpError(
            400,
            `the body is {"rules": [...]}, an array of at most ${MAX_RULES} rules ([] removes them all)${extra === undefined ? '' : `, not ${JSON.stringify(extra)}`}`,
          );
        }
        const outcome = await service.update(ctx.params['code']!, { routing: { rules: body.value['rules'] } }, domainParam(ctx));
        if (!outcome.ok) throw failureError(outcome);
        reply.json(ctx.res, 200, { rules: outcome.record.rules }, notice);
      }),
    },
    doc: {
      GET: {
        operationId: 'getUrlRules',
        summary: "A link's redirect rules",
        description: "The link's ordered redirect rules: the first whose conditions all hold for a visitor gives the target, else the original URL.",
        tag: 'links',
        access: 'gate',
        parameters: [DOMAIN],
        responses: { 200: json('The rules.', RULES_BODY), 400: ref('responses', 'BadRequest'), 404: ref('responses', 'NotFound') },
      },
      PUT: {
        operationId: 'setUrlRules',
        summary: "Replace a link's redirect rules",
        description: `The whole list, at most ${MAX_RULES} rules of 1–10 conditions each; [] removes them all. Each rule's url is checked as a link's. The key is checked first (403), then the body (415, 400), then the code (404). On disk before the answer.`,
        tag: 'admin',
        access: 'admin',
        parameters: [DOMAIN],
        requestBody: { required: true, content: { 'application/json': { schema: RULES_BODY } } },
        responses: {
          200: json('The rules as stored. Deprecation and Link only when the key came from api_key.', RULES_BODY, ['Deprecation', 'Link']),
          400: ref('responses', 'BadRequest'),
          404: ref('responses', 'NotFound'),
          413: ref('responses', 'PayloadTooLarge'),
          415: ref('responses', 'UnsupportedMediaType'),
          503: ref('responses', 'Unavailable'),
        },
      },
    },
  };
}
