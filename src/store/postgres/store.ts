/**
 * The PostgreSQL backend of the storage contract (docs/postgres.md): every operation is one
 * statement, or one short transaction, on a pool of the `postgres` driver. Nothing is cached across
 * calls, so any number of instances can share one database: what one acknowledged, the next read
 * of every instance sees. The schema is in `postgres-schema.ts`; opening (driver, pool, migrations)
 * in `postgres-connect.ts`.
 *
 * Faults: every call is bounded (the driver's connect timeout, a server-side statement timeout and
 * a timer here), and a database that cannot be reached, or goes away mid-call, is a
 * `StoreUnavailableError("database unavailable")`, which the service answers 503: never a hang,
 * never a 500. The pool reconnects by itself once the database is back.
 *
 * This class wires the pieces: the SQL (`postgres-statements.ts`), the bounded calls and what they
 * mean for readiness (`postgres-calls.ts`), the batching of inserts (`postgres-inserts.ts`), the
 * long reads over a held snapshot (`postgres-pages.ts`) and the background work
 * (`postgres-jobs.ts`); for the visit events (docs/analytics.md), their SQL
 * (`visit-statements.ts`), their rows (`event-row.ts`), the stats' assembly (`visit-stats.ts`),
 * one link's stats from day summaries (`day-summaries.ts`), the months of their table and
 * retention (`partitions.ts`) and the daily key (`daily-keys.ts`).
 */
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import type { CodedEvent, EventFilter, ImportedVisit, StatsQuery, VisitEvent, VisitEventSource, VisitPage, VisitStats } from '../../visits/event.ts';
import {
  isExpiredAt,
  isUsedUp,
  type Clock,
  type InsertChain,
  type LinkChanges,
  type LinkPage,
  type LinkRecord,
  type LinkStore,
  type ListQuery,
  type VisitDecision,
} from '../link-store.ts';
import { PostgresCalls } from './calls.ts';
import { DailyKeys } from './daily-keys.ts';
import { DaySummaries } from './day-summaries.ts';
import { eventColumns, eventOf } from './event-row.ts';
import { InsertBatches, type PendingInsert } from './inserts.ts';
import { every, LinkCount, reapExpired } from './jobs.ts';
import { memoryPage, SnapshotReads } from './pages.ts';
import { applyRetention, ensurePartitions } from './partitions.ts';
import { folded, PostgresStatements, toRecord } from './statements.ts';
import { VisitDayStatements } from './visit-day-statements.ts';
import { VisitStatements, type EventPlace } from './visit-statements.ts';
import { statsOf } from './visit-stats.ts';

export interface PostgresStoreOptions {
  /** A pool of the `postgres` driver, owned by the store from now on (`close` ends it). */
  sql: postgres.Sql;
  log: Logger;
  /** Clock in milliseconds, for the background work: expired links, the months of `visits`, retention (default `Date.now`). */
  now?: () => number;
  /** Longest a call may take before it fails as unavailable, ms (default 4000: a 503 within 5 s). */
  timeoutMs?: number;
  /** How often readiness is checked in the background, ms (default 1000; 0 = never). */
  readyCheckMs?: number;
  /** How often expired links are deleted, ms (default 60000; 0 = never). */
  reapIntervalMs?: number;
  /** How often the link count is read again, ms (default 30000; 0 = never). */
  countRefreshMs?: number;
  /** Records read per statement by long lists and the export (default 1000). */
  chunk?: number;
  /** Duration of each synchronous commit, seconds (the store-write histogram). */
  onWrite?: (seconds: number) => void;
  /** Days visit events are kept (`visit_retention_days`; default 0 = for ever). */
  visitRetentionDays?: number;
  /** How often the months of `visits` are created ahead and retention applied, ms (default 3600000; 0 = never). */
  visitJobsMs?: number;
}

