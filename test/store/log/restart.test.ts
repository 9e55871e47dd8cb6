/**
 * What survives a graceful restart: every record and every visit count, exactly; HEAD is not a visit;
 * visit counts reach the log as batches within the flush interval, without a close.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Entry } from '../../../src/store/log/format.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { LOG_FILE } from '../../../src/store/log/log-engine.ts';
import { dataDir, start, type Harness } from '../../support/helpers.ts';
import { logEntries } from '../../support/log-entries.ts';

const KEY = 'restart-admin-key';
const ADMIN = { 'x-api-key': KEY };
/** A fixed base URL, so that `short_url` is the same whichever port each start gets. */
const BASE_URL = 'http://sho.rt.test';

interface Listed {
  count: number;
  urls: { short_code: string; visit_count: number }[];
}

async function list(h: Harness): Promise<{ body: string; total: string | undefined; parsed: Listed }> {
  const r = await h.req('/api/urls', { headers: ADMIN });
  assert.equal(r.status, 200);
  const total = r.headers['x-total-count'];
  return { body: r.body, total: Array.isArray(total) ? total[0] : total, parsed: JSON.parse(r.body) as Listed };
}

async function visitCount(h: Harness, code: string): Promise<number> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200);
  return (JSON.parse(r.body) as { visit_count: number }).visit_count;
}

test('records and visit counts are identical after a graceful restart', async (t) => {
  const data = dataDir(t);
  const options = { baseUrl: BASE_URL, apiKeys: [KEY] };
  let h = await data.start(options);
  const a = await h.shorten('https://example.com/a');
  const b = await h.shorten('https://example.com/b?q=1#frag', 30);
  const c = await h.shorten('https://example.com/c');
  const d = await h.shorten('https://example.com/a'); // the same URL twice: two codes
  const e = await h.shorten('https://example.org/e', 36500);
  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/${a}`)).status, 302);
  for (let i = 0; i < 7; i++) assert.equal((await h.req(`/${b}`)).status, 302);
  assert.equal((await h.req(`/${d}`)).status, 302);
  assert.equal((await h.req(`/api/urls/${c}`, { method: 'DELETE', headers: ADMIN })).status, 204);

  const before = await list(h);
  assert.deepEqual(
    before.parsed.urls.map((u) => u.short_code),
    [e, d, b, a],
  );
  assert.deepEqual(
    before.parsed.urls.map((u) => u.visit_count),
    [0, 1, 7, 3],
  );
  const lookupBefore = await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/a')}`);

  await h.close(true);
  h = await data.start(options);

  const after = await list(h);
  assert.equal(after.body, before.body, 'the full list JSON is byte-identical');
  assert.equal(after.total, before.total);
  assert.equal(h.shortener.count, 4);
  assert.equal((await h.req(`/api/urls/${c}`)).status, 404, 'the deleted link stays deleted');
  const lookupAfter = await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/a')}`);
  assert.equal(lookupAfter.status, 200);
  assert.equal(lookupAfter.body, lookupBefore.body, 'lookup still returns the newest of the two');

  // A second restart after more visits: counts continue from where they were.
  assert.equal((await h.req(`/${a}`)).status, 302);
  await h.close(true);
  h = await data.start(options);
  assert.equal(await visitCount(h, a), 4);
  assert.equal(await visitCount(h, b), 7);
});

test('visit_count is exact after 200 concurrent redirects, and still exact after a restart', async (t) => {
  const data = dataDir(t);
  const options = { baseUrl: BASE_URL, apiKeys: [KEY] };
  let h = await data.start(options);
  const code = await h.shorten('https://example.com/popular');
  const other = await h.shorten('https://example.com/quiet');
  const replies = await Promise.all(Array.from({ length: 200 }, () => h.req(`/${code}`)));
  for (const r of replies) {
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'https://example.com/popular');
  }
  assert.equal(await visitCount(h, code), 200);
  assert.equal(await visitCount(h, other), 0);

  await h.close(true);
  h = await data.start(options);
  assert.equal(await visitCount(h, code), 200);
  assert.equal(await visitCount(h, other), 0);
});

test('HEAD redirects but is not counted as a visit, before or after a restart', async (t) => {
  const data = dataDir(t);
  const options = { baseUrl: BASE_URL, apiKeys: [KEY] };
  let h = await data.start(options);
  const code = await h.shorten('https://example.com/head');
  for (let i = 0; i < 5; i++) {
    const r = await h.req(`/${code}`, { method: 'HEAD' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'https://example.com/head');
    assert.equal(r.body, '');
  }
  assert.equal(await visitCount(h, code), 0);
  assert.equal((await h.req(`/${code}`)).status, 302);
  assert.equal(await visitCount(h, code), 1);

  await h.close(true);
  h = await data.start(options);
  assert.equal(await visitCount(h, code), 1);
});

test('visit counts (visit_tracking counts) are appended as absolute batches within the flush interval, without a close', async (t) => {
  const h = await start(t, { baseUrl: BASE_URL, apiKeys: [KEY], visitFlushMs: 50, visitTracking: 'counts' });
  const a = await h.shorten('https://example.com/flush-a');
  const b = await h.shorten('https://example.com/flush-b');
  assert.equal(
    logEntries(h.dir).some((e) => e.op === 'V'),
    false,
    'no visit batch before any visit',
  );

  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/${a}`)).status, 302);
  assert.equal((await h.req(`/${b}`)).status, 302);
  await delay(400);

  const batches = logEntries(h.dir).filter((e): e is Extract<Entry, { op: 'V' }> => e.op === 'V');
  assert.ok(batches.length >= 1, 'a V line was appended while the service runs');
  const latest = new Map(batches.flatMap((v) => v.counts));
  assert.equal(latest.get(a), 3);
  assert.equal(latest.get(b), 1);

  // Counts are absolute: two more visits make the latest batch say 5, not 2.
  for (let i = 0; i < 2; i++) assert.equal((await h.req(`/${a}`)).status, 302);
  await delay(400);
  const again = logEntries(h.dir).filter((e): e is Extract<Entry, { op: 'V' }> => e.op === 'V');
  assert.ok(again.length > batches.length, 'a new batch for the new visits');
  const last = again[again.length - 1];
  assert.deepEqual(last?.counts, [[a, 5]], 'only the code visited since the last flush, with its absolute count');

  const replayed = replay(readFileSync(join(h.dir, LOG_FILE)));
  assert.equal(replayed.records.get(a)?.visits, 5);
  assert.equal(replayed.records.get(b)?.visits, 1);

  // Nothing visited, nothing appended.
  const size = readFileSync(join(h.dir, LOG_FILE)).length;
  await delay(200);
  assert.equal(readFileSync(join(h.dir, LOG_FILE)).length, size);
});
