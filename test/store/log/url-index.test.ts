import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';

/** A log of `n` creates, `c<i>` → `https://example.com/<i>`. */
function writeLog(dir: string, n: number): void {
  const lines: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(encodeEntry({ op: 'C', code: `c${i}`, url: `https://example.com/${i}`, createdAt: 1_700_000_000 + i, retentionDays: 0, visits: 0 }));
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
}

const codes = (store: LogEngine, url: string): string[] => [...store.withUrl(url)].map((r) => r.code);

test('lookups by URL after start-up see the replayed records and the changes made since', async (t) => {
  const dir = tempDir();
  writeLog(dir, 50_000);
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('silent') });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.create({ code: 'new1', url: 'https://example.com/10', createdAt: 1_800_000_000, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  await store.delete('c49999');
  await store.create({ code: 'new2', url: 'https://example.com/49999', createdAt: 1_800_000_001, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  await store.delete('new2');
  assert.deepEqual(codes(store, 'https://example.com/10'), ['new1', 'c10']);
  assert.deepEqual(codes(store, 'https://example.com/49999'), []);
  assert.deepEqual(codes(store, 'https://example.com/0'), ['c0']);
  assert.deepEqual(codes(store, 'https://example.com/1'), ['c1']);
});

test('deleting most links reclaims their memory, and every lookup, list and visit stays right', async (t) => {
  const dir = tempDir();
  writeLog(dir, 5_000);
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), visitFlushMs: 60_000 });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  store.visit('c4999');
  store.visit('c4999');
  // Deleting 4,000 of 5,000 leaves more dead slots than live ones: the keydir is squeezed.
  for (let i = 0; i < 4_000; i++) await store.delete(`c${i}`);
  const internals = store as unknown as { records: { end: number; size: number } };
  assert.equal(internals.records.size, 1_000);
  assert.ok(internals.records.end < 4_000, `dead slots reclaimed (${internals.records.end} slots in use)`);
  assert.deepEqual(codes(store, 'https://example.com/4500'), ['c4500']);
  assert.deepEqual(codes(store, 'https://example.com/10'), []);
  assert.equal(store.get('c4999')?.visits, 2);
  const all = await store.snapshot(() => true);
  const newest = all.slice(0, 2).map((r) => r.code);
  all.release();
  assert.deepEqual(newest, ['c4999', 'c4998']);
  // A visit counted before the squeeze is still written by the next flush, under its code.
  await store.flushVisits();
  await store.close();
  const again = new LogEngine({ dir, fsync: 'off', log: createLogger('silent') });
  assert.equal(again.get('c4999')?.visits, 2);
  assert.equal(again.count, 1_000);
  await again.close();
});
