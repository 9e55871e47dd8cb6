/**
 * The cells of a stats range (a bucket's part of one UTC day): they cover the range in order, each
 * lies in one bucket and one UTC day, and the table that places an event in its cell agrees with a
 * plain search, in zones whose buckets are not whole UTC hours or days.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Cells } from '../../src/visits/cells.ts';
import { parseStatsRange, RangeRefusal } from '../../src/visits/range.ts';

const DAY = 86_400;

test("a Berlin day is two cells, split at UTC midnight; Kolkata's hour from 23:30Z is two", () => {
  const berlin = parseStatsRange({ from: '2026-03-28', to: '2026-03-30', interval: 'day', tz: 'Europe/Berlin' }, 2e9);
  assert.ok(!(berlin instanceof RangeRefusal));
  const cells = new Cells(berlin.edges);
  const midnight = Date.UTC(2026, 2, 28) / 1000;
  // 2026-03-28 in Berlin is 23:00Z on the 27th to 23:00Z on the 28th; the 29th is 23 hours long.
  assert.deepEqual([...cells.start], [midnight - 3600, midnight, midnight + DAY - 3600, midnight + DAY, midnight + 2 * DAY - 7200]);
  assert.deepEqual([...cells.bucket], [0, 0, 1, 1]);
  assert.deepEqual([...cells.dayCell], [0, 1, 3, 4]);
  assert.equal(cells.days, 3);
  assert.equal(cells.of(midnight - 1), 0);
  assert.equal(cells.of(midnight), 1);
  assert.equal(cells.of(midnight + 2 * DAY - 7201), 3);

  // Kolkata is 5:30 ahead: its hour from 05:00 on the 29th is 23:30Z to 00:30Z.
  const kolkata = parseStatsRange({ from: '2026-03-29T05:00', to: '2026-03-29T07:00', interval: 'hour', tz: 'Asia/Kolkata' }, 2e9);
  assert.ok(!(kolkata instanceof RangeRefusal));
  const hours = new Cells(kolkata.edges);
  assert.deepEqual([...hours.bucket], [0, 0, 1]);
  assert.deepEqual([...hours.start], [midnight + DAY - 1800, midnight + DAY, midnight + DAY + 1800, midnight + DAY + 5400]);
});

test('no bucket, no cell', () => {
  const cells = new Cells([]);
  assert.equal(cells.count, 0);
  assert.equal(cells.days, 0);
});

test('property: cells cover the range in order, each in one bucket and one UTC day, and of() finds them', () => {
  const start = Date.UTC(2026, 2, 20) / 1000;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 60 * DAY }),
      // Up to 40 days, or up to 80 years of months (slots of two days: a slot can hold two edges).
      fc.oneof(fc.integer({ min: 1, max: 40 * DAY }), fc.integer({ min: 40 * DAY, max: 80 * 365 * DAY })),
      fc.constantFrom('hour', 'day', 'week', 'month'),
      // Liberia's offset was -0:44:30 until 1972: edges on no whole minute.
      fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/New_York', 'Africa/Monrovia'),
      fc.boolean(),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 50 }),
      (offset, length, interval, tz, old, fractions) => {
        const from = (old ? Date.UTC(1971, 11, 20) / 1000 : start) + offset;
        const r = parseStatsRange({ from, to: from + length, interval: length > 40 * DAY ? 'month' : interval, tz }, from + length);
        fc.pre(!(r instanceof RangeRefusal));
        if (r instanceof RangeRefusal) return;
        const cells = new Cells(r.edges);
        const edges = r.edges;
        assert.equal(cells.start[0], edges[0]);
        assert.equal(cells.start[cells.count], edges[edges.length - 1]);
        for (let c = 0; c < cells.count; c++) {
          const [a, b] = [cells.start[c]!, cells.start[c + 1]!];
          const bucket = cells.bucket[c]!;
          assert.ok(a < b);
          assert.ok(edges[bucket]! <= a && b <= edges[bucket + 1]!);
          assert.equal(Math.floor(a / DAY), Math.floor((b - 1) / DAY));
        }
        for (let d = 0; d < cells.days; d++) {
          for (let c = cells.dayCell[d]!; c < cells.dayCell[d + 1]!; c++) {
            assert.equal(Math.floor(cells.start[c]! / DAY), Math.floor(edges[0]! / DAY) + d);
          }
        }
        const span = edges[edges.length - 1]! - edges[0]!;
        for (let c = 0; c < cells.count; c++) {
          assert.equal(cells.of(cells.start[c]!), c);
          assert.equal(cells.of(cells.start[c + 1]! - 1), c);
        }
        for (const t of fractions.map((f) => edges[0]! + Math.floor(f * span))) {
          let expected = 0;
          while (cells.start[expected + 1]! <= t) expected++;
          assert.equal(cells.of(t), expected, String(t));
        }
      },
    ),
    { numRuns: 300 },
  );
});
