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
 */
import type postgres from 'postgres';
import type { Logger } from '../log.ts';
import { REAPER_LOCK } from './postgres-schema.ts';
import {
  isExpiredAt,
  isUsedUp,
  StoreUnavailableError,
  type LinkChanges,
  type LinkPage,
  type LinkRecord,
  type LinkStore,
  type ListQuery,
  type VisitDecision,
} from './link-store.ts';

/** The message of every `StoreUnavailableError` of this store: the 503's `detail`. */
export const DATABASE_UNAVAILABLE = 'database unavailable';

export interface PostgresStoreOptions {
  /** A pool of the `postgres` driver, owned by the store from now on (`close` ends it). */
  sql: postgres.Sql;
  log: Logger;
  /** Clock in milliseconds, for the background deletion of expired links (default `Date.now`). */
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
}

/** A row of `links` as the driver returns it: `bigint` columns come as strings. */
interface Row {
  code: string;
  url: string;
  created_at: string;
  retention_days: number;
  visit_count: string;
  max_visits: number | null;
  seq: string;
}

const toRecord = (r: Row): LinkRecord => ({
  code: r.code,
  url: r.url,
  createdAt: Number(r.created_at),
  retentionDays: r.retention_days,
  visits: Number(r.visit_count),
  maxVisits: r.max_visits,
});

/**
 * Errors that mean "the database cannot do this now" rather than a bug: no connection, a
 * connection lost, the server shutting down or starting up, out of resources, a statement
 * cancelled by its timeout, a read-only standby, a transaction aborted by one of these.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  '25006', // read_only_sql_transaction: a standby after a failover
  '25P02', // in_failed_sql_transaction: after one of these inside a held snapshot
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
// SQLSTATE classes: connection exception, insufficient resources, operator intervention
// (shutdown, statement timeout, cancel), system error.
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

export function isUnavailableError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_CODES.has(code) || (code.length === 5 && UNAVAILABLE_CLASSES.has(code.slice(0, 2)));
}

/** A transaction kept open across calls: a page read in parts, the export. */
interface Held {
  tx: postgres.TransactionSql;
  /** Ends the transaction. Idempotent. */
  end(): void;
}

const SNAPSHOT = 'isolation level repeatable read read only';

/** Rows of one insert statement at most. */
const MAX_BATCH = 500;

interface PendingInsert {
  record: LinkRecord;
  now: number;
  resolve: (inserted: boolean) => void;
  reject: (err: unknown) => void;
}

export class PostgresStore implements LinkStore {
  private readonly sql: postgres.Sql;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  private readonly chunk: number;
  private readonly onWrite: ((seconds: number) => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Undefined while the database answers; else why not (readiness). */
  private reason: string | undefined = undefined;
  private links = 0;
  /** Changes this instance made since the count being read now was asked for. */
  private drift = 0;
  private closing: Promise<void> | undefined;
  /** Inserts asked for and not yet sent; `inserting` while a batch is in flight. */
  private inserts: PendingInsert[] = [];
  private inserting = false;
  /** The last edit asked for, per code with edits in flight. */
  private readonly edits = new Map<string, Promise<void>>();

  private constructor(options: PostgresStoreOptions) {
    this.sql = options.sql;
    this.log = options.log;
    this.clock = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 4000;
    this.chunk = options.chunk ?? 1000;
    this.onWrite = options.onWrite;
  }

  /** A store over a migrated database (`openPostgresStore` in postgres-connect.ts does it all). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    await store.refreshCount();
    const every = (ms: number | undefined, fallback: number, task: () => Promise<unknown>): void => {
      const interval = ms ?? fallback;
      if (interval <= 0) return;
      // A failure is already logged and reflected in readiness; the next round tries again. A
      // round still waiting (a database not answering) is not joined by another.
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        void task()
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, interval);
      timer.unref();
      store.timers.push(timer);
    };
    every(options.readyCheckMs, 1000, () => store.probe());
    every(options.reapIntervalMs, 60_000, () => store.reapExpired(Math.floor(store.clock() / 1000)));
    every(options.countRefreshMs, 30_000, () => store.refreshCount());
    return store;
  }

  /**
   * Links held, expired ones not yet deleted included (the `shortener_links` gauge): read at open
   * and every `countRefreshMs`, and moved by this instance's own inserts and deletes in between.
   * An estimate when several instances write: other instances' changes show at the next refresh.
   */
  get count(): number {
    return this.links;
  }

  ready(): string | undefined {
    return this.reason;
  }

  /** Records read per statement by long lists and the export. */
  get chunkSize(): number {
    return this.chunk;
  }

  // ---- Reads -------------------------------------------------------------------------------

  /** "Not expired by `now`": expiry is decided at read time, never by the database's clock. */
  private live(now: number): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`(retention_days = 0 OR created_at + retention_days::bigint * 86400 > ${now})`;
  }

