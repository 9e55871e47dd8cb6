/**
 * An imported event takes an untracked visit's place, in memory when its write is done and in
 * replay where its line stands. A count written between the two (a flush, or a limited link's
 * visit) must be the count after the import, or replay undoes the taking: regression for a log that
 * replayed one visit more than the store had counted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';
import { fullReplay, state } from '../../support/log-state.ts';
import { bareEvent as event, linkRecord, T } from '../../support/records.ts';

const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

/** One counted visit without an event. */
const untrackedVisit = (store: LogEngine, code: string) => store.resolve(code, () => (T + 1) * 1000, true, undefined, undefined, undefined);

for (const [kind, maxVisits] of [
  ['a flush', null],
  ["a limited link's visit", 10],
] as const) {
  test(`a count written while an import is being written is the count after it: ${kind}`, async (t) => {
    const dir = tempDir(t);
    const store = new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), ...MANUAL });
    try {
      await store.create(linkRecord('imp001', { maxVisits }));
      await untrackedVisit(store, 'imp001');
      // The import's line is queued first; the count is read before the import reaches memory.
      const imported = store.importVisit('imp001', event(T + 2));
      const counted = maxVisits === null ? store.flushVisits() : untrackedVisit(store, 'imp001');
      await Promise.all([imported, counted]);
      await store.flushVisits();
      const memory = state(store.keydir);
      const rec = memory.links[0]!.record;
      // The import took the first untracked visit's place; a limited link's second visit is one more.
      assert.deepEqual([rec.visits, rec.untracked], maxVisits === null ? [1, 0] : [2, 1]);
      assert.deepEqual(fullReplay(dir), memory, 'the log replays to what the store counted');
    } finally {
      await store.close();
    }
  });
}
