/**
 * docs/api.md, paths: with a base URL that has a path, every route lives below it, short URLs carry
 * it, the bare base path redirects to itself with a slash, and nothing outside it is served.
 *
 * The public base URL names a host that is not the listener (as behind a reverse proxy): routing uses
 * only its path, and short URLs and the own-link check use the whole of it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { codeOf, start, type Reply } from '../support/helpers.ts';

const BASE = 'http://short.example/s';
const CODE = /^[1-9A-HJ-NP-Za-km-z]{6}$/;
const INDEX_HTML = readFileSync(new URL('../../static/index.html', import.meta.url), 'utf8');
const KEY = { 'x-api-key': 'k1' };

interface UrlRecord {
  short_code: string;
  short_url: string;
  original_url: string;
  visit_count: number;
}

function json<T>(r: Reply): T {
  assert.equal(r.headers['content-type'], 'application/json');
  return JSON.parse(r.body) as T;
}

test('every route works under the base path and short URLs are <base>/<code>', async (t) => {
  const h = await start(t, { apiKeys: ['k1'], baseUrl: BASE });
  const ui = await h.req('/s/');
  assert.equal(ui.status, 200);
  assert.equal(ui.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(ui.body, INDEX_HTML);

  const health = await h.req('/s/api/health');
  assert.equal(health.status, 200);
  assert.equal(health.body, '{"status":"ok","service":"url-shortener"}');

  const created = await h.req('/s/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/under-base"}',
  });
  assert.equal(created.status, 201);
  assert.equal(created.headers['content-type'], 'text/plain; charset=utf-8');
  assert.ok(created.body.startsWith(`${BASE}/`), created.body);
  const code = created.body.slice(BASE.length + 1);
  assert.match(code, CODE);
  assert.equal(created.headers.location, created.body);

  const viaGet = await h.req(`/s/api/shorten?url=${encodeURIComponent('https://example.com/under-base-get')}`);
  assert.equal(viaGet.status, 201);
  assert.match(viaGet.body, /^http:\/\/short\.example\/s\/[1-9A-HJ-NP-Za-km-z]{6}$/);

  const meta = json<UrlRecord>(await h.req(`/s/api/urls/${code}`));
  assert.equal(meta.short_code, code);
  assert.equal(meta.short_url, `${BASE}/${code}`);
  assert.equal(meta.original_url, 'https://example.com/under-base');

  const redirect = await h.req(`/s/${code}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.location, 'https://example.com/under-base');
  assert.equal(redirect.headers['cache-control'], 'private, no-store');
  const head = await h.req(`/s/${code}`, { method: 'HEAD' });
  assert.equal(head.status, 302);
  assert.equal(head.headers.location, 'https://example.com/under-base');
  assert.equal(json<UrlRecord>(await h.req(`/s/api/urls/${code}`)).visit_count, 1);

  const lookup = json<UrlRecord>(await h.req(`/s/api/lookup?url=${encodeURIComponent('https://example.com/under-base')}`));
  assert.equal(lookup.short_code, code);

  const list = await h.req('/s/api/urls', { headers: KEY });
  assert.equal(list.status, 200);
  const body = json<{ count: number; urls: UrlRecord[] }>(list);
  assert.equal(body.count, 2);
  for (const rec of body.urls) assert.equal(rec.short_url, `${BASE}/${rec.short_code}`);
  assert.equal((await h.req('/s/api/urls?api_key=k1')).status, 200);
  assert.equal((await h.req('/s/api/urls')).status, 403);

  const file = await h.req('/s/static/index.html');
  assert.equal(file.status, 200);
  assert.equal(file.body, INDEX_HTML);

  const preflight = await h.req('/s/api/urls', { method: 'OPTIONS' });
  assert.equal(preflight.status, 204);

  const wrongMethod = await h.req('/s/api/urls', { method: 'PUT' });
  assert.equal(wrongMethod.status, 405);
  assert.ok(wrongMethod.headers.allow);

  const unknown = await h.req('/s/zzzzzz');
  assert.equal(unknown.status, 404);
  assert.match(unknown.body, /Link not found/);
  const unknownApi = await h.req('/s/api/nope');
  assert.equal(unknownApi.status, 404);
  assert.equal(unknownApi.body, '');

  const del = await h.req(`/s/api/urls/${code}`, { method: 'DELETE', headers: KEY });
  assert.equal(del.status, 204);
  assert.equal(del.body, '');
  assert.equal((await h.req(`/s/api/urls/${code}`)).status, 404);
});

test('trailing slashes and queries after them work under the base path', async (t) => {
  const h = await start(t, { apiKeys: ['k1'], baseUrl: BASE });
  const code = await h.shorten('https://example.com/base-slash');
  assert.equal((await h.req('/s/api/health/')).status, 200);
  assert.equal((await h.req('/s/api/urls/?api_key=k1')).status, 200);
  assert.equal((await h.req(`/s/api/urls/${code}/`)).status, 200);
  assert.equal((await h.req(`/s/api/lookup/?url=${encodeURIComponent('https://example.com/base-slash')}`)).status, 200);
  const r = await h.req(`/s/${code}/`);
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://example.com/base-slash');
  const created = await h.req(`/s/api/shorten/?url=${encodeURIComponent('https://example.com/base-slash-2')}`, { method: 'POST' });
  assert.equal(created.status, 201);
  assert.ok(created.body.startsWith(`${BASE}/`));
});

test('GET and HEAD of the bare base path are 301 to the path with a slash, keeping the query', async (t) => {
  const h = await start(t, { baseUrl: BASE });
  const cases: { method: string; path: string; location: string }[] = [
    { method: 'GET', path: '/s', location: '/s/' },
    { method: 'HEAD', path: '/s', location: '/s/' },
    { method: 'GET', path: '/s?x=1', location: '/s/?x=1' },
    { method: 'HEAD', path: '/s?x=1', location: '/s/?x=1' },
    { method: 'GET', path: '/s?a=1&b=%2F', location: '/s/?a=1&b=%2F' },
  ];
  for (const c of cases) {
    const label = `${c.method} ${c.path}`;
    const r = await h.req(c.path, { method: c.method });
    assert.equal(r.status, 301, label);
    assert.equal(r.headers.location, c.location, label);
    assert.equal(r.body, '', label);
  }
  // The slashed form is the UI itself, not another redirect.
  const ui = await h.req('/s/');
  assert.equal(ui.status, 200);
  assert.equal(ui.body, INDEX_HTML);
});

test('a percent-encoded spelling of the base path is our own short-link space too (the router decodes it: a loop)', async (t) => {
  const h = await start(t, { baseUrl: BASE });
  const code = await h.shorten('https://example.com/loop-target');
  // The router routes the encoded spelling to the same link: shortening it would make a loop.
  const routed = await h.req(`/%73/${code}`);
  assert.equal(routed.status, 302);
  for (const url of [`http://short.example/%73/${code}`, 'http://short.example/%73/abcdef', 'http://short.example/%73']) {
    const r = await h.req('/s/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    assert.equal(r.status, 400, `${url}: ${r.status} ${r.body}`);
    assert.equal(r.headers['content-type'], 'application/json', url);
  }
});

test('bad path spellings are 400 before the base path is considered', async (t) => {
  const h = await start(t, { apiKeys: ['k1'], baseUrl: BASE });
  for (const path of [
    '/s/..',
    '/s/../api/health',
    '/x/../s/api/health',
    '/s%2Fapi/health',
    '/s/api%2Furls',
    '/%2e%2e/s/api/health',
    '/s/x%00',
    '//s/api/health',
  ]) {
    const r = await h.req(path);
    assert.equal(r.status, 400, path);
    assert.equal(r.headers['content-type'], 'application/json', path);
    assert.equal(typeof (JSON.parse(r.body) as { detail: unknown }).detail, 'string', path);
  }
});

test('a multi-segment base path redirects and routes the same way', async (t) => {
  const h = await start(t, { baseUrl: 'https://short.example/a/b' });
  const r = await h.req('/a/b?q=1');
  assert.equal(r.status, 301);
  assert.equal(r.headers.location, '/a/b/?q=1');
  assert.equal((await h.req('/a/b/api/health')).status, 200);
  const code = await h.shorten('https://example.com/deep');
  const meta = json<UrlRecord>(await h.req(`/a/b/api/urls/${code}`));
  assert.equal(meta.short_url, `https://short.example/a/b/${code}`);
  for (const path of ['/a', '/a/api/health', '/b/api/health', '/api/health', `/a/${code}`]) {
    const out = await h.req(path);
    assert.equal(out.status, 404, path);
    assert.equal(out.body, '', path);
  }
});

test('a base URL given with a trailing slash gives the same short URLs', async (t) => {
  const h = await start(t, { baseUrl: `${BASE}/` });
  const r = await h.req('/s/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/trailing-base"}',
  });
  assert.equal(r.status, 201);
  assert.match(r.body, /^http:\/\/short\.example\/s\/[1-9A-HJ-NP-Za-km-z]{6}$/);
  assert.equal((await h.req('/s')).status, 301);
});

test('routes outside the base path are 404 with an empty body', async (t) => {
  const h = await start(t, { apiKeys: ['k1'], baseUrl: BASE });
  const code = await h.shorten('https://example.com/outside');
  const cases: { method: string; path: string; headers?: Record<string, string> }[] = [
    { method: 'GET', path: '/' },
    { method: 'GET', path: '/api/health' },
    { method: 'GET', path: '/api/urls', headers: KEY },
    { method: 'GET', path: `/api/urls/${code}` },
    { method: 'GET', path: `/api/lookup?url=${encodeURIComponent('https://example.com/outside')}` },
    { method: 'POST', path: `/api/shorten?url=${encodeURIComponent('https://example.com/x')}` },
    { method: 'DELETE', path: `/api/urls/${code}`, headers: KEY },
    { method: 'GET', path: `/${code}` },
    { method: 'HEAD', path: `/${code}` },
    { method: 'GET', path: '/static/index.html' },
    { method: 'GET', path: '/sx' },
    { method: 'GET', path: '/sx/' },
    { method: 'GET', path: '/sx/api/health' },
    { method: 'GET', path: `/sx/${code}` },
    { method: 'GET', path: '/S/api/health' },
  ];
  for (const c of cases) {
    const label = `${c.method} ${c.path}`;
    const r = await h.req(c.path, { method: c.method, ...(c.headers ? { headers: c.headers } : {}) });
    assert.equal(r.status, 404, label);
    assert.equal(r.body, '', label);
    assert.equal(r.headers.location, undefined, label);
  }
  // Nothing outside the base path touched the store: no visit, no delete, no new link.
  const meta = json<UrlRecord>(await h.req(`/s/api/urls/${code}`));
  assert.equal(meta.visit_count, 0);
  assert.equal(h.shortener.count, 1);
});

test('shortening a URL inside our own short-link space is 400; the same host outside the base path is allowed', async (t) => {
  const h = await start(t, { baseUrl: BASE });
  const own = await h.shorten('https://example.com/own');
  const refused = [
    `${BASE}/${own}`,
    `${BASE}/abcdef`,
    `${BASE}/`,
    BASE,
    `${BASE}/api/health`,
    `${BASE}/x?y=1`,
    'HTTP://SHORT.EXAMPLE:80/s/abcdef',
    // The base host in another scheme or on another port is still us (a TLS front, a redirect).
    'https://short.example/s/abcdef',
    'http://short.example:8080/s/abcdef',
  ];
  for (const url of refused) {
    const r = await h.req('/s/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    assert.equal(r.status, 400, url);
    assert.equal(r.headers['content-type'], 'application/json', url);
    const detail = (JSON.parse(r.body) as { detail: unknown }).detail;
    assert.equal(typeof detail, 'string', url);
  }
  const allowed = [
    'http://short.example/',
    'http://short.example/other',
    'http://short.example/sx',
    'http://short.example/sx/abcdef',
    'http://other.example/s/abcdef',
  ];
  for (const url of allowed) {
    const r = await h.req('/s/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    assert.equal(r.status, 201, `${url}: ${r.body}`);
    const code = codeOf(r);
    assert.equal(json<UrlRecord>(await h.req(`/s/api/urls/${code}`)).original_url, new URL(url).href, url);
  }
});
