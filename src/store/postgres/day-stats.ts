/**
 * One link's stats from day summaries and raw events (docs/postgres.md, day summaries): which days
 * a question reads from their summary and which parts it reads raw (`planDays`), and the
 * `VisitStats` made of both (`mergeDayStats`). Pure functions, tested without a database; the SQL
 * is in `visit-day-statements.ts`, the calls in `day-summaries.ts`.
 *
 * Why it is exact: `unique_visitors` counts distinct (UTC day, visitor) pairs, so no two days share
 * one, and every figure of a bucket or of the range is the sum over its UTC days of that day's
 * figure, whichever way each day was read. A summary holds, per quarter hour of its day, the
 * events, and how many of the day's distinct visitors had their first and their last event there:
 * the visitors of a whole day are all of them, of a prefix `[0, k)` of its quarters those whose
 * first event is before `k`, of a suffix `[k, 96)` those whose last is from `k` on. A bucket that
 * cuts a day anywhere else (an hour bucket, an edge off the quarter hours) reads that piece raw.
 * Top lists are whole-day counts: a day only partly in the range is read raw for everything.
 */
import type { BotFilter, TopList, VisitStats } from '../../visits/event.ts';
import { TOP_SIZE } from '../../visits/event.ts';
import type { StatsRow } from './visit-statements.ts';

export const DAY = 86_400;
/** A quarter hour: every time zone in use is a whole number of them off UTC. */
export const SLOT = 900;
export const SLOTS = DAY / SLOT;

/** The series of a summary's `slots`, SLOTS numbers each, in this order. */
export const SERIES = ['people', 'bots', 'first people', 'last people', 'first bots', 'last bots', 'first any', 'last any'] as const;

/** The top lists, by their number in a summary's `dims`. */
export const DIMENSIONS = ['referrer', 'country', 'browser', 'os', 'device'] as const;

/** `[from, to)` in Unix seconds. */
export interface Interval {
  from: number;
  to: number;
}

interface DayPlan {
  /** Days wholly in the range: `[firstDay, endDay)`, empty when `endDay <= firstDay`. */
  firstDay: number;
  endDay: number;
  /** The whole days read from their summary, ascending. */
  days: number[];
  /** Read raw for everything: the range's part of every other day, neighbours merged. */
  whole: Interval[];
  /** Read raw for their bucket only: pieces of summarised days that a bucket cuts inside. */
  pieces: Interval[];
}

/** How a bucket's piece of a day is read from the day's summary; undefined: raw. */
export type Cut = { kind: 'whole' } | { kind: 'prefix'; k: number } | { kind: 'suffix'; k: number };

/** The days wholly inside `[edges[0], edges[last])`. */
export function wholeDays(edges: readonly number[]): { firstDay: number; endDay: number } {
  const firstDay = Math.ceil(edges[0]! / DAY);
  return { firstDay, endDay: Math.max(firstDay, Math.floor(edges[edges.length - 1]! / DAY)) };
}

/** The cut of `[lo, hi)`, inside the day starting at `start`. */
function cutOf(lo: number, hi: number, start: number): Cut | undefined {
  const end = start + DAY;
  if (lo === start && hi === end) return { kind: 'whole' };
  if (lo === start && (hi - start) % SLOT === 0) return { kind: 'prefix', k: (hi - start) / SLOT };
  if (hi === end && (lo - start) % SLOT === 0) return { kind: 'suffix', k: (lo - start) / SLOT };
  return undefined;
}

/** Each bucket's piece of day `day`: its index and `[lo, hi)`. */
function* piecesOf(edges: readonly number[], day: number): Generator<{ bucket: number; lo: number; hi: number }> {
  const start = day * DAY;
  const end = start + DAY;
  // The first bucket ending after the day's start.
  let a = 0;
  let b = edges.length - 1;
  while (a < b) {
    const m = (a + b) >> 1;
    if (edges[m + 1]! <= start) a = m + 1;
    else b = m;
  }
  for (let i = a; i < edges.length - 1 && edges[i]! < end; i++) {
    const lo = Math.max(edges[i]!, start);
    const hi = Math.min(edges[i + 1]!, end);
    if (lo < hi) yield { bucket: i, lo, hi };
  }
}

/** What a question over `edges` reads, given the days that have a summary it may use. */
export function planDays(edges: readonly number[], summarised: (day: number) => boolean): DayPlan {
  const from = edges[0]!;
  const to = edges[edges.length - 1]!;
  const { firstDay, endDay } = wholeDays(edges);
  const days: number[] = [];
  const whole: Interval[] = [];
  const pieces: Interval[] = [];
  const raw = (lo: number, hi: number): void => {
    const last = whole[whole.length - 1];
    if (last !== undefined && last.to === lo) last.to = hi;
    else whole.push({ from: lo, to: hi });
  };
  if (from >= to) return { firstDay, endDay, days, whole, pieces };
  for (let day = Math.floor(from / DAY); day * DAY < to; day++) {
    const start = day * DAY;
    if (day < firstDay || day >= endDay || !summarised(day)) {
      raw(Math.max(from, start), Math.min(to, start + DAY));
      continue;
    }
    days.push(day);
    for (const { lo, hi } of piecesOf(edges, day)) if (cutOf(lo, hi, start) === undefined) pieces.push({ from: lo, to: hi });
  }
  return { firstDay, endDay, days, whole, pieces };
}

