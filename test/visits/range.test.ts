/**
 * The range of a stats question (docs/analytics.md, ranges and buckets): `from`/`to` in Unix
 * seconds or ISO 8601 (read in `tz` without an offset), rounded out to bucket edges of the wall
 * clock of `tz` — DST days of 23 and 25 hours, zones 30 and 45 minutes off the hour, weeks from
 * Monday, calendar months — at most 1,000 buckets, and every bad parameter named. The wall clocks
 * the properties check against come from `Intl.DateTimeFormat.formatToParts`, not from the code
 * under test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type Interval,
  INTERVALS,
  MAX_BUCKETS,
  MAX_TIME,
  parseEventFilter,
  parseStatsRange,
  type RangeParams,
  RangeRefusal,
  type StatsRange,
} from '../../src/visits/range.ts';

/** 2026-06-01T12:00:00Z. */
const NOW = Date.UTC(2026, 5, 1, 12) / 1000;
const at = (iso: string): number => Date.parse(iso) / 1000;

function range(params: RangeParams, now = NOW): StatsRange {
  const r = parseStatsRange(params, now);
  if (r instanceof RangeRefusal) assert.fail(`refused: ${r.parameter}: ${r.detail}`);
  return r;
}

function refusal(params: RangeParams): RangeRefusal {
  const r = parseStatsRange(params, NOW);
  assert.ok(r instanceof RangeRefusal, `accepted ${JSON.stringify(params)}`);
  return r;
}

const lengths = (r: StatsRange): number[] => r.edges.slice(1).map((e, i) => e - r.edges[i]!);

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** The wall clock of `t` in `tz`, by `formatToParts`. */
function wallOf(tz: string, t: number): Wall {
  let format = formats.get(tz);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: tz,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(tz, format);
  }
  const parts = Object.fromEntries(format.formatToParts(t * 1000).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday!,
  };
}

/** The bucket a wall time belongs to, as a string: equal within a bucket. */
function periodKey(interval: Interval, w: Wall): string {
  if (interval === 'hour') return `${w.year}-${w.month}-${w.day} ${w.hour}`;
  if (interval === 'day') return `${w.year}-${w.month}-${w.day}`;
  if (interval === 'month') return `${w.year}-${w.month}`;
  // The Monday the week began on.
  const back = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(w.weekday);
  const monday = new Date(Date.UTC(w.year, w.month - 1, w.day - back));
  return monday.toISOString().slice(0, 10);
}

test('Berlin, 2026-03-29: the day the clocks go forward has 23 hour buckets, one of them from 01:00 to 03:00 local', () => {
  const r = range({ from: '2026-03-29', to: '2026-03-30', interval: 'hour', tz: 'Europe/Berlin' });
  assert.equal(r.from, at('2026-03-28T23:00:00Z'));
  assert.equal(r.to, at('2026-03-29T22:00:00Z'));
  assert.equal(r.edges.length - 1, 23);
  assert.deepEqual(new Set(lengths(r)), new Set([3600]));
  // 01:00 CET is followed by 03:00 CEST.
  assert.equal(r.edges[1], at('2026-03-29T00:00:00Z'));
  assert.equal(r.edges[2], at('2026-03-29T01:00:00Z'));
  assert.equal(wallOf('Europe/Berlin', r.edges[2]!).hour, 3);
  const day = range({ from: '2026-03-29', to: '2026-03-30', interval: 'day', tz: 'Europe/Berlin' });
  assert.deepEqual(day.edges, [at('2026-03-28T23:00:00Z'), at('2026-03-29T22:00:00Z')]);
});

test('Berlin, 2026-10-25: the day the clocks go back has 25 hour buckets, 02:00 twice', () => {
  const r = range({ from: '2026-10-25', to: '2026-10-26', interval: 'hour', tz: 'Europe/Berlin' });
  assert.equal(r.edges.length - 1, 25);
  assert.equal(r.to - r.from, 25 * 3600);
  assert.equal(r.edges[2], at('2026-10-25T00:00:00Z'));
  assert.equal(r.edges[3], at('2026-10-25T01:00:00Z'));
  assert.equal(wallOf('Europe/Berlin', r.edges[2]!).hour, 2);
  assert.equal(wallOf('Europe/Berlin', r.edges[3]!).hour, 2);
  const day = range({ from: '2026-10-25', to: '2026-10-26', interval: 'day', tz: 'Europe/Berlin' });
  assert.deepEqual(lengths(day), [25 * 3600]);
  // An instant in the second 02:00 hour rounds down to that second start, not the first.
  const inside = range({ from: at('2026-10-25T01:30:00Z'), to: at('2026-10-25T01:40:00Z'), tz: 'Europe/Berlin' });
  assert.equal(inside.interval, 'hour');
  assert.deepEqual(inside.edges, [at('2026-10-25T01:00:00Z'), at('2026-10-25T02:00:00Z')]);
});

