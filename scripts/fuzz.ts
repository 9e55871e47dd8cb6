/**
 * Fuzzing from the command line: `node --import tsx scripts/fuzz.ts [runs=10000] [--seed N]`
 * (`npm run fuzz -- 100000`). Random raw HTTP requests against one server with the gate on, checked
 * against the properties in test/fuzz-harness.ts. Exit 1 on a failed property (the message has
 * the counterexample and its seed), 2 on bad usage.
 */
import { runFuzz } from '../test/support/fuzz-harness.ts';
import { parseCountAndSeed } from './count-and-seed.ts';

const USAGE = 'usage: node --import tsx scripts/fuzz.ts [runs=10000] [--seed N]';

async function main(): Promise<number> {
  let args;
  try {
    const parsed = parseCountAndSeed(process.argv.slice(2), 10_000);
    args = { runs: parsed.count, seed: parsed.seed };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    const summary = await runFuzz(args.seed === undefined ? { runs: args.runs } : { runs: args.runs, seed: args.seed });
    process.stdout.write(`ok: ${JSON.stringify(summary)}\n`);
    return 0;
  } catch (err) {
    const message = (err as Error).message;
    const seed = /seed: (-?\d+)/.exec(message)?.[1];
    process.stderr.write(`FAILED: ${message}\n${seed === undefined ? '' : `replay: npm run fuzz -- ${args.runs} --seed ${seed}\n`}`);
    return 1;
  }
}

process.exitCode = await main();
