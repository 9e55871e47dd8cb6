/**
 * `links/walk.ts`: a walk visits every record once, in order, and sizes its slices by the time the
 * caller spends on them, giving the loop a turn before each. The clock is faked: `performance.now`
 * advances only by what each visit says its records cost.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { WALK_SLICE, walk } from '../../src/links/walk.ts';

/** A listing of `count` numbers, 0 to count - 1. */
const numbers = (count: number) => ({
  count,
  slice: (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i),
});

/** Runs `work` with `performance.now` reading a clock that only `advance` moves. */
async function withFakeClock<T>(work: (advance: (ms: number) => void) => Promise<T>): Promise<T> {
  const real = performance.now;
  let now = 0;
  performance.now = () => now;
  try {
    return await work((ms) => {
      now += ms;
    });
  } finally {
    performance.now = real;
  }
}

test('a walk visits every record once, in order, with the position of each slice', async () => {
  for (const count of [0, 1, 63, 64, 65, 999, 5_000]) {
    const seen: number[] = [];
    await walk(numbers(count), (records, from) => {
      assert.equal(records[0], from);
      seen.push(...records);
    });
    assert.deepEqual(
      seen,
      Array.from({ length: count }, (_, i) => i),
      `${count} records`,
    );
  }
});

test("slices start small and grow to fit a few milliseconds of the caller's work, never past the cap", async () => {
  const sizes = (costPerRecord: number, count: number, cap?: number) =>
    withFakeClock(async (advance) => {
      const out: number[] = [];
      await walk(
        numbers(count),
        (records) => {
          out.push(records.length);
          advance(records.length * costPerRecord);
        },
        cap,
      );
      return out;
    });
  // Free records: the slice doubles from 64 up to the cap.
  assert.deepEqual((await sizes(0, 5_000)).slice(0, 7), [64, 128, 256, 512, WALK_SLICE, WALK_SLICE, WALK_SLICE]);
  assert.deepEqual((await sizes(0, 1_000, 100)).slice(0, 3), [64, 100, 100]);
  // 0.1 ms a record (Shlink's bot counts cost about this much): 3 ms is 30 records.
  assert.deepEqual((await sizes(0.1, 200)).slice(0, 4), [64, 30, 30, 30]);
  // A record dearer than a step still makes progress, one at a time.
  assert.deepEqual(await sizes(10, 3), [3]);
  assert.deepEqual((await sizes(10, 70)).slice(0, 3), [64, 1, 1]);
});

test('the loop gets a turn before every slice, however cheap the slices are', async () => {
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const slicesSeen: number[] = [];
  await walk(numbers(3_000), () => {
    slicesSeen.push(turns);
  });
  ticking = false;
  // Each slice ran in a turn of its own: the ticker ran between every two.
  for (let i = 1; i < slicesSeen.length; i++) assert.ok(slicesSeen[i]! > slicesSeen[i - 1]!, `slice ${i} ran in a turn of its own`);
  assert.ok(slicesSeen.length >= 5);
});
