/**
 * `npm run test:local`: every test file (`test/<folder>/*.test.ts` and one level deeper), four
 * processes at a time, the longest first: a long file in a process of its own, the others several
 * to a process (`test-groups.ts`).
 *
 * - Four: most files wait on child processes (servers, browsers, databases) more than they compute;
 *   on two cores, two at a time left a core idle a fifth of the run, and five was slower again.
 * - One PostgreSQL server for the pass (`withSharedPgServer`), where the files that only make
 *   databases make them; a file that stops or crashes its server has one of its own.
 * - Longest first: a run ends when its last file does. Were a minute-long file (a browser's, a
 *   crash test's, the fuzzing) started last, the run would end on it, the other slots idle. The
 *   order is each file's time in the last run on this machine (`test-output/file-times.json`,
 *   written by the reporter), else in the table kept with the tests (`file-times.json` here,
 *   a whole run's); a file in neither (a new one) counts as long as the median one, so that it is
 *   not the one the run waits for at the end.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { runBundled } from './bundle-tests.ts';
import { withSharedPgServer } from './pg.ts';

/** Where the reporter writes this run's times, and where the next run reads them. */
const LAST_RUN = 'test-output/file-times.json';
/** The times kept with the tests: a clean clone (CI) orders by them. */
const KEPT = 'test/support/file-times.json';

/** Folders whose new files are likely long (browsers, crashes, lock races, clusters), in that order. */
const LONGEST_FIRST = ['test/ui/', 'test/store/', 'test/scale/', 'test/cli/', 'test/deploy/'];

const rank = (file: string): number => {
  const i = LONGEST_FIRST.findIndex((folder) => file.startsWith(folder));
  return i === -1 ? LONGEST_FIRST.length : i;
};

/** Seconds each file took, by path; a table that cannot be read is none. */
function timesIn(path: string): Record<string, number> {
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The `.test.ts` files in `dir` and in its folders, down to `depth` levels. */
function testFiles(dir: string, depth: number): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return depth > 0 ? testFiles(path, depth - 1) : [];
    return entry.isFile() && entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const times = { ...timesIn(KEPT), ...timesIn(LAST_RUN) };
// A file not timed yet: as long as the median timed one, so it starts among the long ones.
const known = Object.values(times).sort((a, b) => a - b);
const unknown = known[Math.floor(known.length / 2)] ?? 0;
const timeOf = (file: string): number => times[file] ?? unknown;

// Files in a folder of test/ or one level deeper, never in test/ itself.
const files = testFiles('test', 2)
  .filter((file) => file.split('/').length > 2)
  .sort((a, b) => timeOf(b) - timeOf(a) || rank(a) - rank(b) || (a < b ? -1 : 1));

// Each run as its bundle (`bundle-tests.ts`), not through the TypeScript loader.
const code = await withSharedPgServer((pg) => runBundled('local', files, 4, { TEST_FILE_TIMES_OUT: LAST_RUN, ...pg }, (file) => times[file]));
process.exit(code);