test('a Berlin month holding a DST change is its calendar month: 31 days less one hour', () => {
  const r = range({ from: '2026-03-01', to: '2026-04-01', interval: 'month', tz: 'Europe/Berlin' });
  assert.deepEqual(r.edges, [at('2026-02-28T23:00:00Z'), at('2026-03-31T22:00:00Z')]);
  const days = range({ from: '2026-03-01', to: '2026-04-01', interval: 'day', tz: 'Europe/Berlin' });
  assert.equal(days.edges.length - 1, 31);
  assert.equal(lengths(days).filter((l) => l === 23 * 3600).length, 1);
});

test('Asia/Kolkata (+05:30) and Asia/Kathmandu (+05:45): hours and days start off the UTC hour', () => {
  const kolkata = range({ from: '2026-01-10T10:10:00Z', to: '2026-01-10T12:00:00Z', interval: 'hour', tz: 'Asia/Kolkata' });
  assert.deepEqual(kolkata.edges, [at('2026-01-10T09:30:00Z'), at('2026-01-10T10:30:00Z'), at('2026-01-10T11:30:00Z'), at('2026-01-10T12:30:00Z')]);
  const kathmandu = range({ from: '2026-01-10T10:10:00Z', to: '2026-01-10T11:00:00Z', interval: 'hour', tz: 'Asia/Kathmandu' });
  // 10:10Z is 15:55 there, 11:00Z is 16:45: the buckets of 15:00 and 16:00 local.
  assert.deepEqual(kathmandu.edges, [at('2026-01-10T09:15:00Z'), at('2026-01-10T10:15:00Z'), at('2026-01-10T11:15:00Z')]);
  const days = range({ from: '2026-01-10', to: '2026-01-12', interval: 'day', tz: 'Asia/Kathmandu' });
  assert.deepEqual(days.edges, [at('2026-01-09T18:15:00Z'), at('2026-01-10T18:15:00Z'), at('2026-01-11T18:15:00Z')]);
  const months = range({ from: '2026-02-15', to: '2026-03-02', interval: 'month', tz: 'Asia/Kolkata' });
  assert.deepEqual(months.edges, [at('2026-01-31T18:30:00Z'), at('2026-02-28T18:30:00Z'), at('2026-03-31T18:30:00Z')]);
});

test('a bucket whose wall-clock start is skipped begins when the clock jumps: Chatham at 02:45, Santiago at midnight', () => {
  // Pacific/Chatham, 2026-09-27: 02:45 (+12:45) becomes 03:45 (+13:45); the hour of 03 begins at the jump.
  const chatham = range({ from: '2026-09-27T01:00', to: '2026-09-27T05:00', interval: 'hour', tz: 'Pacific/Chatham' });
  assert.deepEqual(chatham.edges, [
    at('2026-09-26T12:15:00Z'),
    at('2026-09-26T13:15:00Z'),
    at('2026-09-26T14:00:00Z'),
    at('2026-09-26T14:15:00Z'),
    at('2026-09-26T15:15:00Z'),
  ]);
  // America/Santiago, 2026-09-06: midnight (-04) becomes 01:00 (-03); that day is 23 hours from 01:00.
  const santiago = range({ from: '2026-09-05', to: '2026-09-08', interval: 'day', tz: 'America/Santiago' });
  assert.deepEqual(santiago.edges, [at('2026-09-05T04:00:00Z'), at('2026-09-06T04:00:00Z'), at('2026-09-07T03:00:00Z'), at('2026-09-08T03:00:00Z')]);
});

