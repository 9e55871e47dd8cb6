/**
 * Wrong passwords, limited (links/password-attempts.ts), on a fake clock: 5 wrong attempts a minute
 * per link and client address, then refusals with the exact whole seconds left, free again once the
 * minute since the first has passed; pairs that do not share a count; a right password that clears
 * one; and memory that stays within its bound whatever number of addresses tries.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PasswordAttempts, type PasswordAttemptsOptions } from '../../src/links/password-attempts.ts';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const OK = { ok: true };
const ALICE = '198.51.100.1';
const BOB = '198.51.100.2';

function attempts(options: Partial<PasswordAttemptsOptions> = {}): { limit: PasswordAttempts; clock: { t: number } } {
  const clock = { t: T0 };
  return { limit: new PasswordAttempts({ now: () => clock.t, ...options }), clock };
}

/** `n` wrong attempts, each first admitted by `check`. */
function wrong(limit: PasswordAttempts, link: string, address: string, n: number): void {
  for (let i = 0; i < n; i++) {
    assert.deepEqual(limit.check(link, address), OK, `attempt ${i + 1}`);
    limit.failed(link, address);
  }
}

test('5 wrong attempts are admitted, then refused with the whole seconds left until the minute has passed', () => {
  const { limit, clock } = attempts();
  wrong(limit, 'abc123', ALICE, 1);
  clock.t += 10_500;
  wrong(limit, 'abc123', ALICE, 4);
  // 10.5 s into the window: 49.5 s left, said as 50, so waiting that long always works.
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 50 });
  clock.t += 40_000;
  // Asking counts nothing: the wait only shrinks.
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 10 });
  clock.t += 9_499;
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 1 }, '1 ms left is still a whole second');
  clock.t += 1;
  // A minute since the first wrong attempt: free, and a new window opens with the next wrong one.
  wrong(limit, 'abc123', ALICE, 5);
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 60 });
});

test("4 wrong attempts leave one more; the window is the first attempt's, not the last's", () => {
  const { limit, clock } = attempts();
  wrong(limit, 'abc123', ALICE, 4);
  clock.t += 59_000;
  wrong(limit, 'abc123', ALICE, 1);
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 1 });
  clock.t += 1_000;
  assert.deepEqual(limit.check('abc123', ALICE), OK);
});

test('pairs are independent: another address, another link, each has its own count', () => {
  const { limit } = attempts();
  wrong(limit, 'abc123', ALICE, 5);
  assert.equal(limit.check('abc123', ALICE).ok, false);
  assert.deepEqual(limit.check('abc123', BOB), OK);
  assert.deepEqual(limit.check('xyz789', ALICE), OK);
  wrong(limit, 'xyz789', ALICE, 5);
  assert.equal(limit.check('xyz789', ALICE).ok, false);
  assert.deepEqual(limit.check('xyz789', BOB), OK);
});

test('one client counts as one whatever it spells: an IPv4 with a port or mapped, an IPv6 by its /64', () => {
  const { limit } = attempts();
  wrong(limit, 'abc123', '203.0.113.7', 3);
  limit.failed('abc123', '::ffff:203.0.113.7');
  limit.failed('abc123', '203.0.113.7:5123');
  assert.equal(limit.check('abc123', '203.0.113.7').ok, false);
  // A subscriber may pick any address of its /64: changing it does not start a new count.
  for (let i = 1; i <= 5; i++) limit.failed('abc123', `2001:db8:0:0::${i}`);
  assert.equal(limit.check('abc123', '2001:db8::ffff:1').ok, false);
  assert.equal(limit.check('abc123', '2001:db8:0:0::/64').ok, false, 'an address already grouped stays that group');
  assert.deepEqual(limit.check('abc123', '2001:db8:0:1::1'), OK, 'the next /64 is another client');
});

test("a right password clears the pair's count, and only that pair's", () => {
  const { limit } = attempts();
  wrong(limit, 'abc123', ALICE, 4);
  wrong(limit, 'abc123', BOB, 4);
  limit.passed('abc123', ALICE);
  wrong(limit, 'abc123', ALICE, 5);
  assert.equal(limit.check('abc123', ALICE).ok, false);
  wrong(limit, 'abc123', BOB, 1);
  assert.equal(limit.check('abc123', BOB).ok, false);
});

test('a clock set back does not hold a pair for longer than a window', () => {
  const { limit, clock } = attempts();
  wrong(limit, 'abc123', ALICE, 5);
  clock.t -= 3_600_000;
  assert.deepEqual(limit.check('abc123', ALICE), OK);
});

test('the limit and the window can be chosen; nonsense is refused at start-up', () => {
  const { limit, clock } = attempts({ limit: 2, windowMs: 10_000 });
  wrong(limit, 'abc123', ALICE, 2);
  assert.deepEqual(limit.check('abc123', ALICE), { ok: false, retryAfter: 10 });
  clock.t += 10_000;
  assert.deepEqual(limit.check('abc123', ALICE), OK);
  for (const [name, value] of [
    ['limit', 0],
    ['windowMs', -1],
    ['maxEntries', 1.5],
    ['limit', Number.NaN],
  ] as const) {
    assert.throws(() => attempts({ [name]: value }), { name: 'RangeError', message: `${name} must be a whole number of at least 1, not ${value}` });
  }
});

test('memory: ended windows are dropped, and never more than maxEntries pairs are kept', () => {
  const { limit, clock } = attempts({ maxEntries: 100 });
  wrong(limit, 'abc123', ALICE, 5);
  // An attacker cycling through addresses: the pairs stay within the bound.
  for (let i = 0; i < 5_000; i++) {
    limit.check('abc123', `10.0.${i >> 8}.${i & 255}`);
    limit.failed('abc123', `10.0.${i >> 8}.${i & 255}`);
    assert.ok(limit.size <= 100, `${limit.size} pairs after ${i + 1} addresses`);
  }
  assert.equal(limit.size, 100);
  // The newest pairs are the ones kept: the last address is still counted, the oldest forgotten.
  wrong(limit, 'abc123', '10.0.19.135', 4);
  assert.equal(limit.check('abc123', '10.0.19.135').ok, false);
  assert.deepEqual(limit.check('abc123', ALICE), OK);
  assert.equal(limit.size, 100);
  clock.t += 60_000;
  // Every window has ended: the next call drops them all.
  assert.deepEqual(limit.check('abc123', ALICE), OK);
  assert.equal(limit.size, 0);
});

test('the default bound is 10,000 pairs', () => {
  const { limit } = attempts();
  for (let i = 0; i < 10_500; i++) limit.failed('abc123', `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
  assert.equal(limit.size, 10_000);
});
