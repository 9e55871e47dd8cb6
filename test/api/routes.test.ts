/**
 * The core rows of the route table (README, routes) over real sockets: the UI, health, shorten,
 * list, metadata, lookup, delete, redirect and static files; exact status, Content-Type and body.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { UrlList, UrlRecord } from '../../src/links/record.ts';
import { codeOf, start, type Reply } from '../support/helpers.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const JSON_TYPE = 'application/json';
const CODE = /^[1-9A-HJ-NP-Za-km-z]+$/;
const RECORD_FIELDS = [
  'author',
  'created_at',
  'domain',
  'expires_at',
  'fallback_url',
  'forward_query',
  'max_visits',
  'original_url',
  'password_protected',
  'retention_days',
  'rules',
  'short_code',
  'short_url',
  'tags',
  'title',
  'untracked_visits',
  'valid_since',
  'valid_until',
  'visit_count',
];
const INDEX_HTML = readFileSync(new URL('../../static/index.html', import.meta.url), 'utf8');

function jsonBody<T>(r: Reply): T {
  assert.equal(r.headers['content-type'], JSON_TYPE);
  return JSON.parse(r.body) as T;
}

/** A fixed clock: `created_at` is then known to the second. */
const NOW_MS = 1_700_000_123_456;
const NOW_S = 1_700_000_123;

test('GET / serves the UI page when production is false', async (t) => {
  const h = await start(t);
  const r = await h.req('/');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], HTML);
  assert.equal(r.body, INDEX_HTML);
  assert.match(r.body, /^<!doctype html>/i);
});

test('GET / is 404 with an empty body when production is true', async (t) => {
  const h = await start(t, { production: true });
  const r = await h.req('/');
  assert.equal(r.status, 404);
  assert.equal(r.body, '');
  assert.equal(r.headers['content-type'], undefined);
});

test('GET /api/health answers the exact JSON', async (t) => {
  const h = await start(t);
  const r = await h.req('/api/health');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  assert.equal(r.body, '{"status":"ok","service":"url-shortener"}');
});

test('POST /api/shorten (JSON, form, query) answers 201 with only the short URL and a matching Location', async (t) => {
  const h = await start(t);
  const base = `http://127.0.0.1:${h.port}/`;
  const requests: { name: string; path: string; headers: Record<string, string>; body?: string; url: string; days: number }[] = [
    {
      name: 'json',
      path: '/api/shorten',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/json' }),
      url: 'https://example.com/json',
      days: 0,
    },
    {
      name: 'form',
      path: '/api/shorten',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `url=${encodeURIComponent('https://example.com/form?a=1&b=2')}&retention_days=7`,
      url: 'https://example.com/form?a=1&b=2',
      days: 7,
    },
    {
      name: 'query',
      path: `/api/shorten?url=${encodeURIComponent('https://example.com/query')}`,
      headers: {},
      url: 'https://example.com/query',
      days: 0,
    },
    {
      name: 'query wins over body',
      path: `/api/shorten?url=${encodeURIComponent('https://example.com/from-query')}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/from-body' }),
      url: 'https://example.com/from-query',
      days: 0,
    },
  ];
  for (const rq of requests) {
    const r = await h.req(rq.path, { method: 'POST', headers: rq.headers, ...(rq.body === undefined ? {} : { body: rq.body }) });
    assert.equal(r.status, 201, rq.name);
    assert.equal(r.headers['content-type'], TEXT, rq.name);
    assert.ok(r.body.startsWith(base), `${rq.name}: ${r.body}`);
    const code = r.body.slice(base.length);
    assert.match(code, CODE, rq.name);
    assert.equal(code.length, 6, rq.name);
    assert.equal(r.headers.location, r.body, rq.name);
    const meta = jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`));
    assert.equal(meta.original_url, rq.url, rq.name);
    assert.equal(meta.short_url, r.body, rq.name);
    assert.equal(meta.retention_days, rq.days, rq.name);
  }
});

