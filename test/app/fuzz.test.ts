/**
 * Fuzzing over real sockets (the properties are listed in fuzz-harness.ts): 5,000 random raw
 * requests against one server with the gate on. Never a 5xx but 503, never a crash or an error
 * logged, never a protected operation or a non-public 2xx without the token, never a token in the
 * log; /healthz answers afterwards. `npm run fuzz -- <runs>` runs any number; a failure prints its
 * seed for `--seed`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runFuzz } from '../support/fuzz-harness.ts';
import { onOneProcess } from '../support/cluster.ts';

const RUNS = 5000;

test(`${RUNS} random raw requests: no 5xx, no crash, nothing protected without the token`, { ...onOneProcess('it spies on its service'), timeout: 120_000 }, async (t) => {
  const summary = await runFuzz({ runs: RUNS });
  t.diagnostic(JSON.stringify(summary));
  assert.equal(summary.runs, RUNS);
  // The requests were varied enough to mean something: refused by the parser and by the path
  // rules, refused by the gate, and past it into public and protected handlers alike.
  for (const status of ['200', '201', '204', '302', '400', '401', '404', '405']) {
    assert.ok((summary.statuses[status] ?? 0) > 0, `some requests were answered ${status}: ${JSON.stringify(summary.statuses)}`);
  }
  assert.ok(summary.protectedRuns > 0, 'some requests reached protected operations (with the token)');
});
