/**
 * Long lists are sent in slices (the event loop is never held for the whole list) from a frozen
 * snapshot: the bytes equal `JSON.stringify` of the whole list, deletes made meanwhile do not tear
 * it, and dead slots are reclaimed only once no listing reads them.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { encodeEntry } from '../../src/store/log/format.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import { start, tempDir } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'list-key';

/** A data dir holding `n` links (written as a log: creating them over HTTP would be slow). */
function seeded(n: number): string {
  const dir = tempDir();
  const lines: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(encodeEntry({ op: 'C', code: `k${i}`, url: `https://example.com/${i}`, createdAt: 1_790_000_000 + i, retentionDays: 0, visits: i % 7 }));
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
  return dir;
}

test('a list longer than one slice is streamed, byte for byte what JSON.stringify gives', onOneProcess('it seeds its log file directly'), async (t) => {
  const h = await start(t, { dataDir: seeded(2_500), apiKeys: [KEY] });
  const r = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.headers['content-length'], undefined);
  assert.equal(r.headers['x-total-count'], '2500');
  assert.equal(r.headers['access-control-allow-origin'], '*', 'the usual headers on a streamed answer too');
  const parsed = JSON.parse(r.body) as { count: number; urls: { short_code: string; original_url: string }[] };
  assert.equal(r.body, JSON.stringify(parsed));
  assert.equal(parsed.count, 2_500);
  // Against the records seeded, not the body against itself: a record lost at a piece boundary
  // would still parse, and still have a count of 2,500.
  assert.equal(parsed.urls.length, 2_500);
  assert.deepEqual(
    parsed.urls.map((u) => [u.short_code, u.original_url]),
    Array.from({ length: 2_500 }, (_, i) => [`k${2_499 - i}`, `https://example.com/${2_499 - i}`]),
  );

  // A page inside the long list: one that fits in one piece, and one that spans several.
  const page = await h.req('/api/urls?limit=100&offset=999', { headers: { 'x-api-key': KEY } });
  const p = JSON.parse(page.body) as { count: number; urls: { short_code: string }[] };
  assert.equal(page.headers['content-length'], String(Buffer.byteLength(page.body)), 'one piece: sent whole');
  assert.equal(p.count, 100);
  assert.deepEqual(
    p.urls.map((u) => u.short_code),
    Array.from({ length: 100 }, (_, i) => `k${1500 - i}`),
  );
  const wide = await h.req('/api/urls?limit=1000&offset=999', { headers: { 'x-api-key': KEY } });
  const w = JSON.parse(wide.body) as { count: number; urls: { short_code: string }[] };
  assert.equal(wide.headers['transfer-encoding'], 'chunked');
  assert.equal(wide.body, JSON.stringify(w));
  assert.equal(w.count, 1000);
  assert.deepEqual(
    w.urls.map((u) => u.short_code),
    Array.from({ length: 1000 }, (_, i) => `k${1500 - i}`),
  );
  const empty = await h.req('/api/urls?offset=5000', { headers: { 'x-api-key': KEY } });
  assert.equal(empty.body, '{"count":0,"urls":[]}');
  assert.equal(empty.headers['x-total-count'], '2500');
});

test('while a client is slow to read a long list, the server answers others', onOneProcess('it seeds its log file directly'), async (t) => {
  const h = await start(t, { dataDir: seeded(20_000), apiKeys: [KEY] });
  let received = 0;
  let finished = false;
  const slow = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: h.port, path: '/api/urls', headers: { 'x-api-key': KEY }, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
  slow.pause();
  slow.on('data', (c: Buffer) => (received += c.length));
  slow.on('end', () => (finished = true));
  // Not reading: the list waits for the socket to drain, and other requests go on meanwhile.
  const health = await h.req('/healthz');
  assert.equal(health.status, 200);
  assert.equal(finished, false, 'the long list is still being sent');
  slow.resume();
  await new Promise((resolve) => slow.once('end', resolve));
  assert.ok(received > 1_000_000, `the whole list arrived (${received} bytes)`);
});

test('a snapshot keeps deleted records readable, and holds back the vacuum until released', async (t) => {
  const dir = seeded(3_000);
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), visitFlushMs: 60_000 });
  const internals = store as unknown as { records: { end: number; size: number } };
  t.after(() => store.close());
  const snapshot = await store.snapshot(() => true);
  assert.equal(snapshot.length, 3_000);
  for (let i = 0; i < 2_500; i++) await store.delete(`k${i}`);
  assert.equal(store.count, 500);
  assert.equal(internals.records.end, 3_000, 'no vacuum while the snapshot is open');
  const tail = snapshot.slice(2_998, 3_000);
  assert.deepEqual(
    tail.map((r) => r.code),
    ['k1', 'k0'],
    'deleted records still read as they were',
  );
  assert.equal(tail[0]?.url, 'https://example.com/1');
  snapshot.release();
  snapshot.release(); // twice is harmless
  await store.delete('k2500');
  assert.ok(internals.records.end < 3_000, `vacuumed once released (${internals.records.end} slots)`);
  const fresh = await store.snapshot((createdAt) => createdAt % 2 === 0);
  assert.equal(fresh.length, 249, 'the filter sees each record’s fields');
  fresh.release();
});
