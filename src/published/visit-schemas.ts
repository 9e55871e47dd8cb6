/**
 * JSON Schemas of the visit answers (docs/analytics.md): the stats of a link or of every link, a
 * page of events, a removal. The OpenAPI document and the MCP tool `get_stats` use these same
 * objects, like the record's in `schemas.ts`.
 */
import type { JsonSchema } from './json-schema.ts';

const COUNT = { type: 'integer', minimum: 0 } as const satisfies JsonSchema;

const topList = (what: string) =>
  ({
    type: 'object',
    description: `The 10 ${what} with the most visits (ties by value, null first), and the visits of every other.`,
    properties: {
      top: {
        type: 'array',
        items: {
          type: 'object',
          properties: { value: { type: ['string', 'null'] }, visits: COUNT },
          required: ['value', 'visits'],
          additionalProperties: false,
        },
      },
      others: COUNT,
    },
    required: ['top', 'others'],
    additionalProperties: false,
  }) as const;

const STATS_PROPERTIES = {
  tracking: { type: 'string', description: 'The visit_tracking setting: events or counts (with counts, the events recorded before still answer).' },
  visit_count: { ...COUNT, description: 'Visits counted in all (of every live link, over every link).' },
  untracked_visits: { ...COUNT, description: 'Visits counted without an event: events + untracked_visits = visit_count.' },
  from: { type: 'integer', description: 'The start of the range, Unix seconds: the asked from rounded down to a bucket edge in tz.' },
  to: { type: 'integer', description: 'The end of the range (excluded), Unix seconds: the asked to rounded up to a bucket edge in tz.' },
  interval: { type: 'string', description: 'hour, day, week (from Monday) or month, in tz.' },
  tz: { type: 'string', description: 'The IANA time zone of the buckets.' },
  visits: { ...COUNT, description: 'Events in the range that pass the bots filter.' },
  unique_visitors: { ...COUNT, description: 'Distinct (UTC day, daily visitor id) pairs among them; an event without an id counts one.' },
  bots: { ...COUNT, description: 'Bot events in the range, whatever the bots filter.' },
  series: {
    type: 'array',
    description: 'Every bucket of the range in order, zeros included.',
    items: {
      type: 'object',
      properties: { start: { type: 'integer', description: 'Unix seconds.' }, visits: COUNT, unique_visitors: COUNT },
      required: ['start', 'visits', 'unique_visitors'],
      additionalProperties: false,
    },
  },
  referrers: topList('referrer hosts (null: none)'),
  countries: topList('countries (ISO 3166-1 alpha-2; null: unknown)'),
  browsers: topList('browser families (null: no User-Agent)'),
  os: topList('operating systems (null: no User-Agent)'),
  devices: topList('device types (null: no User-Agent)'),
} as const satisfies Record<string, JsonSchema>;

const STATS_REQUIRED = [
  'tracking',
  'visit_count',
  'untracked_visits',
  'from',
  'to',
  'interval',
  'tz',
  'visits',
  'unique_visitors',
  'bots',
  'series',
  'referrers',
  'countries',
  'browsers',
  'os',
  'devices',
] as const;

export const LINK_STATS_SCHEMA = {
  type: 'object',
  description: "One link's visits in a range.",
  properties: { short_code: { type: 'string' }, ...STATS_PROPERTIES },
  required: ['short_code', ...STATS_REQUIRED],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const ALL_STATS_SCHEMA = {
  type: 'object',
  description: 'The visits of every live link in a range.',
  properties: {
    ...STATS_PROPERTIES,
    links: {
      type: 'array',
      description: 'The 10 links with the most visits in the range (ties by code).',
      items: {
        type: 'object',
        properties: { short_code: { type: 'string' }, domain: { type: ['string', 'null'] }, visits: COUNT },
        required: ['short_code', 'domain', 'visits'],
        additionalProperties: false,
      },
    },
  },
  required: [...STATS_REQUIRED, 'links'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/** `GET /api/stats` with `orphan_visits`: the route's answer, the MCP-free part of it above. */
export const ALL_STATS_ORPHANS_SCHEMA = {
  ...ALL_STATS_SCHEMA,
  properties: {
    ...ALL_STATS_SCHEMA.properties,
    orphan_visits: {
      ...COUNT,
      description: "The range's orphan visits that pass bots (docs/analytics.md: a GET no link answered), counted apart from the links' visits.",
    },
  },
  required: [...ALL_STATS_SCHEMA.required, 'orphan_visits'],
} as const satisfies JsonSchema;

export const EVENT_SCHEMA = {
  type: 'object',
  description: 'One counted visit. The daily visitor id is never shown.',
  properties: {
    time: { type: 'integer', description: 'Unix seconds.' },
    referrer: { type: ['string', 'null'], description: 'The host of Referer, lower-case; null for none.' },
    country: { type: ['string', 'null'], description: 'ISO 3166-1 alpha-2; null when unknown.' },
    browser: { type: ['string', 'null'], description: 'Chrome, Safari, Firefox, Edge, Opera, Samsung Internet or Other; null without User-Agent.' },
    os: { type: ['string', 'null'], description: 'Windows, macOS, iOS, Android, Linux, ChromeOS or Other; null without User-Agent.' },
    device: { type: ['string', 'null'], description: 'desktop, mobile, tablet or other; null without User-Agent.' },
    bot: { type: 'boolean' },
  },
  required: ['time', 'referrer', 'country', 'browser', 'os', 'device', 'bot'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/** A link's event: an event, and the redirect rule that sent the visitor. */
const LINK_EVENT_SCHEMA = {
  ...EVENT_SCHEMA,
  properties: {
    ...EVENT_SCHEMA.properties,
    rule: { type: ['integer', 'null'], minimum: 0, description: "The index of the link's redirect rule that sent the visitor; null when none did." },
  },
  required: [...EVENT_SCHEMA.required, 'rule'],
} as const satisfies JsonSchema;

export const VISIT_LIST_SCHEMA = {
  type: 'object',
  description: "A page of a link's visits, newest first (by time, then arrival).",
  properties: { count: { ...COUNT, description: 'Number of entries in visits.' }, visits: { type: 'array', items: LINK_EVENT_SCHEMA } },
  required: ['count', 'visits'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const ORPHAN_LIST_SCHEMA = {
  type: 'object',
  description: 'A page of the orphan visits, newest first (by time, then arrival).',
  properties: {
    count: { ...COUNT, description: 'Number of entries in visits.' },
    visits: {
      type: 'array',
      items: {
        ...EVENT_SCHEMA,
        description: 'A GET no link answered: the event of a visit, its type and domain; never the path asked for.',
        properties: {
          ...EVENT_SCHEMA.properties,
          type: { type: 'string', description: 'base_url (GET / of a domain), invalid_short_url (an unknown code), or expired (an expired or used-up link).' },
          domain: { type: ['string', 'null'], description: 'The domain the request was sent to; null for the default one.' },
        },
        required: [...EVENT_SCHEMA.required, 'type', 'domain'],
      },
    },
  },
  required: ['count', 'visits'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const DELETED_VISITS_SCHEMA = {
  type: 'object',
  properties: { deleted_visits: { ...COUNT, description: 'Events removed.' } },
  required: ['deleted_visits'],
  additionalProperties: false,
} as const satisfies JsonSchema;
