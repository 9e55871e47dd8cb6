/**
 * JSON Schemas of where a link sends each visitor (docs/api.md): its redirect rules, its query
 * forwarding, its validity, its fallback and its password, as the record shows them and as a
 * create or an edit sends them. `schemas.ts` adds them to the record and the inputs.
 */
import type { JsonSchema } from './json-schema.ts';
import { MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH } from '../links/link-password.ts';
import { CONDITION_NAMES, DEVICE_VALUES, MAX_CONDITIONS, MAX_RULE_TIME, MAX_RULES } from '../links/redirect-rules.ts';

const CONDITION_SCHEMA = {
  type: 'object',
  description: `One condition: type ${CONDITION_NAMES.join(', ')}. key names the query parameter of query-param and any-value-query-param, null for the others. device: ${DEVICE_VALUES.join(', ')}; browser: a family of the visit stats; language: a tag such as fr or fr-CA, matched against Accept-Language; country: two letters; ip-address: an address or a CIDR block; before-date and after-date: Unix seconds as digits.`,
  properties: {
    type: { type: 'string', enum: [...CONDITION_NAMES] },
    key: { type: ['string', 'null'] },
    value: { type: 'string' },
  },
  required: ['type', 'key', 'value'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const RULES_SCHEMA = {
  type: 'array',
  maxItems: MAX_RULES,
  description: `Redirect rules, in order: the first whose conditions all hold for a visitor gives the target, else original_url. At most ${MAX_RULES}; [] = none.`,
  items: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'Where the rule sends a visitor: an http(s) URL checked as a link.' },
      conditions: { type: 'array', minItems: 1, maxItems: MAX_CONDITIONS, items: CONDITION_SCHEMA },
    },
    required: ['url', 'conditions'],
    additionalProperties: false,
  },
} as const satisfies JsonSchema;

const INSTANT = { type: ['integer', 'null'], minimum: 0, maximum: MAX_RULE_TIME } as const;

/** The routing fields of the record: on every record. */
export const ROUTING_RECORD_PROPERTIES = {
  rules: RULES_SCHEMA,
  forward_query: { type: 'boolean', description: "Whether the short URL's query string is appended to the target's." },
  valid_since: { ...INSTANT, description: 'Before this instant (Unix seconds) the link answers as an unknown code; null = always.' },
  valid_until: { ...INSTANT, description: 'From this instant (Unix seconds) the link answers as expired (or goes to fallback_url); null = no end.' },
  fallback_url: {
    type: ['string', 'null'],
    description: 'Where an expired, no longer valid or used-up link sends a visitor (302, not a visit) instead of its 410 page; null = none.',
  },
  password_protected: { type: 'boolean', description: 'Whether opening the link needs its password (the password is never shown).' },
} as const satisfies Record<string, JsonSchema>;

export const ROUTING_REQUIRED = ['rules', 'forward_query', 'valid_since', 'valid_until', 'fallback_url', 'password_protected'] as const;

/** The routing fields of a create or an edit: each given sets its part, null removes it. */
export const ROUTING_INPUT_PROPERTIES = {
  rules: { ...RULES_SCHEMA, type: ['array', 'null'], description: `${RULES_SCHEMA.description} null removes them.` },
  forward_query: { type: ['boolean', 'null'], description: "Append the short URL's query string to the target's; false or null = no." },
  valid_since: { ...INSTANT, description: 'Unix seconds before which the link answers as an unknown code; null removes it.' },
  valid_until: { ...INSTANT, description: 'Unix seconds from which the link answers as expired; null removes it. After valid_since.' },
  fallback_url: { type: ['string', 'null'], description: 'Where an expired or used-up link sends a visitor instead of its page; null removes it.' },
  password: {
    type: ['string', 'null'],
    minLength: MIN_PASSWORD_LENGTH,
    maxLength: MAX_PASSWORD_LENGTH,
    description: `A password of ${MIN_PASSWORD_LENGTH}–${MAX_PASSWORD_LENGTH} characters that opening the link asks for; stored as a salted scrypt hash, never shown; null removes it.`,
  },
} as const satisfies Record<string, JsonSchema>;
