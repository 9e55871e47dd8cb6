/**
 * Webhooks (docs/webhooks.md): `POST /api/webhooks` makes a subscription and shows its signing
 * secret this once, `GET /api/webhooks` lists them without secrets, `DELETE /api/webhooks/<id>`
 * deletes one with what is owed to it, `POST /api/webhooks/<id>/test` queues a `ping`, and
 * `GET /api/webhooks/<id>/deliveries` lists its last 100 attempts. Only an admin key may.
 */
import { HttpError } from '../errors.ts';
import { jsonBodyError, mediaType, readJsonObject } from '../http/body.ts';
import { body, empty, json, ref } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';
import { SUBSCRIBABLE_EVENT_TYPES } from '../webhooks/events.ts';
import type { Webhooks } from '../webhooks/subscriptions.ts';
import { adminKeyCheck } from './admin-key.ts';
import { failureError } from './outcomes.ts';
import type { ApiRoute, RouteDeps } from './route-types.ts';

const FIELDS = {
  id: { type: 'string', pattern: '^wh_[A-Za-z0-9_-]{16}$' },
  url: { type: 'string', format: 'uri', description: 'The receiver: http or https, never this machine nor a private network unless WEBHOOK_ALLOW_PRIVATE.' },
  events: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] } },
  domain: { type: ['string', 'null'], description: "Only this domain's links (a host of the instance); null: every domain's." },
  created_at: { type: 'integer', description: 'Unix seconds.' },
  disabled: { type: 'boolean', description: 'The receiver answered 410 Gone: nothing more is sent.' },
};
const SCHEMA = { type: 'object', required: Object.keys(FIELDS), additionalProperties: false, properties: FIELDS };
const ATTEMPT = {
  type: 'object',
  required: ['at', 'event_id', 'type', 'status', 'duration_ms', 'error', 'outcome'],
  additionalProperties: false,
  properties: {
    at: { type: 'string', format: 'date-time' },
    event_id: { type: 'string', description: 'The webhook-id header of the attempt.' },
    type: { type: 'string' },
    status: { type: ['integer', 'null'], description: "The receiver's status; null when none was read." },
    duration_ms: { type: 'integer', minimum: 0 },
    error: { type: ['string', 'null'], description: 'Why it failed, or the start (1 KiB at most) of an answer that was not a 2xx.' },
    outcome: { type: 'string', enum: ['delivered', 'retry', 'failed', 'disabled'] },
  },
};
const UNAVAILABLE = ref('responses', 'Unavailable');

const LIST_DOC: RouteDoc = {
  POST: {
    operationId: 'createWebhook',
    summary: 'Subscribe a receiver to events',
    description:
      'A JSON object: url, events (one or more of the event types) and domain (absent or null: every domain). ' +
      'The answer carries the signing secret (whsec_ and 32 base64 characters) this once; each delivery is signed with it as the Standard Webhooks specification says.',
    tag: 'admin',
    access: 'admin',
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['url', 'events'], properties: FIELDS } } } },
    responses: {
      201: json('The subscription, with its secret this once.', {
        ...SCHEMA,
        required: [...SCHEMA.required, 'secret'],
        properties: { ...FIELDS, secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]{32}$' } },
      }),
      400: ref('responses', 'BadRequest'),
      413: ref('responses', 'PayloadTooLarge'),
      415: ref('responses', 'UnsupportedMediaType'),
      503: UNAVAILABLE,
    },
  },
  GET: {
    operationId: 'listWebhooks',
    summary: 'The subscriptions, oldest first, without their secrets',
    tag: 'admin',
    access: 'admin',
    responses: {
      200: body('Every subscription.', 'application/json', {
        type: 'object',
        required: ['count', 'webhooks'],
        additionalProperties: false,
        properties: { count: { type: 'integer' }, webhooks: { type: 'array', items: SCHEMA } },
      }),
      503: UNAVAILABLE,
    },
  },
};

