/**
 * Crash test from the command line: `node --import ./scripts/ts-loader.mjs scripts/crash-test.ts [cycles=100] [--seed N]`.
 * Kills the real server with SIGKILL mid-load, cycle after cycle, and checks every restart against
 * what the clients were told (see test/crash-harness.ts). Exit 1 on a broken promise, 2 on bad usage.
 */
import { CrashViolation, runCrashCycles } from '../test/support/crash-harness.ts';
import { parseCountAndSeed } from './count-and-seed.ts';

const USAGE = 'usage: node --import ./scripts/ts-loader.mjs scripts/crash-test.ts [cycles=100] [--seed N]';

async function main(): Promise<number> {
  let args;
  try {
    const parsed = parseCountAndSeed(process.argv.slice(2), 100);
    args = { cycles: parsed.count, seed: parsed.seed };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    const summary = await runCrashCycles({
      cycles: args.cycles,
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      log: (line) => process.stdout.write(`${line}\n`),
    });
    process.stdout.write(`ok: ${JSON.stringify(summary)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof CrashViolation)) throw err;
    process.stderr.write(`FAILED: ${err.message}\nreplay: node --import ./scripts/ts-loader.mjs scripts/crash-test.ts ${args.cycles} --seed ${err.seed}\n`);
    return 1;
  }
}

process.exitCode = await main();
