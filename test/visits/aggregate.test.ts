/**
 * The stats of a range over packed events (docs/analytics.md, stats): visits under the bot
 * filter, bots whatever the filter, a series of every bucket, the top lists (ties by value, null
 * first), unique visitors as distinct (UTC day, visitor id) pairs — a total that is not the sum of
 * its series — and the links top list. Checked by hand on small cases and against an obviously
 * correct reference over random events, runs and ranges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StatsAccumulator } from '../../src/visits/aggregate.ts';
import { firstAtOrAfter } from '../../src/visits/packed.ts';
import { TopLinks, topList } from '../../src/visits/top-lists.ts';
import type { BotFilter, StatsQuery, TopList, VisitEvent, VisitStats } from '../../src/visits/event.ts';
import { TOP_SIZE } from '../../src/visits/event.ts';
import { BROWSERS, DEVICES, packAttrs, STRIDE, SYSTEMS } from '../../src/visits/packed.ts';
import { parseStatsRange, RangeRefusal } from '../../src/visits/range.ts';

const REFERRERS: readonly (string | null)[] = [
  null,
  'a.example',
  'b.example',
  'c.example',
  'news.ycombinator.com',
  't.co',
  'x.example',
  'y.example',
  'z.example',
  'www.google.com',
  'duckduckgo.com',
  'bing.com',
  'lobste.rs',
];
const referrerName = (i: number): string | null => REFERRERS[i] ?? null;
const referrerIndex = (host: string | null): number => REFERRERS.indexOf(host);

/** The four words of each event, in the order given. */
function pack(events: readonly VisitEvent[]): Uint32Array {
  const data = new Uint32Array(events.length * STRIDE);
  events.forEach((e, i) => {
    data[i * STRIDE] = e.time;
    data[i * STRIDE + 1] = e.visitor ?? 0;
    data[i * STRIDE + 2] = referrerIndex(e.referrer);
    data[i * STRIDE + 3] = packAttrs(e);
  });
  return data;
}

const DAY = 86_400;
const T0 = Date.UTC(2026, 2, 28) / 1000; // 2026-03-28T00:00Z, the day before Berlin's spring change

function event(time: number, more: Partial<VisitEvent> = {}): VisitEvent {
  return { time, referrer: null, country: null, browser: null, os: null, device: null, bot: false, visitor: null, ...more };
}

function query(edges: number[], bots: BotFilter = 'exclude'): StatsQuery {
  return { from: edges[0]!, to: edges[edges.length - 1]!, bots, edges };
}

const days = (n: number, start = T0): number[] => Array.from({ length: n + 1 }, (_, i) => start + i * DAY);

function stats(q: StatsQuery, runs: readonly (readonly VisitEvent[])[], codes?: readonly string[], ordered = true): VisitStats {
  const acc = new StatsAccumulator(q, referrerName, codes !== undefined);
  runs.forEach((run, i) => {
    const data = pack(run);
    acc.add(data, 0, run.length, codes?.[i], ordered);
  });
  return acc.result(0, 0);
}

// ---- The reference: events as objects, counted the plain way ----------------------------------

function referenceTop(values: (string | null)[]): TopList {
  const counts = new Map<string | null, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts].sort(([a, x], [b, y]) => {
    if (x !== y) return y - x;
    if (a === null) return -1;
    if (b === null) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return {
    top: sorted.slice(0, TOP_SIZE).map(([value, visits]) => ({ value, visits })),
    others: sorted.slice(TOP_SIZE).reduce((sum, [, n]) => sum + n, 0),
  };
}

function uniques(events: readonly VisitEvent[]): number {
  const pairs = new Set<string>();
  let anonymous = 0;
  for (const e of events) {
    if (e.visitor === null) anonymous++;
    else pairs.add(`${Math.floor(e.time / DAY)}:${e.visitor}`);
  }
  return pairs.size + anonymous;
}

function reference(q: StatsQuery, runs: readonly (readonly VisitEvent[])[], codes?: readonly string[]): VisitStats {
  const inRange = runs.map((run) => run.filter((e) => e.time >= q.from && e.time < q.to));
  const all = inRange.flat();
  const counts = (e: VisitEvent) => q.bots === 'include' || (q.bots === 'only') === e.bot;
  const counted = all.filter(counts);
  const series = q.edges.slice(0, -1).map((start, b) => {
    const inBucket = counted.filter((e) => e.time >= start && e.time < q.edges[b + 1]!);
    return { visits: inBucket.length, uniqueVisitors: uniques(inBucket) };
  });
  const result: VisitStats = {
    visitCount: 0,
    untracked: 0,
    visits: counted.length,
    uniqueVisitors: uniques(counted),
    bots: all.filter((e) => e.bot).length,
    series,
    referrers: referenceTop(counted.map((e) => e.referrer)),
    countries: referenceTop(counted.map((e) => e.country)),
    browsers: referenceTop(counted.map((e) => e.browser)),
    os: referenceTop(counted.map((e) => e.os)),
    devices: referenceTop(counted.map((e) => e.device)),
  };
  if (codes === undefined) return result;
  const perCode = new Map<string, number>();
  inRange.forEach((run, i) => {
    const n = run.filter(counts).length;
    if (n > 0) perCode.set(codes[i]!, (perCode.get(codes[i]!) ?? 0) + n);
  });
  const links = [...perCode]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, TOP_SIZE)
    .map(([code, visits]) => ({ code, visits }));
  return { ...result, links };
}

