/**
 * The SQL of the day summaries (docs/postgres.md, day summaries; migration 3 in `schema.ts`), one
 * method per statement like `visit-statements.ts`: closing a link's days, building their
 * summaries from its events, and reading them for a question. What they mean and why they are
 * exact is in `day-summaries.ts`; how a question uses them in `day-stats.ts`.
 */
import type postgres from 'postgres';
import { BROWSERS, DEVICES, SYSTEMS } from '../../visits/packed.ts';
import { DAY, SLOT, SLOTS } from './day-stats.ts';
import { RETENTION_LOCK } from './schema.ts';
import type { PostgresStatements } from './statements.ts';

/** A row of `summaries`: the link, a day's slots, or a value summed over the days. */
export interface SummaryRow {
  kind: 'link' | 'day' | 'value';
  /** The day (`day`); the top list, an index of `DIMENSIONS` (`value`). */
  at: number | null;
  value: string | null;
  /** visit_count (`link`), people (`value`). */
  n: string | null;
  /** untracked_visits (`link`), bots (`value`). */
  b: string | null;
  /** events_closed (`link`). */
  closed: number | null;
  slots: number[] | null;
  seq: string | null;
}

export class VisitDayStatements {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly links: PostgresStatements,
  ) {}

  /**
   * Closes the days before `day` to the redirects of link `seq` (`events_closed` never goes back).
   * Its own short transaction, committed before a summary is built: see `day-summaries.ts`.
   */
  close(tx: postgres.TransactionSql, seq: string, day: number): postgres.PendingQuery<postgres.Row[]> {
    return tx`UPDATE links SET events_closed = greatest(events_closed, ${day}::integer) WHERE seq = ${seq}::bigint`;
  }

  /**
   * Retention's lock, shared, if free: a summary is never built from events retention is
   * removing (retention takes it alone, and skips its round while a builder holds it).
   */
  sharedRetentionLock(tx: postgres.TransactionSql): postgres.PendingQuery<{ got: boolean }[]> {
    return tx<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock_shared(${RETENTION_LOCK.toString()}::bigint) AS got`;
  }

  /**
   * The summaries of link `seq`'s `days` (closed ones), from one snapshot: the events and the
   * link's `events_epoch` are read by this one statement, so a summary holds exactly the events
   * of the epoch it names. A day without events gets a row too (slots NULL): it is summarised.
   */
  build(tx: postgres.TransactionSql, seq: string, days: readonly number[]): postgres.PendingQuery<postgres.Row[]> {
    const sql = this.sql;
    const lo = Math.min(...days) * DAY;
    const hi = (Math.max(...days) + 1) * DAY;
    const family = (column: 'browser' | 'os' | 'device', names: readonly string[]): postgres.PendingQuery<postgres.Row[]> =>
      sql`(${names as string[]}::text[])[${sql.unsafe(`e.${column}`)} + 1]`;
    // Slot i of series s is element s * SLOTS + i + 1 of `slots` (series in `SERIES` of day-stats.ts).
    return tx`
      WITH ev AS MATERIALIZED (
        SELECT (e.time / ${DAY})::integer AS day, ((e.time % ${DAY}) / ${SLOT})::integer AS slot, e.bot, e.visitor,
          e.referrer, e.country, e.browser, e.os, e.device
        FROM visits e
        WHERE e.link_seq = ${seq}::bigint AND e.time >= ${lo}::bigint AND e.time < ${hi}::bigint
          AND (e.time / ${DAY})::integer = ANY(${days as number[]}::integer[])
      ),
      -- Each visitor of a day by bot flag, then whatever the flag, with its first and last slot; an
      -- event without an id is a visitor of its own.
      flagged AS (
        SELECT e.day, e.bot, min(e.slot) AS f, max(e.slot) AS l FROM ev e WHERE e.visitor IS NOT NULL GROUP BY e.day, e.bot, e.visitor
        UNION ALL SELECT e.day, e.bot, e.slot, e.slot FROM ev e WHERE e.visitor IS NULL
      ),
      anyflag AS (
        SELECT e.day, min(e.slot) AS f, max(e.slot) AS l FROM ev e WHERE e.visitor IS NOT NULL GROUP BY e.day, e.visitor
        UNION ALL SELECT e.day, e.slot, e.slot FROM ev e WHERE e.visitor IS NULL
      ),
      counted AS (
        SELECT day, i, sum(n)::integer AS n FROM (
          SELECT e.day, e.bot::integer * ${SLOTS} + e.slot AS i, count(*) AS n FROM ev e GROUP BY 1, 2
          UNION ALL SELECT day, (2 + 2 * bot::integer) * ${SLOTS} + f, count(*) FROM flagged GROUP BY 1, 2
          UNION ALL SELECT day, (3 + 2 * bot::integer) * ${SLOTS} + l, count(*) FROM flagged GROUP BY 1, 2
          UNION ALL SELECT day, 6 * ${SLOTS} + f, count(*) FROM anyflag GROUP BY 1, 2
          UNION ALL SELECT day, 7 * ${SLOTS} + l, count(*) FROM anyflag GROUP BY 1, 2
        ) c GROUP BY day, i
      ),
      slotted AS (
        SELECT d.day, array_agg(coalesce(c.n, 0) ORDER BY i.i) AS slots
        FROM (SELECT DISTINCT day FROM ev) d
        CROSS JOIN generate_series(0, ${8 * SLOTS - 1}) AS i(i)
        LEFT JOIN counted c ON c.day = d.day AND c.i = i.i
        GROUP BY d.day
      ),
      valued AS (
        SELECT day, array_agg(dim ORDER BY dim, value) AS dims, array_agg(value ORDER BY dim, value) AS vals,
          array_agg(p ORDER BY dim, value) AS people, array_agg(b ORDER BY dim, value) AS bots
        FROM (
          SELECT e.day, 0::smallint AS dim, e.referrer AS value, count(*) FILTER (WHERE NOT e.bot)::integer AS p, count(*) FILTER (WHERE e.bot)::integer AS b FROM ev e GROUP BY 1, 3
          UNION ALL SELECT e.day, 1::smallint, e.country, count(*) FILTER (WHERE NOT e.bot)::integer, count(*) FILTER (WHERE e.bot)::integer FROM ev e GROUP BY 1, 3
          UNION ALL SELECT e.day, 2::smallint, ${family('browser', BROWSERS)}, count(*) FILTER (WHERE NOT e.bot)::integer, count(*) FILTER (WHERE e.bot)::integer FROM ev e GROUP BY 1, 3
          UNION ALL SELECT e.day, 3::smallint, ${family('os', SYSTEMS)}, count(*) FILTER (WHERE NOT e.bot)::integer, count(*) FILTER (WHERE e.bot)::integer FROM ev e GROUP BY 1, 3
          UNION ALL SELECT e.day, 4::smallint, ${family('device', DEVICES)}, count(*) FILTER (WHERE NOT e.bot)::integer, count(*) FILTER (WHERE e.bot)::integer FROM ev e GROUP BY 1, 3
        ) v GROUP BY day
      )
      INSERT INTO visit_days (link_seq, day, epoch, slots, dims, vals, people, bots)
      SELECT ${seq}::bigint, w.day, (SELECT events_epoch FROM links WHERE seq = ${seq}::bigint), s.slots,
        coalesce(v.dims, '{}'), coalesce(v.vals, '{}'), coalesce(v.people, '{}'), coalesce(v.bots, '{}')
      FROM unnest(${days as number[]}::integer[]) AS w(day)
      LEFT JOIN slotted s ON s.day = w.day LEFT JOIN valued v ON v.day = w.day
      ON CONFLICT (link_seq, day) DO UPDATE SET epoch = excluded.epoch, slots = excluded.slots, dims = excluded.dims,
        vals = excluded.vals, people = excluded.people, bots = excluded.bots`;
  }

  /**
   * What a question over the live link of `code` reads of its summaries, in the caller's snapshot:
   * the link (seq, counts, `events_closed`), the slots of each summarised day of `[firstDay,
   * endDay)` whose epoch is the link's, and every top list's values summed over those days. No
   * row when the link is not live.
   */
  summaries(tx: postgres.TransactionSql, code: string, firstDay: number, endDay: number, now: number): postgres.PendingQuery<SummaryRow[]> {
    return tx<SummaryRow[]>`
      WITH link AS (
        SELECT seq, visit_count, untracked_visits, events_closed, events_epoch FROM links WHERE code = ${code} AND ${this.links.live(now)}
      ), days AS MATERIALIZED (
        SELECT v.day, v.slots, v.dims, v.vals, v.people, v.bots FROM visit_days v, link
        WHERE v.link_seq = link.seq AND v.epoch = link.events_epoch AND v.day >= ${firstDay}::integer AND v.day < ${endDay}::integer
      )
      SELECT 'link' AS kind, NULL::integer AS at, NULL::text AS value, visit_count::text AS n, untracked_visits::text AS b,
        events_closed AS closed, NULL::integer[] AS slots, seq::text AS seq FROM link
      UNION ALL
      SELECT 'day', day, NULL, NULL, NULL, NULL, slots, NULL FROM days
      UNION ALL
      SELECT 'value', u.dim, u.value, sum(u.p)::text, sum(u.b)::text, NULL, NULL, NULL
      FROM days d, unnest(d.dims, d.vals, d.people, d.bots) AS u(dim, value, p, b)
      GROUP BY u.dim, u.value`;
  }
}
