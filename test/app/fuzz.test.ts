/**
 * Fuzzing over real sockets (the properties are listed in fuzz-harness.ts): 5,000 random raw
 * requests against one server with the gate and the peers' surfaces on (Shlink's `/rest/`, YOURLS'
 * `/yourls-api.php`), on the log store. Never a 5xx but 503, never a crash or an error logged,
 * never a protected operation or a non-public 2xx without the token (or, on a peer's surface,
 * without its own credential), never a token in the log; /healthz answers afterwards. The same on
 * PostgreSQL: fuzz-postgres.test.ts. `npm run fuzz -- <runs>` runs any number on both stores; a
 * failure prints its seed for `--seed`.
 */
import { test } from 'node:test';
import { onOneProcess } from '../support/cluster.ts';
import { assertVaried } from '../support/fuzz-checks.ts';
import { runFuzz } from '../support/fuzz-harness.ts';

const RUNS = 5000;

test(`${RUNS} random raw requests: no 5xx, no crash, nothing protected without the token`, {
  ...onOneProcess('it spies on its service'),
  timeout: 120_000,
}, async (t) => {
  const summary = await runFuzz({ runs: RUNS });
  t.diagnostic(JSON.stringify(summary));
  assertVaried(summary, RUNS, ['200', '201', '204', '302', '400', '401', '404', '405']);
});
