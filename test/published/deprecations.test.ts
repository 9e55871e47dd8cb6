/**
 * Deprecation notices (docs/api.md, deprecations): the draft-07 schema in ajv (a validator we did
 * not write), the served notices and schema file, the RFC 9745 headers exactly where a deprecated
 * usage is answered (errors included) and nowhere else, and one warning per usage per instance.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { API_KEY_QUERY_SINCE, DEPRECATIONS, NOTICE_SCHEMA_FILE, SHORTEN_WITH_GET_SINCE } from '../../src/published/deprecations.ts';
import type { DeprecationNoticeNotification } from '../../src/index.ts';
import { start, type RequestOptions } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const SCHEMA_BYTES = readFileSync(new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url));
const SCHEMA = JSON.parse(SCHEMA_BYTES.toString('utf8')) as Record<string, unknown>;
const KEY = 'k1';

function compile() {
  // ajv's default dialect is draft-07: the schema must compile there, in strict mode.
  const ajv = new Ajv({ strict: true, allErrors: true });
  return { ajv, validate: ajv.compile<DeprecationNoticeNotification>(SCHEMA) };
}

test('the schema file is draft-07 with an $id and compiles in ajv; the package ships it', () => {
  assert.equal(SCHEMA['$schema'], 'http://json-schema.org/draft-07/schema#');
  assert.equal(SCHEMA['$id'], 'urn:url-shortener:schemas:v2:DeprecationNoticeNotification');
  assert.equal(SCHEMA['type'], 'object');
  assert.deepEqual(SCHEMA['required'], ['summary']);
  assert.equal(SCHEMA['additionalProperties'], false);
  const { ajv } = compile();
  assert.equal(ajv.validateSchema(SCHEMA), true, JSON.stringify(ajv.errors));
  assert.equal(NOTICE_SCHEMA_FILE, new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url).pathname);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { files: string[] };
  assert.ok(pkg.files.includes('schemas'));
});

const PAYLOADS: readonly [name: string, payload: unknown, valid: boolean][] = [
  ['summary only', { summary: 'Use POST.' }, true],
  ['summary and details', { summary: 'Use POST.', details: 'Since 2026.' }, true],
  ['details null', { summary: 'Use POST.', details: null }, true],
  ['empty summary', { summary: '' }, true],
  ['empty object', {}, false],
  ['details without summary', { details: 'x' }, false],
  ['summary a number', { summary: 1 }, false],
  ['summary null', { summary: null }, false],
  ['details a number', { summary: 'x', details: 5 }, false],
  ['details an object', { summary: 'x', details: {} }, false],
  ['an extra field', { summary: 'x', severity: 'high' }, false],
  ['a string', 'Use POST.', false],
  ['an array', [{ summary: 'x' }], false],
  ['null', null, false],
];

for (const [name, payload, valid] of PAYLOADS) {
  test(`schema ${valid ? 'accepts' : 'rejects'} ${name}`, () => {
    assert.equal(compile().validate(payload), valid);
  });
}

test('the deprecation dates are fixed constants: 2026-11-21T00:00:00Z', () => {
  assert.equal(SHORTEN_WITH_GET_SINCE, Date.parse('2026-11-21T00:00:00Z') / 1000);
  assert.equal(API_KEY_QUERY_SINCE, Date.parse('2026-11-21T00:00:00Z') / 1000);
  assert.deepEqual(
    DEPRECATIONS.map((d) => d.usage),
    ['shorten-with-get', 'api-key-query'],
  );
});

test('GET /api/deprecations serves every notice, each valid against the schema', async (t) => {
  const h = await start(t);
  const r = await h.req('/api/deprecations');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  const body = JSON.parse(r.body) as { notices: unknown[] };
  assert.deepEqual(Object.keys(body), ['notices']);
  assert.deepEqual(
    body.notices,
    DEPRECATIONS.map((d) => d.notice),
  );
  assert.equal(body.notices.length, 2);
  const { validate } = compile();
  for (const notice of body.notices) assert.equal(validate(notice), true, JSON.stringify(validate.errors));
  assert.match(JSON.stringify(body.notices[0]), /GET \/api\/shorten.*POST/);
  assert.match(JSON.stringify(body.notices[1]), /api_key.*X-API-Key/);
});

test('GET /schemas/v2/DeprecationNoticeNotification.json is the repo file byte for byte, as application/schema+json', async (t) => {
  const h = await start(t);
  const r = await h.req('/schemas/v2/DeprecationNoticeNotification.json');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/schema+json');
  assert.equal(r.headers['content-length'], String(SCHEMA_BYTES.length));
  assert.equal(Buffer.compare(Buffer.from(r.body, 'utf8'), SCHEMA_BYTES), 0);
  const head = await h.req('/schemas/v2/DeprecationNoticeNotification.json', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal((await h.req('/schemas/v2/Other.json')).status, 404);
  assert.equal((await h.req('/schemas/v2/DeprecationNoticeNotification.json', { method: 'POST' })).status, 405);
});

interface Row {
  name: string;
  path: (code: string) => string;
  options?: RequestOptions;
  status: number;
  /** The deprecated usage the request makes, if any. */
  usage?: 'shorten-with-get' | 'api-key-query';
  /** Uses the link that may be deleted (else the one that stays). */
  doomed?: true;
}

const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/post"}' };
const enc = encodeURIComponent;

