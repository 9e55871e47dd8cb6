/**
 * The node:test reporter of `npm test`: node's `dot` (a dot a test, then every failure in full:
 * name, message, diff and stack), then each failed test's file and name, each test not run with
 * its reason (in the cluster target, those about one process's own state), the output of a file
 * that failed outside its tests (its own failure says only "test failed"; under CI a missing tool
 * fails a file so, as it loads), the 20 slowest files, then the run's totals on one line; and,
 * when `TEST_FILE_TIMES_OUT` names a file, every file's time there as JSON (the next run's order,
 * local-pass.ts). Plain JavaScript: node loads reporters before the TypeScript loader (`--import ./scripts/ts-loader.mjs`) applies.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { dot } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

/** Files listed by time at the end: where a faster suite has to look first. */
const SLOWEST = 20;

const TOTALS = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;

/** A bundle's test file (`bundle-tests.ts` writes `test/a/b.test.ts` as `test-output/tests/<pass>/test/a/b.test.mjs`). */
const sourceOf = (/** @type {string} */ path) => path.replace(/^test-output\/tests\/[^/]+\/(.*)\.mjs$/, '$1.ts');

/** A file's path as one key, whichever way an event gives it (node 24 gives a file's output its path as run). */
const pathOf = (/** @type {string} */ file) => resolve(file.startsWith('file:') ? fileURLToPath(file) : file);

/** The test file, relative to the working directory (node 20 reports no line for a test run in its own process). */
function where(/** @type {string | undefined} */ file) {
  return file === undefined ? '' : `${sourceOf(relative(process.cwd(), file.startsWith('file:') ? fileURLToPath(file) : file))}: `;
}

/** @param {AsyncIterable<import('node:test/reporters').TestEvent>} source */
export default async function* reporter(source) {
  /** @type {string[]} */
  const failed = [];
  /** @type {string[]} */
  const skipped = [];
  /** @type {string[]} */
  const totals = [];
  /** What each file wrote to stderr. @type {Map<string, string>} */
  const stderr = new Map();
  /** Each file's time: its suite's, ms. @type {Map<string, number>} */
  const files = new Map();
  /** Files that failed outside their tests, and the module its process ran, whose output tells why. @type {{ file: string, run: string }[]} */
  const broken = [];
  async function* watched() {
    for await (const event of source) {
      // Each process of a pass runs a group module (`test-groups.ts`): its top-level suites are
      // named by the bundles of the files they run.
      if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
        const file = event.data.name;
        files.set(file, (files.get(file) ?? 0) + (event.data.details.duration_ms ?? 0));
      }
      if (event.type === 'test:fail') {
        // A suite or a test that failed only because a subtest did is named by that subtest.
        const { name, file, details, nesting } = event.data;
        const error = /** @type {{ failureType?: string }} */ (details.error);
        if (error.failureType !== 'subtestsFailed') {
          // A file's suite that failed itself: the file failed as it loaded.
          const outside = file !== undefined && nesting === 0;
          if (outside) broken.push({ file: name, run: file });
          failed.push(outside ? `✖ ${where(name)}failed outside its tests` : `✖ ${where(file)}${name}`);
        }
      } else if (event.type === 'test:stderr' && event.data.file !== undefined) {
        const file = pathOf(event.data.file);
        stderr.set(file, (stderr.get(file) ?? '') + event.data.message);
      } else if (event.type === 'test:pass' && event.data.skip !== undefined) {
        skipped.push(`- ${where(event.data.file)}${event.data.name}: ${event.data.skip === true ? 'skipped' : event.data.skip}`);
      } else if (event.type === 'test:diagnostic' && event.data.nesting === 0 && TOTALS.test(event.data.message)) {
        totals.push(event.data.message);
      }
      yield event;
    }
  }
  yield* dot(watched());
  if (skipped.length) yield `\nNot run (${skipped.length}):\n${skipped.join('\n')}\n`;
  if (failed.length) yield `\nFailed (${failed.length}):\n${failed.join('\n')}\n`;
  for (const { file, run } of broken) {
    yield `\n${where(file)}failed outside its tests; its process's output:\n${stderr.get(pathOf(run)) ?? '(none)\n'}`;
  }
  // Each file's time, for the next run's order (local-pass.ts), when the pass asks for it.
  const timesOut = process.env.TEST_FILE_TIMES_OUT;
  if (timesOut && files.size) {
    const times = Object.fromEntries([...files].map(([file, ms]) => [where(file).slice(0, -2), Math.round(ms / 100) / 10]).sort());
    mkdirSync(dirname(timesOut), { recursive: true });
    writeFileSync(timesOut, `${JSON.stringify(times, null, 2)}\n`);
  }
  if (files.size) {
    const slowest = [...files].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
    yield `\nSlowest files (time in their tests, other files running beside them):\n${slowest.map(([file, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${where(file).slice(0, -2)}`).join('\n')}\n`;
  }
  yield `\n${totals.join(', ')}\n`;
}
