/**
 * The range of a stats question (docs/analytics.md, ranges and buckets): `from`, `to`, `interval`,
 * `tz` and `bots` as a route or a tool receives them, turned into a `StatsQuery` whose bucket edges
 * are computed here, once, so no store ever does calendar arithmetic.
 *
 * - `from`/`to`: Unix seconds, or ISO 8601 (`2026-03-29`, `2026-03-29T02:30`, `…Z`, `…+05:45`); a
 *   time without an offset, or a date alone, is a wall-clock time in `tz`. Defaults: `to` = now,
 *   `from` = 30 days before `to`.
 * - The range is `[from, to)`, `from` rounded down and `to` up to bucket edges in `tz`. Both are
 *   echoed as those rounded edges, in Unix seconds, whatever form they came in, cut to the times an
 *   event can have: never before 0, never after `MAX_TIME + 1` (the end of the last second).
 * - `interval`: `hour`, `day`, `week` (from Monday) or `month`, in `tz`; by default `hour` up to
 *   2 days, `day` up to 92 days, else `month`. A Berlin day is 23, 24 or 25 hours long and a
 *   Berlin hour bucket on the autumn night happens twice, so edges are found on the wall clock,
 *   never by adding a fixed number of seconds.
 * - At most 1,000 buckets.
 *
 * Every bad parameter is a `RangeRefusal` naming the parameter that was sent and saying what is
 * wrong with it, in the form it was sent (`to: 1970-01-01T00:00:00 in Asia/Kathmandu is before
 * 1970-01-01T00:00:00Z, the earliest time`), which the doors answer as a 400.
 */
import { bucketEdges, INTERVALS, MAX_BUCKETS, type Interval } from './buckets.ts';
import { BOT_FILTERS, type BotFilter, type EventFilter, type StatsQuery } from './event.ts';
import { UTC_ZONE, zoneOf, type Zone } from './time-zones.ts';

// The range's vocabulary, for the doors and tools that read ranges.
export { INTERVALS, MAX_BUCKETS, type Interval } from './buckets.ts';
export { zoneOf } from './time-zones.ts';

const DEFAULT_DAYS = 30;
/** Up to this span (seconds) the default interval is `hour`, up to the next `day`, else `month`. */
const HOURLY_UP_TO = 2 * 86_400;
const DAILY_UP_TO = 92 * 86_400;
/** Times are Unix seconds in 32 unsigned bits, like an event's (packed.ts): 1970 to 2106. */
export const MAX_TIME = 0xffff_ffff;
/** The first and the last time, as refusals name them. */
export const EARLIEST = '1970-01-01T00:00:00Z';
export const LATEST = '2106-02-07T06:28:15Z';

/** The parameters as received: strings from a query, or numbers from a tool's JSON arguments. */
export interface RangeParams {
  readonly from?: unknown;
  readonly to?: unknown;
  readonly interval?: unknown;
  readonly tz?: unknown;
  readonly bots?: unknown;
}

/** A `StatsQuery` plus what the answer echoes: `from` and `to` are the rounded edges. */
export interface StatsRange extends StatsQuery {
  readonly interval: Interval;
  /** As given (it was accepted by `Intl.DateTimeFormat`), or `UTC`. */
  readonly tz: string;
}

/** A bad parameter: `parameter` is its name, `detail` the sentence a 400 carries. */
export class RangeRefusal {
  constructor(
    readonly parameter: keyof RangeParams,
    readonly detail: string,
  ) {}
}

