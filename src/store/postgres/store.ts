/**
 * The PostgreSQL backend of the storage contract (docs/postgres.md): every operation is one
 * statement, or one short transaction, on a pool of the `postgres` driver. No link is cached, so
 * any number of instances can share one database: what one acknowledged, every instance's next
 * read sees. The stored keys and the domains' redirects are the caches, each within a second of
 * its table (`keys.ts`, `domains.ts`); orphan visits are `orphans.ts`'s. The schema is `schema.ts`.
 *
 * Faults: every call is bounded (connect timeout, statement timeout, a timer here); a database
 * that cannot be reached, or goes away mid-call, is a `StoreUnavailableError("database
 * unavailable")`, answered 503: never a hang, never a 500. The pool reconnects by itself.
 *
 * This class answers reads and the redirect, and wires the pieces: the SQL (`statements.ts`), the
 * bounded calls and what they mean for readiness (`calls.ts`), the changes to links (`writes.ts`,
 * with the batching of inserts in `inserts.ts`), the long reads over a held snapshot
 * (`pages.ts`), the background work (`jobs.ts`), and the visit events (docs/analytics.md,
 * `visits.ts`: their SQL, rows, stats, day summaries and daily key), the months of their table
 * and retention (`partitions.ts`). Webhooks (`webhooks.ts`) are subscriptions and an outbox, whose
 * rows every change writes with itself when some subscription wants its event (`webhooks-fanout.ts`).
 */
import { PostgresDomains } from './domains.ts';
import { PostgresOrphans } from './orphans.ts';
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import type {
  CodedEvent,
  EventFilter,
  ImportedVisit,
  StatsQuery,
  VisitEvent,
  VisitEventSource,
  VisitExportFilter,
  VisitPage,
  VisitStats,
} from '../../visits/event.ts';
import type { Clock, InsertChain, LinkChanges, LinkPage, LinkRecord, LinkStore, ListQuery, VisitDecision } from '../link-store.ts';
import type { WebhookBodies } from '../webhook-store.ts';
import { PostgresCalls } from './calls.ts';
import { every, LinkCount, reapExpired } from './jobs.ts';
import { PostgresKeys } from './keys.ts';
import { PostgresRedirect } from './redirect.ts';
import { memoryPage, SnapshotReads } from './pages.ts';
import { applyRetention, ensurePartitions } from './partitions.ts';
import { PostgresStatements, toRecord } from './statements.ts';
import { PostgresVisits } from './visits.ts';
import { PostgresWebhooks } from './webhooks.ts';
import { WebhookFanout } from './webhooks-fanout.ts';
import { PostgresWrites } from './writes.ts';

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
  /** How old the stored keys read from memory may be when no change was notified, ms (default 1000: a revoke reaches every instance within a second). */
  keysMaxAgeMs?: number;
  /** The `data` of webhook events (the service's): without them no change writes events. */
  webhookBodies?: WebhookBodies;
  /** Pending `link.clicked` rows per subscription past which new ones are dropped (default `CLICK_CAP`). */
  webhookClickCap?: number;
  /** How long a row handed out by `due` stays with this instance, ms (default 30000). */
  webhookLeaseMs?: number;
}

