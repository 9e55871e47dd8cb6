/**
 * The SQL of the PostgreSQL store (docs/postgres.md), one method per statement, and the row they
 * read. Each method only builds its query; nothing is sent until the store hands it to its bounded
 * `run` (`calls.ts`), which awaits it.
 *
 * What the store asks the database reads in one place, apart from how it batches, orders and
 * bounds the calls. Expiry is decided here, at read time, by the caller's clock, never the database's.
 */
import type postgres from 'postgres';
import { someRouting, type LinkRecord, type Routing, type RoutingChange } from '../link-store.ts';
import type { EventColumns } from './event-row.ts';
import { PLAIN, ROUTED, visitParams } from './redirect-sql.ts';
import { type ColumnValue, folded, type ListFilter, type Row } from './link-rows.ts';
import { REAPER_LOCK } from './schema.ts';

export { folded, toRecord, type ColumnValue, type ListFilter, type Row } from './link-rows.ts';

/** Reads a chunk of a long page inside its held snapshot: on from seq `after`, or at offset `skip`. */
export type ChunkQuery = (tx: postgres.TransactionSql, after: string | undefined, skip: number, n: number) => postgres.PendingQuery<Row[]>;

export class PostgresStatements {
  constructor(private readonly sql: postgres.Sql) {}

  /** "Not expired by `now`": expiry is decided at read time, never by the database's clock. */
  live(now: number): postgres.PendingQuery<postgres.Row[]> {
    // The redirect's constant texts spell the same rule out (`LIVE_AT_2`).
    return this.sql`(retention_days = 0 OR created_at + retention_days::bigint * 86400 > ${now})`;
  }

