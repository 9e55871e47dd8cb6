/**
 * The stats of a range (docs/analytics.md, stats), counted over events in their packed form
 * (packed.ts): what a store answers to a `StatsQuery` when it keeps its events in memory.
 *
 * Ten million events must be counted in about 200 ms on a small machine, and a caller counts them
 * in slices, yielding to the event loop between, so all state lives in the accumulator and the
 * per-event loop allocates nothing: counts are typed arrays indexed by number (a referrer's index,
 * a country's number, a family's index), events are placed in their cell of the range by a table
 * (cells.ts), and unique visitors are staged per cell and counted a day at a time at the end
 * (unique-visitors.ts). Counts are 32-bit: one question would need 2^31 events, 32 GB of them in
 * memory, to overflow one.
 */
import type { StatsQuery, VisitStats } from './event.ts';
import {
  ATTRS,
  BOT,
  BROWSER_SHIFT,
  BOT_SHIFT,
  BROWSERS,
  COUNTRY_BITS,
  COUNTRY_CODES,
  COUNTRY_SPAN,
  countryOf,
  DEVICE_SHIFT,
  DEVICES,
  FAMILIES,
  FAMILY_BITS,
  firstAtOrAfter,
  HAS_VISITOR_SHIFT,
  OS_SHIFT,
  REFERRER,
  STRIDE,
  SYSTEMS,
  TIME,
  VISITOR,
} from './packed.ts';
import { Cells } from './cells.ts';
import { TopLinks, topList } from './top-lists.ts';
import { UniqueVisitors } from './unique-visitors.ts';

const EMPTY: Int32Array = new Int32Array(0);
/** Where the countries' and the referrers' counts start in the walk's one array of counts. */
const COUNTRIES_AT = 2 * FAMILIES;
const REFERRERS_AT = COUNTRIES_AT + 2 * COUNTRY_SPAN;
/** How far the bot flag moves down to land just above the country's 10 bits (at `COUNTRY_SPAN`). */
const BOT_TO_COUNTRY = BOT_SHIFT - 10;

/**
 * Counts events into the stats of one `StatsQuery`. `add` takes runs of events (one link's, or a
 * slice of them); `result` gives the `VisitStats` once every run is in.
 *
 * Every event in the range is counted, bots too, with its bot flag as one more bit of each count's
 * index (referrers, countries, families); `result` reads the counts the bots filter asks for. So
 * the loop has no branch that the filter takes at random, and `bots` (the range's bot events,
 * whatever the filter) is a sum of counts. A bucket's visits are the events its cells kept for
 * the unique visitors: the ids, and those without one (unique-visitors.ts).
 */
export class StatsAccumulator {
  private readonly from: number;
  private readonly to: number;
  /** An event counts when `(attrs & mask) === want`: `include` masks nothing. */
  private readonly mask: number;
  private readonly want: number;
  private readonly buckets: number;
  private readonly cells: Cells;
  private readonly visitors: UniqueVisitors;
  /**
   * One array for the three lists the walk counts into, so the loop keeps one array's place and
   * length at hand, not three. From 0 the families: browser, OS and device as one number (their 9
   * bits), one count an event instead of three, split into the three lists by `result`, plus 512
   * × bot; from `COUNTRIES_AT` the countries, plus 1,024 × bot; from `REFERRERS_AT` 2 × referrer +
   * bot (grown as referrer numbers grow).
   */
  private counts: Int32Array = new Int32Array(REFERRERS_AT + 512);
  private readonly links = new Map<string, number>();

  /**
   * `referrerName` names a referrer index (0 is none); with `links` the answer has the `links` top
   * list, counted from the codes `add` is given.
   */
  constructor(
    query: StatsQuery,
    private readonly referrerName: (index: number) => string | null,
    private readonly withLinks = false,
  ) {
    this.from = query.from;
    this.to = query.to;
    this.mask = query.bots === 'include' ? 0 : BOT;
    this.want = query.bots === 'only' ? BOT : 0;
    this.buckets = Math.max(0, query.edges.length - 1);
    this.cells = new Cells(query.edges);
    this.visitors = new UniqueVisitors(this.cells, this.buckets);
  }