/** The stats range of `params` at `now` (Unix seconds), or the refusal of its first bad parameter. */
export function parseStatsRange(params: RangeParams, now: number): StatsRange | RangeRefusal {
  const bots = parseBots(params.bots, 'exclude');
  if (bots instanceof RangeRefusal) return bots;
  const zone = parseZone(params.tz);
  if (zone instanceof RangeRefusal) return zone;
  const span = parseSpan(params, zone, now);
  if (span instanceof RangeRefusal) return span;
  const [from, to] = span;
  let interval: Interval;
  if (params.interval === undefined) {
    interval = to - from <= HOURLY_UP_TO ? 'hour' : to - from <= DAILY_UP_TO ? 'day' : 'month';
  } else if (typeof params.interval === 'string' && (INTERVALS as readonly string[]).includes(params.interval)) {
    interval = params.interval as Interval;
  } else {
    return new RangeRefusal('interval', `interval must be one of ${INTERVALS.join(', ')}`);
  }
  const edges = bucketEdges(zone, interval, from, to);
  if (edges === undefined) {
    return new RangeRefusal('interval', `the range has more than ${MAX_BUCKETS} ${interval} buckets; choose a longer interval or a shorter range (from, to)`);
  }
  // Rounded out to whole buckets, a range can pass the times an event can have (a Kathmandu day
  // that began before 1970, a month that ends after 2106): the outer buckets are cut there, so the
  // echo never names a time that cannot be asked for. No event lies in the part cut off.
  edges[0] = Math.max(edges[0]!, 0);
  edges[edges.length - 1] = Math.min(edges[edges.length - 1]!, MAX_TIME + 1);
  return { from: edges[0]!, to: edges[edges.length - 1]!, bots, edges, interval, tz: zone.name };
}

/**
 * The filter of a visit list: `from`/`to` read like a range's (ISO without an offset in `tz`) but
 * neither rounded nor defaulted to 30 days: without them, every event.
 */
export function parseEventFilter(params: Omit<RangeParams, 'interval'>): EventFilter | RangeRefusal {
  const bots = parseBots(params.bots, 'exclude');
  if (bots instanceof RangeRefusal) return bots;
  const zone = parseZone(params.tz);
  if (zone instanceof RangeRefusal) return zone;
  const from = params.from === undefined ? 0 : parseTime('from', params.from, zone);
  if (from instanceof RangeRefusal) return from;
  const to = params.to === undefined ? MAX_TIME + 1 : parseTime('to', params.to, zone);
  if (to instanceof RangeRefusal) return to;
  if (from >= to) return outOfOrder(params, from, to, undefined);
  return { from, to, bots };
}

function parseBots(raw: unknown, fallback: BotFilter): BotFilter | RangeRefusal {
  if (raw === undefined) return fallback;
  if (typeof raw === 'string' && (BOT_FILTERS as readonly string[]).includes(raw)) return raw as BotFilter;
  return new RangeRefusal('bots', `bots must be one of ${BOT_FILTERS.join(', ')}`);
}

/** `tz`: an IANA zone, UTC by default. */
function parseZone(raw: unknown): Zone | RangeRefusal {
  if (raw === undefined) return UTC_ZONE;
  const zone = typeof raw === 'string' ? zoneOf(raw) : undefined;
  return zone ?? new RangeRefusal('tz', `tz must be an IANA time zone such as Europe/Berlin${typeof raw === 'string' ? `, not "${raw.slice(0, 40)}"` : ''}`);
}

function parseSpan(params: RangeParams, zone: Zone, now: number): [number, number] | RangeRefusal {
  const to = params.to === undefined ? Math.min(Math.floor(now), MAX_TIME) : parseTime('to', params.to, zone);
  if (to instanceof RangeRefusal) return to;
  const from = params.from === undefined ? Math.max(0, to - DEFAULT_DAYS * 86_400) : parseTime('from', params.from, zone);
  if (from instanceof RangeRefusal) return from;
  if (from >= to) return outOfOrder(params, from, to, now);
  return [from, to];
}

/** An instant as the refusals write it: `2026-03-29T14:00:00Z`. */
const isoOf = (t: number): string => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

/**
 * `from` not before `to`, refused naming the one that was sent: with both sent, `from`; with only
 * `to`, it is the earliest time (the default `from` cannot precede it); with only `from`, `to` is
 * now (`now`) or the end of time.
 */
