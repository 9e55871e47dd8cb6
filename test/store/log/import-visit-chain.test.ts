/**
 * The imported events of one import are an `InsertChain` on the log store too: once the write of
 * one fails, the events queued behind it are refused unwritten, even when the disk has room again
 * by the time their batch is taken — so a failed visits import leaves nothing after its line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type InsertChain } from '../../../src/store/link-store.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { oneFailingWrite } from '../../support/held-writes.ts';
import { tempDir } from '../../support/helpers.ts';
import { bareEvent as event, linkRecord, T } from '../../support/records.ts';

const quiet = createLogger('silent');
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

test('events of a chain queued behind a failed write are refused, unwritten; a visit outside the chain is not', async (t) => {
  const dir = tempDir(t);
  const disk = oneFailingWrite();
  let store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs: disk.fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(linkRecord('chain1'), T);
  const chain: InsertChain = { failed: undefined };
  disk.arm();
  const held = disk.held();
  const first = store.importVisit('chain1', event(T + 1), T, chain) as Promise<unknown>;
  await held;
  // Queued while the first write is on its way: they go out in the next batch, after it failed.
  const later = [store.importVisit('chain1', event(T + 2), T, chain), store.importVisit('chain1', event(T + 3), T, chain)] as Promise<unknown>[];
  disk.fail();
  for (const p of [first, ...later]) await assert.rejects(p, StoreUnavailableError);
  assert.ok(chain.failed !== undefined);
  await assert.rejects(
    Promise.resolve().then(() => store.importVisit('chain1', event(T + 4), T, chain)),
    StoreUnavailableError,
    'refused at once from then on',
  );
  // Another import (another chain) writes as usual.
  assert.equal(await store.importVisit('chain1', event(T + 5), T, { failed: undefined }), 'imported');

  const times = async (s: LogLinkStore): Promise<number[]> => {
    const out: number[] = [];
    for await (const { event: e } of s.exportVisits({ from: 0, to: 2 ** 32, bots: 'include' }, T)) out.push(e.time);
    return out;
  };
  assert.deepEqual(await times(store), [T + 5]);
  await store.close();
  store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  assert.deepEqual(await times(store), [T + 5], 'nothing of the failed chain is in the log');
  assert.equal(store.get('chain1', T)?.visits, 1);
});
