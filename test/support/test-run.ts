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
  /** Not under coverage: a type check is not the service running. */
  uncovered?: boolean;
}

const PARTS: readonly Part[] = [
  { name: 'test:local', command: ['npm', 'run', '-s', 'test:local'], live: true },
  { name: 'test:cluster', command: ['npm', 'run', '-s', 'test:cluster'] },
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
  const env = { ...process.env };
  if (part.uncovered) delete env['NODE_V8_COVERAGE'];
  const [command, ...args] = part.command;
  const child = spawn(command!, args, { env, stdio: part.live ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ part, code, output })));
}

const runs = PARTS.map(run);
const outcomes: Outcome[] = [];
for (const pending of runs) {
  const outcome = await pending;
  if (!outcome.part.live) process.stdout.write(`\n== ${outcome.part.name}\n${outcome.output}`);
  outcomes.push(outcome);
}
const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.part.name);
process.stdout.write(`\n${outcomes.map((o) => `${o.part.name}: ${o.code === 0 ? 'passed' : 'FAILED'}`).join(', ')}\n`);
process.exit(failed.length === 0 ? 0 : 1);
