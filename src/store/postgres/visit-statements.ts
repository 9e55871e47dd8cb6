/**
 * The SQL of the visit events on PostgreSQL (docs/postgres.md, the visits table), one method per
 * statement, like `statements.ts` for the links (the redirect's own statement, which counts a visit
 * and inserts its event, is there). Events name their link by its `seq`, and every read joins them
 * to a live link: an expired link's events are not shown even before the link's row is deleted.
 */
import type postgres from 'postgres';
import type { BotFilter, EventFilter, VisitExportFilter } from '../../visits/event.ts';
import { TOP_SIZE } from '../../visits/event.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../../visits/packed.ts';
import type { Interval } from './day-stats.ts';
import type { EventColumns, EventRow } from './event-row.ts';
import type { PostgresStatements } from './statements.ts';

/** One row of the stats statement: what `kind` names, its value, and its numbers (as text). */
export interface StatsRow {
  kind: 'link' | 'total' | 'bucket' | 'referrer' | 'country' | 'browser' | 'os' | 'device' | 'links';
  value: string | null;
  n: string;
  /** Unique visitors (total and buckets), `untracked_visits` (link). */
  u: string | null;
  /** Bot events whatever the filter (total). */
  b: string | null;
}

interface ExportRow extends EventRow {
  code: string;
  id: string;
}

/** An event's place in "oldest first, by time then arrival": where an export chunk goes on from. */
export interface EventPlace {
  time: number;
  id: string;
}

/** The `(UTC day, visitor)` pair as one number: day × 2^32 + the signed id is one value per pair. */
const VISITOR_KEY = 'e.time / 86400 * 4294967296 + e.visitor';

const FAMILIES = { browser: BROWSERS, os: SYSTEMS, device: DEVICES } as const;

/** The name of event `e`'s family in `column` (its index in the lists of `packed.ts`), null for none. */
export function familyOf(sql: postgres.Sql, column: keyof typeof FAMILIES): postgres.PendingQuery<postgres.Row[]> {
  return sql`(${FAMILIES[column] as string[]}::text[])[${sql.unsafe(`e.${column}`)} + 1]`;
}

