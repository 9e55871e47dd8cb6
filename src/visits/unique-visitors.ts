/**
 * Unique visitors (docs/analytics.md): the distinct (UTC day, visitor id) pairs among counted
 * events, in the whole range and in each bucket. Ten million events can hold as many distinct pairs,
 * and one hash set of all of them is hundreds of megabytes probed at random, every insert a cache
 * miss, and grown again and again. So an event's visitor id is only appended to its *cell* (a
 * bucket's part of one UTC day: the cell and the day are implied by where the id is kept), and the
 * distinct ids are counted once at the end, one cell after another, in a table sized for that cell
 * and reused: it never grows, and it is hot while its cell goes in. A day's ids are counted
 * likewise when a UTC day spans two buckets (hours, or days in a zone that is not UTC): a visitor
 * new in a bucket is new in the range only if new in its UTC day.
 */

const DAY = 86_400;
const EMPTY = new Int32Array(0);

/**
 * Counts distinct signed 32-bit numbers by linear probing in a table used for one group at a time, sized
 * for it (at most half full); 0 marks an empty slot, so 0 itself is a flag.
 */
class Distinct {
  private keys = new Int32Array(0);
  private mask = 0;
  private shift = 32;
  private zero = false;

  /** Empties the table, ready for up to `n` numbers. */
  reset(n: number): void {
    let bits = 4;
    while (1 << bits < 2 * n) bits++;
    const size = 1 << bits;
    if (this.keys.length < size) this.keys = new Int32Array(size);
    else this.keys.fill(0, 0, size);
    this.mask = size - 1;
    this.shift = 32 - bits;
    this.zero = false;
  }

  /** Adds `v` (a signed 32-bit number); true if it was not there. */
  add(v: number): boolean {
    if (v === 0) {
      if (this.zero) return false;
      return (this.zero = true);
    }
    const keys = this.keys;
    // Fibonacci hashing: the top bits of v × 2^32/φ spread even consecutive ids.
    let i = Math.imul(v, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const k = keys[i]!;
      if (k === 0) {
        keys[i] = v;
        return true;
      }
      if (k === v) return false;
      i = (i + 1) & this.mask;
    }
  }
}

export class UniqueVisitors {
  /** Per UTC day of the range (counted from `firstDay`): its first cell and its first bucket. */
  private readonly dayCell: Int32Array;
  private readonly dayBucket: Int32Array;
  /** Per cell: its bucket; its ids so far and how many. */
  private readonly cellBucket: Int32Array;
  private readonly ids: Int32Array[];
  private readonly lengths: Int32Array;
  private readonly firstDay: number;
  /** Every UTC day lies in one bucket: a visitor new in its bucket is new in the range. */
  private readonly oneBucketADay: boolean;
  /** Starts with the visitors without an id (one each); the days' distinct ids are added as they are counted. */
  private readonly perBucket: Float64Array;
  private total = 0;
  private nextDay = 0;
  private readonly inCell = new Distinct();
  private readonly inDay = new Distinct();
  private lastCell = -1;
  private lastVisitor = 0;

  /** `edges` as in a `StatsQuery`: bucket starts, then the end of the last. */
  constructor(edges: ArrayLike<number>) {
    const buckets = Math.max(0, edges.length - 1);
    this.perBucket = new Float64Array(buckets);
    const from = buckets > 0 ? edges[0]! : 0;
    const to = buckets > 0 ? edges[buckets]! : 0;
    this.firstDay = Math.floor(from / DAY);
    const days = buckets > 0 ? Math.floor((to - 1) / DAY) - this.firstDay + 1 : 0;
    this.dayCell = new Int32Array(days + 1);
    this.dayBucket = new Int32Array(days);
    const cellBucket: number[] = [];
    // Days and buckets both increase: walk them together, one cell per overlap.
    let b = 0;
    for (let d = 0; d < days; d++) {
      const dayStart = (this.firstDay + d) * DAY;
      while (b < buckets - 1 && edges[b + 1]! <= dayStart) b++;
      this.dayCell[d] = cellBucket.length;
      this.dayBucket[d] = b;
      for (let c = b; c < buckets && edges[c]! < dayStart + DAY; c++) cellBucket.push(c);
    }
    this.dayCell[days] = cellBucket.length;
    this.cellBucket = Int32Array.from(cellBucket);
    this.ids = Array.from({ length: cellBucket.length }, () => new Int32Array(16));
    this.lengths = new Int32Array(cellBucket.length);
    this.oneBucketADay = cellBucket.length === days;
  }

  /** A counted event of `visitor` (its 32 bits, signed) at `time`, in `bucket`. */
  add(bucket: number, time: number, visitor: number): void {
    const day = ((time / DAY) | 0) - this.firstDay;
    const cell = this.dayCell[day]! + bucket - this.dayBucket[day]!;
    // A visitor's clicks often come together: the id just kept need not be kept again.
    if (cell === this.lastCell && visitor === this.lastVisitor) return;
    this.lastCell = cell;
    this.lastVisitor = visitor;
    let ids = this.ids[cell]!;
    const n = this.lengths[cell]!;
    if (n === ids.length) {
      const grown = new Int32Array(n * 2);
      grown.set(ids);
      this.ids[cell] = ids = grown;
    }
    ids[n] = visitor;
    this.lengths[cell] = n + 1;
  }

  /** A counted event without an id: a visitor of its own. */
  addAnonymous(bucket: number): void {
    this.perBucket[bucket]!++;
    this.total++;
  }

  /**
   * Counts the ids of whole UTC days, from the first not yet counted, until at least `budget` ids
   * are counted or every day is; true when every day is. Ten million ids take some 100 ms, so a
   * caller that must not hold the event loop that long counts a budget at a time and yields
   * between. Only once every event is added: a day counted is not counted again.
   */
  settle(budget = Infinity): boolean {
    const days = this.dayCell.length - 1;
    let done = 0;
    while (this.nextDay < days && done < budget) {
      const d = this.nextDay++;
      const first = this.dayCell[d]!;
      const end = this.dayCell[d + 1]!;
      let all = 0;
      for (let c = first; c < end; c++) all += this.lengths[c]!;
      if (all === 0) continue;
      done += all;
      const spans = !this.oneBucketADay && end - first > 1;
      if (spans) this.inDay.reset(all);
      for (let c = first; c < end; c++) {
        const n = this.lengths[c]!;
        if (n === 0) continue;
        const ids = this.ids[c]!;
        const inCell = this.inCell;
        inCell.reset(n);
        let fresh = 0;
        let freshInDay = 0;
        for (let i = 0; i < n; i++) {
          const v = ids[i]!;
          if (!inCell.add(v)) continue;
          fresh++;
          if (!spans || this.inDay.add(v)) freshInDay++;
        }
        this.perBucket[this.cellBucket[c]!]! += fresh;
        this.total += freshInDay;
        // Counted: the ids are not needed again.
        this.ids[c] = EMPTY;
      }
    }
    return this.nextDay >= days;
  }

  /** The distinct pairs in the range and in each bucket (every day counted first). */
  counts(): { total: number; perBucket: Float64Array } {
    this.settle();
    return { total: this.total, perBucket: this.perBucket };
  }
}