test('weeks start on Monday, in the zone', () => {
  // 2026-01-01 is a Thursday; the week began on Monday 2025-12-29.
  const r = range({ from: '2026-01-01', to: '2026-01-13', interval: 'week' });
  assert.deepEqual(r.edges, [at('2025-12-29T00:00:00Z'), at('2026-01-05T00:00:00Z'), at('2026-01-12T00:00:00Z'), at('2026-01-19T00:00:00Z')]);
  const tokyo = range({ from: '2026-01-04T16:00:00Z', to: '2026-01-04T17:00:00Z', interval: 'week', tz: 'Asia/Tokyo' });
  // 16:00 UTC on Sunday is 01:00 Monday in Tokyo: the week starts at that Monday's midnight.
  assert.deepEqual(tokyo.edges, [at('2026-01-04T15:00:00Z'), at('2026-01-11T15:00:00Z')]);
});

test('month edges are the first of each calendar month, leap February included', () => {
  const r = range({ from: '2024-01-31T23:59:59Z', to: '2024-04-01T00:00:00Z', interval: 'month' });
  assert.deepEqual(r.edges, [at('2024-01-01T00:00:00Z'), at('2024-02-01T00:00:00Z'), at('2024-03-01T00:00:00Z'), at('2024-04-01T00:00:00Z')]);
  const year = range({ from: '2025-12-01', to: '2027-01-01', interval: 'month', tz: 'America/New_York' });
  assert.equal(year.edges.length - 1, 13);
  for (const e of year.edges) assert.deepEqual([wallOf('America/New_York', e).day, wallOf('America/New_York', e).hour], [1, 0]);
});

test('from is rounded down and to up; a to already on an edge stays', () => {
  const r = range({ from: at('2026-05-01T10:20:30Z'), to: at('2026-05-01T12:00:00Z'), interval: 'hour' });
  assert.deepEqual(r.edges, [at('2026-05-01T10:00:00Z'), at('2026-05-01T11:00:00Z'), at('2026-05-01T12:00:00Z')]);
  const up = range({ from: String(at('2026-05-01T10:00:00Z')), to: String(at('2026-05-01T12:00:01Z')), interval: 'hour' });
  assert.equal(up.to, at('2026-05-01T13:00:00Z'));
  assert.equal(up.from, at('2026-05-01T10:00:00Z'));
});

test('defaults: to is now, from 30 days earlier, bots exclude, tz UTC, and the interval follows the span', () => {
  const r = range({});
  assert.deepEqual([r.bots, r.tz, r.interval], ['exclude', 'UTC', 'day']);
  assert.equal(r.from, at('2026-05-02T00:00:00Z'));
  assert.equal(r.to, at('2026-06-02T00:00:00Z'));
  assert.equal(r.edges.length - 1, 31);
  const cases: [number, Interval][] = [
    [3600, 'hour'],
    [2 * 86400, 'hour'],
    [2 * 86400 + 1, 'day'],
    [92 * 86400, 'day'],
    [92 * 86400 + 1, 'month'],
  ];
  for (const [span, interval] of cases) assert.equal(range({ from: NOW - span, to: NOW }).interval, interval, String(span));
  // Only from: to is now. Only to: from is 30 days before it.
  assert.equal(range({ from: NOW - 3600 }).interval, 'hour');
  assert.equal(range({ to: '2026-01-31' }).from, at('2026-01-01T00:00:00Z'));
  for (const bots of ['exclude', 'include', 'only']) assert.equal(range({ bots }).bots, bots);
});

test('ISO 8601 with and without an offset, dates alone, and Unix seconds', () => {
  const cases: [string | number, string, number][] = [
    ['2026-03-29T02:30:00Z', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29t02:30:00z', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29T02:30:00.999Z', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29 02:30', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29T04:30:00+02:00', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29T04:30:00+0200', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29T00:30-02', 'UTC', at('2026-03-29T02:30:00Z')],
    ['2026-03-29T08:15:00+05:45', 'Europe/Berlin', at('2026-03-29T02:30:00Z')],
    // No offset: the wall clock of tz.
    ['2026-01-10T12:00', 'Europe/Berlin', at('2026-01-10T11:00:00Z')],
    ['2026-07-10T12:00:00', 'Europe/Berlin', at('2026-07-10T10:00:00Z')],
    ['2026-01-10T12:00', 'Asia/Kathmandu', at('2026-01-10T06:15:00Z')],
    ['2026-01-10', 'Asia/Kolkata', at('2026-01-09T18:30:00Z')],
    // In the spring gap, the time as if the clock had not jumped (03:30 CEST); in the autumn overlap, the earlier.
    ['2026-03-29T02:30', 'Europe/Berlin', at('2026-03-29T01:30:00Z')],
    ['2026-10-25T02:30', 'Europe/Berlin', at('2026-10-25T00:30:00Z')],
    [String(at('2026-03-29T02:30:00Z')), 'Asia/Tokyo', at('2026-03-29T02:30:00Z')],
    [at('2026-03-29T02:30:00Z'), 'Asia/Tokyo', at('2026-03-29T02:30:00Z')],
  ];
  for (const [from, tz, expected] of cases) {
    const filter = parseEventFilter({ from, tz });
    assert.ok(!(filter instanceof RangeRefusal), `${from} in ${tz}: ${filter instanceof RangeRefusal ? filter.detail : ''}`);
    assert.equal(filter.from, expected, `${from} in ${tz}`);
  }
  // The same parse feeds the stats range, before rounding.
  assert.equal(range({ from: '2026-01-10T12:30', to: '2026-01-10T13:30', tz: 'Europe/Berlin', interval: 'hour' }).from, at('2026-01-10T11:00:00Z'));
});

