/**
 * Crash test from the command line: `node --import tsx scripts/crash-test.ts [cycles=100] [--seed N]`.
 * Kills the real server with SIGKILL mid-load, cycle after cycle, and checks every restart against
 * what the clients were told (see test/crash-harness.ts). Exit 1 on a broken promise, 2 on bad usage.
 */
import { CrashViolation, runCrashCycles } from '../test/crash-harness.ts';

const USAGE = 'usage: node --import tsx scripts/crash-test.ts [cycles=100] [--seed N]';

function parseArgs(argv: readonly string[]): { cycles: number; seed: number | undefined } {
  let cycles = 100;
  let seed: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--seed') {
      const value = argv[++i];
      if (value === undefined || !/^\d{1,10}$/.test(value)) throw new Error(`--seed needs a non-negative integer`);
      seed = Number(value);
    } else if (/^\d{1,6}$/.test(arg) && Number(arg) > 0) {
      cycles = Number(arg);
    } else {
      throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    }
  }
  return { cycles, seed };
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    const summary = await runCrashCycles({
      cycles: args.cycles,
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      log: (line) => process.stdout.write(line + '\n'),
    });
    process.stdout.write(`ok: ${JSON.stringify(summary)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof CrashViolation)) throw err;
    process.stderr.write(`FAILED: ${err.message}\nreplay: node --import tsx scripts/crash-test.ts ${args.cycles} --seed ${err.seed}\n`);
    return 1;
  }
}

process.exitCode = await main();
