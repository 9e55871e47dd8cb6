/**
 * The redirect has a fast path for the plain spelling `GET <base>/<code>`; every other spelling goes
 * through normalization and the router. Both must give the same answer, byte for byte, and count
 * each visit exactly once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';

/** Headers whose values differ per response by nature. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive']);
const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !VOLATILE.has(k)));

for (const base of ['', '/s']) {
  test(`fast and general paths answer alike and count once each${base ? ' (base path)' : ''}`, async (t) => {
    const h = await start(t, base ? { baseUrl: 'http://127.0.0.1/s' } : {});
    const code = await h.shorten('https://example.com/target?q=1');
    const fast = await h.req(`${base}/${code}`);
    assert.equal(fast.status, 302);
    assert.equal(fast.headers.location, 'https://example.com/target?q=1');
    assert.equal(fast.headers['cache-control'], 'private, no-store');
    assert.equal(fast.headers['content-length'], '0');
    assert.equal(fast.body, '');
    // Spellings the fast path leaves to the router: trailing slash, a query, an escaped letter.
    const hex = code.charCodeAt(0).toString(16);
    for (const spelling of [`${base}/${code}/`, `${base}/${code}?utm=x`, `${base}/%${hex}${code.slice(1)}`]) {
      const general = await h.req(spelling);
      assert.equal(general.status, 302, spelling);
      assert.deepEqual(stable(general.headers), stable(fast.headers), spelling);
    }
    const head = await h.req(`${base}/${code}`, { method: 'HEAD' });
    assert.equal(head.status, 302);
    const meta = JSON.parse((await h.req(`${base}/api/urls/${code}`)).body) as { visit_count: number };
    assert.equal(meta.visit_count, 4, 'four GETs, one visit each; HEAD not counted');
  });
}

test('a plain code that is unknown, expired or reserved falls through to the general answers', async (t) => {
  let now = Date.UTC(2026, 0, 1);
  const h = await start(t, { now: () => now });
  const code = await h.shorten('https://example.com/soon', 1);
  now += 2 * 86_400_000;
  const expired = await h.req(`/${code}`);
  assert.equal(expired.status, 410);
  assert.match(expired.body, /This link has expired/);
  const missing = await h.req('/zzzzzz');
  assert.equal(missing.status, 404);
  assert.match(missing.body, /Link not found/);
  // `api` is made of alphabet characters but is reserved: the router's 404 (empty), not a lookup.
  const reserved = await h.req('/api');
  assert.equal(reserved.status, 404);
  assert.equal(reserved.body, '');
  const healthz = await h.req('/healthz');
  assert.equal(healthz.status, 200);
});
