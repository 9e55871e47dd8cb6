/**
 * A link's password (docs/api.md, password-protected links): what the API takes, and how it is
 * kept. Only a salted scrypt hash is ever stored or exported, as one self-describing string:
 *
 *     scrypt$N=16384,r=8,p=1$<salt, base64url>$<hash, base64url>
 *
 * The string names its own parameters, so stronger ones can come later without breaking the links
 * that exist, and an import can carry a hash from another instance. Because an import can carry
 * one, the parameters a hash may name are bounded (`isPasswordHash`): a hostile file cannot make
 * one verify cost seconds of CPU or gigabytes of memory.
 *
 * The password itself never appears in a refusal, in a thrown error or in a log line.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { codePoints, Refusal, unstorableText } from './refusal.ts';

/** A password's length, in characters (code points, as every other length of docs/api.md). */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;

/**
 * The parameters new hashes get: Node's own scrypt defaults, the scrypt paper's interactive-login
 * setting. 16 MiB and about 30–60 ms on one core of a small machine: a visitor does not notice
 * it, a guesser pays it per guess (and is limited to 5 a minute anyway, password-attempts.ts).
 * It runs on libuv's thread pool, so the event loop keeps serving redirects meanwhile.
 */
const COST = { N: 16_384, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * What a stored hash may name, so verifying any accepted hash costs at most 64 MiB and 8× the work
 * of ours (about half a second): N a power of two from 2^10 to 2^16, r from 1 to 16, p from 1 to
 * 4, memory (128·N·r bytes) at most 64 MiB, and work (N·r·p) at most 2^20.
 */
const BOUNDS = { minN: 2 ** 10, maxN: 2 ** 16, maxR: 16, maxP: 4, maxMemory: 64 * 1024 * 1024, maxWork: 2 ** 20 } as const;

/** Base64url without padding: 16 bytes are 22 characters, 32 bytes are 43. */
const HASH_FORM = /^scrypt\$N=([1-9]\d{0,5}),r=([1-9]\d?),p=([1-9]\d?)\$([A-Za-z0-9_-]{22})\$([A-Za-z0-9_-]{43})$/;

/** Characters no one can type into a password field (a browser drops line breaks from one). */
const CONTROL = /\p{Cc}/u;

/**
 * `password` as the API takes it: a string of 8 to 128 characters, counted in code points. Kept
 * exactly as sent, surrounding spaces included: a password is a secret, not a name, and trimming
 * would quietly accept a different one. Control characters are refused, since a visitor could not
 * type them into the form, nor a lone surrogate, which UTF-8 cannot carry (refusal.ts).
 */
export function checkPassword(input: unknown): string | Refusal {
  if (typeof input !== 'string') return new Refusal(`password must be a string of ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  const length = codePoints(input);
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    // Not the length it had: a refusal may be logged, and the length tells something of the secret.
    return new Refusal(`password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`);
  }
  const unstorable = unstorableText(input, 'password');
  if (unstorable !== undefined) return new Refusal(unstorable);
  if (CONTROL.test(input)) return new Refusal('password must not contain control characters (a visitor could not type them)');
  return input;
}

interface Params {
  N: number;
  r: number;
  p: number;
}

interface Parsed extends Params {
  salt: Buffer;
  hash: Buffer;
}

function withinBounds({ N, r, p }: Params): boolean {
  // A power of two: scrypt refuses any other N, and `N & (N - 1)` is 0 only for those.
  if (N < BOUNDS.minN || N > BOUNDS.maxN || (N & (N - 1)) !== 0) return false;
  if (r > BOUNDS.maxR || p > BOUNDS.maxP) return false;
  return 128 * N * r <= BOUNDS.maxMemory && N * r * p <= BOUNDS.maxWork;
}

/** Base64url that decodes to exactly these characters again: one spelling per hash. */
function canonical(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

function parse(stored: string): Parsed | null {
  const m = HASH_FORM.exec(stored);
  if (m === null) return null;
  const params = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (!withinBounds(params)) return null;
  const salt = canonical(m[4]!);
  const hash = canonical(m[5]!);
  if (salt === null || hash === null) return null;
  return { ...params, salt, hash };
}

/** True only for a hash `hashPassword` could have written, with parameters within the bounds. */
export function isPasswordHash(s: unknown): boolean {
  return typeof s === 'string' && parse(s) !== null;
}

/**
 * The password as hashed: in Unicode's composed form (NFC), so the same characters typed on two
 * systems that compose accents differently are the same password (RFC 8265 does the same).
 */
function bytesOf(password: string): Buffer {
  return Buffer.from(password.normalize('NFC'), 'utf8');
}

function derive(password: string, salt: Buffer, { N, r, p }: Params): Promise<Buffer> {
  // OpenSSL's own reckoning of what scrypt allocates (its B and V arrays): the bound is exact, so
  // a hash within the bounds always runs and Node's 32 MiB default does not refuse one up to 64.
  const maxmem = 128 * r * (N + p + 2);
  return new Promise((resolve, reject) => {
    scrypt(bytesOf(password), salt, HASH_BYTES, { N, r, p, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function encode({ N, r, p }: Params, salt: Buffer, hash: Buffer): string {
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** A new salted hash of `password`: two hashes of one password differ, by their random salts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  return encode(COST, salt, await derive(password, salt, COST));
}

/**
 * True when `password` is the one `stored` was made from, recomputed with the parameters it names
 * and compared in constant time. A stored string that is no hash of ours (damaged, or past the
 * bounds) is simply false: a visitor's guess must never become a `500`.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (parsed === null) return false;
  let key: Buffer;
  try {
    key = await derive(password, parsed.salt, parsed);
  } catch {
    return false;
  }
  return timingSafeEqual(key, parsed.hash);
}