export class PostgresStore implements LinkStore {
  private readonly sql: postgres.Sql;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly onWrite: ((seconds: number) => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly calls: PostgresCalls;
  private readonly statements: PostgresStatements;
  private readonly redirect: PostgresRedirect;
  private readonly retentionDays: number;
  private readonly snapshots: SnapshotReads;
  private readonly links = new LinkCount();
  private readonly writes: PostgresWrites;
  private readonly visits: PostgresVisits;
  readonly accessKeys: PostgresKeys;
  readonly domains: PostgresDomains;
  readonly orphans: PostgresOrphans;
  readonly webhooks: PostgresWebhooks;
  private closing: Promise<void> | undefined;

  private constructor(options: PostgresStoreOptions) {
    this.sql = options.sql;
    this.log = options.log;
    this.clock = options.now ?? Date.now;
    this.onWrite = options.onWrite;
    const timeoutMs = options.timeoutMs ?? 4000;
    const chunk = options.chunk ?? 1000;
    const wrote = (started: number): void => this.wrote(started);
    this.calls = new PostgresCalls(this.sql, this.log, timeoutMs);
    this.statements = new PostgresStatements(this.sql);
    this.retentionDays = options.visitRetentionDays ?? 0;
    this.snapshots = new SnapshotReads(this.calls, this.statements, chunk);
    this.webhooks = new PostgresWebhooks(this.sql, this.calls, this.clock, options.keysMaxAgeMs ?? 1000, options.webhookLeaseMs);
    const bodies = options.webhookBodies;
    const fanout = bodies && new WebhookFanout(this.sql, this.webhooks, bodies, this.clock, options.webhookClickCap);
    this.writes = new PostgresWrites(this.calls, this.statements, this.links, wrote, fanout);
    this.redirect = new PostgresRedirect(this.calls, this.statements, wrote, fanout);
    this.visits = new PostgresVisits(this.sql, this.calls, this.statements, this.log, timeoutMs, chunk, wrote);
    this.accessKeys = new PostgresKeys(this.sql, this.calls, this.log, this.clock, options.keysMaxAgeMs ?? 1000);
    this.domains = new PostgresDomains(this.sql, this.calls, this.clock, options.keysMaxAgeMs ?? 1000);
    this.orphans = new PostgresOrphans(this.sql, this.calls);
  }

  /** A store over a migrated database (`openPostgresStore` in connect.ts does it all). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    await store.refreshCount();
    // This month's partition before the first visit (made by another instance starting now, or waited for).
    await ensurePartitions(store.calls, store.log, store.seconds(), true);
    await store.accessKeys.listen();
    every(store.timers, options.readyCheckMs, 1000, () => store.probe());
    every(store.timers, options.reapIntervalMs, 60_000, () => store.reapExpired(store.seconds()));
    every(store.timers, options.countRefreshMs, 30_000, () => store.refreshCount());
    every(store.timers, undefined, 1000, () => store.webhooks.flushDrops());
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

  async newestByUrl(url: string, now: number, domain?: string | null): Promise<LinkRecord | undefined> {
    const rows = await this.calls.run(this.statements.newestByUrl(url, now, domain));
    return rows[0] && toRecord(rows[0]);
  }

  async list(query: ListQuery): Promise<LinkPage> {
    const { limit, offset, now } = query;
    const filter = { q: query.q, tags: query.tags, author: query.author, domain: query.domain };
    if (limit !== undefined) {
      // A page (at most 1000 links) and the total in one statement: one snapshot, no transaction.
      const rows = await this.calls.run(this.statements.page(limit, offset, now, filter));
      const records = rows.filter((r) => r.code !== null).map(toRecord);
      return memoryPage(Number(rows[0]!.total), records);
    }
    return this.snapshots.page(offset, now, filter);
  }

  // ---- Visit events (docs/analytics.md, `visits.ts`) ----------------------------------------

  visitStats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    return this.visits.stats(code, query, now);
  }

  /** The stats from the events alone, one statement: what the summaries must agree with. */
  rawVisitStats(code: string | null, query: StatsQuery, now: number): Promise<VisitStats | undefined> {
    return this.visits.rawStats(code, query, now);
  }

  listVisits(code: string, filter: EventFilter, limit: number, offset: number, now: number): Promise<VisitPage | undefined> {
    return this.visits.list(code, filter, limit, offset, now);
  }

  deleteVisits(code: string, now: number): Promise<number | undefined> {
    return this.visits.delete(code, now);
  }

  exportVisits(filter: VisitExportFilter, now: number): AsyncIterable<CodedEvent> {
    return this.visits.export(filter, now);
  }

  importVisit(code: string, event: VisitEvent, now: number, chain?: InsertChain): Promise<ImportedVisit> {
    return this.visits.import(code, event, now, chain);
  }

  dailyKey(day: number): Promise<Uint8Array> {
    return this.visits.dailyKey(day);
  }

  exportAll(now: number, author?: string): AsyncIterable<LinkRecord> {
    return this.snapshots.exportAll(now, author);
  }

  // ---- Writes (`writes.ts`) ----------------------------------------------------------------

  insert(record: LinkRecord, now: number, chain?: InsertChain): Promise<boolean> {
    return this.writes.insert(record, now, chain);
  }

  delete(code: string, now: number): Promise<boolean> {
    return this.writes.delete(code, now);
  }

  update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    return this.writes.update(code, changes, now);
  }

  // ---- The redirect --------------------------------------------------------------------------

  /** The redirect (`redirect.ts`). */
  countVisit(code: string, clock: Clock, count: boolean, event?: VisitEventSource, routed?: boolean): Promise<VisitDecision> {
    return this.redirect.countVisit(code, clock, count, event, routed);
  }

  // ---- Background work ---------------------------------------------------------------------

  /** Deletes links expired by `now` (see `reapExpired` in jobs.ts); resolves with the number deleted. */
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
      await this.webhooks.flushDrops().catch(() => undefined);
      await this.sql.end({ timeout: 5 });
    })();
    return this.closing;
  }

  private wrote(started: number): void {
    this.onWrite?.((performance.now() - started) / 1000);
  }
}
