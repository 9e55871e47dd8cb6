/** The stats statement's rows as `VisitStats` (src/store/postgres/visit-stats.ts): empty buckets as zeros, others as the rest. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StatsRow } from '../../../src/store/postgres/visit-statements.ts';
import { statsOf } from '../../../src/store/postgres/visit-stats.ts';

const row = (kind: StatsRow['kind'], value: string | null, n: number, u: number | null = null, b: number | null = null): StatsRow => ({
  kind,
  value,
  n: String(n),
  u: u === null ? null : String(u),
  b: b === null ? null : String(b),
});

test('no link row: the link is not live', () => {
  assert.equal(statsOf([row('total', null, 0, 0, 0)], 3, false), undefined);
});

test('every bucket in order with zeros, top lists with others as the rest, links only over every link', () => {
  const rows = [
    row('link', null, 20, 5),
    row('total', null, 12, 9, 2),
    row('bucket', '2', 4, 3),
    row('bucket', '0', 8, 6),
    row('referrer', null, 7),
    row('referrer', 'a.example', 3),
    row('browser', 'Chrome', 12),
    row('links', 'abc', 12),
  ];
  const one = statsOf(rows, 4, false);
  assert.deepEqual(one, {
    visitCount: 20,
    untracked: 5,
    visits: 12,
    uniqueVisitors: 9,
    bots: 2,
    series: [
      { visits: 8, uniqueVisitors: 6 },
      { visits: 0, uniqueVisitors: 0 },
      { visits: 4, uniqueVisitors: 3 },
      { visits: 0, uniqueVisitors: 0 },
    ],
    referrers: {
      top: [
        { value: null, visits: 7 },
        { value: 'a.example', visits: 3 },
      ],
      others: 2,
    },
    countries: { top: [], others: 12 },
    browsers: { top: [{ value: 'Chrome', visits: 12 }], others: 0 },
    os: { top: [], others: 12 },
    devices: { top: [], others: 12 },
  });
  assert.deepEqual(statsOf(rows, 4, true)?.links, [{ code: 'abc', visits: 12 }]);
});