export class VisitStatements {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly links: PostgresStatements,
  ) {}

  /** Events passing `bots`. */
  private pass(bots: BotFilter): postgres.PendingQuery<postgres.Row[]> {
    return bots === 'exclude' ? this.sql`NOT e.bot` : bots === 'only' ? this.sql`e.bot` : this.sql`true`;
  }

  private range(f: { from: number; to: number }): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`e.time >= ${f.from}::bigint AND e.time < ${f.to}::bigint`;
  }

  /**
   * The stats of one link (`code`) or of every live link (null), in one statement, so every number
   * comes from one snapshot: the link's counts, the totals, one row per non-empty bucket, and each
   * top list's 10 largest values (ties by value, null first; the rest is the total minus them).
   * No row of kind `link` when `code` has no live link.
   */
  stats(code: string | null, q: { from: number; to: number; bots: BotFilter; edges: readonly number[] }, now: number): postgres.PendingQuery<StatsRow[]> {
    const sql = this.sql;
    const events =
      code === null
        ? sql`visits e JOIN links l ON l.seq = e.link_seq WHERE ${this.links.liveAs(now)} AND ${this.range(q)}`
        : sql`visits e WHERE e.link_seq = (SELECT seq FROM link) AND ${this.range(q)}`;
    const passing = sql`${events} AND ${this.pass(q.bots)}`;
    // Ties by value as JavaScript compares strings: by code points, the C collation's order. By
    // position in GROUP BY and ORDER BY: a repeated expression would carry its own parameters and
    // no longer be the same expression.
    const top = (kind: StatsRow['kind'], value: postgres.PendingQuery<postgres.Row[]>): postgres.PendingQuery<postgres.Row[]> => sql`
      (SELECT ${kind}::text AS kind, (${value}) COLLATE "C" AS value, count(*)::text AS n, NULL::text AS u, NULL::text AS b
       FROM ${passing} GROUP BY 2 ORDER BY count(*) DESC, 2 ASC NULLS FIRST LIMIT ${TOP_SIZE})`;
    const counts =
      code === null
        ? sql`SELECT 'link'::text AS kind, NULL::text AS value, coalesce(sum(visit_count), 0)::text AS n, coalesce(sum(untracked_visits), 0)::text AS u, NULL::text AS b
              FROM links WHERE ${this.links.live(now)}`
        : sql`WITH link AS (SELECT seq, visit_count, untracked_visits FROM links WHERE code = ${code} AND ${this.links.live(now)})
              SELECT 'link'::text AS kind, NULL::text AS value, visit_count::text AS n, untracked_visits::text AS u, NULL::text AS b FROM link`;
    return sql<StatsRow[]>`
      ${counts}
      UNION ALL
      SELECT 'total', NULL, count(*) FILTER (WHERE ${this.pass(q.bots)})::text,
        (count(DISTINCT ${sql.unsafe(VISITOR_KEY)}) FILTER (WHERE ${this.pass(q.bots)}) + count(*) FILTER (WHERE ${this.pass(q.bots)} AND e.visitor IS NULL))::text,
        count(*) FILTER (WHERE e.bot)::text
      FROM ${events}
      UNION ALL
      SELECT 'bucket', (width_bucket(e.time, ${q.edges as number[]}::bigint[]) - 1)::text, count(*)::text,
        (count(DISTINCT ${sql.unsafe(VISITOR_KEY)}) + count(*) FILTER (WHERE e.visitor IS NULL))::text, NULL
      FROM ${passing} GROUP BY 2
      UNION ALL ${top('referrer', sql`e.referrer`)}
      UNION ALL ${top('country', sql`e.country`)}
      UNION ALL ${top('browser', familyOf(sql, 'browser'))}
      UNION ALL ${top('os', familyOf(sql, 'os'))}
      UNION ALL ${top('device', familyOf(sql, 'device'))}
      ${code === null ? sql`UNION ALL ${top('links', sql`l.code`)}` : sql``}`;
  }

  /**
   * The raw part of one link's stats read with its day summaries (`day-stats.ts`), inside the
   * snapshot that read them: over `whole` (the range's parts not summarised) the totals, every
   * value of every top list with its count (summaries hold them all, so no list is cut here), and
   * the buckets; over `pieces` (of summarised days) the buckets only. Intervals are disjoint.
   */
  rawPart(
    tx: postgres.TransactionSql,
    seq: string,
    q: { bots: BotFilter; edges: readonly number[] },
    whole: readonly Interval[],
    pieces: readonly Interval[],
  ): postgres.PendingQuery<StatsRow[]> {
    const sql = this.sql;
    const all = [...whole.map((i) => ({ ...i, whole: true })), ...pieces.map((i) => ({ ...i, whole: false }))];
    const pass = this.pass(q.bots);
    const values = (kind: StatsRow['kind'], value: postgres.PendingQuery<postgres.Row[]>): postgres.PendingQuery<postgres.Row[]> => sql`
      SELECT ${kind}::text, (${value}) COLLATE "C", count(*)::text, NULL, NULL FROM ev e WHERE e.whole AND ${pass} GROUP BY 2`;
    return tx<StatsRow[]>`
      WITH ev AS MATERIALIZED (
        SELECT e.time, e.referrer, e.country, e.browser, e.os, e.device, e.bot, e.visitor, r.whole = 1 AS whole
        FROM unnest(${all.map((i) => i.from)}::bigint[], ${all.map((i) => i.to)}::bigint[], ${all.map((i) => (i.whole ? 1 : 0))}::integer[]) AS r(lo, hi, whole)
        JOIN visits e ON e.link_seq = ${seq}::bigint AND e.time >= r.lo AND e.time < r.hi
      )
      SELECT 'total' AS kind, NULL::text AS value, count(*) FILTER (WHERE ${pass})::text AS n,
        (count(DISTINCT ${sql.unsafe(VISITOR_KEY)}) FILTER (WHERE ${pass}) + count(*) FILTER (WHERE ${pass} AND e.visitor IS NULL))::text AS u,
        count(*) FILTER (WHERE e.bot)::text AS b
      FROM ev e WHERE e.whole
      UNION ALL
      SELECT 'bucket', (width_bucket(e.time, ${q.edges as number[]}::bigint[]) - 1)::text, count(*)::text,
        (count(DISTINCT ${sql.unsafe(VISITOR_KEY)}) + count(*) FILTER (WHERE e.visitor IS NULL))::text, NULL
      FROM ev e WHERE ${pass} GROUP BY 2
      UNION ALL ${values('referrer', sql`e.referrer`)}
      UNION ALL ${values('country', sql`e.country`)}
      UNION ALL ${values('browser', familyOf(sql, 'browser'))}
      UNION ALL ${values('os', familyOf(sql, 'os'))}
      UNION ALL ${values('device', familyOf(sql, 'device'))}`;
  }

  /**
   * A page of one live link's events, newest first (by time, then arrival), and their total, in one
   * statement. No row when the link is not live; one row of nulls but the total when the page is empty.
   */
  page(code: string, filter: EventFilter, limit: number, offset: number, now: number): postgres.PendingQuery<(EventRow & { total: string })[]> {
    const sql = this.sql;
    const events = sql`visits e WHERE e.link_seq = link.seq AND ${this.range(filter)} AND ${this.pass(filter.bots)}`;
    return sql<(EventRow & { total: string })[]>`
      SELECT p.*, (SELECT count(*) FROM ${events}) AS total
      FROM (SELECT seq FROM links WHERE code = ${code} AND ${this.links.live(now)}) AS link
      LEFT JOIN LATERAL (
        SELECT e.time, e.referrer, e.country, e.browser, e.os, e.device, e.bot, e.rule FROM ${events}
        ORDER BY e.time DESC, e.id DESC LIMIT ${limit} OFFSET ${offset}
      ) AS p ON true`;
  }

  /**
   * Empties the events of the live link of `code`, first statement: its counts go to 0, its row
   * stays locked until the commit, and its day summaries are no longer read (`events_epoch`).
   */
  resetCounts(tx: postgres.TransactionSql, code: string, now: number): postgres.PendingQuery<{ seq: string }[]> {
    return tx<{ seq: string }[]>`
      UPDATE links SET visit_count = 0, untracked_visits = 0, events_epoch = events_epoch + 1 WHERE code = ${code} AND ${this.links.live(now)} RETURNING seq`;
  }

  /** The day summaries of link `seq` (its events are being deleted). */
  deleteSummaries(tx: postgres.TransactionSql, seq: string): postgres.PendingQuery<postgres.Row[]> {
    return tx`DELETE FROM visit_days WHERE link_seq = ${seq}::bigint`;
  }

  /** The seq of the live link of `code`, inside a held snapshot (an export of one link). */
  linkSeq(tx: postgres.TransactionSql, code: string, now: number): postgres.PendingQuery<{ seq: string }[]> {
    return tx<{ seq: string }[]>`SELECT seq FROM links WHERE code = ${code} AND ${this.links.live(now)}`;
  }

  /** A chunk of the export: events of live links (of one, with `seq`), oldest first, after `place`. */
  exportChunk(
    tx: postgres.TransactionSql,
    filter: VisitExportFilter,
    seq: string | undefined,
    place: EventPlace | undefined,
    n: number,
    now: number,
  ): postgres.PendingQuery<ExportRow[]> {
    const sql = this.sql;
    const ofLink = seq === undefined ? sql`` : sql`AND e.link_seq = ${seq}::bigint`;
    const byAuthor = filter.author === undefined ? sql`` : sql`AND l.author = ${filter.author}`;
    const after = place === undefined ? sql`` : sql`AND (e.time, e.id) > (${place.time}::bigint, ${place.id}::bigint)`;
    return tx<ExportRow[]>`
      SELECT l.code, e.id, e.time, e.referrer, e.country, e.browser, e.os, e.device, e.bot, e.rule
      FROM visits e JOIN links l ON l.seq = e.link_seq
      WHERE ${this.links.liveAs(now)} ${ofLink} ${byAuthor} AND ${this.range(filter)} AND ${this.pass(filter.bots)} ${after}
      ORDER BY e.time, e.id LIMIT ${n}`;
  }

  /**
   * An imported event, one statement: it turns one of the link's untracked visits into this event,
   * or adds a visit when none is left (SET reads the row as it was), and inserts the event. No
   * row when `code` has no live link. Limits do not apply: the import moves history, it is no visit.
   * An event in a day closed to the link's redirects retires the link's day summaries (`events_epoch`,
   * see `day-summaries.ts`): the summary of its day, built without it, is no longer read.
   */
  importVisit(code: string, event: EventColumns, now: number): postgres.PendingQuery<{ seq: string }[]> {
    return this.sql<{ seq: string }[]>`
      WITH link AS (
        UPDATE links SET
          untracked_visits = CASE WHEN untracked_visits > 0 THEN untracked_visits - 1 ELSE 0 END,
          visit_count = CASE WHEN untracked_visits > 0 THEN visit_count ELSE least(visit_count + 1, 9007199254740991) END,
          events_epoch = events_epoch + (${event.time}::bigint < events_closed::bigint * 86400)::int
        WHERE code = ${code} AND ${this.links.live(now)}
        RETURNING seq
      ), event AS (
        INSERT INTO visits (link_seq, time, referrer, country, browser, os, device, bot, visitor, rule)
        SELECT seq, ${this.links.eventValues(event)} FROM link
      )
      SELECT seq FROM link`;
  }

  /**
   * The key of UTC day `day`: `key` stored unless another instance stored one first, and the keys
   * of earlier days deleted. No row when an instance storing the day's key has not committed yet
   * (its insert is not in this statement's snapshot): asking again finds it.
   */
  dailyKey(day: number, key: Uint8Array): postgres.PendingQuery<{ key: Buffer }[]> {
    return this.sql<{ key: Buffer }[]>`
      WITH old AS (DELETE FROM visit_keys WHERE day < ${day}::integer),
      made AS (INSERT INTO visit_keys (day, key) VALUES (${day}::integer, ${Buffer.from(key)}::bytea) ON CONFLICT (day) DO NOTHING RETURNING key)
      SELECT key FROM made UNION ALL SELECT key FROM visit_keys WHERE day = ${day}::integer`;
  }
}
