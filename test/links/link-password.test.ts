/**
 * A link's password (links/link-password.ts): the lengths the API takes, counted in code points and
 * kept exactly; the stored form of its hash; verification, which a damaged or hostile hash answers
 * with false and never a throw; the bounds an imported hash must keep; and the salt that makes two
 * hashes of one password differ.
 */
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { test } from 'node:test';
import { checkPassword, hashPassword, isPasswordHash, verifyPassword } from '../../src/links/link-password.ts';
import { Refusal } from '../../src/links/refusal.ts';

const SALT = 'AAECAwQFBgcICQoLDA0ODw';
const HASH = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';

/** A hash of `password` made here, with parameters of the test's choosing, in the stored form. */
function made(password: string, N: number, r: number, p: number): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

test('lengths: 8 to 128 characters, counted in code points, kept exactly as sent', () => {
  const accepted = ['12345678', 'x'.repeat(128), '  spaced  ', '😀'.repeat(8), '😀'.repeat(128), 'pass word', 'ünïcødé!'];
  for (const password of accepted) assert.equal(checkPassword(password), password, JSON.stringify(password));
  const long = new Refusal('password must be 8 to 128 characters long');
  // 7 emoji are 14 UTF-16 units but 7 characters; 65 are 130 units but within 128 characters.
  for (const password of ['', '1234567', 'x'.repeat(129), '😀'.repeat(7), '😀'.repeat(129), '       ']) {
    assert.deepEqual(checkPassword(password), long, JSON.stringify(password));
  }
  assert.equal(checkPassword('😀'.repeat(65)), '😀'.repeat(65));
});

test('refusals: not a string, a NUL or control character, a lone surrogate; none repeats the password', () => {
  const rows: [unknown, string][] = [
    [undefined, 'password must be a string of 8 to 128 characters'],
    [null, 'password must be a string of 8 to 128 characters'],
    [12345678, 'password must be a string of 8 to 128 characters'],
    [['12345678'], 'password must be a string of 8 to 128 characters'],
    ['secret\0secret', 'password must not contain a NUL character'],
    ['secret\uD800secret', 'password must not contain a lone UTF-16 surrogate (it is not Unicode text)'],
    ['secret\nsecret', 'password must not contain control characters (a visitor could not type them)'],
    ['secret\tsecret', 'password must not contain control characters (a visitor could not type them)'],
    ['secret\u007fsecret', 'password must not contain control characters (a visitor could not type them)'],
    ['secret\u0085secret', 'password must not contain control characters (a visitor could not type them)'],
  ];
  for (const [input, detail] of rows) {
    assert.deepEqual(checkPassword(input), new Refusal(detail), JSON.stringify(input));
    assert.doesNotMatch(detail, /secret|1234/);
  }
});

test('a hash is scrypt with its parameters, a 16-byte salt and a 32-byte key; it verifies its password only', async () => {
  const stored = await hashPassword('correct horse');
  const m = /^scrypt\$N=16384,r=8,p=1\$([A-Za-z0-9_-]{22})\$([A-Za-z0-9_-]{43})$/.exec(stored);
  assert.ok(m, stored);
  assert.equal(Buffer.from(m[1]!, 'base64url').length, 16);
  // The stored key is scrypt's, recomputed independently from the salt it names.
  assert.equal(scryptSync('correct horse', Buffer.from(m[1]!, 'base64url'), 32, { N: 16384, r: 8, p: 1 }).toString('base64url'), m[2]);
  assert.equal(isPasswordHash(stored), true);
  assert.equal(await verifyPassword('correct horse', stored), true);
  for (const wrong of ['correct horse ', ' correct horse', 'Correct horse', 'correct hors', '']) {
    assert.equal(await verifyPassword(wrong, stored), false, JSON.stringify(wrong));
  }
  assert.doesNotMatch(stored, /correct|horse/);
});

test('two hashes of one password differ by their salts, and each verifies it', async () => {
  const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
  assert.notEqual(a.split('$')[2], b.split('$')[2]);
  assert.notEqual(a.split('$')[3], b.split('$')[3]);
  assert.equal(await verifyPassword('same password', a), true);
  assert.equal(await verifyPassword('same password', b), true);
});

test('a password is hashed in composed form: é typed as one character or as e + accent is the same', async () => {
  const stored = await hashPassword('caf\u00e9 au lait');
  assert.equal(await verifyPassword('cafe\u0301 au lait', stored), true);
  assert.equal(await verifyPassword('cafe au lait', stored), false);
});

