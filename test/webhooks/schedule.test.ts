/**
 * The retry schedule and the reading of an attempt: the delays after each failure, the
 * point where an event is given up, which answers deliver, retry or disable, and the part of an
 * answer that is kept. The clock is a number: nothing waits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AttemptResult,
  CLICK_CAP,
  DELIVERY_TIMEOUT_MS,
  keptResponse,
  MAX_RESPONSE_BYTES,
  nextAttemptAt,
  outcomeOf,
  RETRY_DELAYS_S,
} from '../../src/webhooks/schedule.ts';

/** 2024-03-31 00:00 UTC, in milliseconds. */
const NOW = Date.UTC(2024, 2, 31);

test('the table is the documented one: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
  assert.deepEqual(RETRY_DELAYS_S, [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600]);
  assert.ok(Object.isFrozen(RETRY_DELAYS_S), 'no caller can change it');
  assert.equal(DELIVERY_TIMEOUT_MS, 10_000);
  assert.equal(MAX_RESPONSE_BYTES, 1024);
  assert.equal(CLICK_CAP, 100_000);
});

test('after the n-th failure the next attempt is the n-th delay later; after the eighth, none', () => {
  const rows: [failed: number, delayS: number | 'failed'][] = [
    [1, 5],
    [2, 300],
    [3, 1800],
    [4, 7200],
    [5, 18000],
    [6, 36000],
    [7, 36000],
    [8, 'failed'],
    [9, 'failed'],
    [1000, 'failed'],
  ];
  for (const [failed, delay] of rows) assert.equal(nextAttemptAt(failed, NOW), delay === 'failed' ? 'failed' : NOW + delay * 1000, `after ${failed}`);
  assert.equal(nextAttemptAt(1, 0), 5000, 'from the epoch too');
});

test('the whole schedule: eight attempts over 27 h 35 min 5 s, then given up', () => {
  let at = NOW;
  let attempts = 1;
  for (;;) {
    const next = nextAttemptAt(attempts, at);
    if (next === 'failed') break;
    at = next;
    attempts++;
  }
  assert.equal(attempts, 8);
  assert.equal(at - NOW, ((27 * 60 + 35) * 60 + 5) * 1000);
});

test('a count of failures that is not a whole number of at least 1 is a bug', () => {
  for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => nextAttemptAt(bad, NOW), RangeError, String(bad));
});

test('2xx delivers, 410 disables, every other status, a timeout and an error retry', () => {
  const rows: [AttemptResult, 'delivered' | 'retry' | 'disable'][] = [
    [{ status: 200 }, 'delivered'],
    [{ status: 201 }, 'delivered'],
    [{ status: 202 }, 'delivered'],
    [{ status: 204 }, 'delivered'],
    [{ status: 299 }, 'delivered'],
    [{ status: 410 }, 'disable'],
    [{ status: 100 }, 'retry'],
    [{ status: 199 }, 'retry'],
    [{ status: 300 }, 'retry'],
    [{ status: 301 }, 'retry'],
    [{ status: 302 }, 'retry'],
    [{ status: 307 }, 'retry'],
    [{ status: 308 }, 'retry'],
    [{ status: 400 }, 'retry'],
    [{ status: 401 }, 'retry'],
    [{ status: 404 }, 'retry'],
    [{ status: 409 }, 'retry'],
    [{ status: 411 }, 'retry'],
    [{ status: 429 }, 'retry'],
    [{ status: 500 }, 'retry'],
    [{ status: 502 }, 'retry'],
    [{ status: 503 }, 'retry'],
    [{ status: 504 }, 'retry'],
    [{ status: 200.5 }, 'retry'],
    [{ status: Number.NaN }, 'retry'],
    [{ timedOut: true }, 'retry'],
    [{ error: 'ECONNREFUSED' }, 'retry'],
    [{ error: 'ECONNRESET' }, 'retry'],
    [{ error: '' }, 'retry'],
    [{}, 'retry'],
    // An answer cut off by the timeout or an error is not one the receiver finished.
    [{ status: 200, timedOut: true }, 'retry'],
    [{ status: 204, error: 'ECONNRESET' }, 'retry'],
    [{ status: 410, timedOut: true }, 'retry'],
    [{ status: 200, timedOut: false }, 'delivered'],
    [{ status: 410, timedOut: false }, 'disable'],
  ];
  for (const [result, outcome] of rows) assert.equal(outcomeOf(result), outcome, JSON.stringify(result));
});

test('an answer within 1 KiB is kept whole', () => {
  assert.equal(keptResponse(''), '');
  assert.equal(keptResponse(Buffer.alloc(0)), '');
  assert.equal(keptResponse('{"ok":true}'), '{"ok":true}');
  const full = 'é'.repeat(512);
  assert.equal(keptResponse(full), full);
  assert.equal(keptResponse(Buffer.from(full)), full);
});

test('a longer answer is cut at 1 KiB', () => {
  const long = 'a'.repeat(5000);
  assert.equal(keptResponse(long), 'a'.repeat(1024));
  assert.equal(keptResponse(Buffer.from(long)), 'a'.repeat(1024));
  assert.equal(keptResponse('a'.repeat(1025)), 'a'.repeat(1024));
});

test('a character the limit would split is left out whole, for every width and offset', () => {
  for (const char of ['é', '€', '😀']) {
    const width = Buffer.byteLength(char);
    for (let pad = 1024 - width - 2; pad <= 1024; pad++) {
      const text = `${'a'.repeat(pad)}${char}${'b'.repeat(10)}`;
      const fits = pad + width <= 1024;
      const expected = fits ? `${'a'.repeat(pad)}${char}${'b'.repeat(1024 - pad - width)}` : 'a'.repeat(pad);
      for (const body of [text, Buffer.from(text)]) {
        const kept = keptResponse(body);
        assert.equal(kept, expected, `${char} after ${pad} bytes, as ${typeof body}`);
        assert.ok(Buffer.byteLength(kept) <= 1024);
        assert.ok(!kept.includes('\uFFFD'), 'no replacement stands in for the cut character');
      }
    }
  }
});

test('a kept answer is text every store can hold: NUL, lone surrogates and bytes that are not UTF-8 become U+FFFD', () => {
  assert.equal(keptResponse('a\0b'), 'a\uFFFDb');
  assert.equal(keptResponse('a\uD800b\uDC00c'), 'a\uFFFDb\uFFFDc');
  assert.equal(keptResponse(Buffer.from([0x61, 0x00, 0xff, 0x62])), 'a\uFFFD\uFFFDb');
  assert.equal(keptResponse('😀'), '😀', 'a surrogate pair is one character, kept');
  // Each U+FFFD counts as its three UTF-8 bytes, so the limit holds for what is stored.
  const kept = keptResponse('\0'.repeat(1000));
  assert.equal(kept, '\uFFFD'.repeat(341));
  assert.equal(Buffer.byteLength(kept), 1023);
  const binary = keptResponse(Buffer.alloc(4096, 0xff));
  assert.ok(Buffer.byteLength(binary) <= 1024);
  assert.equal(binary, '\uFFFD'.repeat(341));
});
