/**
 * Orphan visits are written in batches (`orphan-log.ts`): a scanner's paths come one or two an
 * event-loop turn, and a write with its fsync for each cost more than the 404s themselves. Those
 * that come within `ORPHAN_BATCH_MS` are one write; a close writes the batch that waits. And memory
 * holds the newest `MAX_ORPHANS` of them, however many come.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { MAX_ORPHANS, ORPHAN_BATCH_MS, OrphanTable } from '../../../src/store/log/orphan-log.ts';
import type { OrphanVisit } from '../../../src/store/orphan-store.ts';
import { tempDir } from '../../support/helpers.ts';
import { bareOrphan } from '../../support/records.ts';

const visit = (i: number): OrphanVisit => bareOrphan(1_700_000_000 + i, { domain: i % 2 === 0 ? null : 'go.example' });

/** A store whose writes are counted. */
function counted(dir: string): { store: LogEngine; writes: () => number } {
  let writes = 0;
  const fs: StoreFs = { ...nodeFs, write: (fd, data, position) => (writes++, nodeFs.write(fd, data, position)) };
  return { store: new LogEngine({ dir, fsync: 'always', log: createLogger('silent'), fs }), writes: () => writes };
}

test('the orphan visits of a burst are one write, and each reads back in the order it came', async (t) => {
  const dir = tempDir(t);
  const { store, writes } = counted(dir);
  t.after(() => store.close());
  const before = writes();
  // The batch's wait on a fake clock: however slow the machine, the burst is within it.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  // A scanner's burst, a few an event-loop turn.
  const recorded: Promise<void>[] = [];
  for (let turn = 0; turn < 50; turn++) {
    for (let i = 0; i < 4; i++) recorded.push(store.orphans.recordOrphan(visit(turn * 4 + i)));
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(writes() - before, 0, 'nothing written before the batch is due');
  t.mock.timers.tick(ORPHAN_BATCH_MS);
  await Promise.all(recorded);
  t.mock.timers.reset();
  assert.equal(writes() - before, 1, 'one write for the 200');
  const listed = store.orphans.listOrphans(0, Number.MAX_SAFE_INTEGER, 'include', 1000, 0);
  assert.equal(listed.total, 200);
  assert.deepEqual(
    listed.visits.map((v) => v.time),
    Array.from({ length: 200 }, (_, i) => 1_700_000_199 - i),
  );
});

test('a close writes the batch that waits: the orphan visits are there after a restart', async (t) => {
  const dir = tempDir(t);
  const first = counted(dir).store;
  const recorded = [first.orphans.recordOrphan(visit(0)), first.orphans.recordOrphan(visit(1))];
  // Closed at once, well within the batch's wait.
  await first.close();
  await Promise.all(recorded);
  const again = new LogEngine({ dir, fsync: 'off', log: createLogger('silent') });
  t.after(() => again.close());
  assert.deepEqual(
    again.orphans.listOrphans(0, Number.MAX_SAFE_INTEGER, 'include', 10, 0).visits.map((v) => [v.time, v.domain]),
    [
      [1_700_000_001, 'go.example'],
      [1_700_000_000, null],
    ],
  );
});

test('memory holds the newest MAX_ORPHANS orphan visits, however many come (a scanner all day)', () => {
  const table = new OrphanTable();
  const n = MAX_ORPHANS + MAX_ORPHANS / 5;
  let longest = 0;
  for (let i = 0; i < n; i++) {
    table.apply({ op: 'O', visit: visit(i) });
    longest = Math.max(longest, table.size);
  }
  assert.ok(longest <= MAX_ORPHANS * 1.1 + 1, `at most a tenth more is held at a time: ${longest}`);
  const kept = table.all();
  assert.equal(kept.length, MAX_ORPHANS);
  assert.deepEqual([kept[0]!.time, kept.at(-1)!.time], [1_700_000_000 + n - MAX_ORPHANS, 1_700_000_000 + n - 1], 'the newest, oldest first');
  assert.equal(table.rows().length, MAX_ORPHANS, 'and a compaction or a checkpoint writes those');
});
