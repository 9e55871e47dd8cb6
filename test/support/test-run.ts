/**
 * `npm test` after the build: the type check, the lint, the local pass (`local-pass.ts`) and the cluster pass
 * (`cluster-pass.ts`) at once, since none needs another's outcome and each leaves a core idle at
 * times (waiting on browsers, servers, databases). The local pass prints as it goes; the others'
 * output is kept and printed once it has, each whole, then whether each part passed. Fails when
 * one does.
 */
import { spawn } from 'node:child_process';

interface Part {
  name: string;
  command: readonly string[];
  /** Its output goes straight to ours; else it is kept until the live part has ended. */
  live?: boolean;
  /** Not under coverage: a type check is not the service running, nor what another part runs too. */
  uncovered?: boolean;
}

const PARTS: readonly Part[] = [
  { name: 'test:local', command: ['npm', 'run', '-s', 'test:local'], live: true },
  // Not under coverage either: the cluster pass runs on the PostgreSQL store what the local pass
  // runs on it too. (Until 30 November it wrote coverage all the same, as `run` deleted the
  // variable, which node then copied back: the same 37,377 lines of 37,727 were covered with it
  // and without it.)
  { name: 'test:cluster', command: ['npm', 'run', '-s', 'test:cluster'], uncovered: true },
  // TypeScript 7, the compiler written in Go: a fresh clone's check took 6.9 s of CPU, where
  // TypeScript 5's took 20.8 s (and about 38 s in the suite, beside the tests). Incremental (its
  // state in node_modules/.cache/tsc/): a run after a run checks again only what changed, 1.7 s of
  // CPU when nothing did. One check, of tsconfig.json: it holds src/ with the build's options, and
  // what tsconfig.build.json adds (src/ imports nothing outside itself) test/app/layout.test.ts
  // checks too.
  { name: 'typecheck', command: ['npm', 'run', '-s', 'typecheck'], uncovered: true },
  // A second or so: Biome's formatter and linter, so a change that is not formatted or breaks a
  // lint rule fails here as it would in review.
  { name: 'lint', command: ['npm', 'run', '-s', 'lint'], uncovered: true },
];

interface Outcome {
  part: Part;
  code: number | null;
  output: string;
}

function run(part: Part): Promise<Outcome> {
  // Empty, not absent: node copies its own NODE_V8_COVERAGE into a child's environment that has
  // none, and an empty one turns coverage off.
  const env = part.uncovered ? { ...process.env, NODE_V8_COVERAGE: '' } : process.env;
  const [command, ...args] = part.command;
  const child = spawn(command!, args, { env, stdio: part.live ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ part, code, output })));
}

/**
 * Under c8: the coverage files trimmed to what c8 counts as the processes write them
 * (`coverage-trim.ts`), at the lowest priority, so that this takes only what the tests leave idle;
 * it takes the last ones once its input closes. A failure fails the run.
 */
function trimCoverage(dir: string): { done(): Promise<Outcome> } {
  const part: Part = { name: 'coverage trim', command: [] };
  const child = spawn('nice', ['-n', '19', process.execPath, '--import', './scripts/ts-loader.mjs', 'test/support/coverage-trim.ts', dir], {
    env: { ...process.env, NODE_V8_COVERAGE: '' },
    stdio: ['pipe', 'inherit', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = new Promise<Outcome>((resolve) => child.once('close', (code) => resolve({ part, code, output })));
  return {
    done() {
      child.stdin.end();
      return closed;
    },
  };
}

const coverage = process.env['NODE_V8_COVERAGE'];
const trim = coverage ? trimCoverage(coverage) : undefined;
const runs = PARTS.map(run);
const outcomes: Outcome[] = [];
for (const pending of runs) {
  const outcome = await pending;
  if (!outcome.part.live) process.stdout.write(`\n== ${outcome.part.name}\n${outcome.output}`);
  outcomes.push(outcome);
}
if (trim) {
  const outcome = await trim.done();
  if (outcome.code !== 0) process.stdout.write(`\n== ${outcome.part.name}\n${outcome.output}`);
  outcomes.push(outcome);
}
const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.part.name);
process.stdout.write(`\n${outcomes.map((o) => `${o.part.name}: ${o.code === 0 ? 'passed' : 'FAILED'}`).join(', ')}\n`);
process.exit(failed.length === 0 ? 0 : 1);