const ROWS: readonly Row[] = [
  { name: 'GET /api/shorten', path: () => `/api/shorten?url=${enc('https://example.com/g')}`, status: 201, usage: 'shorten-with-get' },
  // HEAD creates nothing (405), so it is no deprecated usage.
  { name: 'HEAD /api/shorten', path: () => `/api/shorten?url=${enc('https://example.com/h')}`, options: { method: 'HEAD' }, status: 405 },
  { name: 'GET /api/shorten, invalid url (error answers too)', path: () => '/api/shorten?url=nope', status: 400, usage: 'shorten-with-get' },
  { name: 'GET /api/shorten/ trailing slash', path: () => `/api/shorten/?url=${enc('https://example.com/t')}`, status: 201, usage: 'shorten-with-get' },
  { name: 'POST /api/shorten', path: () => '/api/shorten', options: JSON_POST, status: 201 },
  { name: 'POST /api/shorten with query', path: () => `/api/shorten?url=${enc('https://example.com/pq')}`, options: { method: 'POST' }, status: 201 },
  { name: 'list with ?api_key', path: () => `/api/urls?api_key=${KEY}`, status: 200, usage: 'api-key-query' },
  { name: 'list with a wrong ?api_key', path: () => '/api/urls?api_key=wrong', status: 403, usage: 'api-key-query' },
  { name: 'list with an empty ?api_key', path: () => '/api/urls?api_key=', status: 403, usage: 'api-key-query' },
  { name: 'list with ?api_key and a bad limit', path: () => `/api/urls?api_key=${KEY}&limit=0`, status: 400, usage: 'api-key-query' },
  { name: 'list with X-API-Key', path: () => '/api/urls', options: { headers: { 'x-api-key': KEY } }, status: 200 },
  { name: 'list with both (the header is used)', path: () => `/api/urls?api_key=${KEY}`, options: { headers: { 'x-api-key': KEY } }, status: 200 },
  { name: 'list without any key', path: () => '/api/urls', status: 403 },
  {
    name: 'delete with ?api_key',
    path: (c) => `/api/urls/${c}?api_key=${KEY}`,
    options: { method: 'DELETE' },
    status: 204,
    usage: 'api-key-query',
    doomed: true,
  },
  { name: 'delete unknown with ?api_key', path: () => `/api/urls/zzzzzz?api_key=${KEY}`, options: { method: 'DELETE' }, status: 404, usage: 'api-key-query' },
  { name: 'delete with X-API-Key', path: () => '/api/urls/zzzzzz', options: { method: 'DELETE', headers: { 'x-api-key': KEY } }, status: 404 },
  { name: 'metadata', path: (c) => `/api/urls/${c}`, status: 200 },
  { name: 'metadata ignores an api_key it does not use', path: (c) => `/api/urls/${c}?api_key=${KEY}`, status: 200 },
  { name: 'redirect', path: (c) => `/${c}`, status: 302 },
  { name: 'health', path: () => '/api/health', status: 200 },
  { name: 'deprecation list', path: () => '/api/deprecations', status: 200 },
];

for (const basePath of ['', '/s']) {
  test(`Deprecation and Link headers exactly on deprecated usages (base path "${basePath}")`, async (t) => {
    const h = await start(t, { apiKeys: [KEY], ...(basePath ? { baseUrl: `https://short.example${basePath}` } : {}) });
    const base = h.shortener.config.baseUrl;
    const keep = await h.shorten('https://example.com/keep');
    const doomed = await h.shorten('https://example.com/doomed');
    for (const row of ROWS) {
      const r = await h.req(basePath + row.path(row.doomed ? doomed : keep), row.options);
      assert.equal(r.status, row.status, `${row.name}: ${r.body}`);
      if (row.usage) {
        const since = DEPRECATIONS.find((d) => d.usage === row.usage)!.since;
        assert.equal(r.headers['deprecation'], `@${since}`, row.name);
        assert.equal(r.headers['link'], `<${base}/docs#deprecations>; rel="deprecation"`, row.name);
      } else {
        assert.equal(r.headers['deprecation'], undefined, row.name);
        assert.equal(r.headers['link'], undefined, row.name);
      }
    }
  });
}

test('the first use of each deprecated usage is logged once as a warning carrying its notice', onOneProcess('its first-use warnings'), async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const warnings = () => h.logs.lines.filter((l) => l['msg'] === 'deprecated usage');
  await h.shorten('https://example.com/post-is-fine');
  await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.deepEqual(warnings(), []);
  for (let i = 0; i < 3; i++) {
    await h.req(`/api/shorten?url=${enc(`https://example.com/${i}`)}`);
    await h.req(`/api/urls?api_key=${i === 0 ? 'wrong' : KEY}`);
  }
  const lines = warnings();
  assert.equal(lines.length, 2);
  for (const [i, usage] of (['shorten-with-get', 'api-key-query'] as const).entries()) {
    const { notice } = DEPRECATIONS.find((d) => d.usage === usage)!;
    assert.equal(lines[i]!['level'], 'warn');
    assert.equal(lines[i]!['usage'], usage);
    assert.equal(lines[i]!['summary'], notice.summary);
    assert.equal(lines[i]!['details'], notice.details);
  }
  // The key itself never reaches the log line.
  assert.ok(!JSON.stringify(lines).includes(KEY));
  await h.close();
  // Per instance: a new shortener warns again.
  const again = await start(t);
  await again.req(`/api/shorten?url=${enc('https://example.com/again')}`);
  assert.equal(again.logs.lines.filter((l) => l['msg'] === 'deprecated usage').length, 1);
});
