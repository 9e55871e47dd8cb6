/**
 * The buckets of a stats range (docs/analytics.md, ranges and buckets): the instants at which each
 * hour, day, week (from Monday) or month of a time zone begins. A Berlin day is 23, 24 or 25 hours
 * long and a Berlin hour bucket on the autumn night happens twice, so edges are found on the wall
 * clock (`time-zones.ts`), never by adding a fixed number of seconds.
 */
import type { Zone } from './time-zones.ts';

export type Interval = 'hour' | 'day' | 'week' | 'month';
export const INTERVALS: readonly Interval[] = ['hour', 'day', 'week', 'month'];

/** The most buckets a range may have. */
export const MAX_BUCKETS = 1000;

const DAY = 86_400;

/** The wall time that starts the period of `interval` holding wall time `w`. */
function periodStart(interval: Interval, w: number): number {
  if (interval === 'hour') return w - (((w % 3600) + 3600) % 3600);
  const midnight = Math.floor(w / DAY) * DAY;
  if (interval === 'day') return midnight;
  if (interval === 'week') {
    const weekday = (new Date(midnight * 1000).getUTCDay() + 6) % 7; // Monday 0
    return midnight - weekday * DAY;
  }
  const date = new Date(midnight * 1000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000;
}

/** The wall time `k` periods after period start `w`. */
function periodAfter(interval: Interval, w: number, k: number): number {
  if (interval === 'hour') return w + k * 3600;
  if (interval === 'day') return w + k * DAY;
  if (interval === 'week') return w + k * 7 * DAY;
  const date = new Date(w * 1000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + k, 1) / 1000;
}

/** The instants at which period start `w` begins, at least one: in a gap, the moment the clock jumped past it. */
function startsOf(zone: Zone, w: number): number[] {
  const found = zone.instants(w);
  return found.length > 0 ? found : [zone.firstFrom(w)];
}

/** The last bucket edge at or before instant `t`. */
function edgeAtOrBefore(zone: Zone, interval: Interval, t: number): number {
  const starts = startsOf(zone, periodStart(interval, zone.wall(t)));
  let edge = starts[0]!;
  for (const s of starts) if (s <= t) edge = s;
  return edge;
}

/** The first bucket edge after edge `e`. */
function edgeAfter(zone: Zone, interval: Interval, e: number): number {
  const w = periodStart(interval, zone.wall(e));
  // An autumn hour that happens twice is two buckets: the second start of the same wall hour.
  // A wall period whose start falls in a gap begins where the clock jumped.
  for (let k = 0; k <= 2; k++) {
    for (const s of startsOf(zone, periodAfter(interval, w, k))) if (s > e) return clockChangeBefore(zone, interval, e, s);
  }
  /* c8 ignore next */
  throw new Error(`no ${interval} edge after ${e} in ${zone.name}`);
}

/**
 * `next`, or the clock change between edge `e` and `next` when it moves the wall clock into another
 * period: Chatham's autumn change goes from 03:45 back to 02:45, so hour 2 begins again there, not
 * on a whole hour. (Where a change falls on a period's start, as in Berlin, `next` is it already.)
 */
function clockChangeBefore(zone: Zone, interval: Interval, e: number, next: number): number {
  const offset = (t: number): number => zone.wall(t) - t;
  const before = offset(e);
  if (offset(next - 1) === before) return next;
  // The first instant of the new offset, by bisection: a dozen looks at the clock, once a change.
  let lo = e;
  let hi = next - 1;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offset(mid) === before) lo = mid;
    else hi = mid;
  }
  return periodStart(interval, zone.wall(hi)) !== periodStart(interval, zone.wall(hi - 1)) ? hi : next;
}

/**
 * The edges of `[from, to)` rounded out to whole buckets: the first at or before `from`, the last at
 * or after `to`; undefined past `MAX_BUCKETS`.
 */
export function bucketEdges(zone: Zone, interval: Interval, from: number, to: number): number[] | undefined {
  const edges = [edgeAtOrBefore(zone, interval, from)];
  let last = edges[0]!;
  while (last < to) {
    if (edges.length > MAX_BUCKETS) return undefined;
    // Most hours and days are no transition's: when the clock moved exactly as far as the instant
    // and landed on a period start, that is the next edge, found with one look at the clock.
    const step = interval === 'hour' ? 3600 : interval === 'day' ? DAY : 0;
    const guess = last + step;
    const landed = step > 0 ? zone.wall(guess) : NaN;
    last = landed - zone.wall(last) === step && periodStart(interval, landed) === landed ? guess : edgeAfter(zone, interval, last);
    edges.push(last);
  }
  return edges;
}
