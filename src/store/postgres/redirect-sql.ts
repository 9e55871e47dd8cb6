/**
 * The redirect's SQL on PostgreSQL (`redirect.ts`, statements.ts `countVisit`): constant texts with
 * numbered parameters, since the redirect is the one statement run thousands of times a second and
 * building it from fragments cost the driver more than sending it.
 *
 * `HOOKED` are the same counts for a link some webhook subscription hears of (docs/postgres.md,
 * webhooks; `webhooks-fanout.ts`): the UPDATE in a `WITH`, and the `link.clicked` rows of the
 * outbox inserted by that one statement, so they are written only when the visit is counted, and
 * with it. A plain link's redirect keeps `PLAIN`, unchanged.
 */
import type { EventColumns } from './event-row.ts';

/** `live` written out for the redirect's constant texts, over parameter `$2` (the time). */
const LIVE_AT_2 = '(retention_days = 0 OR created_at + retention_days::bigint * 86400 > $2::bigint)';
/**
 * The visit's row: live, with visits left once `count` is checked against the limit (`visit_count`
 * for any counted visit; `visit_count + 1` for one that leaves the link short of its limit); a
 * plain visit's has no routing either (a routed one is counted once it is settled, redirect.ts).
 */
const counted = (count: string, plain: boolean): string =>
  `code = $1::text AND ${LIVE_AT_2} AND (max_visits IS NULL OR ${count} < max_visits)${plain ? ' AND routing IS NULL' : ''}`;
const COMMIT_RULE = "set_config('synchronous_commit', CASE WHEN max_visits IS NULL THEN 'off' ELSE 'on' END, true)";
const ONE_MORE = 'visit_count = least(visit_count + 1, 9007199254740991)';
const UNTRACKED_TOO = 'untracked_visits = least(untracked_visits + 1, 9007199254740991)';

/** `countVisit` without an event: `$1` code, `$2` now; `where` the row it counts. */
const countUntracked = (where: string): string => `
  UPDATE links SET ${ONE_MORE},
    ${UNTRACKED_TOO}
  WHERE ${where}
  RETURNING url, max_visits, ${COMMIT_RULE}`;

/**
 * An event's browser, OS and device numbers and its bot flag as one parameter, four bits each (a
 * family's number + 1, 0 for none; the bot flag 1 << 12): the redirect's statement sends three
 * parameters fewer, the database takes them apart (`COUNT_WITH_EVENT`).
 */
export function familiesWord(e: EventColumns): number {
  const nibble = (n: number | null): number => (n === null ? 0 : n + 1);
  return nibble(e.browser) | (nibble(e.os) << 4) | (nibble(e.device) << 8) | (e.bot ? 1 << 12 : 0);
}

/** The parameters of a `countVisit` text, in order: those of the event when there is one. */
export function visitParams(code: string, now: number, e: EventColumns | undefined, routed: boolean): (string | number | null)[] {
  if (e === undefined) return [code, now];
  const values = [code, now, e.time, e.referrer, e.country, familiesWord(e), e.visitor];
  return routed ? [...values, e.rule] : values;
}

/** A family's number from `$6` (`familiesWord`), its bits at `shift`; NULL for none. */
const family = (shift: number): string => `(NULLIF(($6::integer >> ${shift}) & 15, 0) - 1)::smallint`;

/**
 * `countVisit` with its event: `$3` time, `$4` referrer, `$5` country, `$6` `familiesWord`, `$7`
 * visitor, and for a routed visit `$8` the rule that sent it. A hooked text returns more of the
 * row and puts its outbox CTEs (`hooks`) before the final SELECT.
 */
const countWithEvent = (where: string, rule: boolean, returning = 'seq, url, max_visits', hooks = '', select = 'url, max_visits'): string => `
  WITH hit AS (
    UPDATE links SET ${ONE_MORE},
      events_epoch = events_epoch + ($3::bigint < events_closed::bigint * 86400)::int
    WHERE ${where}
    RETURNING ${returning}, ${COMMIT_RULE}
  ), event AS (
    INSERT INTO visits (link_seq, time, referrer, country, browser, os, device, bot, visitor${rule ? ', rule' : ''})
    SELECT seq, $3::bigint, $4::text, $5::text, ${family(0)}, ${family(4)}, ${family(8)}, ($6::integer & 4096) <> 0, $7::integer${rule ? ', $8::smallint' : ''} FROM hit
  )${hooks}
  SELECT ${select} FROM hit`;