// ---- By hand ---------------------------------------------------------------------------------

test('firstAtOrAfter cuts a time-ordered run by binary search', () => {
  const data = pack([10, 20, 20, 30, 40].map((t) => event(t)));
  assert.equal(firstAtOrAfter(data, 0, 5, 0), 0);
  assert.equal(firstAtOrAfter(data, 0, 5, 20), 1);
  assert.equal(firstAtOrAfter(data, 0, 5, 21), 3);
  assert.equal(firstAtOrAfter(data, 0, 5, 41), 5);
  assert.equal(firstAtOrAfter(data, 2, 4, 10), 2);
});

test('the range is [from, to): an event at to is out, one at from is in', () => {
  const q = query([T0, T0 + DAY]);
  const s = stats(q, [[event(T0 - 1), event(T0), event(T0 + DAY - 1), event(T0 + DAY)]]);
  assert.equal(s.visits, 2);
  assert.deepEqual(s.series, [{ visits: 2, uniqueVisitors: 2 }]);
  const unordered = stats(q, [[event(T0 + DAY), event(T0 + 5), event(T0 - 1), event(T0)]], undefined, false);
  assert.equal(unordered.visits, 2);
});

test('bots: exclude leaves them out, include counts them too, only counts them alone; the bot count is the same in all three', () => {
  const run = [event(T0 + 1, { bot: true }), event(T0 + 2), event(T0 + 3, { bot: true }), event(T0 + 4, { bot: true, visitor: 5 })];
  const expected: [BotFilter, number][] = [
    ['exclude', 1],
    ['include', 4],
    ['only', 3],
  ];
  for (const [bots, visits] of expected) {
    const s = stats(query(days(1), bots), [run]);
    assert.equal(s.visits, visits, bots);
    assert.equal(s.bots, 3, bots);
    assert.equal(s.series[0]!.visits, visits, bots);
  }
});

test('unique visitors: (UTC day, id) pairs; no id counts one each; the total is not the sum of the series', () => {
  const hours = Array.from({ length: 49 }, (_, i) => T0 + i * 3600);
  const q = query(hours);
  const run = [
    event(T0 + 10, { visitor: 7 }),
    event(T0 + 20, { visitor: 7 }), // same hour, same day: nothing new
    event(T0 + 3600 + 5, { visitor: 7 }), // next hour: new in that bucket, not in the range
    event(T0 + 3600 + 6, { visitor: -7 }),
    event(T0 + DAY + 5, { visitor: 7 }), // next UTC day: new everywhere
    event(T0 + DAY + 6), // no id: one each
    event(T0 + DAY + 7),
    event(T0 + DAY + 8, { visitor: 0 }),
    event(T0 + DAY + 9, { visitor: -1 }), // 0xffffffff is not 0
  ];
  const s = stats(q, [run]);
  assert.equal(s.visits, 9);
  assert.equal(s.uniqueVisitors, 7);
  assert.deepEqual(s.series[0], { visits: 2, uniqueVisitors: 1 });
  assert.deepEqual(s.series[1], { visits: 2, uniqueVisitors: 2 });
  assert.deepEqual(s.series[24], { visits: 5, uniqueVisitors: 5 });
  assert.equal(
    s.series.reduce((sum, b) => sum + b.uniqueVisitors, 0),
    8,
  );
  assert.deepEqual(s, reference(q, [run]));
});

