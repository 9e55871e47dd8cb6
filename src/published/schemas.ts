/**
 * JSON Schemas of the values the service answers with. OpenAPI's components and the MCP tools'
 * `outputSchema`s are built from these same objects, so the two descriptions cannot drift apart.
 */
import type { JsonSchema } from './json-schema.ts';
import { ROUTING_INPUT_PROPERTIES, ROUTING_RECORD_PROPERTIES, ROUTING_REQUIRED } from './routing-schemas.ts';
import { MAX_COUNT, MAX_LIMIT, MAX_RETENTION_DAYS, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, MAX_VISITS } from '../links/validate.ts';

const CODE_DESCRIPTION =
  'Short code: generated ones use 123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz (no 0 O I l); custom ones A-Z a-z 0-9 - _. Case-sensitive.';

const MAX_VISITS_SCHEMA = {
  type: ['integer', 'null'],
  minimum: 1,
  maximum: MAX_VISITS,
  description: 'Counted visits allowed; later GETs are 410. null = unlimited.',
} as const satisfies JsonSchema;

const TITLE_SCHEMA = {
  type: ['string', 'null'],
  maxLength: MAX_TITLE_LENGTH,
  description: `The link's title, at most ${MAX_TITLE_LENGTH} characters; null = none (an empty title is none).`,
} as const satisfies JsonSchema;

/**
 * Tags as a create or an edit sends them: each is trimmed and then must be 1–50 characters without
 * a comma, and duplicates are dropped before the limit of 20 is counted, so the items here carry
 * no length limits of their own: a tag of 51 characters with a space around it is a good tag.
 */
const TAGS_INPUT_DESCRIPTION = `Tags, each trimmed and then 1–${MAX_TAG_LENGTH} characters without a comma; duplicates are dropped, at most ${MAX_TAGS} may remain, and they are kept sorted.`;

