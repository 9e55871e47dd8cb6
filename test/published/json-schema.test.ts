/**
 * The hand-written JSON Schema validator (src/json-schema.ts) against ajv, a validator we did not
 * write: for every schema the service publishes and a table of values, both must agree on valid
 * or not. Then the messages the validator writes for people.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { validateValue, type JsonSchema } from '../../src/published/json-schema.ts';
import { TOOLS } from '../../src/mcp/tools.ts';
import {
  AUTH_CHECK_SCHEMA,
  ERROR_SCHEMA,
  HEALTHZ_SCHEMA,
  HEALTH_SCHEMA,
  LIST_SCHEMA,
  RECORD_SCHEMA,
  SHORTEN_INPUT_SCHEMA,
  UPDATE_INPUT_SCHEMA,
} from '../../src/published/schemas.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const RECORD = {
  short_code: 'abc123',
  domain: null,
  short_url: 'http://s.example/abc123',
  original_url: 'https://example.com/',
  created_at: 1700000000,
  visit_count: 3,
  untracked_visits: 3,
  retention_days: 0,
  max_visits: null,
  expires_at: null,
  title: null,
  tags: [],
  author: null,
  ...NO_ROUTING,
};

/** Values that probe every keyword of the subset: types, required, extras, ranges, lengths, const, items. */
const VALUES: readonly unknown[] = [
  {},
  [],
  null,
  'text',
  '',
  0,
  -1,
  1.5,
  true,
  RECORD,
  { ...RECORD, extra: 1 },
  { ...RECORD, created_at: 1.5 },
  { ...RECORD, visit_count: -1 },
  { ...RECORD, retention_days: 36501 },
  { ...RECORD, max_visits: 5, retention_days: 1, expires_at: 1700086400 },
  { ...RECORD, max_visits: 0 },
  { ...RECORD, max_visits: 2147483648 },
  { ...RECORD, max_visits: '5' },
  { ...RECORD, expires_at: 1.5 },
  { ...RECORD, expires_at: undefined },
  { ...RECORD, title: 'A title', tags: ['a', 'b'] },
  { ...RECORD, title: '' },
  { ...RECORD, title: 'x'.repeat(512) },
  { ...RECORD, title: 'x'.repeat(513) },
  // 512 astral characters: 1,024 UTF-16 units, 512 characters.
  { ...RECORD, title: '😀'.repeat(512) },
  { ...RECORD, title: 5 },
  { ...RECORD, tags: null },
  { ...RECORD, tags: 'a' },
  { ...RECORD, tags: [''] },
  { ...RECORD, tags: ['x'.repeat(50)] },
  { ...RECORD, tags: ['x'.repeat(51)] },
  { ...RECORD, tags: [1] },
  { ...RECORD, tags: Array.from({ length: 20 }, (_, i) => `t${i}`) },
  { ...RECORD, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
  { ...RECORD, author: 'k3y-1d_Z' },
  { ...RECORD, author: 5 },
  { ...RECORD, author: undefined },
  { ...RECORD, domain: 'go.example:8080', short_url: 'http://go.example:8080/abc123' },
  { ...RECORD, domain: 5 },
  Object.fromEntries(Object.entries(RECORD).filter(([key]) => key !== 'domain')),
  { url: 'https://example.com/', title: null, tags: null },
  { url: 'https://example.com/', title: 'T', tags: [' spaced ', 'x'.repeat(60)] },
  { url: 'https://example.com/', tags: 'a,b' },
  { title: 'T', tags: [] },
  { code: 'abc', api_key: 'k', tags: null },
  { api_key: 'k', tag: ['a', 'b'] },
  { api_key: 'k', tag: 'a' },
  { url: 'https://example.com/', max_visits: 1, code: 'my-code' },
  { url: 'https://example.com/', max_visits: null },
  { retention_days: null, max_visits: null },
  { max_visits: 0 },
  { short_code: 'abc' },
  { count: 1, urls: [RECORD] },
  { count: 1, total: 1, urls: [RECORD] },
  { count: 1, total: 1, urls: [{ ...RECORD, short_url: 5 }] },
  { count: 0, urls: 'none' },
  { url: 'https://example.com/' },
  { url: 'https://example.com/', retention_days: 0 },
  { url: 'https://example.com/', retention_days: 36500 },
  { url: 'https://example.com/', retention_days: 36501 },
  { url: 'https://example.com/', retention_days: 1.5 },
  { url: 'https://example.com/', retention_days: '3' },
  { url: 'https://example.com/', other: true },
  { url: 5 },
  { code: 'abc' },
  { code: '' },
  { code: 'x'.repeat(64) },
  { code: 'x'.repeat(65) },
  // 64 astral characters: 128 UTF-16 units, 64 characters; JSON Schema counts characters.
  { code: '😀'.repeat(64) },
  { code: null },
  { api_key: 'k' },
  { api_key: 'k', limit: 0 },
  { api_key: 'k', limit: 1, offset: 0 },
  { api_key: 'k', limit: 1000, offset: 5 },
  { api_key: 'k', limit: 1001 },
  { api_key: 'k', offset: -1 },
  { api_key: 'k', limit: 2.0 },
  { code: 'abc', api_key: 'k' },
  { short_code: 'abc', deleted: true },
  { short_code: 'abc', deleted: false },
  { status: 'ok' },
  { status: 'ok', service: 'url-shortener' },
  { status: 'down', service: 'url-shortener' },
  { auth_required: false },
  { auth_required: 'no' },
  { detail: 'x' },
];

const SCHEMAS: readonly [string, JsonSchema][] = [
  ['Record', RECORD_SCHEMA],
  ['List', LIST_SCHEMA],
  ['Error', ERROR_SCHEMA],
  ['Health', HEALTH_SCHEMA],
  ['Healthz', HEALTHZ_SCHEMA],
  ['AuthCheck', AUTH_CHECK_SCHEMA],
  ['ShortenInput', SHORTEN_INPUT_SCHEMA],
  ['UpdateInput', UPDATE_INPUT_SCHEMA],
  ...TOOLS.flatMap((t): [string, JsonSchema][] => [
    [`${t.name} input`, t.inputSchema],
    [`${t.name} output`, t.outputSchema],
  ]),
];

test('validateValue agrees with ajv on every published schema and every probe value', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  let accepted = 0;
  let refused = 0;
  for (const [name, schema] of SCHEMAS) {
    const check = ajv.compile(schema);
    for (const value of VALUES) {
      const theirs = check(value);
      const ours = validateValue(schema, value);
      assert.equal(ours.length === 0, theirs, `${name} on ${JSON.stringify(value)}: ours ${JSON.stringify(ours)}, ajv ${JSON.stringify(check.errors)}`);
      if (theirs) accepted++;
      else refused++;
    }
  }
  // The table exercises both outcomes for real, many times over.
  assert.ok(accepted >= 15 && refused >= 300, `${accepted} accepted, ${refused} refused`);
});

