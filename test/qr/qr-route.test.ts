/**
 * `GET /api/urls/<code>/qr` over HTTP: the SVG the server sends is read back, by decoders nobody here
 * wrote, as exactly the record's short_url — with a custom code, and under a long base path.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, tempDir } from '../support/helpers.ts';
import { haveZbar, openReader } from './decoders.ts';

const LONG_BASE = `/${'links-of-the-marketing-department/'.repeat(9)}s`;

for (const [name, basePath, code] of [
  ['a custom code at the root', '', 'Spring_Sale-2026'],
  [`a base path of ${LONG_BASE.length} characters`, LONG_BASE, undefined],
] as const) {
  test(`the QR code of a link reads back as its short_url: ${name}`, async (t) => {
    if (!haveZbar(t)) return;
    const reader = await openReader(t, tempDir(t, 'qr-route-'));
    if (!reader) return;
    const h = await start(t, { basePath, maxShortLength: 16, fsync: 'off' });
    const created = await h.req(`${basePath}/api/shorten`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/landing', ...(code ? { code } : {}) }),
    });
    assert.equal(created.status, 201, created.body);
    const shortUrl = created.body;
    const shortCode = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
    if (code) assert.equal(shortCode, code);

    const r = await h.req(`${basePath}/api/urls/${shortCode}/qr`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/svg+xml');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(r.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1"/);
    const read = await reader.read(r.body, shortCode);
    assert.equal(read.jsqr, shortUrl);
    assert.equal(read.zbar, shortUrl);
  });
}

test('the QR code of an unknown, deleted or expired link is 404 with an empty body', async (t) => {
  let clock = 1_790_000_000_000;
  const h = await start(t, { fsync: 'off', apiKeys: ['k'], now: () => clock });
  const kept = await h.shorten('https://example.com/a', 1);
  const doomed = await h.shorten('https://example.com/b');
  assert.equal((await h.req(`/api/urls/${kept}/qr`)).status, 200);
  assert.equal((await h.req(`/api/urls/${doomed}/qr/`)).status, 200, 'a trailing slash is the same route');

  assert.equal((await h.req(`/api/urls/${doomed}`, { method: 'DELETE', headers: { 'x-api-key': 'k' } })).status, 204);
  clock += 86400 * 1000;
  for (const code of ['zzzzzz', doomed, kept]) {
    const r = await h.req(`/api/urls/${code}/qr`);
    assert.deepEqual([r.status, r.body], [404, ''], code);
  }
  const posted = await h.req(`/api/urls/${kept}/qr`, { method: 'POST' });
  assert.equal(posted.status, 405);
  assert.equal(posted.headers['allow'], 'GET, HEAD, OPTIONS');
});

test('behind the gate, the QR code needs the token', async (t) => {
  const h = await start(t, { fsync: 'off', apiToken: 'secret-token' });
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer secret-token' },
    body: '{"url":"https://example.com/"}',
  });
  const code = r.body.slice(r.body.lastIndexOf('/') + 1);
  assert.equal((await h.req(`/api/urls/${code}/qr`)).status, 401);
  assert.equal((await h.req(`/api/urls/${code}/qr`, { headers: { authorization: 'Bearer secret-token' } })).status, 200);
});
