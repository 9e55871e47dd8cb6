/**
 * The daily visitor id (docs/architecture.md, the visit classification): a keyed hash of address
 * and `User-Agent` under the key of the UTC day. The same visitor has the same id all day and
 * another the next day; the key changes exactly at midnight UTC and only the current one is kept;
 * no address, no id; `Sec-GPC: 1` or `DNT: 1` asks for none. The clock is fake: nothing waits.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
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

test('the id is the first 8 bytes of HMAC-SHA-256(key, address + newline + User-Agent), signed', () => {
  const key = new Uint8Array(KEY_BYTES).fill(7);
  const digest = createHmac('sha256', key).update(`198.51.100.1\n${CHROME}`).digest();
  assert.equal(visitorId(key, '198.51.100.1', CHROME), digest.readBigInt64BE(0));
  assert.equal(visitorId(key, '198.51.100.1', undefined), createHmac('sha256', key).update('198.51.100.1\n').digest().readBigInt64BE(0));
  // Signed 64-bit: a PostgreSQL bigint.
  const id = visitorId(key, '198.51.100.1', CHROME);
  assert.ok(id >= -(2n ** 63n) && id < 2n ** 63n);
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
