/** The months of the `visits` table (src/store/postgres/partitions.ts): names, ranges and the months kept ahead, in UTC. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addMonths, monthOf, monthOfPartition, monthRange, monthsAhead, partitionName } from '../../../src/store/postgres/partitions.ts';

const utc = (y: number, m: number, d = 1, h = 0): number => Date.UTC(y, m - 1, d, h) / 1000;

test('a month is [its first second, the next month’s first second) in UTC, at every month and year end', () => {
  assert.deepEqual(monthRange({ year: 2026, month: 2 }), { from: utc(2026, 2), to: utc(2026, 3) });
  assert.deepEqual(monthRange({ year: 2026, month: 12 }), { from: utc(2026, 12), to: utc(2027, 1) });
  assert.deepEqual(monthOf(utc(2026, 3) - 1), { year: 2026, month: 2 });
  assert.deepEqual(monthOf(utc(2026, 3)), { year: 2026, month: 3 });
  assert.deepEqual(addMonths({ year: 2026, month: 11 }, 3), { year: 2027, month: 2 });
  assert.deepEqual(addMonths({ year: 2026, month: 1 }, -1), { year: 2025, month: 12 });
});

test('partition names sort by month and read back; other tables are no month', () => {
  const months = [
    { year: 2026, month: 9 },
    { year: 2026, month: 10 },
    { year: 999, month: 1 },
  ];
  for (const m of months) assert.deepEqual(monthOfPartition(partitionName(m)), m);
  assert.equal(partitionName({ year: 2026, month: 9 }), 'visits_y2026m09');
  assert.ok(partitionName({ year: 2026, month: 9 }) < partitionName({ year: 2026, month: 10 }));
  for (const name of ['visits_default', 'visits', 'visits_y2026m9', 'links']) assert.equal(monthOfPartition(name), undefined, name);
});

test('the months due: this one and three ahead', () => {
  assert.deepEqual(monthsAhead(utc(2026, 11, 30, 23)).map(partitionName), ['visits_y2026m11', 'visits_y2026m12', 'visits_y2027m01', 'visits_y2027m02']);
});