test('a damaged or malformed hash is false, never a throw', async () => {
  const stored = await hashPassword('password one');
  const [, params, salt, key] = stored.split('$') as [string, string, string, string];
  const flip = (s: string, at: number): string => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
  const damaged = [
    `scrypt$${params}$${flip(salt, 3)}$${key}`,
    `scrypt$${params}$${salt}$${flip(key, 10)}`,
    `scrypt$N=32768,r=8,p=1$${salt}$${key}`,
    `scrypt$N=16384,r=4,p=1$${salt}$${key}`,
    `scrypt$N=16384,r=8,p=2$${salt}$${key}`,
  ];
  for (const s of damaged) {
    assert.equal(isPasswordHash(s), true, 'still well formed');
    assert.equal(await verifyPassword('password one', s), false, s);
  }
  const malformed = [
    '',
    'password one',
    stored.slice(0, -1),
    `${stored}A`,
    `${stored}\n`,
    stored.replace('scrypt$', 'SCRYPT$'),
    stored.replace('scrypt$', 'bcrypt$'),
    stored.replace('N=16384', 'N=016384'),
    stored.replace('N=16384', 'N=16385'),
    stored.replace('N=16384', 'N=-16384'),
    stored.replace('r=8', 'r=0'),
    stored.replace('p=1', 'p=0'),
    stored.replace(',r=8,p=1', ',p=1,r=8'),
    `scrypt$${params}$${salt}=$${key}`,
    `scrypt$${params}$${salt.replace(/./, '+')}$${key}`,
    `scrypt$${params}$${salt}$${key.slice(0, -1)}/`,
    `scrypt$${params}$${salt.slice(0, -1)}$${key}`,
    // The last character of an unpadded base64url carries unused bits: only one spelling is ours.
    `scrypt$${params}$${SALT.slice(0, -1)}x$${HASH}`,
    `scrypt$${params}$${SALT}$${HASH.slice(0, -1)}9`,
  ];
  for (const s of malformed) {
    assert.equal(isPasswordHash(s), false, s);
    assert.equal(await verifyPassword('password one', s), false, s);
  }
  assert.equal(isPasswordHash(`scrypt$${params}$${SALT}$${HASH}`), true, 'the canonical spellings are taken');
  for (const notText of [undefined, null, 42, {}, ['scrypt'], Buffer.from(stored)]) assert.equal(isPasswordHash(notText), false);
});

test('the bounds: a hash may not name a huge N, r or p, nor too much memory or work', () => {
  const of = (N: number, r: number, p: number): string => `scrypt$N=${N},r=${r},p=${p}$${SALT}$${HASH}`;
  const within: [number, number, number][] = [
    [1024, 1, 1],
    [16384, 8, 1],
    [65536, 8, 1],
    [65536, 8, 2],
    [32768, 16, 2],
    [1024, 16, 4],
    [16384, 16, 4],
  ];
  for (const [N, r, p] of within) assert.equal(isPasswordHash(of(N, r, p)), true, `N=${N},r=${r},p=${p}`);
  const past: [number, number, number][] = [
    [512, 8, 1], // N below 2^10
    [131072, 1, 1], // N above 2^16
    [1048576, 8, 1],
    [999999, 8, 1],
    [3000, 8, 1], // not a power of two
    [16384, 17, 1], // r above 16
    [16384, 99, 1],
    [16384, 8, 5], // p above 4
    [16384, 8, 99],
    [65536, 16, 1], // 128 MiB of memory
    [65536, 8, 4], // 2^21 of work
    [32768, 16, 4],
  ];
  for (const [N, r, p] of past) assert.equal(isPasswordHash(of(N, r, p)), false, `N=${N},r=${r},p=${p}`);
});

test('a hash at the edges of the bounds verifies: enough memory is allowed for the largest', async () => {
  // 64 MiB (past Node's 32 MiB default), and p at its largest.
  for (const [N, r, p] of [
    [65536, 8, 1],
    [1024, 1, 4],
  ] as const) {
    const stored = made('edge of bounds', N, r, p);
    assert.equal(isPasswordHash(stored), true);
    assert.equal(await verifyPassword('edge of bounds', stored), true, `N=${N},r=${r},p=${p}`);
    assert.equal(await verifyPassword('edge of bound', stored), false);
  }
});

test('a hash past the bounds is false without being computed', async () => {
  // N = 2^20 with r = 8 would want 1 GiB and seconds: refused at once, before scrypt runs.
  const stored = `scrypt$N=1048576,r=8,p=1$${SALT}$${HASH}`;
  const started = performance.now();
  assert.equal(await verifyPassword('anything at all', stored), false);
  // Computing it would take seconds; refusing it takes microseconds. The margin is for a busy machine.
  assert.ok(performance.now() - started < 500, 'answered without hashing');
});
