/**
 * The PostgreSQL store's long reads (docs/postgres.md): a list without a page size and the export,
 * read in chunks inside one held repeatable-read snapshot, so memory holds a chunk, never the table,
 * and every chunk sees the same links however long the reader takes.
 *
 * Its own file because these reads outlive the call that started them: a page keeps its
 * transaction open until it is released, and its slices come in any order.
 */
import type { LinkPage, LinkRecord } from '../link-store.ts';
import type { Held, PostgresCalls } from './calls.ts';
import { toRecord, type ChunkQuery, type ListFilter, type PostgresStatements, type Row } from './statements.ts';

/** A page read whole: slices from memory. */
export function memoryPage(total: number, records: readonly LinkRecord[]): LinkPage {
  return {
    total,
    count: records.length,
    slice: (from, to) => records.slice(Math.max(0, from), Math.min(to, records.length)),
    release: () => undefined,
  };
}

/** The reads over a held snapshot, `chunk` records per statement. */
export class SnapshotReads {
  constructor(
    private readonly calls: PostgresCalls,
    private readonly statements: PostgresStatements,
    private readonly chunk: number,
  ) {}

  /**
   * The whole list from `offset` on: the total and the first chunk read in one repeatable-read
   * transaction; a longer list keeps that transaction (its snapshot) open until `release`, and its
   * slices read on by seq from the last row read.
   */
  async page(offset: number, now: number, filter: ListFilter): Promise<LinkPage> {
    const held = await this.calls.hold();
    try {
      const [{ total }] = (await this.calls.run(this.statements.countLive(held.tx, now, filter))) as [{ total: string }];
      const all = Number(total);
      const count = Math.max(0, all - offset);
      const first = count === 0 ? [] : await this.calls.run(this.statements.firstChunk(held.tx, now, filter, this.chunk, offset));
      if (first.length >= count) {
        held.end();
        return memoryPage(all, first.map(toRecord));
      }
      return new HeldPage(this.calls, this.chunk, held, all, count, offset, first, this.statements.chunks(now, filter));
    } catch (err) {
      held.end();
      throw err;
    }
  }

  /** Oldest first, in chunks by seq inside one snapshot: memory holds a chunk, not the table. */
  async *exportAll(now: number, author?: string): AsyncIterable<LinkRecord> {
    const held = await this.calls.hold();
    try {
      let after = '0';
      for (;;) {
        const rows = await this.calls.run(this.statements.exportChunk(held.tx, now, after, this.chunk, author));
        for (const row of rows) yield toRecord(row);
        if (rows.length < this.chunk) return;
        after = rows[rows.length - 1]!.seq;
      }
    } finally {
      held.end();
    }
  }
}

/**
 * A long page over a held snapshot. It keeps one chunk of rows: slices inside it come from memory,
 * the next ones read on from its last seq, and a slice elsewhere (the contract allows any) reads
 * with an offset. Slices run one at a time.
 */
class HeldPage implements LinkPage {
  private rows: Row[];
  /** Position in the page of `rows[0]`. */
  private start = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private released = false;

  constructor(
    private readonly calls: PostgresCalls,
    /** Records read per statement. */
    private readonly chunk: number,
    private readonly held: Held,
    readonly total: number,
    readonly count: number,
    private readonly offset: number,
    first: Row[],
    private readonly read: ChunkQuery,
  ) {
    this.rows = first;
  }

  slice(from: number, to: number): Promise<readonly LinkRecord[]> {
    const next = this.queue.then(() => this.sliceNow(Math.max(0, from), Math.min(to, this.count)));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async sliceNow(from: number, to: number): Promise<readonly LinkRecord[]> {
    if (from >= to) return [];
    const end = this.start + this.rows.length;
    if (from < this.start || from > end || this.rows.length === 0) {
      this.rows = await this.fetch(undefined, this.offset + from, Math.max(this.chunk, to - from));
      this.start = from;
    } else if (to > end) {
      const more = await this.fetch(this.rows[this.rows.length - 1]!.seq, 0, Math.max(this.chunk, to - end));
      this.rows = [...this.rows.slice(from - this.start), ...more];
      this.start = from;
    }
    return this.rows.slice(from - this.start, to - this.start).map(toRecord);
  }

  private fetch(after: string | undefined, skip: number, n: number): Promise<Row[]> {
    if (this.released) throw new Error('this page has been released');
    return this.calls.run(this.read(this.held.tx, after, skip, n));
  }

  release(): void {
    this.released = true;
    this.held.end();
  }
}
