/**
 * The daily visitor id (docs/architecture.md, the visit classification): a keyed hash of address
 * and `User-Agent` under the key of the UTC day. The same visitor has the same id all day and
 * another the next day; the key changes exactly at midnight UTC and only the current one is kept;
 * no address, no id; `Sec-GPC: 1` or `DNT: 1` asks for none. The clock is fake: nothing waits.
 */
import assert from 'node:assert/strict';
import { createHmac, createSecretKey } from 'node:crypto';
import { test } from 'node:test';
import { createDailyKeys, createVisitorIds, DAY_MS, KEY_BYTES, tracksVisitor, utcDay, visitorId } from '../../src/visits/visitor-id.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
/** 2024-03-31 00:00 UTC, the day Berlin's clocks go forward: the id's day is UTC's all the same. */
const MIDNIGHT = Date.UTC(2024, 2, 31);

/** A fake clock and a random source that hands out keys 1, 2, 3…, counting them. */
function fakes(): { clock: { ms: number }; keys: number[]; options: { now: () => number; random: (size: number) => Uint8Array } } {
  const clock = { ms: MIDNIGHT + 1000 };
  const keys: number[] = [];
  return {
    clock,
    keys,
    options: {
      now: () => clock.ms,
      random: (size) => {
        keys.push(keys.length + 1);
        return new Uint8Array(size).fill(keys.length);
      },
    },
  };
}