test('validateValue names each problem so a caller can fix it', () => {
  const shorten = TOOLS.find((t) => t.name === 'shorten_url')!.inputSchema;
  assert.deepEqual(validateValue(shorten, {}, 'arguments'), ['url is required']);
  assert.deepEqual(validateValue(shorten, [], 'arguments'), ['arguments must be an object']);
  assert.deepEqual(validateValue(shorten, { url: 5, retention_days: 1.5, x: 1 }, 'arguments'), [
    'url must be a string',
    'retention_days must be an integer',
    'x is not allowed',
  ]);
  // A tool's schema holds no range (the service checks values for every door); the REST body's does.
  assert.deepEqual(validateValue(SHORTEN_INPUT_SCHEMA, { url: 'u', retention_days: 40000 }), ['retention_days must be at most 36500']);
  assert.deepEqual(validateValue(SHORTEN_INPUT_SCHEMA, { url: 'u', retention_days: -1 }), ['retention_days must be at least 0']);
  assert.deepEqual(validateValue(LIST_SCHEMA, { count: 1, urls: [{ ...RECORD, short_url: null }] }), ['urls[0].short_url must be a string']);
  assert.deepEqual(validateValue(HEALTH_SCHEMA, { status: 'down', service: 'url-shortener' }), ['status must be "ok"']);
  assert.deepEqual(validateValue({ type: 'string', minLength: 1, maxLength: 2 }, ''), ['value must have at least 1 character']);
  assert.deepEqual(validateValue({ type: 'string', minLength: 2 }, 'a'), ['value must have at least 2 characters']);
  assert.deepEqual(validateValue({ type: 'string', maxLength: 2 }, 'abc', 'code'), ['code must have at most 2 characters']);
  assert.deepEqual(validateValue({ type: ['string', 'null'] }, 1), ['value must be a string or null']);
  assert.deepEqual(validateValue({ type: 'number' }, 2), []);
  assert.deepEqual(validateValue({ type: 'array', items: { type: 'boolean' } }, [true, 1]), ['value[1] must be a boolean']);
  assert.deepEqual(validateValue({ type: 'array', maxItems: 2 }, [1, 2, 3], 'tags'), ['tags must have at most 2 items']);
  assert.deepEqual(validateValue({ type: 'array', maxItems: 2 }, [1, 2]), []);
  assert.deepEqual(validateValue(RECORD_SCHEMA, { ...RECORD, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), ['tags must have at most 20 items']);
  assert.deepEqual(validateValue(RECORD_SCHEMA, { ...RECORD, title: 'x'.repeat(513), tags: [''] }), [
    'title must have at most 512 characters',
    'tags[0] must have at least 1 character',
  ]);
});
