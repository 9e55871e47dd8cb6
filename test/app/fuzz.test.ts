/**
 * Fuzzing over real sockets (the properties are listed in fuzz-harness.ts): 5,000 random raw
 * requests against one server with the gate and the peers' surfaces on (Shlink's `/rest/`, YOURLS'
 * `/yourls-api.php`), on the log store, and 1,500 against one on a PostgreSQL database, where a
 * value the database refuses (a NUL in a search, a tag filter or a tool's argument) must be the 400
 * or `isError` it is on the log store, never a 500. Never a 5xx but 503, never a crash or an error
 * logged, never a protected operation or a non-public 2xx without the token (or, on a peer's
 * surface, without its own credential), never a token in the log; /healthz answers afterwards.
 * `npm run fuzz -- <runs>` runs any number on both stores; a failure prints its seed for `--seed`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runFuzz, type FuzzSummary } from '../support/fuzz-harness.ts';
import { onOneProcess } from '../support/cluster.ts';
import { pgServer } from '../support/pg.ts';

const RUNS = 5000;
const PG_RUNS = 1500;

/** What each peer's surface answered in every run of this size: its successes, its refusals of bad input, and of a missing credential. */
const PEER_STATUSES = ['shlink 200', 'shlink 400', 'shlink 401', 'shlink 404', 'yourls 200', 'yourls 400', 'yourls 403'];

/**
 * The requests were varied enough to mean something: refused by the parser and by the path rules,
 * refused by the gate, and past it into public and protected handlers alike; and the peers'
 * surfaces both refused and served.
 */
function assertVaried(summary: FuzzSummary, runs: number, statuses: readonly string[]): void {
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

test(`${RUNS} random raw requests: no 5xx, no crash, nothing protected without the token`, {
  ...onOneProcess('it spies on its service'),
  timeout: 120_000,
}, async (t) => {
  const summary = await runFuzz({ runs: RUNS });
  t.diagnostic(JSON.stringify(summary));
  assertVaried(summary, RUNS, ['200', '201', '204', '302', '400', '401', '404', '405']);
});

test(`${PG_RUNS} random raw requests on PostgreSQL: never a 500, the same properties`, {
  ...onOneProcess('it spies on its service'),
  timeout: 120_000,
}, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const summary = await runFuzz({ runs: PG_RUNS, databaseUrl: await pg.createDatabase() });
  t.diagnostic(JSON.stringify(summary));
  // Fewer runs: only the statuses that every run of this size meets (a 302 or 201 takes a rarer draw).
  assertVaried(summary, PG_RUNS, ['200', '204', '400', '401', '404', '405']);
});
