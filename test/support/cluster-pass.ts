/**
 * `npm run test:cluster`: the HTTP tests against three instances over one PostgreSQL database
 * (`cluster.ts`). Without PostgreSQL the whole pass is skipped with a loud message on a developer
 * machine; under CI it fails instead (`missing-tool.ts`).
 */
import { spawnSync } from 'node:child_process';
import { missingTool, UNDER_CI } from './missing-tool.ts';
import { findPgBin } from './pg.ts';

/** The tests of the HTTP contract: the folders that start a service, and the HTTP transfer tests. */
const FILES = [
  'test/api/*.test.ts',
  'test/app/*.test.ts',
  'test/http/*.test.ts',
  'test/mcp/*.test.ts',
  'test/metrics/*.test.ts',
  'test/published/*.test.ts',
  'test/peers/*.test.ts',
  'test/qr/qr-route.test.ts',
  'test/transfer/http-*.test.ts',
  'test/transfer/round-trip.test.ts',
];

if (!findPgBin()) {
  const message = 'PostgreSQL not found (apt-get install postgresql, or set PG_BIN): the cluster pass of the HTTP tests cannot run';
  // Not a test: the failure under CI is this process's exit code.
  if (UNDER_CI) {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  missingTool('THE CLUSTER PASS', message);
  process.exit(0);
}

// The shell expands the patterns, as it does for the first pass.
const run = spawnSync(
  'sh',
  ['-c', `exec node --import tsx --test --test-concurrency=2 --test-reporter=./test/support/reporter.mjs ${FILES.join(' ')}`],
  { stdio: 'inherit', env: { ...process.env, SHORTENER_TEST_TARGET: 'cluster' } },
);
process.exit(run.status ?? 1);
