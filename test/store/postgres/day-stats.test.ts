/**
 * The plan and the merge of one link's stats from day summaries (src/store/postgres/day-stats.ts),
 * without a database: which parts of a range are read raw, the figures of whole, prefix and suffix
 * cuts of a day, and ties of the top lists in code-point order (the raw statement's `COLLATE "C"`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { byCodePoints, DAY, mergeDayStats, planDays, SLOTS } from '../../../src/store/postgres/day-stats.ts';
import { anyChar } from '../../support/any-char.ts';

const D = 20_000; // a day number
const at = (day: number, hours = 0): number => day * DAY + hours * 3600;

test('code-point order is the order of UTF-8 bytes, null first', () => {
  fc.assert(
    fc.property(fc.option(fc.string({ unit: anyChar })), fc.option(fc.string({ unit: anyChar })), (a, b) => {
      const want = a === b ? 0 : a === null ? -1 : b === null ? 1 : Buffer.compare(Buffer.from(a), Buffer.from(b));
      assert.equal(Math.sign(byCodePoints(a, b)), want);
    }),
  );
  assert.ok(byCodePoints('\u{1f600}', '\uffff') > 0, 'past FFFF sorts after FFFF, as in UTF-8');
});

test('whole days in range come from summaries; the range’s partial days and unsummarised days are raw; inner cuts are raw pieces', () => {
  // Buckets of 23 h, 25 h, then 12 h + 12 h (Berlin-like edges), range starting mid-day.
  const edges = [at(D - 1, 23), at(D, 22), at(D + 1, 23), at(D + 2, 11), at(D + 3, 0), at(D + 4, 5)];
  const plan = planDays(edges, (day) => day !== D + 1);
  assert.deepEqual([plan.firstDay, plan.endDay], [D, D + 4]);
  assert.deepEqual(plan.days, [D, D + 2, D + 3]);
  assert.deepEqual(plan.whole, [
    { from: at(D - 1, 23), to: at(D) },
    { from: at(D + 1), to: at(D + 2) },
    { from: at(D + 4), to: at(D + 4, 5) },
  ]);
  // Day D+4 is partly in range: raw; D, D+2, D+3 are cut at whole quarter hours from an end: no pieces.
  assert.deepEqual(planDays(edges, () => true).whole, [
    { from: at(D - 1, 23), to: at(D) },
    { from: at(D + 4), to: at(D + 4, 5) },
  ]);
  // Hour buckets lie inside their day: pieces, but the first and the last hour are a prefix and a suffix.
  const hours = Array.from({ length: 25 }, (_, i) => at(D, i));
  const inner = planDays(hours, () => true);
  assert.deepEqual(inner.days, [D]);
  assert.equal(inner.pieces.length, 22);
  assert.deepEqual(inner.pieces[0], { from: at(D, 1), to: at(D, 2) });
  // A cut off the quarter hours is raw.
  assert.deepEqual(planDays([at(D), at(D, 5) + 60, at(D + 1)], () => true).pieces, [
    { from: at(D), to: at(D, 5) + 60 },
    { from: at(D, 5) + 60, to: at(D + 1) },
  ]);
});

test('a prefix counts the visitors first seen before it, a suffix those last seen in it', () => {
  const slots = new Array<number>(8 * SLOTS).fill(0);
  // One visitor (people) with events in slots 10 and 80: a visit in each, first 10, last 80.
  slots[10] = 1;
  slots[80] = 1;
  slots[2 * SLOTS + 10] = 1;
  slots[3 * SLOTS + 80] = 1;
  slots[6 * SLOTS + 10] = 1;
  slots[7 * SLOTS + 80] = 1;
  const edges = [at(D - 1, 12), at(D, 12), at(D + 1)];
  const plan = planDays(edges, (day) => day === D);
  const stats = mergeDayStats({
    edges,
    bots: 'exclude',
    link: { visitCount: 3, untracked: 1 },
    plan,
    slots: new Map([[D, slots]]),
    values: [{ dim: 0, value: 'a.example', people: 2, bots: 5 }],
    raw: [{ kind: 'total', value: null, n: '0', u: '0', b: '0' }],
  });
  assert.deepEqual(stats.series, [
    { visits: 1, uniqueVisitors: 1 },
    { visits: 1, uniqueVisitors: 1 },
  ]);
  assert.equal(stats.visits, 2);
  assert.equal(stats.uniqueVisitors, 1, 'one visitor of the day, though in both buckets');
  assert.deepEqual(stats.referrers, { top: [{ value: 'a.example', visits: 2 }], others: 0 });
});
