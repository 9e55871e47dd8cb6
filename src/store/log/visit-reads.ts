/**
 * The log store's reads of visit events (docs/analytics.md): stats, one link's page of events,
 * and the export. Every event is in memory (`link-events.ts`), one time-ordered run per link, so
 * one link's stats are a binary search and a walk over its run; the stats of every link are the
 * same walk over each run, in slices with the event loop let go between them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StatsAccumulator } from '../../visits/aggregate.ts';
import { TopLinks } from '../../visits/top-lists.ts';
import type { CodedEvent, EventFilter, StatsQuery, VisitEvent, VisitExportFilter, VisitPage, VisitStats } from '../../visits/event.ts';
import { ATTRS, BOT, firstAtOrAfter, STRIDE, TIME, unpack } from '../../visits/packed.ts';
import { isExpiredAt } from '../link-store.ts';
import type { LogEngine } from './log-engine.ts';

/** Events counted per event-loop turn by the stats of every link: well under 50 ms of work. */
const STATS_SLICE = 1_000_000;
/** Events read per event-loop turn by the export. */
const EXPORT_SLICE = 10_000;

/** The stats of the live slot `s`. */
export function linkStats(store: LogEngine, s: number, query: StatsQuery): VisitStats {
  const keydir = store.keydir;
  const events = keydir.events;
  const stats = new StatsAccumulator(query, (n) => events.referrers.host(n));
  const data = events.data(s);
  if (data !== undefined) stats.add(data, 0, events.length(s));
  return stats.result(keydir.visits(s), keydir.untracked(s));
}

/** The stats of every link live at `now` (Unix seconds), counted in slices. */
export async function allStats(store: LogEngine, query: StatsQuery, now: number): Promise<VisitStats> {
  const keydir = store.keydir;
  const events = keydir.events;
  const stats = new StatsAccumulator(query, (n) => events.referrers.host(n));
  // Each link is one run: its visits go straight to the top 10, and its code is read only when it may enter.
  const links = new TopLinks();
  let visitCount = 0;
  let untracked = 0;
  let work = 0;
  const release = store.holdSlots();
  try {
    // Slots oldest first, as `slotsOldestFirst` yields them, without a generator's step per link;
    // `end` is read each time, so links added meanwhile are counted too.
    for (let s = 0; s < keydir.end; s++) {
      if (!keydir.isLive(s) || isExpiredAt(keydir.createdAt(s), keydir.retentionDays(s), now)) continue;
      visitCount += keydir.visits(s);
      untracked += keydir.untracked(s);
      const data = events.data(s);
      const n = events.length(s);
      if (data !== undefined && n > 0) {
        const visits = stats.add(data, 0, n);
        if (visits > 0 && links.admits(visits)) links.add(keydir.code(s), visits);
      }
      work += n + 1;
      if (work >= STATS_SLICE) {
        work = 0;
        await nextTurn();
      }
    }
  } finally {
    release();
  }
  // The unique visitors are counted at the end, a slice at a time too.
  while (!stats.settle(STATS_SLICE)) await nextTurn();
  return { ...stats.result(visitCount, untracked), links: links.list() };
}

/** Whether an event's attrs pass `bots`. */
function passes(attrs: number, bots: EventFilter['bots']): boolean {
  const bot = (attrs & BOT) !== 0;
  return bots === 'include' || (bots === 'only') === bot;
}

/** A page of the events of the live slot `s` that pass `filter`, newest first (by time, then arrival). */
export function linkVisits(store: LogEngine, s: number, filter: EventFilter, limit: number, offset: number): VisitPage {
  const events = store.keydir.events;
  const data = events.data(s);
  const page: VisitEvent[] = [];
  if (data === undefined) return { total: 0, events: page };
  const n = events.length(s);
  const first = firstAtOrAfter(data, 0, n, filter.from);
  const end = firstAtOrAfter(data, first, n, filter.to);
  const host = (i: number): string | null => events.referrers.host(i);
  let total = 0;
  for (let i = end - 1; i >= first; i--) {
    if (!passes(data[i * STRIDE + ATTRS]!, filter.bots)) continue;
    if (total >= offset && page.length < limit) page.push(withoutVisitor(unpack(data, i * STRIDE, host)));
    total++;
  }
  return { total, events: page };
}

/** No route shows the visitor id. */
function withoutVisitor(event: VisitEvent): VisitEvent {
  return { ...event, visitor: null };
}

/**
 * Every event of the links live at `now` that passes `filter` (of `code` only, when given), oldest
 * first: the runs of the links merged by time, a heap of one cursor per link, so memory holds one
 * number per link and none per event. Events recorded meanwhile may or may not be included.
 */
export async function* exportEvents(store: LogEngine, filter: VisitExportFilter, now: number): AsyncGenerator<CodedEvent> {
  const keydir = store.keydir;
  const events = keydir.events;
  const host = (i: number): string | null => events.referrers.host(i);
  const release = store.holdSlots();
  try {
    const slots: number[] = [];
    const cursors: number[] = [];
    const ends: number[] = [];
    const candidates = filter.code === undefined ? keydir.slotsOldestFirst() : [keydir.find(filter.code)].filter((s) => s !== -1);
    for (const s of candidates) {
      if (isExpiredAt(keydir.createdAt(s), keydir.retentionDays(s), now)) continue;
      if (filter.author !== undefined && !keydir.isBy(s, filter.author)) continue;
      const data = events.data(s);
      if (data === undefined) continue;
      const n = events.length(s);
      const first = firstAtOrAfter(data, 0, n, filter.from);
      const end = firstAtOrAfter(data, first, n, filter.to);
      if (first < end) {
        slots.push(s);
        cursors.push(first);
        ends.push(end);
      }
    }
    const time = (k: number): number => events.data(slots[k]!)![cursors[k]! * STRIDE + TIME]!;
    // A binary min-heap of link indexes by the time of each link's next event (ties: older link first).
    const heap: number[] = [];
    const less = (a: number, b: number): boolean => time(a) < time(b) || (time(a) === time(b) && a < b);
    const down = (i: number): void => {
      for (;;) {
        let m = i;
        const l = 2 * i + 1;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (l + 1 < heap.length && less(heap[l + 1]!, heap[m]!)) m = l + 1;
        if (m === i) return;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    };
    for (let k = 0; k < slots.length; k++) heap.push(k);
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    let done = 0;
    while (heap.length > 0) {
      const k = heap[0]!;
      const s = slots[k]!;
      const data = events.data(s);
      // Its events were removed meanwhile (DELETE …/visits, a delete): the link is done.
      if (data === undefined || cursors[k]! >= Math.min(ends[k]!, events.length(s))) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
        down(0);
        continue;
      }
      const at = cursors[k]! * STRIDE;
      cursors[k] = cursors[k]! + 1;
      if (passes(data[at + ATTRS]!, filter.bots)) yield { code: keydir.code(s), event: withoutVisitor(unpack(data, at, host)) };
      down(0);
      if (++done % EXPORT_SLICE === 0) await nextTurn();
    }
  } finally {
    release();
  }
}
