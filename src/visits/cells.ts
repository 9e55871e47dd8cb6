/**
 * The cells of a stats range: the range cut at every bucket edge and every UTC midnight, so a
 * cell is a bucket's part of one UTC day (a Berlin day bucket is two cells, an hour bucket one).
 * The walk over the events (aggregate.ts) counts visits per cell and stages visitor ids per cell,
 * because unique visitors are distinct (UTC day, visitor id) pairs (unique-visitors.ts) while the
 * series is per bucket.
 *
 * Ten million events are each placed in their cell without a search and nearly without a branch
 * (a branch taken at random is the costliest thing in that loop): the range is cut into equal
 * slots of 2^k seconds, and `slotCell` holds the cell where each slot starts; an event's cell is
 * its slot's, moved on past any edge within the slot, which few events see.
 */

const DAY = 86_400;
/** Slots at most: 16,384 of four bytes, a table that stays in the processor's cache. */
const MAX_SLOTS = 1 << 14;

export class Cells {
  /** `start[c]` to `start[c + 1]` is cell `c` (the last entry is the range's end). */
  readonly start: Float64Array;
  /** Each cell's bucket. */
  readonly bucket: Int32Array;
  /** Per UTC day of the range, its first cell; then the number of cells. */
  readonly dayCell: Int32Array;
  /** The cell of `time` is `slotCell[(time - base) >>> shift]` or a later one. */
  readonly base: number;
  readonly shift: number;
  readonly slotCell: Int32Array;

  /** `edges` as in a `StatsQuery`: bucket starts, then the end of the last. */
  constructor(edges: ArrayLike<number>) {
    const buckets = Math.max(0, edges.length - 1);
    const starts: number[] = [];
    const bucket: number[] = [];
    const dayCell: number[] = [];
    if (buckets > 0) {
      const to = edges[buckets]!;
      const firstDay = Math.floor(edges[0]! / DAY);
      const days = Math.floor((to - 1) / DAY) - firstDay + 1;
      // Days and buckets both increase: walk them together, one cell per overlap.
      let b = 0;
      for (let d = 0; d < days; d++) {
        const dayStart = (firstDay + d) * DAY;
        while (b < buckets - 1 && edges[b + 1]! <= dayStart) b++;
        dayCell.push(starts.length);
        for (let c = b; c < buckets && edges[c]! < dayStart + DAY; c++) {
          starts.push(Math.max(edges[c]!, dayStart));
          bucket.push(c);
        }
      }
      starts.push(to);
    }
    dayCell.push(bucket.length);
    this.start = Float64Array.from(starts);
    this.bucket = Int32Array.from(bucket);
    this.dayCell = Int32Array.from(dayCell);
    this.base = buckets > 0 ? edges[0]! : 0;
    const span = buckets > 0 ? edges[buckets]! - this.base : 0;
    let shift = 0;
    while (span / 2 ** shift > MAX_SLOTS) shift++;
    this.shift = shift;
    const slots = Math.max(1, Math.ceil(span / 2 ** shift));
    this.slotCell = new Int32Array(slots);
    let c = 0;
    for (let s = 0; s < slots && bucket.length > 0; s++) {
      const t = this.base + s * 2 ** shift;
      while (t >= starts[c + 1]!) c++;
      this.slotCell[s] = c;
    }
  }

  /** The number of cells (0 when the range has no bucket). */
  get count(): number {
    return this.bucket.length;
  }

  /** The number of UTC days the range touches. */
  get days(): number {
    return this.dayCell.length - 1;
  }

  /** The cell of `time`, which must be within the range (the walk inlines this). */
  of(time: number): number {
    let c = this.slotCell[(time - this.base) >>> this.shift]!;
    while (time >= this.start[c + 1]!) c++;
    return c;
  }
}
