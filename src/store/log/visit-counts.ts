/**
 * Visit counts. A visit is not worth an fsync: it bumps an integer in memory, and the counts of the
 * codes visited since the last flush are appended as count-batch entries (op `V`, absolute counts;
 * see `format.ts`) at least once a second and at close. A crash loses at most those seconds of
 * counts, never a link.
 *
 * A link with a visit limit is the exception: a lost count could grant a visit twice, so each of
 * its counted visits is written at once, as a count entry of its new absolute count that joins the
 * group commit (`countDurably`), and a link that gets a limit has its count so far written with
 * the edit (`store.ts`, `write`). Both kinds read the count when they queue, and the log writes in
 * queue order, so the counts on disk never go down, but for a visit given back (see there).
 */
import type { Entry } from './format.ts';
import type { Keydir } from './keydir.ts';
import { errorKind, neverWritten } from './write-errors.ts';
import type { RepeatLog } from '../../log-throttle.ts';

/** Counts per count-batch entry: keeps a line (and a torn write) small when many codes are hot. */
const COUNTS_PER_ENTRY = 500;

export class VisitCounts {
  /** Slots visited since the last flush (renumbered by `renumber`). */
  private dirty: number[] = [];

  constructor(
    private readonly records: Keydir,
    private readonly problems: RepeatLog,
    private readonly append: (entries: Entry[]) => Promise<void>,
  ) {}

  /** Counts one visit of the live slot `s`. */
  count(s: number): void {
    if (this.records.visit(s)) this.dirty.push(s);
  }

  /**
   * Counts one visit of the live slot `s` now (the next decision sees it) and resolves once the new
   * count is durable. A failed write rejects (the visit is refused: a 503). If its bytes never
   * reached the file (the write was refused: no space, quota, read-only; `neverWritten`), the
   * visit is given back, so a full disk does not use a limited link up without a redirect. If the
   * outcome is unknown (the fsync failed), the count may be on disk already and the visit stays
   * used: memory never shows fewer visits than a restart could. Either way the count is left to
   * the next flush.
   *
   * Giving back never grants a visit twice: a count written later (another visit's, queued
   * meanwhile) may include this one and reach the disk, but then the disk holds more visits than
   * were granted, never fewer, and the next flush writes the count as it is.
   */
  countDurably(s: number): Promise<void> {
    const records = this.records;
    const count = records.visits(s) + 1;
    records.setVisits(s, count);
    const code = records.code(s);
    return this.append([{ op: 'V', counts: [[code, count]] }]).catch((err: unknown) => {
      const now = records.find(code);
      if (now !== -1 && neverWritten(err) && records.visits(now) > 0) records.setVisits(now, records.visits(now) - 1);
      this.retry(code);
      throw err;
    });
  }

  /**
   * Writes the count of the live slot `s` as it is now, at once; resolves once it is durable. A
   * failed write rejects, and the count is left to the next flush.
   */
  write(s: number): Promise<void> {
    const code = this.records.code(s);
    return this.append([{ op: 'V', counts: [[code, this.records.visits(s)]] }]).catch((err: unknown) => {
      this.retry(code);
      throw err;
    });
  }

  /** Leaves the count of `code` to the next flush (by code: slots may have been renumbered meanwhile). */
  private retry(code: string): void {
    const s = this.records.find(code);
    if (s !== -1 && this.records.markDirty(s, true)) this.dirty.push(s);
  }

  /** Follows a vacuum of the keydir: `renumber[old slot]` is the new slot, or -1. */
  renumber(renumber: Int32Array): void {
    this.dirty = this.dirty.map((s) => renumber[s]!).filter((s) => s !== -1);
  }

  /** Appends the counts of every record visited since the last flush. */
  async flush(): Promise<void> {
    if (this.dirty.length === 0) return;
    const records = this.records;
    const counts: [code: string, count: number][] = [];
    for (const s of this.dirty) {
      records.markDirty(s, false);
      // A slot deleted since its visit has no count worth writing.
      if (records.isLive(s)) counts.push([records.code(s), records.visits(s)]);
    }
    this.dirty = [];
    const entries: Entry[] = [];
    for (let i = 0; i < counts.length; i += COUNTS_PER_ENTRY) entries.push({ op: 'V', counts: counts.slice(i, i + COUNTS_PER_ENTRY) });
    try {
      await this.append(entries);
    } catch (err) {
      // Keep them dirty; the next flush writes the by then larger counts.
      for (const [code] of counts) this.retry(code);
      this.problems.report('warn', `visits:${errorKind(err)}`, 'could not write visit counts; will retry', { error: (err as Error).message });
      throw err;
    }
  }
}
