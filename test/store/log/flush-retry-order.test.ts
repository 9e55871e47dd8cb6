/**
 * A flush of visits whose write fails writes its events again later. Replay keeps an event only when
 * no higher number of its link came before it (the copies a write at once carries are skipped that
 * way), so the events of a failed flush must never land after later ones of their link: regression
 * for a log that replayed fewer visits than the store had counted after a full disk recovered.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { oneFailingWrite } from '../../support/held-writes.ts';
import { tempDir } from '../../support/helpers.ts';
import { fullReplay, state } from '../../support/log-state.ts';
import { bareEvent as event, linkRecord, T } from '../../support/records.ts';

/** One counted visit with its event. */
const visit = (store: LogEngine, code: string, at: number) =>
  store.resolve(
    code,
    () => at * 1000,
    true,
    undefined,
    undefined,
    () => event(at),
  );

for (const [what, later] of [
  ['a later flush', (store: LogEngine) => store.flushVisits()],
  ["an import of the link's history", (store: LogEngine) => store.importVisit('flush1', event(T + 10))],
] as const) {
  test(`the events of a failed flush are in the log after ${what} was written meanwhile`, async (t) => {
    const dir = tempDir(t);
    const disk = oneFailingWrite();
    const store = new LogEngine({
      dir,
      fsync: 'off',
      fs: disk.fs,
      log: createLogger('silent'),
      compactMinBytes: Number.MAX_SAFE_INTEGER,
      visitFlushMs: 60_000,
    });
    try {
      await store.create(linkRecord('flush1'));
      await visit(store, 'flush1', T + 1);
      disk.arm();
      const held = disk.held();
      const first = store.flushVisits();
      await held;
      // The first flush's write is on its way; more visits, and a write of the link meanwhile.
      await visit(store, 'flush1', T + 2);
      await visit(store, 'flush1', T + 3);
      const second = later(store);
      disk.fail();
      await assert.rejects(first);
      await second;
      await store.flushVisits();
      const memory = state(store.keydir);
      assert.equal(memory.links[0]!.record.visits, what === 'a later flush' ? 3 : 4);
      assert.deepEqual(fullReplay(dir), memory, 'the log replays to what the store counted');
    } finally {
      await store.close();
    }
  });
}