/** The id as docs/analytics.md defines it, written out apart from the code under test. */
function expectedId(key: Uint8Array, address: string, userAgent: string): number {
  const part = (tag: string, value: string): number => createHmac('sha256', key).update(`${tag}\n${value}`).digest().readInt32BE(0);
  let h = (part('address', address) ^ Math.imul(part('user-agent', userAgent), 0x9e3779b1)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

test("the id: HMAC-SHA-256 of the address and of the User-Agent under the day's key, mixed into a signed 32-bit number", () => {
  const key = new Uint8Array(KEY_BYTES).fill(7);
  assert.equal(visitorId(key, '198.51.100.1', CHROME), expectedId(key, '198.51.100.1', CHROME));
  assert.equal(visitorId(key, '198.51.100.1', undefined), expectedId(key, '198.51.100.1', ''));
  // The same under the key as a KeyObject (what the ids reuse all day).
  assert.equal(visitorId(createSecretKey(key), '198.51.100.1', CHROME), expectedId(key, '198.51.100.1', CHROME));
  // A value's tag keeps an address apart from a User-Agent of the same text.
  assert.notEqual(visitorId(key, 'x', 'y'), visitorId(key, 'y', 'x'));
  // Signed 32-bit: a PostgreSQL integer, one word of a packed event.
  const ids = ['198.51.100.1', '198.51.100.2', '2001:db8::1', '203.0.113.9'].map((a) => visitorId(key, a, CHROME));
  for (const id of ids) assert.ok(Number.isInteger(id) && id >= -(2 ** 31) && id < 2 ** 31, String(id));
  // Both signs occur: read signed, not unsigned.
  assert.ok(Array.from({ length: 64 }, (_, i) => visitorId(key, `10.0.0.${i}`, CHROME)).some((id) => id < 0));
  // Ten thousand visitors of one browser: ten thousand ids (the mix loses nothing of an address).
  assert.equal(new Set(Array.from({ length: 10_000 }, (_, i) => visitorId(key, `10.${i >> 8}.${i & 255}.1`, CHROME))).size, 10_000);
});

test("the ids of createVisitorIds are the HMAC under the day's key", () => {
  const { options } = fakes();
  assert.equal(createVisitorIds(options)('198.51.100.1', CHROME), visitorId(new Uint8Array(KEY_BYTES).fill(1), '198.51.100.1', CHROME));
  assert.equal(createVisitorIds(options).ready(), undefined);
});

test('one visitor is one id all day; another address, agent or key is another id', () => {
  const { clock, options } = fakes();
  const ids = createVisitorIds(options);
  const morning = ids('198.51.100.1', CHROME);
  clock.ms = MIDNIGHT + DAY_MS - 1;
  assert.equal(ids('198.51.100.1', CHROME), morning);
  assert.notEqual(ids('198.51.100.2', CHROME), morning);
  assert.notEqual(ids('198.51.100.1', 'curl/8.5.0'), morning);
  assert.notEqual(createVisitorIds({ ...options, random: (size) => new Uint8Array(size).fill(99) })('198.51.100.1', CHROME), morning);
});

test('the key changes at midnight UTC, once, and only the current day is kept', () => {
  const { clock, keys, options } = fakes();
  const todaysKey = createDailyKeys(options);
  const first = todaysKey();
  assert.equal(first.day, utcDay(MIDNIGHT));
  assert.deepEqual(first.key, new Uint8Array(KEY_BYTES).fill(1));
  clock.ms = MIDNIGHT + DAY_MS - 1;
  assert.equal(todaysKey(), first);
  clock.ms = MIDNIGHT + DAY_MS;
  const second = todaysKey();
  assert.equal(second.day, first.day + 1);
  assert.deepEqual(second.key, new Uint8Array(KEY_BYTES).fill(2));
  assert.equal(todaysKey(), second);
  // Keys are made on a day's first use, not for the days nobody visited.
  clock.ms = MIDNIGHT + 10 * DAY_MS;
  todaysKey();
  assert.deepEqual(keys, [1, 2, 3]);
});

test('the same visitor gets another id the next day', () => {
  const { clock, options } = fakes();
  const ids = createVisitorIds(options);
  const today = ids('198.51.100.1', CHROME);
  clock.ms += DAY_MS;
  assert.notEqual(ids('198.51.100.1', CHROME), today);
});

test('without an address there is no id', () => {
  const { keys, options } = fakes();
  assert.equal(createVisitorIds(options)(null, CHROME), null);
  assert.deepEqual(keys, []);
});

test('Sec-GPC: 1 or DNT: 1 asks not to be tracked; anything else does not', () => {
  const cases: readonly [Record<string, string | string[] | undefined>, boolean][] = [
    [{}, true],
    [{ 'user-agent': CHROME }, true],
    [{ 'sec-gpc': '1' }, false],
    [{ dnt: '1' }, false],
    [{ 'sec-gpc': '1', dnt: '0' }, false],
    [{ dnt: '0' }, true],
    [{ 'sec-gpc': '0' }, true],
    [{ dnt: '' }, true],
    [{ dnt: 'yes' }, true],
    // node:http joins repeated headers with ", ".
    [{ dnt: '1, 1' }, false],
    [{ 'sec-gpc': ' 1 ' }, false],
    [{ dnt: ['1'] }, false],
  ];
  for (const [headers, tracks] of cases) assert.equal(tracksVisitor(headers), tracks, JSON.stringify(headers));
});

/** A shared key source (a store's `dailyKey`) that answers when told, counting the days asked. */
function sharedKeys(): {
  asked: number[];
  answer: (day: number, fill: number) => void;
  fail: (day: number) => void;
  source: (day: number) => Promise<Uint8Array>;
} {
  const asked: number[] = [];
  const pending = new Map<number, { resolve: (key: Uint8Array) => void; reject: (err: Error) => void }>();
  return {
    asked,
    answer: (day, fill) => pending.get(day)!.resolve(new Uint8Array(KEY_BYTES).fill(fill)),
    fail: (day) => pending.get(day)!.reject(new Error('database unavailable')),
    source: (day) => {
      asked.push(day);
      return new Promise((resolve, reject) => pending.set(day, { resolve, reject }));
    },
  };
}

test('a shared key: asked once a day, waited for, and then the ids are the HMAC under it', async () => {
  const { clock, options } = fakes();
  const shared = sharedKeys();
  const ids = createVisitorIds({ ...options, sharedKey: shared.source });
  const today = utcDay(clock.ms);
  const ready = ids.ready();
  assert.ok(ready instanceof Promise);
  // Asked again before it arrived: the same wait, one question.
  assert.equal(ids.ready(), ready);
  assert.deepEqual(shared.asked, [today]);
  // An id asked before the key is there is none (never one under another key).
  assert.equal(ids('198.51.100.1', CHROME), null);
  shared.answer(today, 5);
  await ready;
  assert.equal(ids.ready(), undefined);
  assert.equal(ids('198.51.100.1', CHROME), visitorId(new Uint8Array(KEY_BYTES).fill(5), '198.51.100.1', CHROME));
  assert.equal(ids(null, CHROME), null);
  assert.deepEqual(shared.asked, [today]);
  // The next day: the next key, asked once.
  clock.ms += DAY_MS;
  const tomorrow = ids.ready();
  assert.ok(tomorrow instanceof Promise);
  assert.deepEqual(shared.asked, [today, today + 1]);
  shared.answer(today + 1, 6);
  await tomorrow;
  assert.equal(ids('198.51.100.1', CHROME), visitorId(new Uint8Array(KEY_BYTES).fill(6), '198.51.100.1', CHROME));
});

test('a shared key that could not be had is asked again, and meanwhile ids are null', async () => {
  const { clock, options } = fakes();
  const shared = sharedKeys();
  const errors: unknown[] = [];
  const ids = createVisitorIds({ ...options, sharedKey: shared.source, onKeyError: (err) => errors.push(err) });
  const today = utcDay(clock.ms);
  const first = ids.ready()!;
  shared.fail(today);
  await first;
  assert.equal(errors.length, 1);
  assert.equal(ids('198.51.100.1', CHROME), null);
  // That id's question started the fetch again.
  assert.deepEqual(shared.asked, [today, today]);
  const second = ids.ready()!;
  shared.answer(today, 9);
  await second;
  assert.equal(ids('198.51.100.1', CHROME), visitorId(new Uint8Array(KEY_BYTES).fill(9), '198.51.100.1', CHROME));
});