  /**
   * Counts the events `data[start, end)` (event indices, not words) that fall in the range, and
   * returns how many passed the bots filter. A run in time order (a link's events as stored) is cut
   * to the range by binary search; pass `ordered = false` for events in any order. With `code`,
   * the run's visits count for that link in `links` (a link may come in several runs).
   */
  add(data: Uint32Array, start: number, end: number, code?: string, ordered = true): number {
    const counted = ordered ? this.addRun(data, start, end) : this.addUnordered(data, start, end);
    if (code !== undefined && counted > 0) this.links.set(code, (this.links.get(code) ?? 0) + counted);
    return counted;
  }

  /**
   * The walk over a time-ordered run, the loop ten million events go through: it calls nothing per
   * event, allocates nothing, and branches only where the branch nearly always goes one way (a
   * branch taken at random costs more than all the counting): the filter is arithmetic, and an
   * event's visitor id is always written and kept or not by how far its cell's place moves on.
   */
  private addRun(data: Uint32Array, start: number, end: number): number {
    if (start >= end || this.cells.count === 0) return 0;
    let first = start;
    let last = end;
    // A run wholly in the range (most runs, when the range is the last 30 days) needs no search.
    if (data[start * STRIDE + TIME]! < this.from || data[(end - 1) * STRIDE + TIME]! >= this.to) {
      first = firstAtOrAfter(data, start, end, this.from);
      last = firstAtOrAfter(data, first, end, this.to);
      if (first >= last) return 0;
    }
    const cells = this.cells;
    const cellStart = cells.start;
    const slotCell = cells.slotCell;
    const base = cells.base;
    const shift = cells.shift;
    const visitors = this.visitors;
    const current = visitors.current;
    const filled = visitors.filled;
    const anonymous = visitors.anonymous;
    const mask = this.mask;
    const want = this.want;
    let counts = this.counts;
    let counted = 0;
    // The cell's counts are kept here while its events come, and written back when it ends.
    let cell = -1;
    let cellEnd = -1;
    let ids: Int32Array = EMPTY;
    let n = 0;
    let anonymousInCell = 0;
    for (let at = first * STRIDE, stop = last * STRIDE; at < stop; at += STRIDE) {
      const time = data[at + TIME]!;
      if (time >= cellEnd) {
        if (cell >= 0) {
          anonymous[cell]! += anonymousInCell;
          filled[cell] = n;
        }
        anonymousInCell = 0;
        cell = slotCell[(time - base) >>> shift]!;
        while (time >= cellStart[cell + 1]!) cell++;
        cellEnd = cellStart[cell + 1]!;
        ids = current[cell]!;
        n = filled[cell]!;
      }
      const attrs = data[at + ATTRS]!;
      const bot = (attrs >>> BOT_SHIFT) & 1;
      // Shifts, not products, keep these in 32-bit integers (a referrer's number is far below 2^30).
      const referrer = REFERRERS_AT + ((data[at + REFERRER]! << 1) | bot);
      if (referrer >= counts.length) counts = this.grow(referrer);
      counts[referrer]!++;
      counts[COUNTRIES_AT + ((attrs & COUNTRY_BITS) | ((attrs >>> BOT_TO_COUNTRY) & COUNTRY_SPAN))]!++;
      counts[(attrs >>> BROWSER_SHIFT) & (2 * FAMILIES - 1)]!++;
      // 1 when the event passes the filter, and whether it has an id: no branch on either.
      const passes = 1 ^ (((attrs ^ want) & mask) >>> BOT_SHIFT);
      const id = (attrs >>> HAS_VISITOR_SHIFT) & 1;
      counted += passes;
      anonymousInCell += passes & (id ^ 1);
      ids[n] = data[at + VISITOR]! | 0;
      n += passes & id;
      if (n === ids.length) {
        filled[cell] = n;
        visitors.grow(cell);
        ids = current[cell]!;
        n = 0;
      }
    }
    anonymous[cell]! += anonymousInCell;
    filled[cell] = n;
    return counted;
  }

