/**
 * The redirect's SQL on PostgreSQL (`redirect.ts`, statements.ts `countVisit`): constant texts with
 * numbered parameters, since the redirect is the one statement run thousands of times a second and
 * building it from fragments cost the driver more than sending it.
 */
import type { EventColumns } from './event-row.ts';

/** `live` written out for the redirect's constant texts, over parameter `$2` (the time). */
const LIVE_AT_2 = '(retention_days = 0 OR created_at + retention_days::bigint * 86400 > $2::bigint)';
/** The visit's row: live, with visits left. */
const COUNTED = `code = $1::text AND ${LIVE_AT_2} AND (max_visits IS NULL OR visit_count < max_visits)`;
/** The row of a plain visit: it has no routing either (a routed one is counted once it is settled, redirect.ts). */
const COUNTED_PLAIN = `${COUNTED} AND routing IS NULL`;
const COMMIT_RULE = "set_config('synchronous_commit', CASE WHEN max_visits IS NULL THEN 'off' ELSE 'on' END, true)";

/** `countVisit` without an event: `$1` code, `$2` now; `counted` the row it counts. */
const countUntracked = (counted: string): string => `
  UPDATE links SET visit_count = least(visit_count + 1, 9007199254740991),
    untracked_visits = least(untracked_visits + 1, 9007199254740991)
  WHERE ${counted}
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

/** A family's number from `$6` (`familiesWord`), its bits at `shift`; NULL for none. */
const family = (shift: number): string => `(NULLIF(($6::integer >> ${shift}) & 15, 0) - 1)::smallint`;

/**
 * `countVisit` with its event: `$3` time, `$4` referrer, `$5` country, `$6` `familiesWord`, `$7`
 * visitor, and for a routed visit `$8` the rule that sent it.
 */
const countWithEvent = (counted: string, rule: boolean): string => `
  WITH hit AS (
    UPDATE links SET visit_count = least(visit_count + 1, 9007199254740991),
      events_epoch = events_epoch + ($3::bigint < events_closed::bigint * 86400)::int
    WHERE ${counted}
    RETURNING seq, url, max_visits, ${COMMIT_RULE}
  ), event AS (
    INSERT INTO visits (link_seq, time, referrer, country, browser, os, device, bot, visitor${rule ? ', rule' : ''})
    SELECT seq, $3::bigint, $4::text, $5::text, ${family(0)}, ${family(4)}, ${family(8)}, ($6::integer & 4096) <> 0, $7::integer${rule ? ', $8::smallint' : ''} FROM hit
  )
  SELECT url, max_visits FROM hit`;

/** The redirect's texts: a plain visit's, and a routed one's once the service settled its routing. */
export const PLAIN = { untracked: countUntracked(COUNTED_PLAIN), withEvent: countWithEvent(COUNTED_PLAIN, false) };
export const ROUTED = { untracked: countUntracked(COUNTED), withEvent: countWithEvent(COUNTED, true) };
