/**
 * Fuzzing from the command line: `node --import ./scripts/ts-loader.mjs scripts/fuzz.ts [runs=10000] [--seed N]
 * [--store log|postgres]` (`npm run fuzz -- 100000`). Random raw HTTP requests against one server
 * with the gate on and the peers' surfaces on (Shlink's `/rest/`, YOURLS' `/yourls-api.php`),
 * checked against the properties in test/support/fuzz-harness.ts: on the log store, then
 * on a throwaway PostgreSQL server (test/support/pg.ts; skipped with a loud message when
 * PostgreSQL is not installed), or on the one store `--store` names. Exit 1 on a failed property
 * (the message has the counterexample and its seed), 2 on bad usage.
 */
import { runFuzz } from '../test/support/fuzz-harness.ts';
import { pgServer } from '../test/support/pg.ts';
import { parseCountAndSeed } from './count-and-seed.ts';

const USAGE = 'usage: node --import ./scripts/ts-loader.mjs scripts/fuzz.ts [runs=10000] [--seed N] [--store log|postgres]';

type Store = 'log' | 'postgres';

/** `--store S` taken out of `argv`; the rest is the count and the seed. */
function parseStores(argv: readonly string[]): { stores: Store[]; rest: string[] } {
  const rest = [...argv];
  const at = rest.indexOf('--store');
  if (at === -1) return { stores: ['log', 'postgres'], rest };
  const value = rest[at + 1];
  if (value !== 'log' && value !== 'postgres') throw new Error('--store needs log or postgres');
  rest.splice(at, 2);
  return { stores: [value], rest };
}

/** One store's run; the PostgreSQL server it started is stopped before it returns. */
async function fuzzOn(store: Store, runs: number, seed: number | undefined): Promise<string> {
  const base = seed === undefined ? { runs } : { runs, seed };
  if (store === 'log') return JSON.stringify(await runFuzz(base));
  const teardown: (() => Promise<void>)[] = [];
  try {
    const pg = await pgServer(undefined, { after: (fn) => teardown.push(fn) });
    if (!pg) return 'skipped (no PostgreSQL)';
    return JSON.stringify(await runFuzz({ ...base, databaseUrl: await pg.createDatabase() }));
  } finally {
    for (const step of teardown.reverse()) await step();
  }
}

async function main(): Promise<number> {
  let args;
  try {
    const { stores, rest } = parseStores(process.argv.slice(2));
    const parsed = parseCountAndSeed(rest, 10_000);
    args = { stores, runs: parsed.count, seed: parsed.seed };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  for (const store of args.stores) {
    try {
      process.stdout.write(`ok (${store}): ${await fuzzOn(store, args.runs, args.seed)}\n`);
    } catch (err) {
      const message = (err as Error).message;
      const seed = /seed: (-?\d+)/.exec(message)?.[1];
      process.stderr.write(
        `FAILED (${store}): ${message}\n${seed === undefined ? '' : `replay: npm run fuzz -- ${args.runs} --seed ${seed} --store ${store}\n`}`,
      );
      return 1;
    }
  }
  return 0;
}

process.exitCode = await main();