test('a visit list filter is neither rounded nor defaulted to 30 days', () => {
  assert.deepEqual(parseEventFilter({}), { from: 0, to: MAX_TIME + 1, bots: 'exclude' });
  assert.deepEqual(parseEventFilter({ from: '100', to: 200, bots: 'only' }), { from: 100, to: 200, bots: 'only' });
  const bad = parseEventFilter({ from: 200, to: 100 });
  assert.ok(bad instanceof RangeRefusal && bad.parameter === 'from');
  for (const [params, parameter] of [
    [{ bots: 'all' }, 'bots'],
    [{ tz: 'Mars/Olympus' }, 'tz'],
    [{ from: 'yesterday' }, 'from'],
    [{ to: 'tomorrow' }, 'to'],
  ] as const) {
    const r = parseEventFilter(params);
    assert.ok(r instanceof RangeRefusal && r.parameter === parameter, JSON.stringify(params));
  }
});

test('every bad parameter is refused with its name in the detail', () => {
  const cases: [RangeParams, keyof RangeParams][] = [
    [{ from: 'yesterday' }, 'from'],
    [{ from: '' }, 'from'],
    [{ from: '-5' }, 'from'],
    [{ from: '1.5' }, 'from'],
    [{ from: 1.5 }, 'from'],
    [{ from: -1 }, 'from'],
    [{ from: true }, 'from'],
    [{ from: '2026-02-30' }, 'from'],
    [{ from: '2026-13-01' }, 'from'],
    [{ from: '2026-01-01T24:00' }, 'from'],
    [{ from: '2026-01-01T12:60' }, 'from'],
    [{ from: '2026-01-01T12:00:60Z' }, 'from'],
    [{ from: '2026-01-01T12:00+24:00' }, 'from'],
    [{ from: '2026-01-01T12:00+02:60' }, 'from'],
    [{ from: '0075-01-01' }, 'from'],
    [{ from: '1969-12-31' }, 'from'],
    [{ from: '2026-1-1' }, 'from'],
    [{ from: '2026-01-01T12' }, 'from'],
    [{ to: '99999999999' }, 'to'],
    [{ to: String(MAX_TIME + 1) }, 'to'],
    [{ to: '2200-01-01' }, 'to'],
    [{ to: 'now' }, 'to'],
    [{ from: 200, to: 100 }, 'from'],
    [{ from: 100, to: 100 }, 'from'],
    [{ from: NOW + 1 }, 'from'],
    [{ interval: 'minute' }, 'interval'],
    [{ interval: 'Day' }, 'interval'],
    [{ interval: 1 }, 'interval'],
    [{ tz: 'Mars/Olympus' }, 'tz'],
    [{ tz: '+01:00' }, 'tz'],
    [{ tz: '' }, 'tz'],
    [{ tz: 3 }, 'tz'],
    [{ tz: 'Europe/Berlin\u0000' }, 'tz'],
    [{ bots: 'all' }, 'bots'],
    [{ bots: '' }, 'bots'],
    [{ bots: false }, 'bots'],
    // Too many buckets.
    [{ from: NOW - 1001 * 3600, to: NOW, interval: 'hour' }, 'interval'],
    [{ from: '1990-01-01', to: '2100-01-01', interval: 'week' }, 'interval'],
  ];
  for (const [params, parameter] of cases) {
    const r = refusal(params);
    assert.equal(r.parameter, parameter, JSON.stringify(params));
    assert.match(r.detail, new RegExp(`\\b${parameter}\\b`), JSON.stringify(params));
  }
});

