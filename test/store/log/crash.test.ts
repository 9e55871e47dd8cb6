/**
 * kill -9 under load (docs/storage.md, the promise): every acknowledged create and delete survives,
 * visit counts lose at most about the last second and never go down. The cycles are in
 * crash-harness.ts; a failure names its seed, for `npm run crash-test -- <cycles> --seed <seed>`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCrashCycles } from '../../support/crash-harness.ts';

test('20 kill -9 cycles mid-load: acknowledged creates and deletes survive, visit counts only lose the last second', { timeout: 300_000 }, async (t) => {
  const summary = await runCrashCycles({ cycles: 20 });
  t.diagnostic(JSON.stringify(summary));
  assert.equal(summary.cycles, 20);
  assert.ok(summary.creates > 0, 'creates were acknowledged');
  assert.ok(summary.deletes > 0, 'deletes were acknowledged');
  assert.ok(summary.visits > 0, 'visits were answered');
  assert.ok(summary.killedInFlight > 0, 'some kills landed with requests in flight');
  assert.ok(summary.unacknowledged > 0, 'some requests were cut off by a kill');
  // The server's faster clocks are in effect: kills landed after visit flushes and compactions.
  assert.ok(summary.visitsChecked > 0, 'visits answered before the last flush were checked');
  assert.ok(summary.compactions > 0, 'the log compacted itself during the load');
});
