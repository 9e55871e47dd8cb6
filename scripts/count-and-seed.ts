/**
 * The command line of the long-running test scripts (`crash-test.ts`, `fuzz.ts`):
 * `[count] [--seed N]`, where the count is how many cycles or runs to make.
 */
export interface CountAndSeed {
  count: number;
  seed: number | undefined;
}

/** Throws with a one-line reason on anything else; the caller prints it with its usage line. */
export function parseCountAndSeed(argv: readonly string[], defaultCount: number): CountAndSeed {
  let count = defaultCount;
  let seed: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--seed') {
      const value = argv[++i];
      // fast-check's seeds may be negative; a replayed crash-test seed never is, and is taken too.
      if (value === undefined || !/^-?\d{1,10}$/.test(value)) throw new Error('--seed needs an integer');
      seed = Number(value);
    } else if (/^\d{1,9}$/.test(arg) && Number(arg) > 0) {
      count = Number(arg);
    } else {
      throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    }
  }
  return { count, seed };
}