test('1,000 buckets are allowed, 1,001 are not', () => {
  const from = at('2026-01-01T00:00:00Z');
  assert.equal(range({ from, to: from + MAX_BUCKETS * 3600, interval: 'hour' }).edges.length, MAX_BUCKETS + 1);
  assert.equal(refusal({ from, to: from + MAX_BUCKETS * 3600 + 1, interval: 'hour' }).parameter, 'interval');
  assert.equal(range({ from: '1990-01-01', to: '2073-05-01', interval: 'month' }).edges.length, MAX_BUCKETS + 1);
  assert.equal(refusal({ from: '1990-01-01', to: '2073-05-02', interval: 'month' }).parameter, 'interval');
});

test('tz is echoed as given', () => {
  assert.equal(range({ tz: 'Asia/Kolkata' }).tz, 'Asia/Kolkata');
  assert.equal(range({ tz: 'UTC' }).tz, 'UTC');
});

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Sydney',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'America/Santiago', // its clocks change at midnight: some days start at 01:00
  'Pacific/Chatham', // +12:45 / +13:45
];

test('property: edges increase, cover the range, and each is where the wall clock of tz enters a new bucket', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES),
      fc.constantFrom(...INTERVALS),
      fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
      fc.integer({ min: 1, max: 400 }),
      fc.integer({ min: 0, max: 3599 }),
      (tz, interval, from, units, extra) => {
        const unit = { hour: 3600, day: 86400, week: 7 * 86400, month: 28 * 86400 }[interval];
        const to = from + Math.min(units * unit, 900 * unit) + extra;
        const r = range({ from, to, interval, tz });
        assert.ok(r.from <= from && r.to >= to);
        assert.equal(r.edges[0], r.from);
        assert.equal(r.edges[r.edges.length - 1], r.to);
        for (let i = 0; i + 1 < r.edges.length; i++) {
          const start = r.edges[i]!;
          const end = r.edges[i + 1]!;
          assert.ok(start < end);
          const wall = wallOf(tz, start);
          const key = periodKey(interval, wall);
          // Entering a new bucket: the period changed, or (the autumn hour that repeats) the clock reads :00:00 again.
          const before = periodKey(interval, wallOf(tz, start - 1));
          assert.ok(before !== key || (interval === 'hour' && wall.minute === 0 && wall.second === 0), `${tz} ${interval} ${start}`);
          if (interval === 'week') assert.equal(wall.weekday, 'Mon');
          if (interval === 'month') assert.equal(wall.day, 1);
          if (interval !== 'hour') assert.ok(wall.hour <= 1 && wall.minute === 0 && wall.second === 0, `${tz} ${start}`);
          else assert.ok(wall.second === 0 && (wall.minute === 0 || wall.minute === 45 || wall.minute === 15), `${tz} ${start}`);
          // Inside the bucket, the wall clock stays in it.
          assert.equal(periodKey(interval, wallOf(tz, end - 1)), key, `${tz} ${interval} ${start}..${end}`);
          assert.equal(periodKey(interval, wallOf(tz, start + Math.floor((end - start) / 2))), key);
        }
        // The first bucket holds from, the last holds to - 1.
        assert.ok(r.edges[1]! > from && r.edges[r.edges.length - 2]! < to);
      },
    ),
    { numRuns: 400 },
  );
});

test('Chatham’s autumn change at 03:45 (back to 02:45) starts an hour bucket where it happens, not on a whole hour', () => {
  // 2027-04-04: 03:45 +13:45 is followed by 02:45 +12:45 (14:00 UTC).
  const change = at('2027-04-03T14:00:00Z');
  const r = range({ from: change - 2 * 3600, to: change + 2 * 3600, interval: 'hour', tz: 'Pacific/Chatham' });
  const walls = r.edges.map((e) => {
    const w = wallOf('Pacific/Chatham', e);
    return `${w.hour}:${String(w.minute).padStart(2, '0')}`;
  });
  assert.ok(r.edges.includes(change), 'an edge at the change itself');
  assert.deepEqual(walls.slice(walls.indexOf('3:00'), walls.indexOf('3:00') + 4), ['3:00', '2:45', '3:00', '4:00']);
});
