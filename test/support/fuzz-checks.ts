/**
 * What a fuzz run of the door (fuzz-harness.ts) must have met to mean something: shared by the
 * run on the log store and the run on PostgreSQL, each a file of its own so that they run at once.
 */
import assert from 'node:assert/strict';
import type { FuzzSummary } from './fuzz-harness.ts';

/** What each peer's surface answered in every run of this size: its successes, its refusals of bad input, and of a missing credential. */
const PEER_STATUSES = ['shlink 200', 'shlink 400', 'shlink 401', 'shlink 404', 'yourls 200', 'yourls 400', 'yourls 403'];

/**
 * The requests were varied enough to mean something: refused by the parser and by the path rules,
 * refused by the gate, and past it into public and protected handlers alike; and the peers'
 * surfaces both refused and served.
 */
export function assertVaried(summary: FuzzSummary, runs: number, statuses: readonly string[]): void {
  assert.equal(summary.runs, runs);
  for (const status of statuses) {
    assert.ok((summary.statuses[status] ?? 0) > 0, `some requests were answered ${status}: ${JSON.stringify(summary.statuses)}`);
  }
  assert.ok(summary.protectedRuns > 0, 'some requests reached protected operations (with the token)');
  for (const status of PEER_STATUSES) {
    assert.ok((summary.peerStatuses[status] ?? 0) > 0, `some peer requests were answered ${status}: ${JSON.stringify(summary.peerStatuses)}`);
  }
  assert.ok(summary.peerProtectedRuns > 0, 'some peer requests reached operations past their credential');
}