function outOfOrder(params: RangeParams, from: number, to: number, now: number | undefined): RangeRefusal {
  if (params.from === undefined) return new RangeRefusal('to', `to: ${isoOf(to)} is the earliest time; a range must end after it`);
  if (params.to !== undefined) return new RangeRefusal('from', `from: ${isoOf(from)} is not before to, ${isoOf(to)}`);
  const end = now === undefined ? `${isoOf(to)}, the end of time` : `now (${isoOf(to)})`;
  return new RangeRefusal('from', `from: ${isoOf(from)} is not before to, which is ${end} when not given`);
}

// ISO 8601 as people type it: a date, or a date and a time (seconds and fraction optional, `T` or a
// space), then `Z`, an offset, or nothing (the wall clock of tz).
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;
const DIGITS = /^\d+$/;

/**
 * `from` or `to` in Unix seconds (fractions of a second dropped). A time outside 0..`latest` is
 * refused in the form it was sent: Unix seconds as such, an ISO time without an offset as the wall
 * time of `tz` (1970-01-01 in Kathmandu is before the epoch), one with an offset with its offset.
 */
export function parseTime(name: 'from' | 'to', raw: unknown, zone: Zone, latest = MAX_TIME): number | RangeRefusal {
  const bad = (why: string) => new RangeRefusal(name, `${name} must be Unix seconds or an ISO 8601 date or time${why}`);
  let seconds: number;
  /** The time as sent, for a refusal of its value. */
  let shown: string;
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return bad(', not a fraction');
    seconds = raw;
    shown = `${raw} (Unix seconds)`;
  } else if (typeof raw !== 'string') {
    return bad('');
  } else if (DIGITS.test(raw)) {
    seconds = Number(raw);
    shown = `${raw.length > 20 ? `${raw.slice(0, 20)}…` : raw} (Unix seconds)`;
  } else {
    const m = ISO.exec(raw);
    if (m === null) return bad(` such as 2026-03-29 or 2026-03-29T14:00:00Z, not "${raw.slice(0, 40)}"`);
    const [year, month, day, hour = 0, minute = 0, second = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((s) =>
      s === undefined ? undefined : Number(s),
    ) as number[];
    const offset = m[7];
    const two = (n: number): string => String(n).padStart(2, '0');
    shown = `${m[1]}-${m[2]}-${m[3]}T${two(hour)}:${two(minute)}:${two(second)}${offset === undefined ? ` in ${zone.name}` : offsetOf(offset)}`;
    // No offset reaches a day, so a year before 1969 is before the epoch everywhere (and `Date.UTC`
    // would read the years 0–99 as 1900–1999).
    if (year! < 1969) return new RangeRefusal(name, `${name}: ${shown} is before ${EARLIEST}, the earliest time`);
    const wall = Date.UTC(year!, month! - 1, day!, hour, minute, second) / 1000;
    const check = new Date(wall * 1000);
    if (check.getUTCMonth() !== month! - 1 || check.getUTCDate() !== day! || hour > 23 || minute > 59 || second > 59) {
      return bad(`, not "${raw.slice(0, 40)}" (no such date or time)`);
    }
    if (offset === undefined) seconds = zone.instant(wall);
    else if (offset === 'Z' || offset === 'z') seconds = wall;
    else {
      const digits = offset.slice(1).replace(':', '');
      const hours = Number(digits.slice(0, 2));
      const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
      if (hours > 23 || minutes > 59) return bad(`, not "${raw.slice(0, 40)}" (no such offset)`);
      seconds = wall - (offset[0] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
    }
  }
  if (seconds < 0) return new RangeRefusal(name, `${name}: ${shown} is before ${EARLIEST}, the earliest time`);
  if (seconds > latest) return new RangeRefusal(name, `${name}: ${shown} is after ${LATEST}, the latest time`);
  return seconds;
}

/** An ISO offset as `Z` or `±HH:MM`. */
function offsetOf(offset: string): string {
  if (offset === 'Z' || offset === 'z') return 'Z';
  const digits = offset.slice(1).replace(':', '');
  return `${offset[0]}${digits.slice(0, 2)}:${digits.length > 2 ? digits.slice(2) : '00'}`;
}