/** The redirect's texts: a plain visit's, and a routed one's once the service settled its routing. */
export const PLAIN = { untracked: countUntracked(counted('visit_count', true)), withEvent: countWithEvent(counted('visit_count', true), false) };
export const ROUTED = { untracked: countUntracked(counted('visit_count', false)), withEvent: countWithEvent(counted('visit_count', false), true) };

/** What a hooked text returns of the row: all that `toRecord` reads, for `link.limit_reached`'s data. */
const ROW = 'code, url, created_at, retention_days, visit_count, untracked_visits, max_visits, title, tags, author, routing';

/** A subscription's pending clicks, from the numbers of its newest and oldest (see `hooks`). */
const PENDING = 'coalesce(last - first + 1, 0)';

/**
 * The outbox CTEs of a hooked text, after its `n` parameters: `$n+1` the link's domain ('' the
 * default one), `$n+2` the event id, `$n+3` its data, `$n+4` its time, `$n+5` `next_at`, `$n+6`
 * the cap. One row per subscription that wants `link.clicked` of the domain, for a counted visit
 * only (`hit` joined). The cap (docs/postgres.md, webhooks): a subscription's clicks are numbered
 * on from its newest, so its pending ones are the span from its oldest to its newest, two index
 * entries read, never a count of rows nor a counter row every visit would wait on. Statements
 * running at once may read the same newest and share a number: the span then counts them once,
 * and a subscription may pass the cap by as many clicks as were counted at the same moment.
 */
const hooks = (n: number): string => `, subs AS (
    SELECT s.id,
      coalesce((SELECT o.click_no FROM webhook_outbox o WHERE o.subscription_id = s.id AND o.click_no IS NOT NULL ORDER BY o.click_no DESC LIMIT 1), 0) AS last,
      (SELECT o.click_no FROM webhook_outbox o WHERE o.subscription_id = s.id AND o.click_no IS NOT NULL ORDER BY o.click_no LIMIT 1) AS first
    FROM hit, webhook_subscriptions s
    WHERE NOT s.disabled AND 'link.clicked' = ANY (s.events) AND (s.domain IS NULL OR s.domain = $${n + 1}::text)
  ), clicks AS (
    INSERT INTO webhook_outbox (subscription_id, event_id, type, time, data, next_at, click_no)
    SELECT id, $${n + 2}::text, 'link.clicked', $${n + 4}::bigint, $${n + 3}::text, $${n + 5}::bigint, last + 1 FROM subs
    WHERE ${PENDING} < $${n + 6}::bigint
  )`;

/** The hooked final SELECT: the row, and how many subscriptions' clicks the cap dropped. */
const hookedSelect = (n: number): string => `${ROW}, (SELECT count(*) FROM subs WHERE ${PENDING} >= $${n + 6}::bigint) AS dropped`;

/** `countUntracked` hooked: a visit without an event has no click to write, only its row to return (`link.limit_reached`). */
const hookedUntracked = (where: string): string => `
  UPDATE links SET ${ONE_MORE},
    ${UNTRACKED_TOO}
  WHERE ${where}
  RETURNING ${ROW}, 0::bigint AS dropped, ${COMMIT_RULE}`;

/** A visit's hooked texts: `untracked` of `$1`–`$2` alone, `withEvent` with the outbox's after the event's parameters. */
const hooked = (plain: boolean, count: string): { untracked: string; withEvent: string } => {
  const where = counted(count, plain);
  const n = plain ? 7 : 8;
  return { untracked: hookedUntracked(where), withEvent: countWithEvent(where, !plain, `seq, ${ROW}`, hooks(n), hookedSelect(n)) };
};

/**
 * The hooked texts: `any` counts any visit the plain text would; `below` only one that leaves the
 * link short of its limit, so that while `link.limit_reached` is wanted, the visit that reaches a
 * limit is counted in a transaction of its own (`webhooks-fanout.ts`).
 */
export const HOOKED = {
  plain: { any: hooked(true, 'visit_count'), below: hooked(true, 'visit_count + 1') },
  routed: { any: hooked(false, 'visit_count'), below: hooked(false, 'visit_count + 1') },
};