  async get(code: string, now: number): Promise<LinkRecord | undefined> {
    const rows = await this.run(this.sql<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, max_visits FROM links
      WHERE code = ${code} AND ${this.live(now)}`);
    return rows[0] && toRecord(rows[0]);
  }

  async newestByUrl(url: string, now: number): Promise<LinkRecord | undefined> {
    // The hash index on url finds the few links of this URL; the newest live one wins.
    const rows = await this.run(this.sql<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, max_visits FROM links
      WHERE url = ${url} AND ${this.live(now)} ORDER BY seq DESC LIMIT 1`);
    return rows[0] && toRecord(rows[0]);
  }

  /** `q` matched in code and URL on their own. Stored codes and URLs are ASCII (WHATWG serializations), and `lower` under the C collation folds exactly A–Z like `toLowerCase` does on them. */
  private filter(q: string | undefined): postgres.PendingQuery<postgres.Row[]> {
    if (q === undefined) return this.sql``;
    const needle = q.toLowerCase();
    return this.sql`AND (position(${needle} in lower(code COLLATE "C")) > 0 OR position(${needle} in lower(url COLLATE "C")) > 0)`;
  }

  async list(query: ListQuery): Promise<LinkPage> {
    const { limit, offset, now, q } = query;
    if (limit !== undefined) {
      // A page (at most 1000 links) and the total in one statement: one snapshot, no transaction.
      const rows = await this.run(this.sql<(Row & { total: string })[]>`
        SELECT p.*, (SELECT count(*) FROM links WHERE ${this.live(now)} ${this.filter(q)}) AS total
        FROM (SELECT 1) AS one LEFT JOIN LATERAL (
          SELECT code, url, created_at, retention_days, visit_count, max_visits FROM links
          WHERE ${this.live(now)} ${this.filter(q)} ORDER BY seq DESC LIMIT ${limit} OFFSET ${offset}
        ) AS p ON true`);
      const records = rows.filter((r) => r.code !== null).map(toRecord);
      return memoryPage(Number(rows[0]!.total), records);
    }
    return this.streamedPage(offset, now, q);
  }

  /**
   * The whole list from `offset` on: the total and the first chunk read in one repeatable-read
   * transaction; a longer list keeps that transaction (its snapshot) open until `release`, and its
   * slices read on by seq from the last row read.
   */
  private async streamedPage(offset: number, now: number, q: string | undefined): Promise<LinkPage> {
    const held = await this.hold();
    try {
      const [{ total }] = (await this.run(held.tx<{ total: string }[]>`SELECT count(*) AS total FROM links WHERE ${this.live(now)} ${this.filter(q)}`)) as [{ total: string }];
      const all = Number(total);
      const count = Math.max(0, all - offset);
      const first = count === 0 ? [] : await this.run(held.tx<Row[]>`
        SELECT code, url, created_at, retention_days, visit_count, max_visits, seq FROM links
        WHERE ${this.live(now)} ${this.filter(q)} ORDER BY seq DESC LIMIT ${this.chunk} OFFSET ${offset}`);
      if (first.length >= count) {
        held.end();
        return memoryPage(all, first.map(toRecord));
      }
      return new HeldPage(this, held, all, count, offset, first, (tx, after, skip, n) =>
        after !== undefined
          ? tx<Row[]>`SELECT code, url, created_at, retention_days, visit_count, max_visits, seq FROM links
              WHERE ${this.live(now)} ${this.filter(q)} AND seq < ${after} ORDER BY seq DESC LIMIT ${n}`
          : tx<Row[]>`SELECT code, url, created_at, retention_days, visit_count, max_visits, seq FROM links
              WHERE ${this.live(now)} ${this.filter(q)} ORDER BY seq DESC LIMIT ${n} OFFSET ${skip}`,
      );
    } catch (err) {
      held.end();
      throw err;
    }
  }