export class PostgresStore implements LinkStore {
  private readonly sql: postgres.Sql;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly onWrite: ((seconds: number) => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly calls: PostgresCalls;
  private readonly statements: PostgresStatements;
  private readonly visits: VisitStatements;
  private readonly keys: DailyKeys;
  private readonly summaries: DaySummaries;
  private readonly chunk: number;
  private readonly retentionDays: number;
  private readonly snapshots: SnapshotReads;
  private readonly links = new LinkCount();
  private closing: Promise<void> | undefined;
  private readonly inserts = new InsertBatches((batch) => this.insertBatch(batch));
  /** The last edit asked for, per code with edits in flight. */
  private readonly edits = new Map<string, Promise<void>>();
  /** The last imported event of each chain: the next waits for it (see `importVisit`). */
  private readonly importTails = new WeakMap<InsertChain, Promise<unknown>>();

  private constructor(options: PostgresStoreOptions) {
    this.sql = options.sql;
    this.log = options.log;
    this.clock = options.now ?? Date.now;
    this.onWrite = options.onWrite;
    this.calls = new PostgresCalls(this.sql, this.log, options.timeoutMs ?? 4000);
    this.statements = new PostgresStatements(this.sql);
    this.visits = new VisitStatements(this.sql, this.statements);
    this.keys = new DailyKeys(this.calls, this.visits);
    this.summaries = new DaySummaries(
      this.calls,
      this.visits,
      new VisitDayStatements(this.sql, this.statements),
      this.log,
      Math.floor((options.timeoutMs ?? 4000) * 0.75),
    );
    this.chunk = options.chunk ?? 1000;
    this.retentionDays = options.visitRetentionDays ?? 0;
    this.snapshots = new SnapshotReads(this.calls, this.statements, this.chunk);
  }

  /** A store over a migrated database (`openPostgresStore` in postgres-connect.ts does it all). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    await store.refreshCount();
    // This month's partition before the first visit (made by another instance starting now, or waited for).
    await ensurePartitions(store.calls, store.log, store.seconds(), true);
    every(store.timers, options.readyCheckMs, 1000, () => store.probe());
    every(store.timers, options.reapIntervalMs, 60_000, () => store.reapExpired(store.seconds()));
    every(store.timers, options.countRefreshMs, 30_000, () => store.refreshCount());
    every(store.timers, options.visitJobsMs, 3_600_000, async () => {
      await store.ensurePartitions(store.seconds());
      await store.applyRetention(store.seconds());
    });
    return store;
  }

  /** Links held, expired ones not yet deleted included (see `LinkCount`). */
  get count(): number {
    return this.links.value;
  }

  ready(): string | undefined {
    return this.calls.ready();
  }

  // ---- Reads -------------------------------------------------------------------------------

  async get(code: string, now: number): Promise<LinkRecord | undefined> {
    const rows = await this.calls.run(this.statements.get(code, now));
    return rows[0] && toRecord(rows[0]);
  }

  async newestByUrl(url: string, now: number): Promise<LinkRecord | undefined> {
    const rows = await this.calls.run(this.statements.newestByUrl(url, now));
    return rows[0] && toRecord(rows[0]);
  }

  async list(query: ListQuery): Promise<LinkPage> {
    const { limit, offset, now } = query;
    const filter = { q: query.q, tags: query.tags };
    if (limit !== undefined) {
      // A page (at most 1000 links) and the total in one statement: one snapshot, no transaction.
      const rows = await this.calls.run(this.statements.page(limit, offset, now, filter));
      const records = rows.filter((r) => r.code !== null).map(toRecord);
      return memoryPage(Number(rows[0]!.total), records);
    }
    return this.snapshots.page(offset, now, filter);
  }

  // ---- Visit events (docs/analytics.md) -----------------------------------------------------

  /** One link's stats from its day summaries and the rest raw (`day-summaries.ts`); every link's raw. */
  async visitStats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    if (code !== null) return this.summaries.stats(code, query, now);
    return this.rawVisitStats(code, query, now);
  }

