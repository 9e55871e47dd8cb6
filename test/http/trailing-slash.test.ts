/**
 * docs/api.md, paths: every route also answers with a trailing slash, also when a query string
 * follows it. Each case is checked against the same request without the slash: same status, same
 * body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeOf, start, type Reply } from '../support/helpers.ts';

interface UrlRecord {
  short_code: string;
  original_url: string;
  visit_count: number;
}

function record(r: Reply): UrlRecord {
  assert.equal(r.headers['content-type'], 'application/json');
  return JSON.parse(r.body) as UrlRecord;
}

test('read-only routes answer the same with and without a trailing slash', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const code = await h.shorten('https://example.com/slash');
  const url = encodeURIComponent('https://example.com/slash');
  const cases: { name: string; path: string; slashed: string; status: number; headers?: Record<string, string>; method?: string }[] = [
    { name: 'health', path: '/api/health', slashed: '/api/health/', status: 200 },
    { name: 'health with query', path: '/api/health?x=1', slashed: '/api/health/?x=1', status: 200 },
    { name: 'list, query key', path: '/api/urls?api_key=k1', slashed: '/api/urls/?api_key=k1', status: 200 },
    { name: 'list, header key', path: '/api/urls', slashed: '/api/urls/', status: 200, headers: { 'x-api-key': 'k1' } },
    { name: 'list, paging', path: '/api/urls?api_key=k1&limit=1', slashed: '/api/urls/?api_key=k1&limit=1', status: 200 },
    { name: 'metadata', path: `/api/urls/${code}`, slashed: `/api/urls/${code}/`, status: 200 },
    { name: 'metadata with query', path: `/api/urls/${code}?x=1`, slashed: `/api/urls/${code}/?x=1`, status: 200 },
    { name: 'lookup', path: `/api/lookup?url=${url}`, slashed: `/api/lookup/?url=${url}`, status: 200 },
    { name: 'static file', path: '/static/index.html', slashed: '/static/index.html/', status: 200 },
    { name: 'list without key stays 403', path: '/api/urls', slashed: '/api/urls/', status: 403 },
    { name: 'lookup without url stays 400', path: '/api/lookup', slashed: '/api/lookup/', status: 400 },
    { name: 'bad limit stays 400', path: '/api/urls?api_key=k1&limit=0', slashed: '/api/urls/?api_key=k1&limit=0', status: 400 },
    { name: 'unknown metadata stays 404', path: '/api/urls/zzzzzz', slashed: '/api/urls/zzzzzz/', status: 404 },
    { name: 'wrong method stays 405', path: '/api/urls', slashed: '/api/urls/', status: 405, method: 'PUT' },
  ];
  for (const c of cases) {
    const options = { method: c.method ?? 'GET', ...(c.headers ? { headers: c.headers } : {}) };
    const plain = await h.req(c.path, options);
    const slashed = await h.req(c.slashed, options);
    assert.equal(plain.status, c.status, `${c.name}: ${c.path}`);
    assert.equal(slashed.status, c.status, `${c.name}: ${c.slashed}`);
    assert.equal(slashed.body, plain.body, c.name);
    assert.equal(slashed.headers['content-type'], plain.headers['content-type'], c.name);
    assert.equal(slashed.headers.allow, plain.headers.allow, c.name);
  }
  // The lookup with a slash found the right record.
  assert.equal(record(await h.req(`/api/lookup/?url=${url}`)).short_code, code);
});

test('GET / with a query string still serves the UI', async (t) => {
  const h = await start(t);
  const plain = await h.req('/');
  const withQuery = await h.req('/?x=1');
  assert.equal(withQuery.status, 200);
  assert.equal(withQuery.body, plain.body);
});

test('POST and GET /api/shorten/ create links, also with a query after the slash', async (t) => {
  const h = await start(t);
  const post = await h.req('/api/shorten/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/post-slash"}',
  });
  const postQuery = await h.req(`/api/shorten/?url=${encodeURIComponent('https://example.com/post-query-slash')}`, { method: 'POST' });
  const get = await h.req(`/api/shorten/?url=${encodeURIComponent('https://example.com/get-slash')}`);
  for (const [r, url] of [
    [post, 'https://example.com/post-slash'],
    [postQuery, 'https://example.com/post-query-slash'],
    [get, 'https://example.com/get-slash'],
  ] as const) {
    assert.equal(r.status, 201, url);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8', url);
    assert.match(r.body, new RegExp(`^http://127\\.0\\.0\\.1:${h.port}/[1-9A-HJ-NP-Za-km-z]{6}$`), url);
    assert.equal(r.headers.location, r.body, url);
    const code = codeOf(r);
    assert.equal(record(await h.req(`/api/urls/${code}`)).original_url, url);
  }
});

test('GET and HEAD /<code>/ redirect like /<code>; GET counts, HEAD does not', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/redirect-slash');
  for (const path of [`/${code}/`, `/${code}/?utm=x`]) {
    const r = await h.req(path);
    assert.equal(r.status, 302, path);
    assert.equal(r.headers.location, 'https://example.com/redirect-slash', path);
    assert.equal(r.headers['cache-control'], 'private, no-store', path);
    const head = await h.req(path, { method: 'HEAD' });
    assert.equal(head.status, 302, `HEAD ${path}`);
    assert.equal(head.headers.location, 'https://example.com/redirect-slash', `HEAD ${path}`);
  }
  assert.equal(record(await h.req(`/api/urls/${code}/`)).visit_count, 2);
  const missing = await h.req('/zzzzzz/');
  assert.equal(missing.status, 404);
  assert.match(missing.body, /Link not found/);
});

test('DELETE /api/urls/<code>/ deletes, with the key in the header or in a query after the slash', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const a = await h.shorten('https://example.com/del-a');
  const b = await h.shorten('https://example.com/del-b');
  const byHeader = await h.req(`/api/urls/${a}/`, { method: 'DELETE', headers: { 'x-api-key': 'k1' } });
  assert.equal(byHeader.status, 204);
  assert.equal(byHeader.body, '');
  const byQuery = await h.req(`/api/urls/${b}/?api_key=k1`, { method: 'DELETE' });
  assert.equal(byQuery.status, 204);
  assert.equal(byQuery.body, '');
  assert.equal((await h.req(`/api/urls/${a}`)).status, 404);
  assert.equal((await h.req(`/api/urls/${b}`)).status, 404);
  const noKey = await h.req(`/api/urls/${a}/`, { method: 'DELETE' });
  assert.equal(noKey.status, 403);
  assert.equal(noKey.body, '');
});