test('GET /api/shorten answers 201 with only the short URL and a matching Location', async (t) => {
  const h = await start(t);
  const r = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/get')}&retention_days=3`);
  assert.equal(r.status, 201);
  assert.equal(r.headers['content-type'], TEXT);
  assert.match(r.body, new RegExp(`^http://127\\.0\\.0\\.1:${h.port}/[1-9A-HJ-NP-Za-km-z]{6}$`));
  assert.equal(r.headers.location, r.body);
  const code = codeOf(r);
  const meta = jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`));
  assert.equal(meta.original_url, 'https://example.com/get');
  assert.equal(meta.retention_days, 3);
});

test('GET /api/urls with a key lists exact records newest first (header and query key)', async (t) => {
  const h = await start(t, { apiKeys: ['k1'], now: () => NOW_MS });
  const a = await h.shorten('https://example.com/a');
  const b = await h.shorten('https://example.com/b', 30);
  const c = await h.shorten('https://example.com/c');
  const expected: UrlList = {
    count: 3,
    urls: [
      {
        short_code: c,
        domain: null,
        short_url: `http://127.0.0.1:${h.port}/${c}`,
        original_url: 'https://example.com/c',
        created_at: NOW_S,
        visit_count: 0,
        untracked_visits: 0,
        retention_days: 0,
        max_visits: null,
        expires_at: null,
        title: null,
        tags: [],
        author: null,
        ...NO_ROUTING,
      },
      {
        short_code: b,
        domain: null,
        short_url: `http://127.0.0.1:${h.port}/${b}`,
        original_url: 'https://example.com/b',
        created_at: NOW_S,
        visit_count: 0,
        untracked_visits: 0,
        retention_days: 30,
        max_visits: null,
        expires_at: NOW_S + 30 * 86400,
        title: null,
        tags: [],
        author: null,
        ...NO_ROUTING,
      },
      {
        short_code: a,
        domain: null,
        short_url: `http://127.0.0.1:${h.port}/${a}`,
        original_url: 'https://example.com/a',
        created_at: NOW_S,
        visit_count: 0,
        untracked_visits: 0,
        retention_days: 0,
        max_visits: null,
        expires_at: null,
        title: null,
        tags: [],
        author: null,
        ...NO_ROUTING,
      },
    ],
  };
  for (const [name, path, headers] of [
    ['X-API-Key header', '/api/urls', { 'x-api-key': 'k1' }],
    ['api_key query', '/api/urls?api_key=k1', {}],
  ] as const) {
    const r = await h.req(path, { headers });
    assert.equal(r.status, 200, name);
    const list = jsonBody<UrlList>(r);
    assert.deepEqual(Object.keys(list).sort(), ['count', 'urls'], name);
    assert.deepEqual(list, expected, name);
    for (const rec of list.urls) {
      assert.deepEqual(Object.keys(rec).sort(), RECORD_FIELDS, name);
      assert.ok(Number.isInteger(rec.created_at), name);
    }
    assert.equal(r.headers['x-total-count'], '3', name);
  }
});

test('GET /api/urls pages with limit and offset; count is the page size, X-Total-Count the total', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const codes: string[] = [];
  for (let i = 0; i < 5; i++) codes.push(await h.shorten(`https://example.com/${i}`));
  const newestFirst = [...codes].reverse();
  const r = await h.req('/api/urls?limit=2&offset=1', { headers: { 'x-api-key': 'k1' } });
  assert.equal(r.status, 200);
  const list = jsonBody<UrlList>(r);
  assert.equal(list.count, 2);
  assert.deepEqual(
    list.urls.map((u) => u.short_code),
    newestFirst.slice(1, 3),
  );
  assert.equal(r.headers['x-total-count'], '5');
  const past = jsonBody<UrlList>(await h.req('/api/urls?offset=10', { headers: { 'x-api-key': 'k1' } }));
  assert.deepEqual(past, { count: 0, urls: [] });
});

test('GET /api/urls/<code> answers the exact record', async (t) => {
  const h = await start(t, { now: () => NOW_MS });
  const code = await h.shorten('https://example.com/meta?q=1#frag', 12);
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  const rec = jsonBody<UrlRecord>(r);
  assert.deepEqual(Object.keys(rec).sort(), RECORD_FIELDS);
  assert.deepEqual(rec, {
    short_code: code,
    domain: null,
    short_url: `http://127.0.0.1:${h.port}/${code}`,
    original_url: 'https://example.com/meta?q=1#frag',
    created_at: NOW_S,
    visit_count: 0,
    untracked_visits: 0,
    retention_days: 12,
    max_visits: null,
    expires_at: NOW_S + 12 * 86400,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  });
});