  /** Events in any order: those in the range, copied in time order (ties in given order), then walked. */
  private addUnordered(data: Uint32Array, start: number, end: number): number {
    const time = (i: number): number => data[i * STRIDE + TIME]!;
    const order: number[] = [];
    for (let i = start; i < end; i++) if (time(i) >= this.from && time(i) < this.to) order.push(i);
    order.sort((a, b) => time(a) - time(b) || a - b);
    const sorted = new Uint32Array(order.length * STRIDE);
    order.forEach((i, k) => {
      sorted.set(data.subarray(i * STRIDE, (i + 1) * STRIDE), k * STRIDE);
    });
    return this.addRun(sorted, 0, order.length);
  }

  private grow(index: number): Int32Array {
    let size = this.counts.length;
    while (size <= index) size *= 2;
    const grown = new Int32Array(size);
    grown.set(this.counts);
    this.counts = grown;
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
    const unique = this.visitors.counts();
    // The bot flags the filter counts: 0, 1, or both.
    const flags = this.mask === 0 ? [0, 1] : [this.want === 0 ? 0 : 1];
    const counted = (counts: Int32Array, index: number, bit: number): number => {
      let n = 0;
      for (const flag of flags) n += counts[index + flag * bit]!;
      return n;
    };
    let visits = 0;
    const series: { visits: number; uniqueVisitors: number }[] = [];
    for (let b = 0; b < this.buckets; b++) {
      visits += unique.visits[b]!;
      series.push({ visits: unique.visits[b]!, uniqueVisitors: unique.perBucket[b]! });
    }
    // The bot events: those whose families' count has the bot bit.
    let bots = 0;
    for (let f = FAMILIES; f < 2 * FAMILIES; f++) bots += this.counts[f]!;
    const referrers = new Map<string | null, number>();
    for (let index = 0; REFERRERS_AT + 2 * index < this.counts.length; index++) {
      const n = counted(this.counts, REFERRERS_AT + 2 * index, 1);
      if (n === 0) continue;
      // Two indexes naming one host (a table rebuilt meanwhile) are one value.
      const name = index === 0 ? null : this.referrerName(index);
      referrers.set(name, (referrers.get(name) ?? 0) + n);
    }
    const countries = new Float64Array(COUNTRY_CODES);
    for (let i = 0; i < COUNTRY_CODES; i++) countries[i] = counted(this.counts, COUNTRIES_AT + i, COUNTRY_SPAN);
    const browsers = new Float64Array(FAMILY_BITS + 1);
    const systems = new Float64Array(FAMILY_BITS + 1);
    const devices = new Float64Array(FAMILY_BITS + 1);
    for (let f = 0; f < FAMILIES; f++) {
      const n = counted(this.counts, f, FAMILIES);
      browsers[f & FAMILY_BITS]! += n;
      systems[(f >>> (OS_SHIFT - BROWSER_SHIFT)) & FAMILY_BITS]! += n;
      devices[(f >>> (DEVICE_SHIFT - BROWSER_SHIFT)) & FAMILY_BITS]! += n;
    }
    const stats: VisitStats = {
      visitCount,
      untracked,
      visits,
      uniqueVisitors: unique.total,
      bots,
      series,
      referrers: topList(referrers),
      countries: topList(byValue(countries, countryOf)),
      browsers: topList(byValue(browsers, (n) => BROWSERS[n - 1] ?? null)),
      os: topList(byValue(systems, (n) => SYSTEMS[n - 1] ?? null)),
      devices: topList(byValue(devices, (n) => DEVICES[n - 1] ?? null)),
    };
    if (!this.withLinks) return stats;
    const top = new TopLinks();
    for (const [code, visits] of this.links) if (top.admits(visits)) top.add(code, visits);
    return { ...stats, links: top.list() };
  }
}

function byValue(counts: Float64Array, name: (n: number) => string | null): Map<string | null, number> {
  const values = new Map<string | null, number>();
  counts.forEach((n, i) => {
    if (n > 0) values.set(i === 0 ? null : name(i), n);
  });
  return values;
}
