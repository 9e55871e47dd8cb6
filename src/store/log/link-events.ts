/**
 * The visit events of the log store, in memory: per keydir slot, the link's events in the packed
 * form of `visits/packed.ts` (four words an event), in time order (ties in arrival order), so one
 * link's range is found by a binary search and counted without a single object per event. Ten
 * million events take 160 MB, plus one small array object per link with events.
 *
 * Each link also keeps the sequence number of its next event (`seq`). Every event the log holds is
 * numbered by it, and replay applies a line's events only from the link's next number on: a
 * compaction writes each link's events as of a moment, and lines written after that moment (copied
 * onto the new log) may hold events the compaction wrote already (`replay-line.ts`).
 *
 * Referrer hosts are numbered once (`Referrers`): an event holds the number, the log writes each
 * number's host once (an `R` entry) before the first event that uses it.
 *
 * A new event is staged, not placed at once (`add`): its number is set, and its words wait in one
 * array with the events after it, until `STAGE` of them are placed in their links' arrays
 * together, or anything reads or changes a link's events first (a link with a visit limit reads
 * its length on every visit, and then finds every event in place). Placed one by
 * one, each redirect touched an array of its own among a thousand links' (cold in the processor's
 * caches); placed in a batch, one loop does it, with the rest of the request's data left in the
 * caches (docs/performance.md, visit analytics).
 */
import { ATTRS, firstAtOrAfter, STRIDE, TIME } from '../../visits/packed.ts';
import { Referrers } from './referrers.ts';

/** Events a link's array starts with room for. */
const FIRST_ROOM = 4;

/** Events staged before they are placed in their links' arrays (`add`). */
const STAGE = 16_384;
/** Words of a staged event: its slot, then its four words. */
const STAGED = 1 + STRIDE;

/** `n` words, not zeroed (`Buffer.allocUnsafe`: a pool slice is 8-byte aligned, a larger one a fresh buffer). */
function words(n: number): Uint32Array {
  const bytes = Buffer.allocUnsafe(n * 4);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, n);
}

/** What a start-up checkpoint keeps of the events (`LinkEvents.fromImage`). */
export interface EventsImage {
  slots: Int32Array;
  lengths: Uint32Array;
  seqs: Float64Array;
  data: Uint32Array;
}

export class LinkEvents {
  private lists: (Uint32Array | undefined)[] = [];
  /** Events of each slot placed in its array. */
  private lengths: number[] = [];
  private seqs: number[] = [];
  /** Events added and not placed yet, `STAGED` words each, in the order added. */
  private readonly staged: Uint32Array;
  private stagedCount = 0;
  /** Events held, over every slot. */
  total = 0;

  /** `stage`: events staged at most (`STAGE`; a test takes a few). */
  constructor(
    readonly referrers = new Referrers(),
    private readonly stage = STAGE,
  ) {
    this.staged = new Uint32Array(stage * STAGED);
  }

  /** Events of slot `s` (a redirect of a link with a visit limit asks: the staged events are placed first). */
  length(s: number): number {
    this.settle();
    return this.lengths[s] ?? 0;
  }

  /** The events of slot `s`: `length(s) × STRIDE` words from 0 (the array may be longer). */
  data(s: number): Uint32Array | undefined {
    this.settle();
    return this.lists[s];
  }

  /** The number the next event of slot `s` gets. */
  nextSeq(s: number): number {
    return this.seqs[s] ?? 0;
  }

  setNextSeq(s: number, seq: number): void {
    this.seqs[s] = seq;
  }

  /**
   * Makes room for `more` events of slot `s` at once: replay knows how many a line holds, so a link
   * read from a compacted log in one line (up to 4,096 events) gets an array of exactly its size,
   * with no growth left behind.
   */
  reserve(s: number, more: number): void {
    this.settle();
    const n = this.lengths[s] ?? 0;
    const list = this.lists[s];
    if (list !== undefined && list.length >= (n + more) * STRIDE) return;
    // A link read in several lines grows by half at a time, not line by line.
    const room = new Uint32Array((n === 0 ? more : Math.max(n + more, Math.ceil(n * 1.5))) * STRIDE);
    if (list !== undefined) room.set(list.subarray(0, n * STRIDE));
    this.lists[s] = room;
  }

  /**
   * Adds an event to slot `s` in time order (after events of the same second); returns its
   * sequence number. Staged: placed in the slot's array with the next `STAGE` events, or before
   * the array is read or changed.
   */
  add(s: number, time: number, visitor: number, referrer: number, attrs: number): number {
    const staged = this.staged;
    const w = this.stagedCount * STAGED;
    staged[w] = s;
    staged[w + 1] = time;
    staged[w + 2] = visitor;
    staged[w + 3] = referrer;
    staged[w + 4] = attrs;
    this.total++;
    const seq = this.seqs[s] ?? 0;
    this.seqs[s] = seq + 1;
    if (++this.stagedCount === this.stage) this.settle();
    return seq;
  }

