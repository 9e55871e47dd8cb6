/**
 * A visit event as a row of `visits` (docs/postgres.md, the visits table) and back: the browser,
 * OS and device families are small numbers, their index in the lists of `packed.ts`, so a row is
 * narrow and the families read back exactly as they were written.
 *
 * Its own file because every statement that writes or reads an event (the redirect, the import,
 * the list, the export, the stats) shares this one mapping, and it is tested without a database.
 */
import { BROWSERS, DEVICES, SYSTEMS } from '../../visits/packed.ts';
import type { VisitEvent } from '../../visits/event.ts';

/** The columns of `visits` an event fills (`link_seq` and `id` aside). */
export interface EventColumns {
  time: number;
  referrer: string | null;
  country: string | null;
  browser: number | null;
  os: number | null;
  device: number | null;
  bot: boolean;
  visitor: number | null;
  /** The rule that sent the visitor (migration 8); null for none. */
  rule: number | null;
}

/** An event as the driver returns it: `bigint` columns come as strings. */
export interface EventRow {
  time: string;
  referrer: string | null;
  country: string | null;
  browser: number | null;
  os: number | null;
  device: number | null;
  bot: boolean;
  rule?: number | null;
}

const indexIn = <T>(list: readonly T[], value: T | null): number | null => {
  if (value === null) return null;
  const i = list.indexOf(value);
  // A family this version does not know (an import from a newer one) is "Other", the last of each list.
  return i >= 0 ? i : list.length - 1;
};

const valueIn = <T>(list: readonly T[], n: number | null): T | null => (n === null ? null : (list[n] ?? list[list.length - 1]!));

export function eventColumns(event: VisitEvent): EventColumns {
  return {
    time: event.time,
    referrer: event.referrer,
    country: event.country,
    browser: indexIn(BROWSERS, event.browser),
    os: indexIn(SYSTEMS, event.os),
    device: indexIn(DEVICES, event.device),
    bot: event.bot,
    visitor: event.visitor,
    rule: event.rule ?? null,
  };
}

/** The event of a row; the visitor id is never read back (no route shows it). */
export function eventOf(row: EventRow): VisitEvent {
  const event: VisitEvent = {
    time: Number(row.time),
    referrer: row.referrer,
    country: row.country,
    browser: valueIn(BROWSERS, row.browser),
    os: valueIn(SYSTEMS, row.os),
    device: valueIn(DEVICES, row.device),
    bot: row.bot,
    visitor: null,
  };
  return row.rule === null || row.rule === undefined ? event : { ...event, rule: row.rule };
}

/** The family names of a column's numbers, for the stats' top lists. */
export const FAMILIES = { browser: BROWSERS, os: SYSTEMS, device: DEVICES } as const;
