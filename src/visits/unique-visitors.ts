/**
 * Unique visitors (docs/analytics.md): the distinct (UTC day, visitor id) pairs among counted
 * events, in the whole range and in each bucket. Ten million events can hold as many distinct pairs,
 * and one hash set of all of them is hundreds of megabytes probed at random, every insert a cache
 * miss, and grown again and again. So the walk over the events (aggregate.ts) only appends an
 * event's visitor id to its *cell* (a bucket's part of one UTC day, cells.ts), and the distinct ids
 * are counted at the end, a day at a time, in a table sized for that day and reused: it never
 * grows, and it is hot while its day goes in.
 *
 * A cell keeps its ids in chunks that grow in size: growth never copies, and a question that
 * counts few events allocates little. The walk writes every event's id at its cell's next place
 * and moves the place on only for an id to keep (a branch taken at random costs more than a
 * write). When a day spans several buckets (hours, or days of a zone that is not UTC), the table
 * marks each id with the day's last cell that had it, so one pass finds both the ids new in their
 * bucket and those new in their day: a visitor new in a bucket is new in the range only if new in
 * its UTC day.
 */
import type { Cells } from './cells.ts';

/**
 * Ids the first chunk of a cell holds; each next one holds `GROWTH` times as many, up to
 * `MAX_CHUNK`: 16, 256, 4,096, then 65,536 at a time, few chunks that are not kept for reuse.
 */
const FIRST_CHUNK = 16;
const GROWTH = 16;
const MAX_CHUNK = 1 << 16;
/** Fibonacci hashing: the top bits of v × 2^32/φ spread even consecutive ids. */
const PHI = 0x9e3779b1;

/**
 * Full chunks and the hash table are kept from one question for the next (a chunk once its day is
 * counted): the ids of ten million events are 36 MB, and memory taken afresh costs a page fault
 * every 4 KB when first written, some tens of milliseconds for that much, then a collection as
 * garbage. Questions running at once share them safely: a chunk belongs to one question until
 * its day is counted, and the table holds nothing between two calls of `countDay`. At most
 * `MAX_SPARE` chunks (64 MB) and a table of `MAX_SHARED` words (16 MB) are kept.
 */
const spare: Int32Array[] = [];
const MAX_SPARE = 256;
let shared = new Int32Array(0);
/** A larger table (a day of over 2M ids) is made for its day and not kept: 16 MB is kept at most. */
const MAX_SHARED = 1 << 22;

/** An empty table of at least `size` words: the shared one when it may be kept. */
function emptyTable(size: number): Int32Array {
  if (size > MAX_SHARED) return new Int32Array(size);
  if (shared.length < size) shared = new Int32Array(size);
  else shared.fill(0, 0, size);
  return shared;
}

export class UniqueVisitors {
  /**
   * Per cell: the chunk its next ids go into and how many it holds (never all: a full chunk is
   * followed by a new one at once, so the walk may always write at `filled[c]`), and the counted
   * events without an id (a visitor each). The walk (aggregate.ts) writes these itself.
   */
  readonly current: Int32Array[];
  readonly filled: Int32Array;
  readonly anonymous: Float64Array;
  /** Per cell, its chunks, the current one last. */
  private readonly chunks: Int32Array[][];
  /** The days' distinct ids, per bucket and in all, as they are counted. */
  private readonly perBucket: Float64Array;
  /** The ids kept per bucket (every counted event with one), as the days are counted. */
  private readonly visits: Float64Array;
  private total = 0;
  private nextDay = 0;

  constructor(
    private readonly cells: Cells,
    buckets: number,
  ) {
    this.perBucket = new Float64Array(buckets);
    this.visits = new Float64Array(buckets);
    this.current = Array.from({ length: cells.count }, () => new Int32Array(FIRST_CHUNK));
    this.chunks = this.current.map((chunk) => [chunk]);
    this.filled = new Int32Array(cells.count);
    this.anonymous = new Float64Array(cells.count);
  }

  /** Cell `c`'s current chunk is full: a new one, larger. */
  grow(c: number): void {
    const size = Math.min(MAX_CHUNK, GROWTH * this.current[c]!.length);
    const chunk = size === MAX_CHUNK && spare.length > 0 ? spare.pop()! : new Int32Array(size);
    this.chunks[c]!.push(chunk);
    this.current[c] = chunk;
    this.filled[c] = 0;
  }

  /**
   * Counts the ids of whole UTC days, from the first not yet counted, until at least `budget` ids
   * are counted or every day is; true when every day is. A caller that must not hold the event
   * loop for long counts a budget at a time and yields between. Only once every event is added: a
   * day counted is not counted again.
   */
  settle(budget = Infinity): boolean {
    const days = this.cells.days;
    let done = 0;
    while (this.nextDay < days && done < budget) {
      done += this.countDay(this.nextDay++);
    }
    return this.nextDay >= days;
  }

