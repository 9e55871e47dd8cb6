/**
 * Short codes: the alphabet, the reserved words, and the generator.
 *
 * The alphabet has 58 characters: no `0 O I l`, so a code survives being read aloud or typed from
 * paper. With the default 6 characters there are 58^6 ≈ 3.8e10 codes; a service holding a million
 * links collides on a given try with probability 1e6 / 3.8e10 ≈ 2.6e-5, so ten collisions in a row at
 * one length (the contract's signal to grow) practically only happen once a length is nearly full.
 */
import { randomFillSync } from 'node:crypto';
import { IN_CODE_ALPHABET, MAX_CODE_LENGTH } from '../store/link-store.ts';

export const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** First path segments that belong to the service itself and so can never be codes. */
export const RESERVED_SEGMENTS: ReadonlySet<string> = new Set([
  'api',
  'static',
  'healthz',
  'metrics',
  'auth-check',
  'mcp',
  'docs',
  'openapi.json',
  'schemas',
  'favicon.ico',
  'robots.txt',
]);

/**
 * The first segment of each peer surface (docs/compat.md), reserved only while that surface is on:
 * an instance that does not serve Shlink's API leaves `rest` to its users.
 */
export const SURFACE_SEGMENTS = { shlinkApi: 'rest' } as const;

/** Which surfaces an instance serves: the settings of the same names. */
export type Surfaces = Partial<Record<keyof typeof SURFACE_SEGMENTS, boolean>>;

/**
 * The reserved words of an instance: the service's own and those of the surfaces it serves.
 * Computed once at start-up; the redirect path only ever asks the set it was given.
 */
export function reservedWords(surfaces: Surfaces): ReadonlySet<string> {
  const on = (Object.keys(SURFACE_SEGMENTS) as (keyof typeof SURFACE_SEGMENTS)[]).filter((s) => surfaces[s] === true);
  return on.length === 0 ? RESERVED_SEGMENTS : new Set([...RESERVED_SEGMENTS, ...on.map((s) => SURFACE_SEGMENTS[s])]);
}

/**
 * True when `code` is a reserved word in any case (docs/api.md): `Metrics` or `API` would be a
 * different path to the router, but to a reader it is the service's own address. `reserved`: the
 * instance's words (`reservedWords`), by default the service's own.
 */
export function isReserved(code: string, reserved: ReadonlySet<string> = RESERVED_SEGMENTS): boolean {
  return reserved.has(code.toLowerCase());
}

/** Tries at one length before moving on to the next (docs/api.md). */
export const TRIES_PER_LENGTH = 10;

/**
 * True when `s` could be a code: 1 to 64 characters of the custom-code alphabet. Anything else in
 * a path is no code at all (a 404 without asking the store).
 */
export function isCodeShaped(s: string): boolean {
  if (s.length === 0 || s.length > MAX_CODE_LENGTH) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || IN_CODE_ALPHABET[c] === 0) return false;
  }
  return true;
}

/** Fills a buffer with random bytes; injectable so tests can force collisions. */
export type RandomSource = (buffer: Uint8Array) => void;

export const cryptoRandom: RandomSource = (buffer) => {
  randomFillSync(buffer);
};

/**
 * 232 = 4 × 58 is the largest multiple of 58 that fits in a byte. Bytes at or above it are dropped
 * (rejection sampling), so `byte % 58` is exactly uniform: no modulo bias toward the first letters.
 */
const ACCEPT_BELOW = 256 - (256 % ALPHABET.length);

/** A generator of uniformly random codes, reading randomness in pooled blocks (one syscall per ~170 codes). */
export function createCodeSource(random: RandomSource = cryptoRandom): (length: number) => string {
  const pool = new Uint8Array(1024);
  let pos = pool.length;
  return function randomCode(length: number): string {
    let code = '';
    while (code.length < length) {
      if (pos === pool.length) {
        random(pool);
        pos = 0;
      }
      const byte = pool[pos++]!;
      if (byte < ACCEPT_BELOW) code += ALPHABET[byte % ALPHABET.length];
    }
    return code;
  };
}

/**
 * The codes to try, in order: `TRIES_PER_LENGTH` random codes at `min`, then at each longer length
 * up to `max`, reserved words (of `reserved`) left out (each counts as a try). The caller stops at the first one
 * the store takes; when all are refused the code space is exhausted.
 */
export function* candidateCodes(
  randomCode: (length: number) => string,
  min: number,
  max: number,
  reserved: ReadonlySet<string> = RESERVED_SEGMENTS,
): Generator<string, void, undefined> {
  for (let length = min; length <= max; length++) {
    for (let attempt = 0; attempt < TRIES_PER_LENGTH; attempt++) {
      const code = randomCode(length);
      if (!isReserved(code, reserved)) yield code;
    }
  }
}