  /** Oldest first, in chunks by seq inside one snapshot: memory holds a chunk, not the table. */
  async *exportAll(now: number): AsyncIterable<LinkRecord> {
    const held = await this.hold();
    try {
      let after = '0';
      for (;;) {
        const rows = await this.run(held.tx<Row[]>`
          SELECT code, url, created_at, retention_days, visit_count, max_visits, seq FROM links
          WHERE ${this.live(now)} AND seq > ${after} ORDER BY seq LIMIT ${this.chunk}`);
        for (const row of rows) yield toRecord(row);
        if (rows.length < this.chunk) return;
        after = rows[rows.length - 1]!.seq;
      }
    } finally {
      held.end();
    }
  }

  // ---- Writes ------------------------------------------------------------------------------

  /**
   * Inserts go out in batches, one multi-row statement and one commit for every insert asked while
   * the previous batch was in flight (a group commit), and batches go one after the other: links
   * get their place in the newest-first order in the order they were asked, as an import needs
   * (its rows are stored in file order), however many connections the pool has.
   */
  insert(record: LinkRecord, now: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.inserts.push({ record, now, resolve, reject });
      if (this.inserts.length === 1 && !this.inserting) queueMicrotask(() => void this.flushInserts());
    });
  }

  private async flushInserts(): Promise<void> {
    if (this.inserting) return;
    this.inserting = true;
    try {
      while (this.inserts.length > 0) {
        // One row per code in a batch: a second insert of a code waits for the next batch, where
        // it meets the first as a conflict.
        const codes = new Set<string>();
        const batch: PendingInsert[] = [];
        const later: PendingInsert[] = [];
        for (const p of this.inserts) {
          if (batch.length < MAX_BATCH && !codes.has(p.record.code)) {
            codes.add(p.record.code);
            batch.push(p);
          } else later.push(p);
        }
        this.inserts = later;
        await this.insertBatch(batch);
      }
    } finally {
      this.inserting = false;
    }
  }

  private async insertBatch(batch: PendingInsert[]): Promise<void> {
    const started = performance.now();
    let inserted: Set<string>;
    try {
      const rows = batch.map(({ record: r }) => ({
        code: r.code,
        url: r.url,
        created_at: r.createdAt,
        retention_days: r.retentionDays,
        visit_count: r.visits,
        max_visits: r.maxVisits,
      }));
      const columns: (keyof (typeof rows)[number])[] = ['code', 'url', 'created_at', 'retention_days', 'visit_count', 'max_visits'];
      const done = await this.run(this.sql`
        INSERT INTO links ${this.sql(rows, columns)}
        ON CONFLICT (code) DO NOTHING RETURNING code`);
      inserted = new Set(done.map((r) => (r as { code: string }).code));
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    if (inserted.size > 0) {
      this.wrote(started);
      this.moved(inserted.size);
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
    const { code, url, createdAt, retentionDays, visits, maxVisits } = record;
    const started = performance.now();
    const replaced = await this.transaction(async (tx) => {
      const gone = await tx`DELETE FROM links WHERE code = ${code} AND NOT ${this.live(now)} RETURNING 1`;
      if (gone.length === 0) return false;
      const added = await tx`
        INSERT INTO links (code, url, created_at, retention_days, visit_count, max_visits)
        VALUES (${code}, ${url}, ${createdAt}, ${retentionDays}, ${visits}, ${maxVisits})
        ON CONFLICT (code) DO NOTHING RETURNING 1`;
      return added.length > 0;
    });
    if (replaced) this.wrote(started);
    return replaced;
  }

  async delete(code: string, now: number): Promise<boolean> {
    const started = performance.now();
    const rows = await this.run(this.sql`DELETE FROM links WHERE code = ${code} AND ${this.live(now)} RETURNING 1`);
    if (rows.length === 0) return false;
    this.wrote(started);
    this.moved(-1);
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
    const set: Record<string, string | number | null> = {};
    if (changes.url !== undefined) set['url'] = changes.url;
    if (changes.retentionDays !== undefined) set['retention_days'] = changes.retentionDays;
    if (changes.maxVisits !== undefined) set['max_visits'] = changes.maxVisits;
    const columns = Object.keys(set);
    if (columns.length === 0) return this.get(code, now);
    const started = performance.now();
    // One statement: the row lock orders it against concurrent edits, deletes and visits.
    const rows = await this.run(this.sql<Row[]>`
      UPDATE links SET ${this.sql(set, columns)} WHERE code = ${code} AND ${this.live(now)}
      RETURNING code, url, created_at, retention_days, visit_count, max_visits`);
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
  async countVisit(code: string, now: number, count: boolean): Promise<VisitDecision> {
    if (!count) return this.peek(code, now);
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const rows = await this.run(this.sql<{ url: string; max_visits: number | null }[]>`
        UPDATE links SET visit_count = visit_count + 1
        WHERE code = ${code} AND ${this.live(now)} AND (max_visits IS NULL OR visit_count < max_visits)
        RETURNING url, max_visits, set_config('synchronous_commit', CASE WHEN max_visits IS NULL THEN 'off' ELSE 'on' END, true)`);
      const hit = rows[0];
      if (hit) {
        if (hit.max_visits !== null) this.wrote(started);
        return { kind: 'found', url: hit.url };
      }
      const decision = await this.peek(code, now);
      // `found` here means the link changed in between (created, or its limit raised): count again.
      if (decision.kind !== 'found') return decision;
      if (attempt === 2) return { kind: 'limit_reached' };
    }
  }

  /** What a visit would be, counting nothing (HEAD, and the reason of a GET that counted nothing). */
  private async peek(code: string, now: number): Promise<VisitDecision> {
    const rows = await this.run(this.sql<Row[]>`
      SELECT url, created_at, retention_days, visit_count, max_visits FROM links WHERE code = ${code}`);
    const row = rows[0];
    if (!row) return { kind: 'missing' };
    if (isExpiredAt(Number(row.created_at), row.retention_days, now)) return { kind: 'expired' };
    if (isUsedUp({ visits: Number(row.visit_count), maxVisits: row.max_visits })) return { kind: 'limit_reached' };
    return { kind: 'found', url: row.url };
  }

  // ---- Background work ---------------------------------------------------------------------

  /**
   * Deletes links expired by `now`, in batches, each its own short transaction; one instance at a
   * time (the others skip the round). Resolves with the number deleted.
   */
  async reapExpired(now: number, batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.transaction(async (tx) => {
        const [lock] = await tx<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(${REAPER_LOCK.toString()}::bigint) AS got`;
        if (!lock?.got) return -1;
        const rows = await tx`
          DELETE FROM links WHERE code IN (
            SELECT code FROM links
            WHERE retention_days > 0 AND created_at + retention_days::bigint * 86400 <= ${now}
            LIMIT ${batch} FOR UPDATE SKIP LOCKED
          ) RETURNING 1`;
        return rows.length;
      });
      if (deleted < 0) return total;
      total += deleted;
      this.moved(-deleted);
      if (deleted < batch) {
        if (total > 0) this.log.debug('expired links deleted', { links: total });
        return total;
      }
    }
  }

  private async refreshCount(): Promise<void> {
    this.drift = 0;
    const [row] = await this.run(this.sql<{ n: string }[]>`SELECT count(*) AS n FROM links`);
    this.links = Number(row!.n) + this.drift;
  }

  private async probe(): Promise<void> {
    await this.run(this.sql`SELECT 1`);
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      for (const timer of this.timers) clearInterval(timer);
      await this.sql.end({ timeout: 5 });
    })();
    return this.closing;
  }

  // ---- Plumbing ----------------------------------------------------------------------------

  private moved(delta: number): void {
    this.links += delta;
    this.drift += delta;
  }

  private wrote(started: number): void {
    this.onWrite?.((performance.now() - started) / 1000);
  }

  /** One statement (of the pool or of a held transaction), bounded: past the timeout it is cancelled (or taken out of the queue) and fails as unavailable. */
  async run<T extends readonly postgres.MaybeRow[]>(query: postgres.PendingQuery<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Only a query still queued is cancelled: postgres.js takes it out of the queue at once. A
        // query already sent would be cancelled over a connection of its own, whose failure (the
        // database being away is why we are here) rejects a promise the driver never hands back:
        // an unhandled rejection that ends the process. The server's statement_timeout ends it
        // instead, or the lost connection does; its settling is handled by the race below.
        if (!(query as { state?: unknown }).state) query.cancel();
        reject(new StoreUnavailableError(DATABASE_UNAVAILABLE));
      }, this.timeoutMs);
    });
    try {
      const rows = await Promise.race([query, timeout]);
      this.reachable();
      return rows as T;
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A short read-write transaction, bounded like a statement: one that only got its connection
   * after the caller was told "unavailable" rolls back without doing anything.
   */
  private async transaction<T>(fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
    let abandoned = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned = true;
        reject(new StoreUnavailableError(DATABASE_UNAVAILABLE));
      }, this.timeoutMs);
    });
    const work = this.sql.begin(async (tx) => {
      if (abandoned) throw new StoreUnavailableError(DATABASE_UNAVAILABLE);
      const result = await fn(tx);
      // Too late to be acknowledged: roll back rather than commit what the caller was told failed.
      if (abandoned) throw new StoreUnavailableError(DATABASE_UNAVAILABLE);
      return result;
    }) as Promise<T>;
    try {
      const result = await Promise.race([work, timeout]);
      this.reachable();
      return result;
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A repeatable-read, read-only transaction kept open until `end()`: one snapshot for many reads. */
  private hold(): Promise<Held> {
    return new Promise<Held>((resolve, reject) => {
      let finish!: () => void;
      const ended = new Promise<void>((r) => (finish = r));
      let abandoned = false;
      const timer = setTimeout(() => {
        abandoned = true;
        reject(this.failure(new StoreUnavailableError(DATABASE_UNAVAILABLE)));
      }, this.timeoutMs);
      this.sql
        .begin(SNAPSHOT, async (tx) => {
          clearTimeout(timer);
          if (abandoned) return;
          resolve({ tx, end: finish });
          await ended;
        })
        .catch((err: unknown) => {
          clearTimeout(timer);
          finish();
          reject(this.failure(err));
        });
    });
  }

  /** The error to throw for `err`: unavailability becomes the one `StoreUnavailableError`. */
  private failure(err: unknown): unknown {
    if (!(err instanceof StoreUnavailableError) && !isUnavailableError(err)) return err;
    if (this.reason === undefined) {
      const code = (err as { code?: unknown }).code;
      this.log.warn('database unavailable', { error: typeof code === 'string' ? code : 'timeout' });
    }
    this.reason = DATABASE_UNAVAILABLE;
    return err instanceof StoreUnavailableError ? err : new StoreUnavailableError(DATABASE_UNAVAILABLE);
  }

  private reachable(): void {
    if (this.reason === undefined) return;
    this.reason = undefined;
    this.log.info('database reachable again');
  }
}

/** A page read whole: slices from memory. */
function memoryPage(total: number, records: readonly LinkRecord[]): LinkPage {
  return {
    total,
    count: records.length,
    slice: (from, to) => records.slice(Math.max(0, from), Math.min(to, records.length)),
    release: () => undefined,
  };
}

type ChunkQuery = (tx: postgres.TransactionSql, after: string | undefined, skip: number, n: number) => postgres.PendingQuery<Row[]>;

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
    private readonly store: PostgresStore,
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
      this.rows = await this.fetch(undefined, this.offset + from, Math.max(this.store.chunkSize, to - from));
      this.start = from;
    } else if (to > end) {
      const more = await this.fetch(this.rows[this.rows.length - 1]!.seq, 0, Math.max(this.store.chunkSize, to - end));
      this.rows = [...this.rows.slice(from - this.start), ...more];
      this.start = from;
    }
    return this.rows.slice(from - this.start, to - this.start).map(toRecord);
  }

  private fetch(after: string | undefined, skip: number, n: number): Promise<Row[]> {
    if (this.released) throw new Error('this page has been released');
    return this.store.run(this.read(this.held.tx, after, skip, n));
  }

  release(): void {
    this.released = true;
    this.held.end();
  }
}