  /** Counts the distinct ids of day `d` into its buckets and the total; returns how many ids it had. */
  private countDay(d: number): number {
    const first = this.cells.dayCell[d]!;
    const end = this.cells.dayCell[d + 1]!;
    let all = 0;
    for (let c = first; c < end; c++) all += this.size(c);
    if (all === 0) return 0;
    // Linear probing in a table at most half full.
    let bits = 4;
    while (1 << bits < 2 * all) bits++;
    const fresh = end - first === 1 ? this.countCell(first, bits) : this.countCells(first, end, bits);
    this.total += fresh;
    for (let c = first; c < end; c++) {
      this.visits[this.cells.bucket[c]!]! += this.size(c);
      // Counted: the ids are not needed again.
      for (const chunk of this.chunks[c]!) if (chunk.length === MAX_CHUNK && spare.length < MAX_SPARE) spare.push(chunk);
      this.chunks[c] = [];
    }
    return all;
  }

  /** A day of one cell: its distinct ids, in a table of 2^bits ids. */
  private countCell(c: number, bits: number): number {
    const keys = emptyTable(1 << bits);
    const list = this.chunks[c]!;
    tally[0] = tally[1] = 0;
    for (let k = 0; k < list.length; k++) {
      const ids = list[k]!;
      insert(keys, ids, k === list.length - 1 ? this.filled[c]! : ids.length, bits);
    }
    const fresh = tally[0]! + tally[1]!;
    this.perBucket[this.cells.bucket[c]!]! += fresh;
    return fresh;
  }

  /** A day of several cells (its buckets are hours, or days of a zone that is not UTC). */
  private countCells(first: number, end: number, bits: number): number {
    const table = emptyTable(2 << bits);
    tally[1] = 0;
    for (let c = first; c < end; c++) {
      tally[0] = 0;
      const list = this.chunks[c]!;
      for (let k = 0; k < list.length; k++) {
        const ids = list[k]!;
        insertMarked(table, ids, k === list.length - 1 ? this.filled[c]! : ids.length, bits, c - first + 1);
      }
      this.perBucket[this.cells.bucket[c]!]! += tally[0]!;
    }
    return tally[1]!;
  }

  /** The ids held by cell `c`. */
  private size(c: number): number {
    const list = this.chunks[c]!;
    if (list.length === 0) return 0;
    let n = this.filled[c]!;
    for (let k = 0; k < list.length - 1; k++) n += list[k]!.length;
    return n;
  }

  /**
   * The distinct pairs in the range and in each bucket, and each bucket's counted events (its ids
   * kept and the events without one); every day is counted first.
   */
  counts(): { total: number; perBucket: Float64Array; visits: Float64Array } {
    this.settle();
    const perBucket = this.perBucket.slice();
    const visits = this.visits.slice();
    let total = this.total;
    for (let c = 0; c < this.cells.count; c++) {
      perBucket[this.cells.bucket[c]!]! += this.anonymous[c]!;
      visits[this.cells.bucket[c]!]! += this.anonymous[c]!;
      total += this.anonymous[c]!;
    }
    return { total, perBucket, visits };
  }
}

/**
 * What `insert` and `insertMarked` found: the ids new in their cell, and new in their day. The
 * loops over ids are functions of their own, called once a chunk, so that they are compiled once
 * and stay compiled from question to question (a loop inside a method that runs once a day would
 * be compiled anew, while it runs, every time).
 */
const tally = new Int32Array(2);

/**
 * Adds `ids[0, n)` to `keys`, a table of 2^bits ids at most half full where 0 marks an empty slot:
 * `tally[0]` counts the ids new to it, `tally[1]` is 1 once 0 (an id like any other) is seen.
 */
function insert(keys: Int32Array, ids: Int32Array, n: number, bits: number): void {
  const mask = (1 << bits) - 1;
  const shift = 32 - bits;
  let fresh = 0;
  for (let i = 0; i < n; i++) {
    const v = ids[i]!;
    if (v === 0) {
      tally[1] = 1;
      continue;
    }
    let slot = Math.imul(v, PHI) >>> shift;
    for (;;) {
      const key = keys[slot]!;
      if (key === 0) {
        keys[slot] = v;
        fresh++;
        break;
      }
      if (key === v) break;
      slot = (slot + 1) & mask;
    }
  }
  tally[0]! += fresh;
}

/**
 * Adds `ids[0, n)` of the day's cell `mark` (1, 2, …) to `table`, 2^bits slots of two words each:
 * an id and the number of the day's last cell that had it (0 for an empty slot, so 0 is an id like
 * any other). `tally[0]` counts the ids new in the cell, `tally[1]` those new in the day: one pass
 * for both.
 */
function insertMarked(table: Int32Array, ids: Int32Array, n: number, bits: number, mark: number): void {
  const wrap = (2 << bits) - 1;
  const shift = 32 - bits;
  let inCell = 0;
  let inDay = 0;
  for (let i = 0; i < n; i++) {
    const v = ids[i]!;
    let at = (Math.imul(v, PHI) >>> shift) << 1;
    for (;;) {
      const m = table[at + 1]!;
      if (m === 0) {
        table[at] = v;
        table[at + 1] = mark;
        inCell++;
        inDay++;
        break;
      }
      if (table[at] === v) {
        if (m !== mark) {
          table[at + 1] = mark;
          inCell++;
        }
        break;
      }
      at = (at + 2) & wrap;
    }
  }
  tally[0]! += inCell;
  tally[1]! += inDay;
}
