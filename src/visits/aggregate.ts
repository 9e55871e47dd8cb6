/**
 * The stats of a range (docs/analytics.md, stats), counted over events in their packed form
 * (packed.ts): what a store answers to a `StatsQuery` when it keeps its events in memory.
 *
 * Ten million events must be counted in about 200 ms on a small machine, and a caller counts them
 * in slices, yielding to the event loop between, so all state lives in the accumulator and the
 * per-event loop allocates nothing: counts are typed arrays indexed by number (a referrer's index,
 * a country's number, a family's index), and unique visitors are staged and settled in batches
 * (unique-visitors.ts).
 */
import type { BotFilter, StatsQuery, TopList, VisitStats } from './event.ts';
import { TOP_SIZE } from './event.ts';
import {
  ATTRS,
  BOT,
  BROWSER_SHIFT,
  BROWSERS,
  COUNTRY_BITS,
  COUNTRY_CODES,
  countryOf,
  DEVICE_SHIFT,
  DEVICES,
  FAMILY_BITS,
  HAS_VISITOR,
  OS_SHIFT,
  REFERRER,
  STRIDE,
  SYSTEMS,
  TIME,
  VISITOR,
} from './packed.ts';
import { UniqueVisitors } from './unique-visitors.ts';


/** The first event of `data[start, end)` (event indices) whose time is at least `time`, or `end`. */
export function firstAtOrAfter(data: Uint32Array, start: number, end: number, time: number): number {
  let lo = start;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (data[mid * STRIDE + TIME]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The events of a time-ordered run `data[start, end)` with `from <= time < to`, as `[first, end)`. */
export function eventsBetween(data: Uint32Array, start: number, end: number, from: number, to: number): [number, number] {
  const first = firstAtOrAfter(data, start, end, from);
  return [first, firstAtOrAfter(data, first, end, to)];
}

/** The filter as a pair of masks: an event counts when `(attrs & BOT) === want` (or always when `any`). */
function botRule(bots: BotFilter): { any: boolean; want: number } {
  return { any: bots === 'include', want: bots === 'only' ? BOT : 0 };
}

/**
 * Counts events into the stats of one `StatsQuery`. `add` takes runs of events (one link's, or a
 * slice of them); `result` gives the `VisitStats` once every run is in.
 */
export class StatsAccumulator {
  private readonly edges: Float64Array;
  private readonly from: number;
  private readonly to: number;
  private readonly any: boolean;
  private readonly want: number;
  private readonly bucketVisits: Float64Array;
  private readonly visitors: UniqueVisitors;
  private referrers: Float64Array = new Float64Array(256);
  private readonly countries = new Float64Array(COUNTRY_CODES);
  private readonly browsers = new Float64Array(FAMILY_BITS + 1);
  private readonly systems = new Float64Array(FAMILY_BITS + 1);
  private readonly devices = new Float64Array(FAMILY_BITS + 1);
  private bots = 0;
  private readonly links = new Map<string, number>();

  /**
   * `referrerName` names a referrer index (0 is none); with `links` (stats over every link) the
   * answer has the `links` top list, counted from the codes `add` is given.
   */
  constructor(
    query: StatsQuery,
    private readonly referrerName: (index: number) => string | null,
    private readonly withLinks = false,
  ) {
    this.edges = Float64Array.from(query.edges);
    this.from = query.from;
    this.to = query.to;
    ({ any: this.any, want: this.want } = botRule(query.bots));
    this.bucketVisits = new Float64Array(Math.max(0, query.edges.length - 1));
    this.visitors = new UniqueVisitors(query.edges);
  }

  /**
   * Counts the events `data[start, end)` (event indices, not words) that fall in the range. A run in
   * time order (a link's events as stored) is cut to the range by binary search and walks the
   * buckets in step; pass `ordered = false` for events in any order. With `code`, the run's visits
   * count for that link in `links` (a link may come in several runs).
   */
  add(data: Uint32Array, start: number, end: number, code?: string, ordered = true): void {
    let first = start;
    let last = end;
    if (ordered) [first, last] = eventsBetween(data, start, end, this.from, this.to);
    if (first >= last || this.bucketVisits.length === 0) return;
    const edges = this.edges;
    const from = this.from;
    const to = this.to;
    const any = this.any;
    const want = this.want;
    const bucketVisits = this.bucketVisits;
    const visitors = this.visitors;
    const countries = this.countries;
    const browsers = this.browsers;
    const systems = this.systems;
    const devices = this.devices;
    let referrers: Float64Array = this.referrers;
    let bots = 0;
    let counted = 0;
    let bucket = ordered ? bucketOf(edges, data[first * STRIDE + TIME]!) : 0;
    let next = edges[bucket + 1]!;
    for (let at = first * STRIDE, stop = last * STRIDE; at < stop; at += STRIDE) {
      const time = data[at + TIME]!;
      if (ordered) {
        while (time >= next) next = edges[++bucket + 1]!;
      } else {
        if (time < from || time >= to) continue;
        bucket = bucketOf(edges, time);
      }
      const attrs = data[at + ATTRS]!;
      const bot = attrs & BOT;
      if (bot !== 0) bots++;
      if (!any && bot !== want) continue;
      counted++;
      bucketVisits[bucket]!++;
      const referrer = data[at + REFERRER]!;
      if (referrer >= referrers.length) referrers = this.growReferrers(referrer);
      referrers[referrer]!++;
      countries[attrs & COUNTRY_BITS]!++;
      browsers[(attrs >>> BROWSER_SHIFT) & FAMILY_BITS]!++;
      systems[(attrs >>> OS_SHIFT) & FAMILY_BITS]!++;
      devices[(attrs >>> DEVICE_SHIFT) & FAMILY_BITS]!++;
      if ((attrs & HAS_VISITOR) === 0) visitors.addAnonymous(bucket);
      else visitors.add(bucket, time, data[at + VISITOR]! | 0);
    }
    this.bots += bots;
    if (code !== undefined && counted > 0) this.links.set(code, (this.links.get(code) ?? 0) + counted);
  }

  private growReferrers(index: number): Float64Array {
    let size = this.referrers.length;
    while (size <= index) size *= 2;
    const grown = new Float64Array(size);
    grown.set(this.referrers);
    this.referrers = grown;
    return grown;
  }

  /**
   * Counts the unique visitors of some days (`budget` ids at least), once every run is added; true
   * when all are counted. `result` counts whatever is left, so a caller that may hold the event
   * loop for a while need not call this at all.
   */
  settle(budget: number): boolean {
    return this.visitors.settle(budget);
  }

  /** The stats; `visitCount` and `untracked` are the records' (the accumulator sees only events). */
  result(visitCount: number, untracked: number): VisitStats {
    let visits = 0;
    const unique = this.visitors.counts();
    const series: { visits: number; uniqueVisitors: number }[] = [];
    for (let b = 0; b < this.bucketVisits.length; b++) {
      visits += this.bucketVisits[b]!;
      series.push({ visits: this.bucketVisits[b]!, uniqueVisitors: unique.perBucket[b]! });
    }
    const referrers = new Map<string | null, number>();
    this.referrers.forEach((n, index) => {
      if (n === 0) return;
      // Two indexes naming one host (a table rebuilt meanwhile) are one value.
      const name = index === 0 ? null : this.referrerName(index);
      referrers.set(name, (referrers.get(name) ?? 0) + n);
    });
    const stats: VisitStats = {
      visitCount,
      untracked,
      visits,
      uniqueVisitors: unique.total,
      bots: this.bots,
      series,
      referrers: topList(referrers),
      countries: topList(byValue(this.countries, countryOf)),
      browsers: topList(byValue(this.browsers, (n) => BROWSERS[n - 1] ?? null)),
      os: topList(byValue(this.systems, (n) => SYSTEMS[n - 1] ?? null)),
      devices: topList(byValue(this.devices, (n) => DEVICES[n - 1] ?? null)),
    };
    if (!this.withLinks) return stats;
    return { ...stats, links: topLinks(this.links) };
  }
}

/** The bucket of a time within the range: the last edge at or before it. */
function bucketOf(edges: Float64Array, time: number): number {
  let lo = 0;
  let hi = edges.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (edges[mid]! <= time) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The 10 links with the most visits, ties by code. A hundred thousand links are not sorted for
 * ten: each is compared with the tenth so far and most go no further.
 */
function topLinks(links: ReadonlyMap<string, number>): { code: string; visits: number }[] {
  const before = (a: { code: string; visits: number }, b: { code: string; visits: number }) =>
    a.visits > b.visits || (a.visits === b.visits && a.code < b.code);
  const top: { code: string; visits: number }[] = [];
  for (const [code, visits] of links) {
    const entry = { code, visits };
    if (top.length === TOP_SIZE && !before(entry, top[TOP_SIZE - 1]!)) continue;
    let i = Math.min(top.length, TOP_SIZE - 1);
    if (top.length < TOP_SIZE) top.push(entry);
    while (i > 0 && before(entry, top[i - 1]!)) {
      top[i] = top[i - 1]!;
      i--;
    }
    top[i] = entry;
  }
  return top;
}

function byValue(counts: Float64Array, name: (n: number) => string | null): Map<string | null, number> {
  const values = new Map<string | null, number>();
  counts.forEach((n, i) => {
    if (n > 0) values.set(i === 0 ? null : name(i), n);
  });
  return values;
}

/** The 10 largest (ties by value, null first) and the sum of the rest. */
export function topList(counts: ReadonlyMap<string | null, number>): TopList {
  const sorted = [...counts].filter(([, n]) => n > 0).sort(([a, x], [b, y]) => y - x || compareValues(a, b));
  let others = 0;
  for (let i = TOP_SIZE; i < sorted.length; i++) others += sorted[i]![1];
  return { top: sorted.slice(0, TOP_SIZE).map(([value, visits]) => ({ value, visits })), others };
}

function compareValues(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}
