/**
 * The fuzzing of fuzz.test.ts on a PostgreSQL database: 1,500 random raw requests, with the same
 * properties, and a value the database refuses (a NUL in a search, a tag filter or a tool's
 * argument) must be the 400 or `isError` it is on the log store, never a 500. A file of its own so
 * that it runs beside the log store's.
 */
import { test } from 'node:test';
import { onOneProcess } from '../support/cluster.ts';
import { assertVaried } from '../support/fuzz-checks.ts';
import { runFuzz } from '../support/fuzz-harness.ts';
import { pgServer } from '../support/pg.ts';

const PG_RUNS = 1500;

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