test('a Berlin day bucket holds parts of two UTC days: one id on both sides of UTC midnight is two visitors, in one bucket', () => {
  const r = parseStatsRange({ from: '2026-03-28', to: '2026-03-30', interval: 'day', tz: 'Europe/Berlin' }, T0 + 10 * DAY);
  assert.ok(!(r instanceof RangeRefusal));
  // 2026-03-28 in Berlin is 23:00Z on the 27th to 23:00Z on the 28th.
  const run = [
    event(T0 - 1800, { visitor: 1 }),
    event(T0 + 1800, { visitor: 1 }),
    event(T0 + DAY - 3600 - 1, { visitor: 1 }),
    event(T0 + DAY - 1800, { visitor: 1 }),
  ];
  const s = stats(r, [run]);
  assert.deepEqual(s.series, [
    { visits: 3, uniqueVisitors: 2 },
    { visits: 1, uniqueVisitors: 1 },
  ]);
  assert.equal(s.uniqueVisitors, 2);
});

test('the same visitor on two links of the same day is one visitor', () => {
  const q = query(days(2));
  const s = stats(
    q,
    [[event(T0 + 5, { visitor: 3 })], [event(T0 + 6, { visitor: 3 }), event(T0 + DAY, { visitor: 3 })], [event(T0 + 7, { visitor: 4 })]],
    ['a', 'b', 'c'],
  );
  assert.equal(s.uniqueVisitors, 3);
  assert.deepEqual(s.series, [
    { visits: 3, uniqueVisitors: 2 },
    { visits: 1, uniqueVisitors: 1 },
  ]);
  assert.deepEqual(s.links, [
    { code: 'b', visits: 2 },
    { code: 'a', visits: 1 },
    { code: 'c', visits: 1 },
  ]);
});

test('top lists: the 10 largest, ties by value with null first, others the rest', () => {
  const counts = new Map<string | null, number>([['m', 5], [null, 5], ['b', 5], ['z', 9], ...Array.from({ length: 10 }, (_, i) => [`v${i}`, 1] as const)]);
  assert.deepEqual(topList(counts), {
    top: [
      { value: 'z', visits: 9 },
      { value: null, visits: 5 },
      { value: 'b', visits: 5 },
      { value: 'm', visits: 5 },
      ...Array.from({ length: 6 }, (_, i) => ({ value: `v${i}`, visits: 1 })),
    ],
    others: 4,
  });
  assert.deepEqual(topList(new Map()), { top: [], others: 0 });
});

test('every field of an event lands in its list: referrer, country, browser, os, device', () => {
  const run = [
    event(T0 + 1, { referrer: 't.co', country: 'DE', browser: 'Firefox', os: 'Linux', device: 'desktop' }),
    event(T0 + 2, { referrer: 't.co', country: 'NP', browser: 'Samsung Internet', os: 'Android', device: 'mobile' }),
    event(T0 + 3),
  ];
  const s = stats(query(days(1)), [run]);
  assert.deepEqual(s.referrers, {
    top: [
      { value: 't.co', visits: 2 },
      { value: null, visits: 1 },
    ],
    others: 0,
  });
  assert.deepEqual(s.countries.top, [
    { value: null, visits: 1 },
    { value: 'DE', visits: 1 },
    { value: 'NP', visits: 1 },
  ]);
  assert.deepEqual(s.browsers.top, [
    { value: null, visits: 1 },
    { value: 'Firefox', visits: 1 },
    { value: 'Samsung Internet', visits: 1 },
  ]);
  assert.deepEqual(s.os.top, [
    { value: null, visits: 1 },
    { value: 'Android', visits: 1 },
    { value: 'Linux', visits: 1 },
  ]);
  assert.deepEqual(s.devices.top, [
    { value: null, visits: 1 },
    { value: 'desktop', visits: 1 },
    { value: 'mobile', visits: 1 },
  ]);
});