const ONE_DOC: RouteDoc = {
  DELETE: {
    operationId: 'deleteWebhook',
    summary: 'Delete a subscription, and every delivery still owed to it',
    tag: 'admin',
    access: 'admin',
    responses: { 204: empty('Deleted.'), 404: ref('responses', 'NotFound'), 503: UNAVAILABLE },
  },
};

const TEST_DOC: RouteDoc = {
  POST: {
    operationId: 'testWebhook',
    summary: 'Send a ping to the receiver',
    description: 'Queued after what is owed to the subscription already; its attempt shows in the deliveries under event_id.',
    tag: 'admin',
    access: 'admin',
    responses: {
      202: json('Queued.', { type: 'object', required: ['event_id'], additionalProperties: false, properties: { event_id: { type: 'string' } } }),
      404: ref('responses', 'NotFound'),
      503: UNAVAILABLE,
    },
  },
};

const DELIVERIES_DOC: RouteDoc = {
  GET: {
    operationId: 'listWebhookDeliveries',
    summary: "A subscription's last 100 attempts, newest first",
    tag: 'admin',
    access: 'admin',
    responses: {
      200: body('Its attempts.', 'application/json', {
        type: 'object',
        required: ['count', 'deliveries'],
        additionalProperties: false,
        properties: { count: { type: 'integer' }, deliveries: { type: 'array', items: ATTEMPT } },
      }),
      404: ref('responses', 'NotFound'),
      503: UNAVAILABLE,
    },
  },
};

export function webhookRoutes({
  service,
  webhooks,
  reply,
  deprecations,
  maxBodyBytes,
}: Pick<RouteDeps, 'service' | 'reply' | 'deprecations' | 'maxBodyBytes'> & { webhooks: Webhooks }): ApiRoute[] {
  const { withKey } = adminKeyCheck(service, deprecations);
  return [
    {
      path: '/api/webhooks',
      methods: {
        POST: withKey('webhooks', async (ctx, notice) => {
          const type = mediaType(ctx.req.headers['content-type']);
          const read = await readJsonObject(ctx.req, maxBodyBytes);
          if (type !== 'application/json' && !type.endsWith('+json'))
            throw new HttpError(415, 'send the subscription as a JSON object (Content-Type: application/json)');
          if (!read.ok) throw jsonBodyError(read.fault);
          const made = await webhooks.create(read.value);
          if (!made.ok) throw failureError(made);
          reply.json(ctx.res, 201, { ...made.subscription, secret: made.secret }, notice);
        }),
        GET: withKey('webhooks', async (ctx, notice) => {
          const listed = await webhooks.list();
          if (!listed.ok) throw failureError(listed);
          reply.json(ctx.res, 200, { count: listed.subscriptions.length, webhooks: listed.subscriptions }, notice);
        }),
      },
      doc: LIST_DOC,
    },
    {
      path: '/api/webhooks/:id',
      methods: {
        DELETE: withKey('webhooks', async (ctx, notice) => {
          const removed = await webhooks.remove(ctx.params['id']!);
          if (!removed.ok) throw failureError(removed);
          reply.empty(ctx.res, 204, notice);
        }),
      },
      doc: ONE_DOC,
    },
    {
      path: '/api/webhooks/:id/test',
      methods: {
        POST: withKey('webhooks', async (ctx, notice) => {
          const queued = await webhooks.test(ctx.params['id']!);
          if (!queued.ok) throw failureError(queued);
          reply.json(ctx.res, 202, { event_id: queued.eventId }, notice);
        }),
      },
      doc: TEST_DOC,
    },
    {
      path: '/api/webhooks/:id/deliveries',
      methods: {
        GET: withKey('webhooks', async (ctx, notice) => {
          const read = await webhooks.deliveries(ctx.params['id']!);
          if (!read.ok) throw failureError(read);
          reply.json(ctx.res, 200, { count: read.deliveries.length, deliveries: read.deliveries }, notice);
        }),
      },
      doc: DELIVERIES_DOC,
    },
  ];
}
