/**
 * One subscription's `link.clicked` rows not yet attempted, oldest first, in columns: what the
 * log store's outbox holds most of (up to 100,000 a subscription), kept where the garbage
 * collector has nothing to trace. As objects, a busy link's rows, tens of thousands a second each
 * kept until delivered, made every collection walk them, and cost the redirect a tenth of its
 * speed. A row is an object (`ClickRow`) only when handed out or written; one that failed an
 * attempt leaves the queue for the table's list of rows (`webhook-table.ts`).
 *
 * The strings (an id's shared part, link keys, referrer hosts) are numbered in a table of the
 * queue's own, emptied whenever the queue is.
 */
import { ClickRow } from './click-row.ts';

const START = 256;

export class ClickQueue {
  private seqs = new Float64Array(START);
  private nextAts = new Float64Array(START);
  private times = new Uint32Array(START);
  private attrs = new Uint32Array(START);
  private tails = new Int32Array(START);
  /** Numbers in `strings`; a referrer's is 1 + its number, 0 for none. */
  private heads = new Uint32Array(START);
  private keys = new Uint32Array(START);
  private referrers = new Uint32Array(START);
  private first = 0;
  private end = 0;
  private strings: string[] = [];
  private numbers = new Map<string, number>();

  constructor(private readonly subscription: string) {}

  get size(): number {
    return this.end - this.first;
  }

  /** The seq of the oldest row, or Infinity when there is none. */
  get headSeq(): number {
    return this.end === this.first ? Number.POSITIVE_INFINITY : this.seqs[this.first]!;
  }

  get lastSeq(): number {
    return this.end === this.first ? Number.NEGATIVE_INFINITY : this.seqs[this.end - 1]!;
  }

  /** Appends `row` (a row never attempted, its seq past every row here). */
  push(row: ClickRow): void {
    if (this.end === this.seqs.length) this.makeRoom();
    const i = this.end++;
    this.seqs[i] = row.seq;
    this.nextAts[i] = row.nextAt;
    this.times[i] = row.time;
    this.attrs[i] = row.attrs;
    this.tails[i] = row.idTail;
    this.heads[i] = this.number(row.idHead, 0);
    this.keys[i] = this.number(row.key, 1);
    this.referrers[i] = row.referrer === null ? 0 : 1 + this.number(row.referrer, 2);
  }

  /** The row at `at` (from 0, the oldest), as an object. */
  row(at: number): ClickRow {
    const i = this.first + at;
    const s = this.strings;
    const r = this.referrers[i]!;
    return new ClickRow(
      this.seqs[i]!,
      this.subscription,
      0,
      this.nextAts[i]!,
      s[this.heads[i]!]!,
      this.tails[i]!,
      s[this.keys[i]!]!,
      this.times[i]!,
      r === 0 ? null : s[r - 1]!,
      this.attrs[i]!,
    );
  }

  /** Where the row `seq` is (from 0), or -1. */
  find(seq: number): number {
    let lo = this.first;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.end && this.seqs[lo] === seq ? lo - this.first : -1;
  }

  /** Takes the row at `at` out (the oldest, but for a settle written twice). */
  remove(at: number): void {
    if (at === 0) this.first++;
    else {
      const i = this.first + at;
      for (const column of this.columns()) column.copyWithin(i, i + 1, this.end);
      this.end--;
    }
    if (this.first === this.end) {
      this.first = this.end = 0;
      this.strings = [];
      this.numbers = new Map();
      this.lastNumbers = [-1, -1, -1];
    }
  }

  /** Every row, oldest first, as objects (a compaction, a checkpoint). */
  rows(): ClickRow[] {
    return Array.from({ length: this.size }, (_, at) => this.row(at));
  }

  /**
   * Per column (an id's head, a key, a referrer), the last string numbered and its number: a
   * flush's rows share their id's head and, mostly, their link and referrer.
   */
  private lastStrings = ['', '', ''];
  private lastNumbers = [-1, -1, -1];

  private number(s: string, column: 0 | 1 | 2): number {
    if (this.lastNumbers[column] !== -1 && s === this.lastStrings[column]) return this.lastNumbers[column]!;
    let n = this.numbers.get(s);
    if (n === undefined) {
      n = this.strings.length;
      this.strings.push(s);
      this.numbers.set(s, n);
    }
    this.lastStrings[column] = s;
    this.lastNumbers[column] = n;
    return n;
  }

  private columns(): (Float64Array | Uint32Array | Int32Array)[] {
    return [this.seqs, this.nextAts, this.times, this.attrs, this.tails, this.heads, this.keys, this.referrers];
  }

  /** Moves the rows to the front when most of the room lies before them, else doubles it. */
  private makeRoom(): void {
    const size = this.size;
    const length = size * 2 > this.seqs.length ? this.seqs.length * 2 : this.seqs.length;
    const move = <T extends Float64Array | Uint32Array | Int32Array>(column: T, make: (n: number) => T): T => {
      const to = length === column.length ? column : make(length);
      to.set(column.subarray(this.first, this.end));
      return to;
    };
    this.seqs = move(this.seqs, (n) => new Float64Array(n));
    this.nextAts = move(this.nextAts, (n) => new Float64Array(n));
    this.times = move(this.times, (n) => new Uint32Array(n));
    this.attrs = move(this.attrs, (n) => new Uint32Array(n));
    this.tails = move(this.tails, (n) => new Int32Array(n));
    this.heads = move(this.heads, (n) => new Uint32Array(n));
    this.keys = move(this.keys, (n) => new Uint32Array(n));
    this.referrers = move(this.referrers, (n) => new Uint32Array(n));
    this.first = 0;
    this.end = size;
  }
}