/** A value of a top list summed over the summarised days. */
export interface SummedValue {
  /** Its list: an index of `DIMENSIONS`. */
  dim: number;
  value: string | null;
  people: number;
  bots: number;
}

interface DayStatsInput {
  edges: readonly number[];
  bots: BotFilter;
  link: { visitCount: number; untracked: number };
  plan: DayPlan;
  /** The `slots` of each day of `plan.days` (null: a day without events). */
  slots: ReadonlyMap<number, readonly number[] | null>;
  /** The top lists' values summed over `plan.days`. */
  values: readonly SummedValue[];
  /** The raw statement's rows over `plan.whole` and `plan.pieces` (`VisitStatements.rawPart`). */
  raw: readonly StatsRow[];
}

/** The series (visits, first, last) a filter reads from a summary. */
function seriesOf(bots: BotFilter): { visits: number[]; first: number; last: number } {
  if (bots === 'exclude') return { visits: [0], first: 2, last: 3 };
  if (bots === 'only') return { visits: [1], first: 4, last: 5 };
  return { visits: [0, 1], first: 6, last: 7 };
}

const sum = (slots: readonly number[], series: number, from: number, to: number): number => {
  let n = 0;
  for (let i = series * SLOTS + from; i < series * SLOTS + to; i++) n += slots[i]!;
  return n;
};

/** The `VisitStats` of a question read as `input.plan` says. */
export function mergeDayStats(input: DayStatsInput): VisitStats {
  const { edges, plan } = input;
  const buckets = edges.length - 1;
  const pick = seriesOf(input.bots);
  const visitsIn = (slots: readonly number[], from: number, to: number): number => pick.visits.reduce((n, s) => n + sum(slots, s, from, to), 0);
  const series = Array.from({ length: buckets }, () => ({ visits: 0, uniqueVisitors: 0 }));
  let visits = 0;
  let uniqueVisitors = 0;
  let bots = 0;
  for (const day of plan.days) {
    const slots = input.slots.get(day);
    if (slots === undefined) throw new Error(`no summary of day ${day}`);
    if (slots === null) continue;
    visits += visitsIn(slots, 0, SLOTS);
    uniqueVisitors += sum(slots, pick.first, 0, SLOTS);
    bots += sum(slots, 1, 0, SLOTS);
    for (const { bucket, lo, hi } of piecesOf(edges, day)) {
      const cut = cutOf(lo, hi, day * DAY);
      if (cut === undefined) continue;
      const [a, b] = cut.kind === 'whole' ? [0, SLOTS] : cut.kind === 'prefix' ? [0, cut.k] : [cut.k, SLOTS];
      const at = series[bucket]!;
      at.visits += visitsIn(slots, a, b);
      at.uniqueVisitors += cut.kind === 'suffix' ? sum(slots, pick.last, a, b) : sum(slots, pick.first, a, b);
    }
  }
  const counts = new Map<string, Map<string | null, number>>(DIMENSIONS.map((d) => [d, new Map()]));
  const add = (kind: string, value: string | null, n: number): void => {
    const list = counts.get(kind);
    if (list === undefined || n === 0) return;
    list.set(value, (list.get(value) ?? 0) + n);
  };
  for (const v of input.values) {
    add(DIMENSIONS[v.dim]!, v.value, input.bots === 'exclude' ? v.people : input.bots === 'only' ? v.bots : v.people + v.bots);
  }
  for (const row of input.raw) {
    if (row.kind === 'total') {
      visits += Number(row.n);
      uniqueVisitors += Number(row.u ?? 0);
      bots += Number(row.b ?? 0);
    } else if (row.kind === 'bucket') {
      const at = series[Number(row.value)];
      if (at === undefined) continue;
      at.visits += Number(row.n);
      at.uniqueVisitors += Number(row.u ?? 0);
    } else add(row.kind, row.value, Number(row.n));
  }
  const top = (kind: (typeof DIMENSIONS)[number]): TopList => topOf(counts.get(kind)!, visits);
  return {
    visitCount: input.link.visitCount,
    untracked: input.link.untracked,
    visits,
    uniqueVisitors,
    bots,
    series,
    referrers: top('referrer'),
    countries: top('country'),
    browsers: top('browser'),
    os: top('os'),
    devices: top('device'),
  };
}

/** The 10 largest (ties by value in code-point order, null first) and the rest of `visits`. */
function topOf(counts: ReadonlyMap<string | null, number>, visits: number): TopList {
  const top = [...counts]
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || byCodePoints(a, b))
    .slice(0, TOP_SIZE)
    .map(([value, n]) => ({ value, visits: n }));
  return { top, others: visits - top.reduce((n, t) => n + t.visits, 0) };
}

/**
 * Strings in code-point order, null first: the order of the raw statement's `COLLATE "C"` (UTF-8
 * bytes). UTF-16 units order the same except that surrogates (D800–DFFF, code points past FFFF)
 * come after E000–FFFF: they are moved there.
 */
export function byCodePoints(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unit(x) - unit(y);
  }
  return a.length - b.length;
}

const unit = (c: number): number => (c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c);