  /** The stats from the events alone, one statement: what the summaries must agree with. */
  async rawVisitStats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    const rows = await this.calls.run(this.visits.stats(code, query, now));
    return statsOf(rows, query.edges.length - 1, code === null);
  }

  async listVisits(code: string, filter: EventFilter, limit: number, offset: number, now: number): Promise<VisitPage | undefined> {
    const rows = await this.calls.run(this.visits.page(code, filter, limit, offset, now));
    if (rows.length === 0) return undefined;
    return { total: Number(rows[0]!.total), events: rows.filter((r) => r.time !== null).map(eventOf) };
  }

  /**
   * Two statements in one transaction: the link's counts go to 0 first, which locks its row (a
   * visit counted meanwhile waits, and then counts from 0 with its event), then its events go,
   * read from a snapshot taken after that lock, so no event committed before it is left behind.
   */
  async deleteVisits(code: string, now: number): Promise<number | undefined> {
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
  async *exportVisits(filter: EventFilter & { readonly code?: string | undefined }, now: number): AsyncIterable<CodedEvent> {
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
  importVisit(code: string, event: VisitEvent, now: number, chain?: InsertChain): Promise<ImportedVisit> {
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

  dailyKey(day: number): Promise<Uint8Array> {
    return this.keys.key(day);
  }

  exportAll(now: number): AsyncIterable<LinkRecord> {
    return this.snapshots.exportAll(now);
  }

  // ---- Writes ------------------------------------------------------------------------------

  /** Inserts go out in batches, in the order they were asked (see `InsertBatches`). */
  insert(record: LinkRecord, now: number, chain?: InsertChain): Promise<boolean> {
    return this.inserts.insert(record, now, chain);
  }

  private async insertBatch(batch: PendingInsert[]): Promise<void> {
    const started = performance.now();
    let inserted: Set<string>;
    try {
      const done = await this.calls.run(this.statements.insertBatch(batch));
      inserted = new Set(done.map((r) => (r as { code: string }).code));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    if (inserted.size > 0) {
      this.wrote(started);
      this.links.moved(inserted.size);
    }
    for (const p of batch) {
      if (inserted.has(p.record.code)) p.resolve(true);
      else await this.replaceExpired(p.record, p.now).then(p.resolve, p.reject);
    }
  }

  /**
   * The code is held: by a live link (a collision), or by an expired one not yet deleted, whose
   * code is free. Of concurrent inserts the first to delete it wins: the others wait on its row
   * lock, then find no expired row, or conflict with the new one.
   */
  private async replaceExpired(record: LinkRecord, now: number): Promise<boolean> {
    const started = performance.now();
    const replaced = await this.calls.transaction(async (tx) => {
      const gone = await this.statements.deleteExpired(tx, record.code, now);
      if (gone.length === 0) return false;
      await this.statements.deleteEvents(
        tx,
        gone.map((r) => r.seq),
      );
      const added = await this.statements.insertOne(tx, record);
      return added.length > 0;
    });
    if (replaced) this.wrote(started);
    return replaced;
  }

  async delete(code: string, now: number): Promise<boolean> {
    const started = performance.now();
    // The link, then its events (`deleteEvents` says why two statements), in one transaction.
    const deleted = await this.calls.transaction(async (tx) => {
      const rows = await this.statements.delete(tx, code, now);
      if (rows.length === 0) return false;
      await this.statements.deleteEvents(
        tx,
        rows.map((r) => r.seq),
      );
      return true;
    });
    if (!deleted) return false;
    this.wrote(started);
    this.links.moved(-1);
    return true;
  }

  /**
   * Edits of one code from this process apply in the order they were asked (each sees the ones
   * asked before it), as they do in the log store; a pool alone would run them in any order.
   */
  update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const before = this.edits.get(code);
    const mine = (before ?? Promise.resolve()).then(() => this.updateNow(code, changes, now));
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.edits.set(code, tail);
    void tail.then(() => {
      if (this.edits.get(code) === tail) this.edits.delete(code);
    });
    return mine;
  }

  private async updateNow(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const set: Record<string, string | number | string[] | null> = {};
    if (changes.url !== undefined) set['url'] = changes.url;
    if (changes.retentionDays !== undefined) set['retention_days'] = changes.retentionDays;
    if (changes.maxVisits !== undefined) set['max_visits'] = changes.maxVisits;
    if (changes.title !== undefined) {
      set['title'] = changes.title;
      set['title_folded'] = folded(changes.title);
    }
    if (changes.tags !== undefined) set['tags'] = [...changes.tags];
    const columns = Object.keys(set);
    if (columns.length === 0) return this.get(code, now);
    const started = performance.now();
    const rows = await this.calls.run(this.statements.update(code, now, set, columns));
    if (rows.length === 0) return undefined;
    this.wrote(started);
    return toRecord(rows[0]!);
  }

  /**
   * The redirect. A GET is one conditional UPDATE: it counts the visit only of a live link with
   * visits left, so a limit is exact under any concurrency, on any number of instances. The commit
   * is synchronous for a link with a limit (a crash cannot grant the visit twice) and asynchronous
   * for the others (`set_config(…, true)` lasts until this statement's own commit): a database crash
   * may lose the last fraction of a second of their counts, never a link or a limit. Only when it
   * matched nothing is the link read, to tell missing, expired and used up apart.
   */
  async countVisit(code: string, clock: Clock, count: boolean, event?: VisitEventSource): Promise<VisitDecision> {
    // One reading for the whole decision: the statement and the read after it agree on the time.
    const now = clock();
    if (!count) return this.peek(code, now);
    // Made before the statement, which decides whether the visit counts: a GET of a code that is
    // not found pays for it, which a database round trip dwarfs anyway.
    const columns = event && eventColumns(event());
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const rows = await this.calls.run(this.statements.countVisit(code, now, columns));
      const hit = rows[0];
      if (hit) {
        if (hit.max_visits !== null) this.wrote(started);
        return { kind: 'found', url: hit.url, limited: hit.max_visits !== null };
      }
      const decision = await this.peek(code, now);
      // `found` here means the link changed in between (created, or its limit raised): count again.
      if (decision.kind !== 'found') return decision;
      if (attempt === 2) return { kind: 'limit_reached' };
    }
  }

  /** What a visit would be, counting nothing (HEAD, and the reason of a GET that counted nothing). */
  private async peek(code: string, now: number): Promise<VisitDecision> {
    const rows = await this.calls.run(this.statements.peek(code));
    const row = rows[0];
    if (!row) return { kind: 'missing' };
    if (isExpiredAt(Number(row.created_at), row.retention_days, now)) return { kind: 'expired' };
    if (isUsedUp({ visits: Number(row.visit_count), maxVisits: row.max_visits })) return { kind: 'limit_reached' };
    return { kind: 'found', url: row.url, limited: row.max_visits !== null };
  }

  // ---- Background work ---------------------------------------------------------------------

  /** Deletes links expired by `now` (see `reapExpired` in postgres-jobs.ts); resolves with the number deleted. */
  reapExpired(now: number, batch = 1000): Promise<number> {
    return reapExpired(this.calls, this.statements, this.links, this.log, now, batch);
  }

  /** Creates the months of `visits` due by `now` (see `ensurePartitions` in partitions.ts); resolves with those created. */
  ensurePartitions(now: number): Promise<string[]> {
    return ensurePartitions(this.calls, this.log, now);
  }

  /** Removes the events past `visitRetentionDays` (see `applyRetention` in partitions.ts); resolves with the number removed. */
  applyRetention(now: number): Promise<number> {
    return applyRetention(this.calls, this.log, now, this.retentionDays);
  }

  private seconds(): number {
    return Math.floor(this.clock() / 1000);
  }

  private refreshCount(): Promise<void> {
    return this.links.refresh(this.calls, this.statements);
  }

  private async probe(): Promise<void> {
    await this.calls.run(this.statements.ping());
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      for (const timer of this.timers) clearInterval(timer);
      await this.sql.end({ timeout: 5 });
    })();
    return this.closing;
  }

  private wrote(started: number): void {
    this.onWrite?.((performance.now() - started) / 1000);
  }
}
