import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { test } from 'node:test';
import { createLogger } from '../src/log.ts';
import { encodeEntry } from '../src/store/format.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './helpers.ts';

/** A log of `n` creates, `c<i>` → `https://example.com/<i>`; more than one start-up index slice. */
function writeLog(dir: string, n: number): void {
  const lines: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(encodeEntry({ op: 'C', code: `c${i}`, url: `https://example.com/${i}`, createdAt: 1_700_000_000 + i, retentionDays: 0, visits: 0 }));
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
}

const codes = (store: Store, url: string): string[] => [...store.withUrl(url)].map((r) => r.code);

test('the URL index built after start-up sees creates and deletes made while it is built', async () => {
  const dir = tempDir();
  writeLog(dir, 50_000);
  const store = new Store({ dir, fsync: 'off', log: createLogger('silent') });
  try {
    // Before the first background slice has run: changes land while the backlog is unindexed.
    await store.create({ code: 'new1', url: 'https://example.com/10', createdAt: 1_800_000_000, retentionDays: 0, visits: 0 });
    await store.delete('c49999');
    await store.create({ code: 'new2', url: 'https://example.com/49999', createdAt: 1_800_000_001, retentionDays: 0, visits: 0 });
    await store.delete('new2');
    assert.deepEqual(codes(store, 'https://example.com/10'), ['new1', 'c10']);
    assert.deepEqual(codes(store, 'https://example.com/49999'), []);
    assert.deepEqual(codes(store, 'https://example.com/0'), ['c0']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a lookup is answered correctly while the index is still being built in the background', async () => {
  const dir = tempDir();
  writeLog(dir, 50_000);
  const store = new Store({ dir, fsync: 'off', log: createLogger('silent') });
  try {
    await turn(); // one slice indexed, the rest pending
    await store.create({ code: 'late', url: 'https://example.com/45000', createdAt: 1_800_000_000, retentionDays: 0, visits: 0 });
    assert.deepEqual(codes(store, 'https://example.com/45000'), ['late', 'c45000']);
    // Let any remaining background slices run: nothing is indexed twice.
    for (let i = 0; i < 5; i++) await turn();
    assert.deepEqual(codes(store, 'https://example.com/45000'), ['late', 'c45000']);
    assert.deepEqual(codes(store, 'https://example.com/1'), ['c1']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without any lookup, the background slices index every record by themselves', async () => {
  const dir = tempDir();
  writeLog(dir, 50_000);
  const store = new Store({ dir, fsync: 'off', log: createLogger('silent') });
  try {
    await store.create({ code: 'mid', url: 'https://example.com/30000', createdAt: 1_800_000_000, retentionDays: 0, visits: 0 });
    for (let i = 0; i < 10; i++) await turn();
    assert.equal((store as unknown as { unindexed: unknown }).unindexed, undefined, 'index finished in the background');
    assert.deepEqual(codes(store, 'https://example.com/30000'), ['mid', 'c30000']);
    assert.deepEqual(codes(store, 'https://example.com/49999'), ['c49999']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