test('created_at is integer Unix seconds of the real clock', async (t) => {
  const h = await start(t);
  const before = Math.floor(Date.now() / 1000);
  const code = await h.shorten('https://example.com/clock');
  const after = Math.floor(Date.now() / 1000);
  const rec = jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`));
  assert.ok(Number.isInteger(rec.created_at));
  assert.ok(rec.created_at >= before && rec.created_at <= after, `${rec.created_at} not in [${before}, ${after}]`);
});

test('GET /api/lookup stores and matches the WHATWG serialization and returns the newest of two', async (t) => {
  const h = await start(t);
  const first = await h.shorten('HTTPS://Example.COM:443/a b?x=1');
  const second = await h.shorten('https://example.com/a%20b?x=1');
  const other = await h.shorten('https://example.com/other');
  const stored = jsonBody<UrlRecord>(await h.req(`/api/urls/${first}`));
  assert.equal(stored.original_url, 'https://example.com/a%20b?x=1');

  for (const spelling of ['https://example.com/a%20b?x=1', 'HTTPS://EXAMPLE.com:443/a b?x=1', 'https://example.com:443/a%20b?x=1']) {
    const r = await h.req(`/api/lookup?url=${encodeURIComponent(spelling)}`);
    assert.equal(r.status, 200, spelling);
    assert.equal(r.headers['content-type'], JSON_TYPE, spelling);
    const rec = jsonBody<UrlRecord>(r);
    assert.deepEqual(Object.keys(rec).sort(), RECORD_FIELDS);
    assert.equal(rec.short_code, second, spelling);
    assert.notEqual(rec.short_code, first);
    assert.equal(rec.original_url, 'https://example.com/a%20b?x=1');
  }
  const r = await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/other')}`);
  assert.equal(jsonBody<UrlRecord>(r).short_code, other);
});

test('DELETE /api/urls/<code> answers 204 with an empty body; the code is then gone', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const code = await h.shorten('https://example.com/delete-me');
  const keep = await h.shorten('https://example.com/keep-me');
  const r = await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': 'k1' } });
  assert.equal(r.status, 204);
  assert.equal(r.body, '');
  assert.equal(r.headers['content-type'], undefined);

  const meta = await h.req(`/api/urls/${code}`);
  assert.equal(meta.status, 404);
  assert.equal(meta.body, '');
  assert.equal((await h.req(`/${code}`)).status, 404);
  const again = await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': 'k1' } });
  assert.equal(again.status, 404);
  assert.equal(again.body, '');
  const list = jsonBody<UrlList>(await h.req('/api/urls', { headers: { 'x-api-key': 'k1' } }));
  assert.deepEqual(
    list.urls.map((u) => u.short_code),
    [keep],
  );

  // The api_key query parameter works for delete too.
  const viaQuery = await h.req(`/api/urls/${keep}?api_key=k1`, { method: 'DELETE' });
  assert.equal(viaQuery.status, 204);
  assert.equal((await h.req(`/api/urls/${keep}`)).status, 404);
});

test('GET /<code> redirects with 302, Location and Cache-Control, and counts a visit', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/target?x=1');
  const r = await h.req(`/${code}`);
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://example.com/target?x=1');
  assert.equal(r.headers['cache-control'], 'private, no-store');
  assert.equal(r.body, '');
  assert.equal(jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`)).visit_count, 1);
  await h.req(`/${code}`);
  assert.equal(jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`)).visit_count, 2);
});

test('HEAD /<code> redirects like GET but does not count a visit', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/head');
  const r = await h.req(`/${code}`, { method: 'HEAD' });
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://example.com/head');
  assert.equal(r.headers['cache-control'], 'private, no-store');
  assert.equal(r.body, '');
  assert.equal(jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`)).visit_count, 0);
  await h.req(`/${code}`);
  await h.req(`/${code}`, { method: 'HEAD' });
  assert.equal(jsonBody<UrlRecord>(await h.req(`/api/urls/${code}`)).visit_count, 1);
});

test('/static/index.html is served with an ETag and revalidates to 304', async (t) => {
  const h = await start(t);
  const r = await h.req('/static/index.html');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], HTML);
  assert.equal(r.body, INDEX_HTML);
  const etag = r.headers.etag;
  assert.ok(etag !== undefined);
  assert.match(etag, /^"[^"]+"$/);

  const cached = await h.req('/static/index.html', { headers: { 'if-none-match': etag } });
  assert.equal(cached.status, 304);
  assert.equal(cached.body, '');
  assert.equal(cached.headers.etag, etag);

  const stale = await h.req('/static/index.html', { headers: { 'if-none-match': '"something-else"' } });
  assert.equal(stale.status, 200);
  assert.equal(stale.body, INDEX_HTML);

  const head = await h.req('/static/index.html', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.etag, etag);
  assert.equal(head.body, '');
});

test('a missing static file is 404 with an empty body', async (t) => {
  const h = await start(t);
  for (const path of ['/static/nope.js', '/static/img/none.svg', '/static']) {
    const r = await h.req(path);
    assert.equal(r.status, 404, path);
    assert.equal(r.body, '', path);
  }
});
