/**
 * The visits waiting in `VisitCounts.pending` (`visit-counts.ts`) as lines of the log: `PENDING`
 * numbers an event, one `X` line per run of consecutive numbers of one link, after the `R` lines
 * of the referrer hosts the log does not hold yet. Two forms: entries (a write of one link at once,
 * a few events) and bytes encoded straight into one buffer (a flush, thousands of events).
 */
import { encodeEntry, eventLineBound, writeEventLine, type Entry } from './format.ts';
import type { Keydir } from './keydir.ts';
import type { Referrers } from './referrers.ts';
import type { EncodedLines } from './log-writer.ts';

/** Events per event entry: a line of a few kilobytes. */
const EVENTS_PER_ENTRY = 256;

/** Numbers a pending event takes in `VisitCounts.pending`: slot, seq, time, visitor, referrer, attrs. */
export const PENDING = 6;

/** The events of one line being written (`eventLines`), reused: a flush makes no garbage of its own. */
const scratch = new Uint32Array(EVENTS_PER_ENTRY * 4);

/** `R` entries for the referrer numbers not yet known to be in the log (0, none, needs none). */
export function referrerEntries(referrers: Referrers, numbers: Iterable<number>): Entry[] {
  const entries: Entry[] = [];
  const seen = new Set<number>();
  for (const n of numbers) {
    if (referrers.isWritten(n) || seen.has(n)) continue;
    seen.add(n);
    entries.push({ op: 'R', n, host: referrers.host(n)! });
  }
  return entries;
}

/**
 * The entries of pending events `p` (`PENDING` numbers each) of live slots: the `R` entries they
 * need, then one `X` line per run of consecutive numbers of one link.
 */
export function eventEntries(records: Keydir, p: number[]): Entry[] {
  const bySlot = new Map<number, number[]>();
  for (let i = 0; i < p.length; i += PENDING) {
    const s = p[i]!;
    // A slot deleted since its visit has no events worth writing.
    if (!records.isLive(s)) continue;
    let list = bySlot.get(s);
    if (list === undefined) bySlot.set(s, (list = []));
    list.push(i);
  }
  const lines: Entry[] = [];
  const referrers: number[] = [];
  for (const [s, at] of bySlot) {
    const code = records.code(s);
    for (let k = 0; k < at.length; ) {
      let end = k + 1;
      while (end < at.length && end - k < EVENTS_PER_ENTRY && p[at[end]! + 1] === p[at[end - 1]! + 1]! + 1) end++;
      const events = new Uint32Array((end - k) * 4);
      for (let j = k, w = 0; j < end; j++, w += 4) {
        const i = at[j]!;
        events[w] = p[i + 2]!;
        events[w + 1] = p[i + 3]!;
        events[w + 2] = p[i + 4]!;
        events[w + 3] = p[i + 5]!;
        if (p[i + 4] !== 0) referrers.push(p[i + 4]!);
      }
      lines.push({ op: 'X', code, seq: p[at[k]! + 1]!, events });
      k = end;
    }
  }
  return [...referrerEntries(records.events.referrers, referrers), ...lines];
}

/**
 * The lines of pending events `p` (`PENDING` numbers each) of live slots, encoded at once (what
 * `eventEntries` gives, without an object per line): one `X` line per run of consecutive numbers
 * of one link, and the `R` lines of the referrers they need, to go first.
 */
export function eventLines(records: Keydir, p: number[]): { lines: EncodedLines; referrers: (EncodedLines & { n: number })[] } {
  const known = records.events.referrers;
  const n = p.length / PENDING;
  // Each slot's events, chained in the order recorded: `next[e]` is the next event of e's slot.
  const next = new Int32Array(n).fill(-1);
  const last = new Map<number, number>();
  const heads: number[] = [];
  const referrers: (EncodedLines & { n: number })[] = [];
  const named = new Set<number>();
  for (let e = 0; e < n; e++) {
    const s = p[e * PENDING]!;
    // A slot deleted since its visit has no events worth writing.
    if (!records.isLive(s)) continue;
    const before = last.get(s);
    if (before === undefined) heads.push(e);
    else next[before] = e;
    last.set(s, e);
    const r = p[e * PENDING + 4]!;
    if (!known.isWritten(r) && !named.has(r)) {
      named.add(r);
      referrers.push({ n: r, bytes: encodeEntry({ op: 'R', n: r, host: known.host(r)! }), lines: 1 });
    }
  }
  let out = Buffer.allocUnsafe(n * 40 + heads.length * 64);
  let at = 0;
  let count = 0;
  const events = scratch;
  for (const head of heads) {
    const code = records.code(p[head * PENDING]!);
    for (let e = head; e !== -1; ) {
      // A run: consecutive numbers, at most EVENTS_PER_ENTRY of them.
      const seq = p[e * PENDING + 1]!;
      let k = 0;
      do {
        const i = e * PENDING;
        events[k * 4] = p[i + 2]!;
        events[k * 4 + 1] = p[i + 3]!;
        events[k * 4 + 2] = p[i + 4]!;
        events[k * 4 + 3] = p[i + 5]!;
        k++;
        e = next[e]!;
      } while (e !== -1 && k < EVENTS_PER_ENTRY && p[e * PENDING + 1] === seq + k);
      const room = eventLineBound(code, k);
      if (at + room > out.length) {
        const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, at + room));
        out.copy(bigger, 0, 0, at);
        out = bigger;
      }
      at = writeEventLine(out, at, 'X', code, seq, events, 0, k);
      count++;
    }
  }
  return { lines: { bytes: out.subarray(0, at), lines: count }, referrers };
}

/** Pending events (`PENDING` numbers each) after a vacuum: `renumber[old slot]` is the new slot, or -1 (gone). */
export function renumbered(events: readonly number[], renumber: Int32Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < events.length; i += PENDING) {
    const to = renumber[events[i]!]!;
    if (to !== -1) out.push(to, ...events.slice(i + 1, i + PENDING));
  }
  return out;
}

/** The pending events for which `keep` holds (given the array and where the event starts in it). */
export function keptEvents(events: number[], keep: (events: number[], at: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < events.length; i += PENDING) if (keep(events, i)) out.push(...events.slice(i, i + PENDING));
  return out;
}
