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
 */
import { ATTRS, firstAtOrAfter, STRIDE, TIME } from '../../visits/packed.ts';

/** Events a link's array starts with room for. */
const FIRST_ROOM = 4;

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
  private lengths: number[] = [];
  private seqs: number[] = [];
  /** Events held, over every slot. */
  total = 0;

  constructor(readonly referrers = new Referrers()) {}

  /** Events of slot `s`. */
  length(s: number): number {
    return this.lengths[s] ?? 0;
  }

  /** The events of slot `s`: `length(s) × STRIDE` words from 0 (the array may be longer). */
  data(s: number): Uint32Array | undefined {
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
    const n = this.lengths[s] ?? 0;
    const list = this.lists[s];
    if (list !== undefined && list.length >= (n + more) * STRIDE) return;
    // A link read in several lines grows by half at a time, not line by line.
    const room = new Uint32Array((n === 0 ? more : Math.max(n + more, Math.ceil(n * 1.5))) * STRIDE);
    if (list !== undefined) room.set(list.subarray(0, n * STRIDE));
    this.lists[s] = room;
  }

  /** Adds an event to slot `s` in time order (after events of the same second); returns its sequence number. */
  add(s: number, time: number, visitor: number, referrer: number, attrs: number): number {
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
    this.total++;
    const seq = this.seqs[s] ?? 0;
    this.seqs[s] = seq + 1;
    return seq;
  }

  /**
   * Takes back the latest event of slot `s` with these words (a visit given back because its write
   * never happened); false when there is none.
   */
  takeBack(s: number, time: number, visitor: number, referrer: number, attrs: number): boolean {
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

/** Referrer hosts by number (1, 2, …; 0 is "none"), and which numbers the log has written. */
export class Referrers {
  private readonly numbers = new Map<string, number>();
  private readonly hosts: (string | undefined)[] = [undefined];
  /** Numbers whose `R` entry is durable in the log. */
  private readonly written: boolean[] = [];

  /** The number of `host` (made now if new); 0 for null. */
  numberOf(host: string | null): number {
    if (host === null) return 0;
    let n = this.numbers.get(host);
    if (n === undefined) {
      n = this.hosts.length;
      this.hosts.push(host);
      this.numbers.set(host, n);
    }
    return n;
  }

  /** The host of number `n`, or null. */
  host(n: number): string | null {
    return this.hosts[n] ?? null;
  }

  /** Sets number `n` to `host`, as an `R` entry of the log says. */
  define(n: number, host: string): void {
    while (this.hosts.length <= n) this.hosts.push(undefined);
    this.hosts[n] = host;
    this.numbers.set(host, n);
    this.written[n] = true;
  }

  isWritten(n: number): boolean {
    return n === 0 || this.written[n] === true;
  }

  markWritten(n: number): void {
    this.written[n] = true;
  }

  /**
   * The numbers whose `R` entry is in the log, with their hosts: what a replay of the log knows
   * (the start-up checkpoint keeps these, and `define`s them back).
   */
  *inLog(): Generator<[number, string]> {
    for (const [n, host] of this.entries()) if (this.written[n] === true) yield [n, host];
  }

  /** Every number with its host, for a rewrite of the log. */
  *entries(): Generator<[number, string]> {
    for (let n = 1; n < this.hosts.length; n++) {
      const host = this.hosts[n];
      if (host !== undefined) yield [n, host];
    }
  }

  get size(): number {
    return this.hosts.length - 1;
  }
}
