/**
 * The SQL of the day summaries (docs/postgres.md, day summaries; migration 3 in `schema.ts`), one
 * method per statement like `visit-statements.ts`: closing a link's days, building their
 * summaries from its events, and reading them for a question. What they mean and why they are
 * exact is in `day-summaries.ts`; how a question uses them in `day-stats.ts`.
 */
import type postgres from 'postgres';
import { DAY, SLOT, SLOTS } from './day-stats.ts';
import { RETENTION_LOCK } from './schema.ts';
import type { PostgresStatements } from './statements.ts';
import { familyOf } from './visit-statements.ts';

/** A row of `summaries`: the link, a day's slots, or a value summed over the days. */
interface SummaryRow {
  kind: 'link' | 'day' | 'value';
  /** The link's day of creation (`link`), the day (`day`), the top list: an index of `DIMENSIONS` (`value`). */
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
    // Slot i of series s is element s * SLOTS + i + 1 of `slots` (series in `SERIES` of day-stats.ts).
    return tx`
      WITH ev AS MATERIALIZED (
        SELECT (e.time / ${DAY})::integer AS day, ((e.time % ${DAY}) / ${SLOT})::integer AS slot, e.bot, e.visitor,
          e.referrer, e.country, e.browser, e.os, e.device
        FROM visits e
        WHERE e.link_seq = ${seq}::bigint AND e.time >= ${lo}::bigint AND e.time < ${hi}::bigint
          AND (e.time / ${DAY})::integer = ANY(${days as number[]}::integer[])
      ),
      -- Each visitor of a day with its first and last slot among its events of each filter (people,
      -- bots, both); an event without an id is a visitor of its own.
      visitors AS MATERIALIZED (
        SELECT e.day, min(e.slot) FILTER (WHERE NOT e.bot) AS fp, max(e.slot) FILTER (WHERE NOT e.bot) AS lp,
          min(e.slot) FILTER (WHERE e.bot) AS fb, max(e.slot) FILTER (WHERE e.bot) AS lb, min(e.slot) AS fa, max(e.slot) AS la
        FROM ev e WHERE e.visitor IS NOT NULL GROUP BY e.day, e.visitor
        UNION ALL
        SELECT e.day, CASE WHEN NOT e.bot THEN e.slot END, CASE WHEN NOT e.bot THEN e.slot END,
          CASE WHEN e.bot THEN e.slot END, CASE WHEN e.bot THEN e.slot END, e.slot, e.slot
        FROM ev e WHERE e.visitor IS NULL
      ),
      -- Element i (0-based) of a day's slots: its events by bot flag, then the six histograms, each
      -- counted in one pass (grouping sets; grouping() says which column a row counts).
      counted AS (
        SELECT e.day, e.bot::integer * ${SLOTS} + e.slot AS i, count(*)::integer AS n FROM ev e GROUP BY 1, 2
        UNION ALL
        SELECT day, i, n FROM (
          SELECT day, CASE grouping(fp, lp, fb, lb, fa, la)
              WHEN 31 THEN 2 * ${SLOTS} + fp WHEN 47 THEN 3 * ${SLOTS} + lp WHEN 55 THEN 4 * ${SLOTS} + fb
              WHEN 59 THEN 5 * ${SLOTS} + lb WHEN 61 THEN 6 * ${SLOTS} + fa ELSE 7 * ${SLOTS} + la END AS i,
            count(*)::integer AS n
          FROM visitors GROUP BY GROUPING SETS ((day, fp), (day, lp), (day, fb), (day, lb), (day, fa), (day, la))
        ) h WHERE i IS NOT NULL
      ),
      slotted AS (
        SELECT d.day, (SELECT array_agg(coalesce(c.n, 0) ORDER BY s.i) FROM generate_series(0, ${8 * SLOTS - 1}) AS s(i)
            LEFT JOIN counted c ON c.day = d.day AND c.i = s.i) AS slots
        FROM (SELECT DISTINCT day FROM counted) d
      ),
      valued AS (
        SELECT day, array_agg(dim ORDER BY dim, value) AS dims, array_agg(value ORDER BY dim, value) AS vals,
          array_agg(p ORDER BY dim, value) AS people, array_agg(b ORDER BY dim, value) AS bots
        FROM (
          SELECT day, CASE grouping(referrer, country, browser, os, device) WHEN 15 THEN 0 WHEN 23 THEN 1 WHEN 27 THEN 2 WHEN 29 THEN 3 ELSE 4 END::smallint AS dim,
            CASE grouping(referrer, country, browser, os, device) WHEN 15 THEN referrer WHEN 23 THEN country WHEN 27 THEN browser WHEN 29 THEN os ELSE device END AS value,
            count(*) FILTER (WHERE NOT bot)::integer AS p, count(*) FILTER (WHERE bot)::integer AS b
          FROM (
            SELECT e.day, e.bot, e.referrer, e.country, ${familyOf(sql, 'browser')} AS browser, ${familyOf(sql, 'os')} AS os, ${familyOf(sql, 'device')} AS device FROM ev e
          ) named
          GROUP BY GROUPING SETS ((day, referrer), (day, country), (day, browser), (day, os), (day, device))
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
   * the link (seq, day of creation, counts, `events_closed`), the slots of each summarised day of `[firstDay,
   * endDay)` whose epoch is the link's, and every top list's values summed over those days. No
   * row when the link is not live.
   */
  summaries(tx: postgres.TransactionSql, code: string, firstDay: number, endDay: number, now: number): postgres.PendingQuery<SummaryRow[]> {
    return tx<SummaryRow[]>`
      WITH link AS (
        SELECT seq, created_at, visit_count, untracked_visits, events_closed, events_epoch FROM links WHERE code = ${code} AND ${this.links.live(now)}
      ), days AS MATERIALIZED (
        SELECT v.day, v.slots, v.dims, v.vals, v.people, v.bots FROM visit_days v, link
        WHERE v.link_seq = link.seq AND v.epoch = link.events_epoch AND v.day >= ${firstDay}::integer AND v.day < ${endDay}::integer
      )
      SELECT 'link' AS kind, (created_at / ${DAY})::integer AS at, NULL::text AS value, visit_count::text AS n, untracked_visits::text AS b,
        events_closed AS closed, NULL::integer[] AS slots, seq::text AS seq FROM link
      UNION ALL
      SELECT 'day', day, NULL, NULL, NULL, NULL, slots, NULL FROM days
      UNION ALL
      SELECT 'value', u.dim, u.value, sum(u.p)::text, sum(u.b)::text, NULL, NULL, NULL
      FROM days d, unnest(d.dims, d.vals, d.people, d.bots) AS u(dim, value, p, b)
      GROUP BY u.dim, u.value`;
  }
}
