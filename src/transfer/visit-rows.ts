/**
 * A visit event as a line of the visits export and a row of its import (docs/analytics.md, moving
 * history): `short_code,time,referrer,country,browser,os,device,bot,domain,rule`, as JSON Lines or as CSV. The
 * writer and the reader sit side by side so that what one writes the other reads back unchanged.
 * Pure: no store, no clock but the `now` passed in.
 *
 * The visitor id is never written: it means something only within its UTC day and its instance's
 * key, and an export is a file that outlives both. An imported event has none, so it counts as one
 * unique visitor.
 */
import { splitKey } from '../links/domains.ts';
import { isCodeShaped } from '../links/codes.ts';
import { MAX_RULES } from '../links/redirect-rules.ts';
import { MAX_CODE_LENGTH } from '../store/link-store.ts';
import type { Browser, CodedEvent, Device, Os, VisitEvent } from '../visits/event.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../visits/packed.ts';
import { MAX_TIME } from '../visits/range.ts';
import { isReferrerHost, MAX_HOST_LENGTH } from '../visits/referrer.ts';
import { csvRow } from './csv.ts';
import { parseCreatedText } from './dates.ts';
import type { RowShape } from './sources.ts';

/** A field of an imported event row. */
export type VisitField = 'code' | 'time' | 'referrer' | 'country' | 'browser' | 'os' | 'device' | 'bot' | 'domain' | 'rule';

/** The CSV header of the export, exactly; also the JSON keys of a line, in this order. */
export const VISIT_COLUMNS = ['short_code', 'time', 'referrer', 'country', 'browser', 'os', 'device', 'bot', 'domain', 'rule'] as const;

/** Header name or JSON key (compared case-insensitively) → field: the export's own names. */
const BY_NAME: ReadonlyMap<string, VisitField> = new Map([
  ['short_code', 'code'],
  ['time', 'time'],
  ['referrer', 'referrer'],
  ['country', 'country'],
  ['browser', 'browser'],
  ['os', 'os'],
  ['device', 'device'],
  ['bot', 'bot'],
  ['domain', 'domain'],
  ['rule', 'rule'],
]);

/** Without these two a row cannot be placed: a header lacking one is the file's problem, not a row's. */
const REQUIRED: readonly VisitField[] = ['code', 'time'];

/** How an import reads the rows of a visits file (`sources.ts`). */
export const VISIT_ROWS: RowShape<VisitField> = {
  fieldOf: (name) => BY_NAME.get(name.trim().toLowerCase()),
  columnsOf(header) {
    const columns: Partial<Record<VisitField, number>> = {};
    for (let i = 0; i < header.length; i++) {
      const field = BY_NAME.get(header[i]!.trim().toLowerCase());
      if (field === undefined) continue;
      const earlier = columns[field];
      if (earlier !== undefined)
        return `the header names the ${field === 'code' ? 'short_code' : field} column twice ("${header[earlier]}" and "${header[i]}")`;
      columns[field] = i;
    }
    const missing = REQUIRED.filter((f) => columns[f] === undefined);
    if (missing.length > 0)
      return `the header has no ${missing.map((f) => (f === 'code' ? 'short_code' : f)).join(' or ')} column (a visits import starts with ${VISIT_COLUMNS.join(',')})`;
    return columns;
  },
};

// ---- the writer ------------------------------------------------------------------------------

/** One event of the JSON Lines export, with its line break. */
export function visitJsonLine({ code: key, event }: CodedEvent): string {
  const { time, referrer, country, browser, os, device, bot } = event;
  const [code, domain] = splitKey(key);
  return `${JSON.stringify({ short_code: code, time, referrer, country, browser, os, device, bot, domain, rule: event.rule ?? null })}\n`;
}

/** One event of the CSV export, with its CRLF: `null` is an empty field, `bot` is `true` or `false`. */
export function visitCsvLine({ code: key, event }: CodedEvent): string {
  const { time, referrer, country, browser, os, device, bot } = event;
  const [code, domain] = splitKey(key);
  const rule = event.rule === undefined ? '' : String(event.rule);
  return csvRow([code, String(time), referrer ?? '', country ?? '', browser ?? '', os ?? '', device ?? '', bot ? 'true' : 'false', domain ?? '', rule]);
}

// ---- the reader ------------------------------------------------------------------------------

/** A valid row: the event to record for the link of `code` on `domain` (as given); or why the row is skipped. */
export type CheckedVisit = { ok: true; code: string; domain: unknown; event: VisitEvent } | { ok: false; detail: string };

/** A clock skew allowance, as for a link's `created_at`: an event up to a day ahead of this server's clock. */
const FUTURE_SLACK = 86400;

