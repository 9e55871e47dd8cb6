/**
 * What prefetchers and crawlers meet (docs/api.md, paths; the README's routes): `HEAD /api/shorten`
 * is 405 with exactly `Allow: GET, POST` and creates nothing (a HEAD must change nothing), while
 * HEAD keeps working on every other GET route; `GET /robots.txt` disallows everything, behind the
 * gate like any API route.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORS_HEADERS, SECURITY_HEADERS } from '../../src/http/headers.ts';
import { assert401, RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { codeOf, start, type Reply, visitsOf } from '../support/helpers.ts';

const URL_Q = `url=${encodeURIComponent('https://example.com/prefetched')}`;
const ROBOTS = 'User-agent: *\nDisallow: /\n';

function assertHead405(r: Reply, label: string): void {
  assert.equal(r.status, 405, label);
  assert.equal(r.headers.allow, 'GET, POST', label);
  assert.equal(r.body, '', `${label}: a HEAD answer has no body`);
  assert.equal(r.headers['content-type'], 'application/json', label);
  assert.equal(r.headers['content-length'], String(JSON.stringify({ detail: 'HEAD is not allowed here' }).length), label);
  // No longer a (deprecated) way to create a link, so no deprecation headers.
  assert.equal(r.headers['deprecation'], undefined, label);
  assert.equal(r.headers['location'], undefined, label);
  for (const [name, value] of [...CORS_HEADERS, ...SECURITY_HEADERS]) assert.equal(r.headers[name.toLowerCase()], value, `${label}: ${name}`);
}

test('HEAD /api/shorten is 405 with Allow: GET, POST in every spelling, and creates nothing', async (t) => {
  const h = await start(t);
  for (const path of [`/api/shorten?${URL_Q}`, `/api/shorten/?${URL_Q}`, '/api/shorten', `/api/%73horten?${URL_Q}`]) {
    assertHead405(await h.req(path, { method: 'HEAD' }), `HEAD ${path}`);
  }
  const withBody = await h.req('/api/shorten', { method: 'HEAD', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/b"}' });
  assertHead405(withBody, 'HEAD with a JSON body');
  assert.equal(h.shortener.count, 0, 'no link was created');

  // The 405 of any other method names the same two methods.
  const put = await h.req('/api/shorten', { method: 'PUT' });
  assert.equal(put.status, 405);
  assert.equal(put.headers.allow, 'GET, POST');
  assert.equal(put.body, '{"detail":"PUT is not allowed here"}');

  // GET and POST still create; HEAD elsewhere still answers like GET without changing anything.
  const created = await h.req(`/api/shorten?${URL_Q}`);
  assert.equal(created.status, 201);
  const code = codeOf(created);
  assert.equal((await h.req(`/api/shorten?${URL_Q}`, { method: 'POST' })).status, 201);
  assert.equal(h.shortener.count, 2);
  const head = await h.req(`/${code}`, { method: 'HEAD' });
  assert.equal(head.status, 302);
  assert.equal(head.headers.location, 'https://example.com/prefetched');
  assert.equal((await h.req('/api/health', { method: 'HEAD' })).status, 200);
  assert.equal((await h.req(`/api/urls/${code}`, { method: 'HEAD' })).status, 200);
  assert.equal(await visitsOf(h.shortener, code), 0, 'HEAD counted no visit');
});

test('HEAD /api/shorten with the gate on: 401 without the token, 405 with it, nothing created', async (t) => {
  const h = await start(t, { apiToken: TOKEN });
  assert401(await h.req(`/api/shorten?${URL_Q}`, { method: 'HEAD' }), 'missing', 'HEAD without the token', true);
  assertHead405(await h.req(`/api/shorten?${URL_Q}`, { method: 'HEAD', headers: { authorization: RIGHT } }), 'HEAD with the token');
  assert.equal(h.shortener.count, 0);
});

test('GET /robots.txt disallows every path, as UTF-8 text; HEAD has its headers', async (t) => {
  const h = await start(t);
  for (const path of ['/robots.txt', '/robots.txt/', '/robots.txt?x=1']) {
    const r = await h.req(path);
    assert.equal(r.status, 200, path);
    assert.equal(r.body, ROBOTS, path);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8', path);
    assert.equal(r.headers['content-length'], String(ROBOTS.length), path);
    assert.equal(r.headers['access-control-allow-origin'], '*', path);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', path);
  }
  const head = await h.req('/robots.txt', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-length'], String(ROBOTS.length));
  const post = await h.req('/robots.txt', { method: 'POST' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
});

test('/robots.txt is behind the gate (docs/security.md), under a base path too', async (t) => {
  const h = await start(t, { apiToken: TOKEN, baseUrl: 'http://localhost/s' });
  assert401(await h.req('/s/robots.txt'), 'missing', 'without the token');
  assert401(await h.req('/s/robots.txt', { headers: { authorization: `${RIGHT}x` } }), 'invalid', 'a wrong token');
  const r = await h.req('/s/robots.txt', { headers: { authorization: RIGHT } });
  assert.equal(r.status, 200);
  assert.equal(r.body, ROBOTS);
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
});