test('links: the 10 with the most visits in the range, ties by code; a link in several runs is summed; none without codes', () => {
  const q = query(days(1));
  const runs = Array.from({ length: 13 }, (_, i) => Array.from({ length: i % 4 }, (_, j) => event(T0 + j)));
  const codes = runs.map((_, i) => `c${String(i).padStart(2, '0')}`);
  // c01 again, in a second run: 1 + 3 visits.
  runs.push([event(T0 - 1), event(T0 + 9), event(T0 + 10), event(T0 + 11)]);
  codes.push('c01');
  const s = stats(q, runs, codes);
  assert.deepEqual(s.links, [
    { code: 'c01', visits: 4 },
    { code: 'c03', visits: 3 },
    { code: 'c07', visits: 3 },
    { code: 'c11', visits: 3 },
    { code: 'c02', visits: 2 },
    { code: 'c06', visits: 2 },
    { code: 'c10', visits: 2 },
    { code: 'c05', visits: 1 },
    { code: 'c09', visits: 1 },
  ]);
  assert.equal(stats(q, runs).links, undefined);
  assert.deepEqual(new StatsAccumulator(q, referrerName, true).result(3, 1).links, []);
});

test('visit_count and untracked are passed through; an empty range has zeros in every bucket', () => {
  const s = new StatsAccumulator(query(days(3)), referrerName).result(12, 4);
  assert.deepEqual(s, {
    visitCount: 12,
    untracked: 4,
    visits: 0,
    uniqueVisitors: 0,
    bots: 0,
    series: [
      { visits: 0, uniqueVisitors: 0 },
      { visits: 0, uniqueVisitors: 0 },
      { visits: 0, uniqueVisitors: 0 },
    ],
    referrers: { top: [], others: 0 },
    countries: { top: [], others: 0 },
    browsers: { top: [], others: 0 },
    os: { top: [], others: 0 },
    devices: { top: [], others: 0 },
  });
});

test('a run added in slices counts as the whole run added at once', () => {
  const run = Array.from({ length: 500 }, (_, i) => event(T0 + i * 500, { visitor: i % 37, referrer: REFERRERS[i % 5]!, bot: i % 11 === 0 }));
  const data = pack(run);
  const q = query(days(3));
  const whole = new StatsAccumulator(q, referrerName, true);
  whole.add(data, 0, run.length, 'x');
  const sliced = new StatsAccumulator(q, referrerName, true);
  for (let at = 0; at < run.length; at += 64) sliced.add(data, at, Math.min(run.length, at + 64), 'x');
  assert.deepEqual(sliced.result(0, 0), whole.result(0, 0));
});

test('unique visitors counted a few days at a time come to what result counts at once', () => {
  const run = Array.from({ length: 3000 }, (_, i) => event(T0 + i * 240, { visitor: i % 97 === 0 ? null : (i * 7919) % 301 }));
  const data = pack(run);
  const r = parseStatsRange({ from: T0, to: T0 + 9 * DAY, interval: 'hour', tz: 'Asia/Kolkata' }, T0 + 9 * DAY);
  assert.ok(!(r instanceof RangeRefusal));
  const whole = new StatsAccumulator(r, referrerName);
  whole.add(data, 0, run.length);
  const sliced = new StatsAccumulator(r, referrerName);
  sliced.add(data, 0, run.length);
  let calls = 1;
  while (!sliced.settle(100)) calls++;
  assert.ok(calls >= 8, String(calls));
  assert.deepEqual(sliced.result(0, 0), whole.result(0, 0));
  assert.deepEqual(whole.result(0, 0), reference(r, [run]));
});

// ---- Against the reference -------------------------------------------------------------------

const arbitraryEvent = (start: number, span: number): fc.Arbitrary<VisitEvent> =>
  fc.record({
    time: fc.integer({ min: start, max: start + span }),
    referrer: fc.constantFrom(...REFERRERS),
    country: fc.constantFrom(null, 'DE', 'FR', 'US', 'NP', 'IN', 'AA', 'ZZ', 'JP', 'BR', 'GB', 'CA', 'AU', 'NL'),
    browser: fc.constantFrom(null, ...BROWSERS),
    os: fc.constantFrom(null, ...SYSTEMS),
    device: fc.constantFrom(null, ...DEVICES),
    bot: fc.boolean(),
    // Few ids, so the same visitor comes back; 0 and -1 are ids like any other.
    visitor: fc.option(fc.constantFrom(0, -1, 1, 2, 3, -2_000_000_000, 2_000_000_000), { nil: null }),
  });