/**
 * `values` of one row checked at `now` (Unix seconds). `textual`: the values came from CSV, where
 * an empty field is `null` and `bot` is the text `true` or `false`. Absent fields are `null` (and
 * `bot` false), so a file with fewer columns still loads; present ones must be what an export
 * writes. An invalid row is a value, not an exception (a file of a million bad rows).
 */
export function checkVisitRow(values: Partial<Record<VisitField, unknown>>, now: number, textual: boolean): CheckedVisit {
  // `""` is null in both forms: an export never writes an empty referrer, and a hand-edited
  // JSON file may well.
  const get = (field: VisitField): unknown => {
    const v = values[field];
    return v === '' || v === undefined ? null : v;
  };
  const code = get('code');
  if (typeof code !== 'string' || !isCodeShaped(code)) return bad(`short_code must be 1 to ${MAX_CODE_LENGTH} characters of A-Z a-z 0-9 - _`);
  const time = checkTime(get('time'), now);
  if (typeof time === 'string') return bad(time);
  const raw = get('referrer');
  const referrer = typeof raw === 'string' ? raw.toLowerCase() : raw;
  if (referrer !== null && (typeof referrer !== 'string' || !isReferrerHost(referrer))) return bad(REFERRER_RULE);
  const country = get('country');
  if (country !== null && (typeof country !== 'string' || !/^[A-Za-z]{2}$/.test(country)))
    return bad('country must be two letters A-Z (ISO 3166-1 alpha-2), or empty');
  const browser = oneOf<Browser>(get('browser'), BROWSERS);
  if (browser === undefined) return bad(`browser must be one of ${BROWSERS.join(', ')}, or empty`);
  const os = oneOf<Os>(get('os'), SYSTEMS);
  if (os === undefined) return bad(`os must be one of ${SYSTEMS.join(', ')}, or empty`);
  const device = oneOf<Device>(get('device'), DEVICES);
  if (device === undefined) return bad(`device must be one of ${DEVICES.join(', ')}, or empty`);
  const bot = checkBot(get('bot'), textual);
  if (bot === undefined) return bad('bot must be true or false');
  const rule = checkRule(get('rule'), textual);
  if (rule === undefined) return bad(`rule must be the index of a redirect rule, 0 to ${MAX_RULES - 1}, or empty`);
  const event: VisitEvent = {
    time,
    referrer,
    country: country === null ? null : (country as string).toUpperCase(),
    browser,
    os,
    device,
    bot,
    visitor: null,
  };
  return { ok: true, code, domain: get('domain'), event: rule === null ? event : { ...event, rule } };
}

/** An event's `rule`: an index of a link's rules (digits in CSV), or null; undefined when it is neither. */
function checkRule(raw: unknown, textual: boolean): number | null | undefined {
  if (raw === null) return null;
  const value = textual && typeof raw === 'string' && /^\d$/.test(raw) ? Number(raw) : raw;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < MAX_RULES ? value : undefined;
}

const bad = (detail: string): CheckedVisit => ({ ok: false, detail });

/**
 * A referrer is taken only in a form a visit records (`visits/referrer.ts`), so an import cannot
 * store what the capture never would: a formula for a spreadsheet (`=cmd(…)`), a path, a tab that
 * would cut the log store's line of the referrer table.
 */
const REFERRER_RULE =
  `referrer must be a host name as a visit records it (news.example, xn--bcher-kva.example, 192.0.2.1, [2001:db8::1]): ` +
  `letters, digits, - and _ in labels separated by dots, or an IPv6 address in brackets, up to ${MAX_HOST_LENGTH} characters; or empty`;

/**
 * `time`: Unix seconds, as the export writes it, or an ISO 8601 time (with `Z` or an offset; one
 * without is UTC), the forms a link's `created_at` takes. Events are kept in 32 unsigned bits of
 * seconds (1970 to 2106). The error's text when it is none.
 */
function checkTime(raw: unknown, now: number): number | string {
  const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseCreatedText(raw) : undefined;
  if (seconds === undefined || !Number.isInteger(seconds) || seconds < 0 || seconds > MAX_TIME) {
    return 'time must be Unix seconds (an integer from 0 to 4294967295) or an ISO 8601 time';
  }
  if (seconds > now + FUTURE_SLACK) return 'time is in the future';
  return seconds;
}

/** `null` (none), a member of `list`, or undefined when the value is neither. */
function oneOf<T extends string>(raw: unknown, list: readonly T[]): T | null | undefined {
  if (raw === null) return null;
  return typeof raw === 'string' && (list as readonly string[]).includes(raw) ? (raw as T) : undefined;
}

function checkBot(raw: unknown, textual: boolean): boolean | undefined {
  if (raw === null) return false;
  if (typeof raw === 'boolean' && !textual) return raw;
  if (raw === 'true' && textual) return true;
  if (raw === 'false' && textual) return false;
  return undefined;
}