  /** `live` of the links row named `l` (the statements that join events to their link). */
  liveAs(now: number): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`(l.retention_days = 0 OR l.created_at + l.retention_days::bigint * 86400 > ${now})`;
  }

  /** A domain's links: the keys that start with `<host>/`; the default one's, those without a `/` (links/domains.ts). */
  private onDomain(domain: string | null | undefined): postgres.PendingQuery<postgres.Row[]> {
    return domain === undefined ? this.sql`` : domain === null ? this.sql`AND strpos(code, '/') = 0` : this.sql`AND starts_with(code, ${`${domain}/`})`;
  }

  /**
   * `q` matched in code, URL and title on their own, and the tags contained in the link's. Stored
   * codes and URLs are ASCII (WHATWG serializations), and `lower` under the C collation folds
   * exactly A–Z like `toLowerCase` does on them; a title is any text, so it is matched in
   * `title_folded`, folded by `toLowerCase` when it was written (migration 4).
   */
  private filter({ q, tags, author, domain }: ListFilter): postgres.PendingQuery<postgres.Row[]> {
    const by = author === undefined ? this.onDomain(domain) : this.sql`AND author = ${author} ${this.onDomain(domain)}`;
    const tagged = tags !== undefined && tags.length > 0 ? this.sql`AND tags @> ${tags as string[]}::text[] ${by}` : by;
    if (q === undefined) return tagged;
    const needle = q.toLowerCase();
    return this
      .sql`AND (position(${needle} in lower(code COLLATE "C")) > 0 OR position(${needle} in lower(url COLLATE "C")) > 0 OR position(${needle} in title_folded) > 0) ${tagged}`;
  }

  get(code: string, now: number): postgres.PendingQuery<Row[]> {
    return this.sql<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing FROM links
      WHERE code = ${code} AND ${this.live(now)}`;
  }

  newestByUrl(url: string, now: number, domain?: string | null): postgres.PendingQuery<Row[]> {
    // The hash index on url finds the few links of this URL; the newest live one (of the domain) wins.
    return this.sql<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing FROM links
      WHERE url = ${url} AND ${this.live(now)} ${this.onDomain(domain)} ORDER BY seq DESC LIMIT 1`;
  }

  /** A page and the total: one row with nulls but the total when the page is empty. */
  page(limit: number, offset: number, now: number, filter: ListFilter): postgres.PendingQuery<(Row & { total: string })[]> {
    return this.sql<(Row & { total: string })[]>`
      SELECT p.*, (SELECT count(*) FROM links WHERE ${this.live(now)} ${this.filter(filter)}) AS total
      FROM (SELECT 1) AS one LEFT JOIN LATERAL (
        SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing FROM links
        WHERE ${this.live(now)} ${this.filter(filter)} ORDER BY seq DESC LIMIT ${limit} OFFSET ${offset}
      ) AS p ON true`;
  }

  countLive(tx: postgres.TransactionSql, now: number, filter: ListFilter): postgres.PendingQuery<{ total: string }[]> {
    return tx<{ total: string }[]>`SELECT count(*) AS total FROM links WHERE ${this.live(now)} ${this.filter(filter)}`;
  }

  /** The first chunk of a long page, newest first. */
  firstChunk(tx: postgres.TransactionSql, now: number, filter: ListFilter, n: number, offset: number): postgres.PendingQuery<Row[]> {
    return tx<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing, seq FROM links
      WHERE ${this.live(now)} ${this.filter(filter)} ORDER BY seq DESC LIMIT ${n} OFFSET ${offset}`;
  }

  /** The later chunks of the same page. */
  chunks(now: number, filter: ListFilter): ChunkQuery {
    return (tx, after, skip, n) =>
      after !== undefined
        ? tx<Row[]>`SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing, seq FROM links
            WHERE ${this.live(now)} ${this.filter(filter)} AND seq < ${after} ORDER BY seq DESC LIMIT ${n}`
        : tx<Row[]>`SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing, seq FROM links
            WHERE ${this.live(now)} ${this.filter(filter)} ORDER BY seq DESC LIMIT ${n} OFFSET ${skip}`;
  }

  /** A chunk of the export: oldest first, on from seq `after`. */
  exportChunk(tx: postgres.TransactionSql, now: number, after: string, n: number, author: string | undefined): postgres.PendingQuery<Row[]> {
    return tx<Row[]>`
      SELECT code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing, seq FROM links
      WHERE ${this.live(now)} ${this.filter({ author })} AND seq > ${after} ORDER BY seq LIMIT ${n}`;
  }

  /**
   * One multi-row insert; it returns the codes it took (a code held already is skipped). `outbox`,
   * an INSERT that reads the CTE `inserted` (`webhooks-fanout.ts`), writes their events with them.
   */
  insertBatch(batch: readonly { record: LinkRecord }[], outbox?: postgres.PendingQuery<postgres.Row[]>): postgres.PendingQuery<postgres.Row[]> {
    const rows = batch.map(({ record: r }) => ({
      code: r.code,
      url: r.url,
      created_at: r.createdAt,
      retention_days: r.retentionDays,
      visit_count: r.visits,
      untracked_visits: r.untracked,
      max_visits: r.maxVisits,
      title: r.title ?? null,
      title_folded: folded(r.title),
      tags: (r.tags ?? []) as string[],
      author: r.author ?? null,
      routing: this.routing(r.routing),
    }));
    const columns: (keyof (typeof rows)[number])[] = [
      'code',
      'url',
      'created_at',
      'retention_days',
      'visit_count',
      'untracked_visits',
      'max_visits',
      'title',
      'title_folded',
      'tags',
      'author',
      'routing',
    ];
    if (outbox !== undefined)
      return this.sql`
        WITH inserted AS (INSERT INTO links ${this.sql(rows, columns)} ON CONFLICT (code) DO NOTHING RETURNING code), outbox AS (${outbox})
        SELECT code FROM inserted`;
    return this.sql`
      INSERT INTO links ${this.sql(rows, columns)}
      ON CONFLICT (code) DO NOTHING RETURNING code`;
  }

  /** Deletes the link of `code` if it has expired by `now` (to take its code). */
  deleteExpired(tx: postgres.TransactionSql, code: string, now: number): postgres.PendingQuery<{ seq: string }[]> {
    return tx<{ seq: string }[]>`DELETE FROM links WHERE code = ${code} AND NOT ${this.live(now)} RETURNING seq`;
  }

  insertOne(tx: postgres.TransactionSql, record: LinkRecord): postgres.PendingQuery<postgres.Row[]> {
    const { code, url, createdAt, retentionDays, visits, untracked, maxVisits } = record;
    const title = record.title ?? null;
    const tags = (record.tags ?? []) as string[];
    const author = record.author ?? null;
    return tx`
      INSERT INTO links (code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, title_folded, tags, author, routing)
      VALUES (${code}, ${url}, ${createdAt}, ${retentionDays}, ${visits}, ${untracked}, ${maxVisits}, ${title}, ${folded(title)}, ${tags}::text[], ${author},
        ${this.routing(record.routing)})
      ON CONFLICT (code) DO NOTHING RETURNING 1`;
  }

  /** Deletes the live link of `code`, returning it (`link.deleted`'s data); its events go in the same transaction (`deleteEvents`). */
  delete(tx: postgres.TransactionSql, code: string, now: number): postgres.PendingQuery<Row[]> {
    return tx<Row[]>`
      DELETE FROM links WHERE code = ${code} AND ${this.live(now)}
      RETURNING code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing, seq`;
  }

  /**
   * The events of deleted links, in the transaction that deleted them. A statement of its own,
   * after the link's: it reads a snapshot taken once the link's row was locked, so it also sees an
   * event whose visit committed just before, which a single statement's earlier snapshot would miss.
   */
  deleteEvents(tx: postgres.TransactionSql, seqs: readonly string[]): postgres.PendingQuery<postgres.Row[]> {
    return tx`DELETE FROM visits WHERE link_seq = ANY(${seqs}::bigint[])`;
  }

  /**
   * A routing edit (`mergeRouting`) applied to the row as the row lock holds it: the parts removed,
   * then the parts given, and no routing at all when none is left. So concurrent edits of two parts
   * on two instances both hold.
   */
  private routingChange(change: RoutingChange | null): postgres.PendingQuery<postgres.Row[]> {
    if (change === null) return this.sql`routing = NULL`;
    const removed = Object.keys(change).filter((part) => change[part as keyof RoutingChange] === null);
    const given = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== null && value !== undefined));
    const json = this.sql.json(given as postgres.JSONValue);
    return this.sql`routing = nullif((coalesce(routing, '{}'::jsonb) - ${removed}::text[]) || ${json}, '{}'::jsonb)`;
  }

  /** A record's routing as the column takes it: a JSON parameter (`jsonb`), or NULL for none. */
  routing(routing: Routing | null | undefined): postgres.Parameter | null {
    const some = someRouting(routing);
    return some === undefined ? null : this.sql.json(some as unknown as postgres.JSONValue);
  }

  /** One statement (of `tx` when given): the row lock orders it against concurrent edits, deletes and visits. */
  update(
    code: string,
    now: number,
    set: Record<string, ColumnValue>,
    columns: string[],
    routing?: RoutingChange | null,
    tx: postgres.ISql = this.sql,
  ): postgres.PendingQuery<Row[]> {
    // The driver reads its column helper as an update list only right after SET, in this text.
    const changed = routing === undefined ? this.sql`` : this.sql`${columns.length === 0 ? this.sql`` : this.sql`,`} ${this.routingChange(routing)}`;
    const where = this.sql`WHERE code = ${code} AND ${this.live(now)}`;
    return columns.length === 0
      ? tx<Row[]>`
      UPDATE links SET ${changed} ${where}
      RETURNING code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing`
      : tx<Row[]>`
      UPDATE links SET ${this.sql(set, columns)}${changed} ${where}
      RETURNING code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing`;
  }

  /**
   * The counted visit: a live link with visits left gets one more, and its commit is synchronous
   * only when it has a limit (`set_config(…, true)` lasts until this statement's own commit).
   * The count stops at 2^53 − 1, `MAX_COUNT` (`record-limits.ts`), written out so the statement
   * stays one text. Without an event the visit is untracked too; with one, the event is inserted
   * by this same statement (a data-modifying CTE), so the count and its event commit together or
   * not at all, and only when the UPDATE matched: the event names the row it counted. An event
   * dated before the link's `events_closed` day (this instance's clock is behind the one that
   * closed it) retires the link's day summaries in the same UPDATE (`day-summaries.ts` says why
   * that is exact): the row the UPDATE reads is the latest, whatever it waited for.
   */
  countVisit(code: string, now: number, event: EventColumns | undefined, routed = false): postgres.PendingQuery<{ url: string; max_visits: number | null }[]> {
    // Constant texts with numbered parameters: the redirect is the one statement run thousands of
    // times a second, and building it from fragments cost the driver more than sending it.
    const texts = routed ? ROUTED : PLAIN;
    return this.sql.unsafe(event === undefined ? texts.untracked : texts.withEvent, visitParams(code, now, event, routed), { prepare: true });
  }

  /** An event's values after its `link_seq`, in the column order of `countVisit`'s insert. */
  eventValues(e: EventColumns): postgres.PendingQuery<postgres.Row[]> {
    return this
      .sql`${e.time}::bigint, ${e.referrer}::text, ${e.country}::text, ${e.browser}::smallint, ${e.os}::smallint, ${e.device}::smallint, ${e.bot}::boolean, ${e.visitor}::integer, ${e.rule}::smallint`;
  }

  /** The row of `code`, expired or not: the store tells missing, expired and used up apart. */
  peek(code: string): postgres.PendingQuery<Row[]> {
    return this.sql<Row[]>`
      SELECT url, created_at, retention_days, visit_count, max_visits, routing FROM links WHERE code = ${code}`;
  }

  /** The reaper's advisory lock, for this transaction: one instance reaps at a time. */
  reaperLock(tx: postgres.TransactionSql): postgres.PendingQuery<{ got: boolean }[]> {
    return tx<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(${REAPER_LOCK.toString()}::bigint) AS got`;
  }

  /** Deletes up to `batch` links expired by `now`, skipping rows another transaction holds. */
  reapBatch(tx: postgres.TransactionSql, now: number, batch: number): postgres.PendingQuery<{ seq: string }[]> {
    return tx<{ seq: string }[]>`
      DELETE FROM links WHERE code IN (
        SELECT code FROM links
        WHERE retention_days > 0 AND created_at + retention_days::bigint * 86400 <= ${now}
        LIMIT ${batch} FOR UPDATE SKIP LOCKED
      ) RETURNING seq`;
  }

  countAll(): postgres.PendingQuery<{ n: string }[]> {
    return this.sql<{ n: string }[]>`SELECT count(*) AS n FROM links`;
  }

  ping(): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`SELECT 1`;
  }
}