  /**
   * Adds the events `data` (`STRIDE` words each) to slot `s` as `add` would one by one, placed at
   * once: a line of a compacted log read at start-up, thousands of one link's events.
   */
  addAll(s: number, data: Uint32Array): void {
    const n = data.length / STRIDE;
    this.reserve(s, n);
    for (let w = 0; w < data.length; w += STRIDE) this.place(s, data[w]!, data[w + 1]!, data[w + 2]!, data[w + 3]!);
    this.total += n;
    this.seqs[s] = (this.seqs[s] ?? 0) + n;
  }

  /** Places the staged events in their slots' arrays, in the order they were added. */
  private settle(): void {
    const n = this.stagedCount;
    if (n === 0) return;
    this.stagedCount = 0;
    const staged = this.staged;
    for (let w = 0; w < n * STAGED; w += STAGED) this.place(staged[w]!, staged[w + 1]!, staged[w + 2]!, staged[w + 3]!, staged[w + 4]!);
  }

  /** Puts an event in slot `s`'s array, in time order (after events of the same second). */
  private place(s: number, time: number, visitor: number, referrer: number, attrs: number): void {
    const n = this.lengths[s] ?? 0;
    let list = this.lists[s];
    if (list === undefined || list.length < (n + 1) * STRIDE) {
      // Doubled, and not zeroed first (every word below the length is written before it is read):
      // a busy link's array is copied and allocated less often, and the collector, which counts
      // the bytes of every new array, runs less.
      const grown = words(Math.max(FIRST_ROOM, 2 * n) * STRIDE);
      if (list !== undefined) grown.set(list.subarray(0, n * STRIDE));
      this.lists[s] = list = grown;
    }
    // Live visits arrive in time order: the place is nearly always the end.
    let at = n;
    while (at > 0 && list[(at - 1) * STRIDE + TIME]! > time) at--;
    if (at < n) list.copyWithin((at + 1) * STRIDE, at * STRIDE, n * STRIDE);
    const w = at * STRIDE;
    list[w] = time;
    list[w + 1] = visitor;
    list[w + 2] = referrer;
    list[w + ATTRS] = attrs;
    this.lengths[s] = n + 1;
  }

  /**
   * Takes back the latest event of slot `s` with these words (a visit given back because its write
   * never happened); false when there is none.
   */
  takeBack(s: number, time: number, visitor: number, referrer: number, attrs: number): boolean {
    this.settle();
    const list = this.lists[s];
    const n = this.lengths[s] ?? 0;
    if (list === undefined) return false;
    for (let i = n - 1; i >= 0; i--) {
      const w = i * STRIDE;
      if (list[w] === time && list[w + 1] === visitor >>> 0 && list[w + 2] === referrer && list[w + ATTRS] === attrs) {
        list.copyWithin(w, w + STRIDE, n * STRIDE);
        this.lengths[s] = n - 1;
        this.total--;
        return true;
      }
    }
    return false;
  }

  /** Removes the events of slot `s` older than `before` (Unix seconds); returns how many. */
  cut(s: number, before: number): number {
    this.settle();
    const list = this.lists[s];
    const n = this.lengths[s] ?? 0;
    if (list === undefined || n === 0) return 0;
    const k = firstAtOrAfter(list, 0, n, before);
    if (k === 0) return 0;
    list.copyWithin(0, k * STRIDE, n * STRIDE);
    this.lengths[s] = n - k;
    this.total -= k;
    return k;
  }

  /** Removes every event of slot `s` (its sequence goes on); returns how many there were. */
  clear(s: number): number {
    this.settle();
    const n = this.lengths[s] ?? 0;
    this.lists[s] = undefined;
    this.lengths[s] = 0;
    this.total -= n;
    return n;
  }

  /** Forgets slot `s` altogether (its link is gone). */
  drop(s: number): void {
    this.clear(s);
    this.seqs[s] = 0;
  }

  /**
   * Events as a start-up checkpoint holds them (`checkpoint.ts`): the slots that have events or a
   * next number, their event counts and next numbers, and every event, slot after slot. Each
   * slot's are a view of `data`, which a new event moves into an array of its own (`add` grows a
   * full array), so the views are never written past their end.
   */
  static fromImage(image: EventsImage, referrers: Referrers): LinkEvents {
    const events = new LinkEvents(referrers);
    const { slots, lengths, seqs, data } = image;
    let w = 0;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      const n = lengths[i]!;
      if (n > 0) events.lists[s] = data.subarray(w, w + n * STRIDE);
      events.lengths[s] = n;
      events.seqs[s] = seqs[i]!;
      w += n * STRIDE;
      events.total += n;
    }
    return events;
  }

  /** Follows a vacuum of the keydir: `map[old slot]` is the new slot, or -1. */
  renumber(map: Int32Array): void {
    // Staged events name their slots by the old numbers.
    this.settle();
    const lists: (Uint32Array | undefined)[] = [];
    const lengths: number[] = [];
    const seqs: number[] = [];
    for (let s = 0; s < map.length; s++) {
      const to = map[s]!;
      if (to < 0) continue;
      lists[to] = this.lists[s];
      lengths[to] = this.lengths[s] ?? 0;
      seqs[to] = this.seqs[s] ?? 0;
    }
    this.lists = lists;
    this.lengths = lengths;
    this.seqs = seqs;
  }
}
