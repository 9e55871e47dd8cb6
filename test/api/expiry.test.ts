/**
 * Retention (docs/api.md, retention): a record with retention_days > 0 expires at
 * created_at + retention_days × 86400 seconds; afterwards the redirect is a 410 page, metadata and
 * lookup are 404, the list leaves it out, and delete is 404. retention_days 0 never expires.
 * The clock is injected (`now`, in milliseconds) and moved by the tests.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { UrlList, UrlRecord } from '../../src/links/record.ts';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'expiry-key';
const DAY = 86400;
/** A fixed start time: 2023-11-14T22:13:20Z, a whole second. */
const T0 = 1_700_000_000_000;

/** A harness whose clock stands at `clock.ms` until a test moves it. */
async function withClock(t: TestContext, fn: (h: Harness, clock: { ms: number }) => Promise<void>): Promise<void> {
  const clock = { ms: T0 };
  await fn(await start(t, { now: () => clock.ms, apiKeys: [KEY] }), clock);
}

async function meta(h: Harness, code: string): Promise<UrlRecord> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, `metadata of ${code}`);
  return JSON.parse(r.body) as UrlRecord;
}

async function listed(h: Harness): Promise<{ total: string | undefined; codes: string[] }> {
  const r = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  const body = JSON.parse(r.body) as UrlList;
  assert.equal(body.count, body.urls.length);
  const total = r.headers['x-total-count'];
  return { total: Array.isArray(total) ? total[0] : total, codes: body.urls.map((u) => u.short_code) };
}

async function assertLive(h: Harness, code: string, url: string, when: string): Promise<void> {
  const r = await h.req(`/${code}`);
  assert.equal(r.status, 302, when);
  assert.equal(r.headers.location, url, when);
  assert.equal((await meta(h, code)).original_url, url, when);
  assert.ok((await listed(h)).codes.includes(code), when);
}

test('created_at is the clock in whole seconds, and retention_days is kept', (t) =>
  withClock(t, async (h, clock) => {
    clock.ms = T0 + 999;
    const code = await h.shorten('https://example.com/a', 1);
    const record = await meta(h, code);
    assert.equal(record.created_at, T0 / 1000);
    assert.equal(record.retention_days, 1);
  }));

test('a 1-day link lives until created_at + 86400 s and is gone from every API at that instant', (t) =>
  withClock(t, async (h, clock) => {
    const url = 'https://example.com/short-lived';
    const code = await h.shorten(url, 1);
    const keeper = await h.shorten('https://example.com/keeper');
    const createdAt = (await meta(h, code)).created_at;
    const expiresMs = (createdAt + DAY) * 1000;

    await assertLive(h, code, url, 'at creation');
    clock.ms = expiresMs - 1;
    await assertLive(h, code, url, 'one millisecond before expiry');
    assert.deepEqual(await listed(h), { total: '2', codes: [keeper, code] });
    const lookupBefore = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
    assert.equal(lookupBefore.status, 200);
    assert.equal((JSON.parse(lookupBefore.body) as UrlRecord).short_code, code);

    for (const at of [expiresMs, expiresMs + 1, expiresMs + 365 * DAY * 1000]) {
      clock.ms = at;
      const when = `at created_at + 86400 s + ${at - expiresMs} ms`;

      const redirect = await h.req(`/${code}`);
      assert.equal(redirect.status, 410, when);
      assert.equal(redirect.headers['content-type'], 'text/html; charset=utf-8', when);
      assert.match(redirect.body, /This link has expired/, when);
      assert.equal(redirect.headers.location, undefined, when);
      const head = await h.req(`/${code}`, { method: 'HEAD' });
      assert.equal(head.status, 410, when);

      const metadata = await h.req(`/api/urls/${code}`);
      assert.equal(metadata.status, 404, when);
      assert.equal(metadata.body, '', when);

      const lookup = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
      assert.equal(lookup.status, 404, when);
      assert.equal(lookup.body, '', when);

      assert.deepEqual(await listed(h), { total: '1', codes: [keeper] }, when);
      const paged = await h.req('/api/urls?limit=10&offset=0', { headers: { 'x-api-key': KEY } });
      assert.equal(paged.headers['x-total-count'], '1', when);

      // The link that never expires is untouched.
      await assertLive(h, keeper, 'https://example.com/keeper', when);
    }

    const del = await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    assert.equal(del.status, 404);
    assert.equal(del.body, '');
    // Delete of an expired link still checks the key first.
    const noKey = await h.req(`/api/urls/${code}`, { method: 'DELETE' });
    assert.equal(noKey.status, 403);
  }));

test('longer retention: N days is N × 86400 s', (t) =>
  withClock(t, async (h, clock) => {
    const code = await h.shorten('https://example.com/week', 7);
    const createdAt = (await meta(h, code)).created_at;
    clock.ms = (createdAt + 7 * DAY) * 1000 - 1;
    assert.equal((await h.req(`/${code}`)).status, 302);
    clock.ms = (createdAt + 7 * DAY) * 1000;
    assert.equal((await h.req(`/${code}`)).status, 410);
  }));

test('after expiry, lookup returns the older live record of the same URL', (t) =>
  withClock(t, async (h, clock) => {
    const url = 'https://example.com/shared';
    const older = await h.shorten(url);
    clock.ms += 1000;
    const newer = await h.shorten(url, 1);
    const newerCreated = (await meta(h, newer)).created_at;

    const before = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
    assert.equal(before.status, 200);
    assert.equal((JSON.parse(before.body) as UrlRecord).short_code, newer, 'the newest record wins while it lives');

    clock.ms = (newerCreated + DAY) * 1000;
    const after = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
    assert.equal(after.status, 200);
    const record = JSON.parse(after.body) as UrlRecord;
    assert.equal(record.short_code, older);
    assert.equal(record.retention_days, 0);
  }));

test('after expiry, lookup skips expired records down to none', (t) =>
  withClock(t, async (h, clock) => {
    const url = 'https://example.com/all-expire';
    await h.shorten(url, 2);
    const second = await h.shorten(url, 1);
    clock.ms += DAY * 1000;
    // The newer (1 day) expired, the older (2 days) still lives.
    const mid = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
    assert.equal(mid.status, 200);
    assert.notEqual((JSON.parse(mid.body) as UrlRecord).short_code, second);
    clock.ms += DAY * 1000;
    const gone = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body, '');
  }));

test('retention_days 0 never expires', (t) =>
  withClock(t, async (h, clock) => {
    const url = 'https://example.com/forever';
    const code = await h.shorten(url, 0);
    for (const years of [1, 100, 1000]) {
      clock.ms = T0 + years * 366 * DAY * 1000;
      await assertLive(h, code, url, `${years} years later`);
      const lookup = await h.req(`/api/lookup?url=${encodeURIComponent(url)}`);
      assert.equal(lookup.status, 200);
    }
    const del = await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    assert.equal(del.status, 204);
  }));
