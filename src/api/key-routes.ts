/**
 * The stored API keys (docs/security.md, keys with roles): `POST /api/keys` makes one and shows
 * its secret this once, `GET /api/keys` lists them without secrets, `DELETE /api/keys/<id>`
 * revokes one. Only an admin key may.
 */
import { readBody, parseFields } from '../http/body.ts';
import { HttpError } from '../errors.ts';
import { body, empty, json, ref } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';
import { adminKeyCheck } from './admin-key.ts';
import { failureError } from './outcomes.ts';
import type { ApiRoute, RouteDeps } from './route-types.ts';

const KEY_FIELDS = {
  id: { type: 'string', description: 'Public: names the key in lists and logs, and in DELETE /api/keys/{id}.' },
  name: { type: 'string', minLength: 1, maxLength: 64 },
  role: { type: 'string', enum: ['creator', 'viewer', 'editor', 'admin'] },
  domain: { type: ['string', 'null'], description: 'The one domain the key acts on (a host of the instance); null: every domain.' },
  created_at: { type: 'integer', description: 'Unix seconds.' },
  expires_at: { type: ['integer', 'null'], description: 'Unix seconds after which the key is refused; null: never.' },
  last_used_at: { type: ['integer', 'null'], description: 'Unix seconds, at most a minute stale; null: never used.' },
};
const KEY_SCHEMA = { type: 'object', required: Object.keys(KEY_FIELDS), additionalProperties: false, properties: KEY_FIELDS };

const KEYS_DOC: RouteDoc = {
  POST: {
    operationId: 'createKey',
    summary: 'Make a stored API key',
    description:
      'A JSON object: name (1–64 characters), role (creator, viewer, editor or admin), domain (a host of the instance, or default, for a key that acts on that domain only; null or absent: every domain) and expires_at (Unix seconds in the future; null or absent: never). ' +
      'The answer carries the secret in key (us_ and 43 base64url characters) this once: the store keeps only its SHA-256.',
    tag: 'admin',
    access: 'admin',
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name', 'role'], properties: KEY_FIELDS } } } },
    responses: {
      201: json('The key, with its secret this once.', {
        ...KEY_SCHEMA,
        required: [...KEY_SCHEMA.required, 'key'],
        properties: { ...KEY_FIELDS, key: { type: 'string', pattern: '^us_[A-Za-z0-9_-]{43}$' } },
      }),
      400: ref('responses', 'BadRequest'),
      413: ref('responses', 'PayloadTooLarge'),
      415: ref('responses', 'UnsupportedMediaType'),
      503: ref('responses', 'Unavailable'),
    },
  },
  GET: {
    operationId: 'listKeys',
    summary: 'The stored API keys, oldest first, without their secrets',
    tag: 'admin',
    access: 'admin',
    responses: {
      200: body('Every stored key not revoked (expired ones too).', 'application/json', {
        type: 'object',
        required: ['count', 'keys'],
        additionalProperties: false,
        properties: { count: { type: 'integer' }, keys: { type: 'array', items: KEY_SCHEMA } },
      }),
      503: ref('responses', 'Unavailable'),
    },
  },
};

const KEY_DOC: RouteDoc = {
  DELETE: {
    operationId: 'revokeKey',
    summary: 'Revoke a stored API key',
    description: 'Every instance refuses the key within a second.',
    tag: 'admin',
    access: 'admin',
    responses: { 204: empty('Revoked (on disk before the answer).'), 404: ref('responses', 'NotFound'), 503: ref('responses', 'Unavailable') },
  },
};

export function keyRoutes({ service, reply, deprecations, maxBodyBytes }: Pick<RouteDeps, 'service' | 'reply' | 'deprecations' | 'maxBodyBytes'>): ApiRoute[] {
  const { withKey } = adminKeyCheck(service, deprecations);
  return [
    {
      path: '/api/keys',
      methods: {
        POST: withKey('keys', async (ctx, notice) => {
          const raw = await readBody(ctx.req, maxBodyBytes);
          const fields = parseFields(raw, ctx.req.headers['content-type']);
          if (fields.textual && raw.length > 0) throw new HttpError(415, 'send the key as a JSON object (Content-Type: application/json)');
          const made = await service.keys.create({
            name: fields.get('name'),
            role: fields.get('role'),
            domain: fields.get('domain'),
            expires_at: fields.get('expires_at'),
          });
          if (!made.ok) throw failureError(made);
          reply.json(ctx.res, 201, made.key, notice);
        }),
        GET: withKey('keys', async (ctx, notice) => {
          const listed = await service.keys.list();
          if (!listed.ok) throw failureError(listed);
          reply.json(ctx.res, 200, { count: listed.keys.length, keys: listed.keys }, notice);
        }),
      },
      doc: KEYS_DOC,
    },
    {
      path: '/api/keys/:id',
      methods: {
        DELETE: withKey('keys', async (ctx, notice) => {
          const gone = await service.keys.revoke(ctx.params['id']!);
          if (!gone.ok) throw failureError(gone);
          reply.empty(ctx.res, 204, notice);
        }),
      },
      doc: KEY_DOC,
    },
  ];
}
