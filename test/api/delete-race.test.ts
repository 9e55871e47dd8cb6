/**
 * Deletes are exact (docs/storage.md, how it is kept): of many concurrent DELETEs of one code
 * exactly one gets 204 and writes a tombstone, the others 404 at once; a delete whose write fails
 * leaves the code deletable.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../src/log.ts';
import { nodeFs, type StoreFs } from '../../src/store/log/fs.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import { start, tempDir } from '../support/helpers.ts';
import { logEntries } from '../support/log-entries.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'test-admin-key';

/** The tombstones in the log of `dir`, by code. */
function tombstones(dir: string): string[] {
  return logEntries(dir).flatMap((entry) => (entry.op === 'D' ? [entry.code] : []));
}

/** nodeFs whose fsync can be held open: every concurrent request then meets the delete in flight. */
function heldFsync() {
  const ctl = { hold: false, fail: false, entered: (): void => undefined, release: (): void => undefined };
  const fs: StoreFs = {
    ...nodeFs,
    async fsync(fd) {
      if (ctl.hold) {
        await new Promise<void>((resolve) => {
          ctl.release = resolve;
          ctl.entered();
        });
      }
      if (ctl.fail) throw Object.assign(new Error('EIO: simulated failure, fsync'), { code: 'EIO', syscall: 'fsync' });
      return nodeFs.fsync(fd);
    },
  };
  return { ctl, fs };
}

const link = (code: string) => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: 1_700_000_000,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits: null,
});

test(
  'regression: ten concurrent DELETEs of one code give exactly one 204 and nine 404s, and one tombstone',
  onOneProcess("it holds its log file's writes to force the race"),
  async (t) => {
    let slow = false;
    const fs: StoreFs = {
      ...nodeFs,
      async fsync(fd) {
        // Long enough for all ten requests to arrive while the first tombstone is being written.
        if (slow) await delay(100);
        return nodeFs.fsync(fd);
      },
    };
    const h = await start(t, { fsync: 'always', fs, apiKeys: [KEY] });
    const code = await h.shorten('https://example.com/delete-me');
    slow = true;
    const replies = await Promise.all(Array.from({ length: 10 }, () => h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': KEY } })));
    slow = false;
    assert.deepEqual(replies.map((r) => r.status).sort(), [204, 404, 404, 404, 404, 404, 404, 404, 404, 404]);
    for (const r of replies) assert.equal(r.body, '');
    assert.deepEqual(tombstones(h.dir), [code]);
    assert.equal((await h.req(`/api/urls/${code}`)).status, 404);
  },
);

test('LogEngine: of concurrent deletes of one code exactly one resolves true, and the log has one tombstone', async (t) => {
  const dir = tempDir();
  const store = new LogEngine({ dir, fsync: 'always', log: createLogger('silent') });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.create(link('race01'));
  const results = await Promise.all(Array.from({ length: 10 }, () => store.delete('race01')));
  assert.equal(results.filter(Boolean).length, 1, `results: ${results.join(', ')}`);
  assert.equal(store.get('race01'), undefined);
  assert.deepEqual(tombstones(dir), ['race01']);
});

test('LogEngine: a delete in flight makes later deletes false at once; if it fails, the code is deletable again', async (t) => {
  const dir = tempDir();
  const { ctl, fs } = heldFsync();
  const store = new LogEngine({ dir, fsync: 'always', log: createLogger('silent'), fs });
  t.after(async () => {
    ctl.hold = false;
    ctl.fail = false;
    ctl.release();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.create(link('race02'));
  ctl.hold = true;
  ctl.fail = true;
  const entered = new Promise<void>((resolve) => (ctl.entered = resolve));
  const first = store.delete('race02');
  await entered;
  // Answered while the first tombstone's fsync is still held.
  assert.equal(await store.delete('race02'), false);
  assert.ok(store.get('race02'), 'still visible until the tombstone is durable');
  ctl.hold = false;
  ctl.release();
  await assert.rejects(first, /EIO/);
  assert.ok(store.get('race02'), 'a failed delete changes nothing');

  ctl.fail = false;
  assert.equal(await store.delete('race02'), true, 'deletable again once the failed delete is over');
  assert.equal(store.get('race02'), undefined);
  assert.deepEqual(tombstones(dir), ['race02'], 'the failed tombstone was cut; the second one is the only one');
});