export const RECORD_SCHEMA = {
  type: 'object',
  description: 'One short link.',
  properties: {
    short_code: { type: 'string', description: CODE_DESCRIPTION },
    domain: {
      type: ['string', 'null'],
      description: "The link's domain (a host of DOMAINS, lower case, with its port if any); null for the default one, the host of the base URL.",
    },
    short_url: {
      type: 'string',
      description: "The short link: the base URL (on another domain, with that domain's host), a slash and the code.",
    },
    original_url: { type: 'string', description: 'Where the link redirects: the WHATWG serialization of the submitted URL.' },
    created_at: { type: 'integer', description: 'Creation time, Unix seconds.' },
    visit_count: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_COUNT,
      description: 'Redirects served (GET only; HEAD does not count); counting stops at 2^53 − 1.',
    },
    untracked_visits: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_COUNT,
      description:
        "Visits counted without an event (imported counts, counted with visit_tracking counts, removed by retention): the link's events + untracked_visits = visit_count.",
    },
    retention_days: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_RETENTION_DAYS,
      description: 'Lifetime in days from created_at; 0 = forever.',
    },
    max_visits: MAX_VISITS_SCHEMA,
    expires_at: {
      type: ['integer', 'null'],
      description: 'When the link expires: created_at + retention_days × 86400, Unix seconds; null when kept forever.',
    },
    title: TITLE_SCHEMA,
    tags: {
      type: 'array',
      maxItems: MAX_TAGS,
      items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
      description: `The link's tags: distinct, sorted, each 1–${MAX_TAG_LENGTH} characters without a comma; [] = none.`,
    },
    author: {
      type: ['string', 'null'],
      description: 'The id of the stored API key that created the link (GET /api/keys); null when it was made without a key or with a key of API_KEYS.',
    },
    ...ROUTING_RECORD_PROPERTIES,
  },
  required: [
    'short_code',
    'domain',
    'short_url',
    'original_url',
    'created_at',
    'visit_count',
    'untracked_visits',
    'retention_days',
    'max_visits',
    'expires_at',
    'title',
    'tags',
    'author',
    ...ROUTING_REQUIRED,
  ],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const LIST_SCHEMA = {
  type: 'object',
  description: 'A page of live links, newest first.',
  properties: {
    count: { type: 'integer', minimum: 0, description: 'Number of entries in urls.' },
    urls: { type: 'array', items: RECORD_SCHEMA },
  },
  required: ['count', 'urls'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const ERROR_SCHEMA = {
  type: 'object',
  description: 'An error a person can act on.',
  properties: { detail: { type: 'string', description: 'What went wrong and, where possible, how to fix it.' } },
  required: ['detail'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const HEALTH_SCHEMA = {
  type: 'object',
  properties: { status: { type: 'string', const: 'ok' }, service: { type: 'string', const: 'url-shortener' } },
  required: ['status', 'service'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const HEALTHZ_SCHEMA = {
  type: 'object',
  properties: { status: { type: 'string', const: 'ok' } },
  required: ['status'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const AUTH_CHECK_SCHEMA = {
  type: 'object',
  properties: {
    auth_required: { type: 'boolean', description: 'True when the gate is on: send Authorization: Bearer <token>.' },
  },
  required: ['auth_required'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/**
 * The JSON body of a shorten request. Nothing is required here: `url` may come in the query
 * instead, which wins over the body (docs/api.md); without it anywhere the answer is 400.
 */
export const SHORTEN_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'Absolute http(s) URL to shorten; no user:password@. Required here or in the query.' },
    retention_days: {
      type: ['integer', 'null'],
      minimum: 0,
      maximum: MAX_RETENTION_DAYS,
      description: 'Lifetime in days; 0, null or absent = forever.',
    },
    code: {
      type: ['string', 'null'],
      maxLength: 64,
      description:
        'A custom code: A-Z a-z 0-9 - _, MIN_SHORT_LENGTH to MAX_SHORT_LENGTH characters, not a reserved word; null, empty or absent = generated. Held by a live link: 409.',
    },
    max_visits: { ...MAX_VISITS_SCHEMA, description: 'Counted visits allowed (a one-time link is 1); null or absent = unlimited.' },
    title: { ...TITLE_SCHEMA, description: `A title, at most ${MAX_TITLE_LENGTH} characters; null, empty or absent = none.` },
    tags: { type: ['array', 'null'], items: { type: 'string' }, description: `${TAGS_INPUT_DESCRIPTION} null or absent = none.` },
    domain: {
      type: ['string', 'null'],
      description: "The domain the link lives on: one of the service's hosts (DOMAINS); null, empty, default or absent = the default one. Another host is 400.",
    },
    ...ROUTING_INPUT_PROPERTIES,
  },
} as const satisfies JsonSchema;

/** The JSON body of an edit: any of these fields; another field is 400 (docs/api.md). */
export const UPDATE_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'The new original URL, validated as on a create.' },
    retention_days: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_RETENTION_DAYS,
      description: 'The new lifetime in days, still counted from created_at (it can expire the link at once); 0 = forever. null is not a retention: 400.',
    },
    max_visits: { ...MAX_VISITS_SCHEMA, description: 'The new limit of counted visits (at or below visit_count uses the link up); null clears it.' },
    title: { ...TITLE_SCHEMA, description: `The new title, at most ${MAX_TITLE_LENGTH} characters; null or empty clears it.` },
    tags: {
      type: 'array',
      items: { type: 'string' },
      description: `The new tags, replacing the old ones; [] clears them (null is 400). ${TAGS_INPUT_DESCRIPTION}`,
    },
    ...ROUTING_INPUT_PROPERTIES,
  },
  additionalProperties: false,
} as const satisfies JsonSchema;

export const LIMIT_SCHEMA = { type: 'integer', minimum: 1, maximum: MAX_LIMIT } as const satisfies JsonSchema;
export const OFFSET_SCHEMA = { type: 'integer', minimum: 0 } as const satisfies JsonSchema;
export const CODE_SCHEMA = { type: 'string', minLength: 1, maxLength: 64, description: CODE_DESCRIPTION } as const satisfies JsonSchema;
