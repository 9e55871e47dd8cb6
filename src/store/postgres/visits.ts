/**
 * The visit events of the PostgreSQL store (docs/analytics.md): stats, a link's page of events,
 * their removal, the export and the import, and the shared key of the day. The redirect's own
 * event is written by the redirect's statement (`store.ts`, `countVisit`), not here.
 *
 * Its own file because the events are a store of their own beside the links' (their table, its
 * months and retention, the summaries of closed days): `PostgresStore` hands these operations
 * over as they come.
 */
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import type { CodedEvent, EventFilter, ImportedVisit, StatsQuery, VisitEvent, VisitExportFilter, VisitPage, VisitStats } from '../../visits/event.ts';
import type { InsertChain } from '../link-store.ts';
import type { PostgresCalls } from './calls.ts';
import { DailyKeys } from './daily-keys.ts';
import { DaySummaries } from './day-summaries.ts';
import { eventColumns, eventOf } from './event-row.ts';
import type { PostgresStatements } from './statements.ts';
import { VisitDayStatements } from './visit-day-statements.ts';
import { VisitStatements, type EventPlace } from './visit-statements.ts';
import { statsOf } from './visit-stats.ts';

export class PostgresVisits {
  private readonly visits: VisitStatements;
  private readonly keys: DailyKeys;
  private readonly summaries: DaySummaries;
  /** The last imported event of each chain: the next waits for it (see `importVisit`). */
  private readonly importTails = new WeakMap<InsertChain, Promise<unknown>>();

  /**
   * `timeoutMs`: the longest a call may take (the summaries' builds get three quarters of it);
   * `chunk`: events read per statement by the export; `wrote`: told when a write that `started`
   * (a `performance.now()`) was committed.
   */
  constructor(
    sql: postgres.Sql,
    private readonly calls: PostgresCalls,
    private readonly statements: PostgresStatements,
    log: Logger,
    timeoutMs: number,
    private readonly chunk: number,
    private readonly wrote: (started: number) => void,
  ) {
    this.visits = new VisitStatements(sql, statements);
    this.keys = new DailyKeys(calls, this.visits);
    this.summaries = new DaySummaries(calls, this.visits, new VisitDayStatements(sql, statements), log, Math.floor(timeoutMs * 0.75));
  }

  /** One link's stats from its day summaries and the rest raw (`day-summaries.ts`); every link's raw. */
  async stats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    if (code !== null) return this.summaries.stats(code, query, now);
    return this.rawStats(code, query, now);
  }

  /** The stats from the events alone, one statement: what the summaries must agree with. */
  async rawStats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    const rows = await this.calls.run(this.visits.stats(code, query, now));
    return statsOf(rows, query.edges.length - 1, code === null);
  }

  async list(code: string, filter: EventFilter, limit: number, offset: number, now: number): Promise<VisitPage | undefined> {
    const rows = await this.calls.run(this.visits.page(code, filter, limit, offset, now));
    if (rows.length === 0) return undefined;
    return { total: Number(rows[0]!.total), events: rows.filter((r) => r.time !== null).map(eventOf) };
  }

  /**
   * Two statements in one transaction: the link's counts go to 0 first, which locks its row (a
   * visit counted meanwhile waits, and then counts from 0 with its event), then its events go,
   * read from a snapshot taken after that lock, so no event committed before it is left behind.
   */
  async delete(code: string, now: number): Promise<number | undefined> {
    const started = performance.now();
    const removed = await this.calls.transaction(async (tx) => {
      const [link] = await this.visits.resetCounts(tx, code, now);
      if (!link) return undefined;
      // No longer read once the epoch moved; removed so they take no room.
      await this.visits.deleteSummaries(tx, link.seq);
      return (await this.statements.deleteEvents(tx, [link.seq])).count;
    });
    if (removed !== undefined) this.wrote(started);
    return removed;
  }

  /** Oldest first, in chunks by (time, arrival) inside one snapshot: memory holds a chunk, not the table. */
  async *export(filter: VisitExportFilter, now: number): AsyncIterable<CodedEvent> {
    const held = await this.calls.hold();
    try {
      let seq: string | undefined;
      if (filter.code !== undefined) {
        const [link] = await this.calls.run(this.visits.linkSeq(held.tx, filter.code, now));
        if (!link) return;
        seq = link.seq;
      }
      let place: EventPlace | undefined;
      for (;;) {
        const rows = await this.calls.run(this.visits.exportChunk(held.tx, filter, seq, place, this.chunk, now));
        for (const row of rows) yield { code: row.code, event: eventOf(row) };
        if (rows.length < this.chunk) return;
        const last = rows[rows.length - 1]!;
        place = { time: Number(last.time), id: last.id };
      }
    } finally {
      held.end();
    }
  }

  /**
   * One statement, committed synchronously like an insert; with `chain`, refused once one of it
   * failed. The events of one chain run one after the other: the pool would run them side by side
   * on several connections and commit them in any order, so events of one second would come back
   * out of their file's order, and one asked after a failure could still be written.
   */
  import(code: string, event: VisitEvent, now: number, chain?: InsertChain): Promise<ImportedVisit> {
    if (chain === undefined) return this.importOne(code, event, now, undefined);
    const run = (): Promise<ImportedVisit> => this.importOne(code, event, now, chain);
    const before = this.importTails.get(chain);
    const done = before === undefined ? run() : before.then(run, run);
    this.importTails.set(
      chain,
      done.catch(() => undefined),
    );
    return done;
  }

  private async importOne(code: string, event: VisitEvent, now: number, chain: InsertChain | undefined): Promise<ImportedVisit> {
    if (chain?.failed !== undefined) throw chain.failed;
    const started = performance.now();
    try {
      const rows = await this.calls.run(this.visits.importVisit(code, eventColumns(event), now));
      if (rows.length === 0) return 'unknown_code';
      this.wrote(started);
      return 'imported';
    } catch (err) {
      if (chain !== undefined) chain.failed ??= err;
      throw err;
    }
  }

  /** The key of UTC day `day` that every instance shares (`daily-keys.ts`). */
  dailyKey(day: number): Promise<Uint8Array> {
    return this.keys.key(day);
  }
}
