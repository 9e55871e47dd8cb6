/**
 * The redirect rules of Shlink's surface in the OpenAPI document (docs/compat.md): the list `GET`
 * and `POST …/redirect-rules` answer and the body `POST` takes, as JSON Schemas of what
 * `redirect-rules.ts` writes and reads. Data, read by `openapi-schemas.ts`.
 */
import { MAX_CONDITIONS, MAX_RULES } from '../../links/redirect-rules.ts';
import type { OpenApiObject } from '../../published/openapi-parts.ts';
import { SHLINK_CONDITION_TYPES } from './redirect-rules.ts';

const CONDITION_VALUES =
  'device: android, ios, mobile (phones and tablets), desktop, windows, macos, linux, chromeos. ' +
  "browser: chrome, firefox, edge, safari, opera, and this service's samsung_internet and other. " +
  'language: a language tag such as fr (any French) or fr-CA. geolocation-country-code: a two-letter country code. ' +
  'query-param: matchKey has matchValue; valueless-query-param: matchKey without a value; any-value-query-param: matchKey with any value. ' +
  'ip-address: an address, a CIDR block, or 1.2.*.* (the block 1.2.0.0/16). ' +
  'before-date, after-date: an ISO 8601 date or time (UTC without an offset). ' +
  'geolocation-city-name and the browser android_browser are invalid-data: visits are located to their country only, and that browser is no family of this service.';

const TEXT_OR_NULL = { type: ['string', 'null'] } as const;

/** A condition as `GET` writes it: `matchKey` the query parameter's name, null for the other types. */
const CONDITION = {
  type: 'object',
  description: CONDITION_VALUES,
  properties: { type: { enum: SHLINK_CONDITION_TYPES }, matchKey: TEXT_OR_NULL, matchValue: TEXT_OR_NULL },
  required: ['type', 'matchKey', 'matchValue'],
  additionalProperties: false,
} as const;

const CONDITIONS = { type: 'array', minItems: 1, maxItems: MAX_CONDITIONS, items: CONDITION } as const;

export const RULE_SCHEMAS: Record<string, OpenApiObject> = {
  ShlinkRedirectRules: {
    type: 'object',
    description: "The link's rules in order: a visitor goes to the longUrl of the first whose conditions all hold, else to defaultLongUrl.",
    properties: {
      defaultLongUrl: { type: 'string', description: "The link's long URL." },
      redirectRules: {
        type: 'array',
        maxItems: MAX_RULES,
        items: {
          type: 'object',
          properties: {
            longUrl: { type: 'string' },
            priority: { type: 'integer', minimum: 1, description: 'The place in the list, from 1.' },
            conditions: CONDITIONS,
          },
          required: ['longUrl', 'priority', 'conditions'],
          additionalProperties: false,
        },
      },
    },
    required: ['defaultLongUrl', 'redirectRules'],
    additionalProperties: false,
  },
  ShlinkRedirectRulesInput: {
    type: 'object',
    description: `Replaces every rule of the link; [] removes them. At most ${MAX_RULES} rules of 1 to ${MAX_CONDITIONS} conditions each; a longUrl is what the REST API accepts as a URL.`,
    properties: {
      redirectRules: {
        type: 'array',
        maxItems: MAX_RULES,
        items: {
          type: 'object',
          properties: {
            longUrl: { type: 'string' },
            conditions: { ...CONDITIONS, items: { ...CONDITION, required: ['type'], additionalProperties: true } },
            priority: { type: 'integer', description: 'Ignored, as Shlink ignores it: the order of the list is the order of the rules.' },
          },
          required: ['longUrl', 'conditions'],
        },
      },
    },
    required: ['redirectRules'],
  },
};
