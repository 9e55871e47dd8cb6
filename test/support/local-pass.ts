/**
 * `npm run test:local`: every test file (`test/<folder>/*.test.ts` and one level deeper), each in
 * a process of its own, four at a time, the longest first.
 *
 * - Four: most files wait on child processes (servers, browsers, databases) more than they compute;
 *   on two cores, two at a time left a core idle a fifth of the run, and five was slower again.
 * - Longest first: a run ends when its last file does. Were the browser and crash tests (a minute
 *   each) last, as their folders' names put them, the run would end on one file, the other slots
 *   idle.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/** Folders whose files take longest (measured: browsers, crashes, lock races, clusters), in that order; then the rest by name. */
const LONGEST_FIRST = ['test/ui/', 'test/store/', 'test/scale/', 'test/cli/', 'test/deploy/'];

const rank = (file: string): number => {
  const i = LONGEST_FIRST.findIndex((folder) => file.startsWith(folder));
  return i === -1 ? LONGEST_FIRST.length : i;
};

/** The `.test.ts` files in `dir` and in its folders, down to `depth` levels. */
function testFiles(dir: string, depth: number): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return depth > 0 ? testFiles(path, depth - 1) : [];
    return entry.isFile() && entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

// Files in a folder of test/ or one level deeper, never in test/ itself.
const files = testFiles('test', 2)
  .filter((file) => file.split('/').length > 2)
  .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));

const run = spawnSync(
  process.execPath,
  ['--import', './scripts/ts-loader.mjs', '--test', '--test-concurrency=4', '--test-reporter=./test/support/reporter.mjs', ...files],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