test('property: the accumulator agrees with the reference over random runs, ranges, zones and bot filters', () => {
  const start = Date.UTC(2026, 2, 25) / 1000;
  const span = 40 * DAY;
  fc.assert(
    fc.property(
      fc.array(fc.array(arbitraryEvent(start - DAY, span + 2 * DAY), { maxLength: 60 }), { maxLength: 8 }),
      fc.integer({ min: 0, max: span }),
      fc.integer({ min: 1, max: span }),
      fc.constantFrom('hour', 'day', 'week', 'month'),
      fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kathmandu', 'Asia/Kolkata', 'America/New_York'),
      fc.constantFrom<BotFilter>('exclude', 'include', 'only'),
      fc.boolean(),
      fc.boolean(),
      (runs, offset, length, interval, tz, bots, ordered, withCodes) => {
        const from = start + offset;
        const r = parseStatsRange({ from, to: from + length, interval, tz, bots }, from + length);
        fc.pre(!(r instanceof RangeRefusal));
        if (r instanceof RangeRefusal) return;
        const sorted = ordered ? runs.map((run) => [...run].sort((a, b) => a.time - b.time)) : runs;
        // Codes repeat, so a link can come in several runs.
        const codes = withCodes ? runs.map((_, i) => `k${i % 3}`) : undefined;
        assert.deepEqual(stats(r, sorted, codes, ordered), reference(r, sorted, codes));
      },
    ),
    { numRuns: 300 },
  );
});

test('property: more than 10 values of a list, and thousands of visitors a day', () => {
  const q = query(days(2));
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          at: fc.integer({ min: 0, max: 2 * DAY - 1 }),
          visitor: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { nil: null }),
          referrer: fc.integer({ min: 0, max: REFERRERS.length - 1 }),
        }),
        { minLength: 1, maxLength: 3000 },
      ),
      (rows) => {
        const run = rows.map((row) => event(T0 + row.at, { visitor: row.visitor, referrer: REFERRERS[row.referrer]! })).sort((a, b) => a.time - b.time);
        assert.deepEqual(stats(q, [run]), reference(q, [run]));
      },
    ),
    { numRuns: 40 },
  );
});

test('property: days of tens of thousands of ids, in hours and in zones whose days straddle two UTC days', () => {
  // Enough ids a day that a cell's ids fill chunk after chunk, and days of several cells (hours;
  // Berlin's spring-change day of 23 hours; Kolkata's days cut at 18:30Z), every bots filter.
  const start = T0 - DAY / 2;
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40_000 }),
      fc.integer({ min: 1, max: 60_000 }),
      fc.integer(),
      fc.constantFrom('hour', 'day'),
      fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata'),
      fc.constantFrom<BotFilter>('exclude', 'include', 'only'),
      (count, pool, seed, interval, tz, bots) => {
        const r = parseStatsRange({ from: start, to: start + 2 * DAY, interval, tz, bots }, start + 2 * DAY);
        assert.ok(!(r instanceof RangeRefusal));
        let x = seed | 1;
        const next = (): number => {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          return x >>> 0;
        };
        const run = Array.from({ length: count }, () => {
          const r = next();
          return event(start - 3600 + (r % (2 * DAY + 7200)), {
            visitor: r % 13 === 0 ? null : ((next() % pool) - (pool >> 1)) | 0,
            bot: r % 7 === 0,
            referrer: REFERRERS[next() % REFERRERS.length]!,
          });
        }).sort((a, b) => a.time - b.time);
        assert.deepEqual(stats(r, [run]), reference(r, [run]));
      },
    ),
    { numRuns: 12 },
  );
});

test('a cell of more ids than its largest chunk holds: every chunk is counted', () => {
  // 200,000 events in one hour, ids from a pool of 150,000: chunks of 16, 256, 4,096, then 65,536 ids.
  const q = query([T0, T0 + 3600]);
  const run = Array.from({ length: 200_000 }, (_, i) => event(T0 + Math.floor(i / 60), { visitor: (i * 7919) % 150_000 }));
  const s = stats(q, [run]);
  assert.equal(s.visits, 200_000);
  assert.equal(s.uniqueVisitors, 150_000);
  assert.deepEqual(s.series, [{ visits: 200_000, uniqueVisitors: 150_000 }]);
});

test('property: the links top 10 taken one link at a time is the sorted list cut at 10', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), fc.integer({ min: 1, max: 6 })), { selector: ([code]) => code, maxLength: 40 }),
      (links) => {
        const top = new TopLinks();
        for (const [code, visits] of links) if (top.admits(visits)) top.add(code, visits);
        const expected = [...links]
          .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
          .slice(0, TOP_SIZE)
          .map(([code, visits]) => ({ code, visits }));
        assert.deepEqual(top.list(), expected);
      },
    ),
  );
});
