/**
 * One imported row checked like a create (docs/api.md, export and import): the same URL rules
 * (the self-link check included), the custom-code rule for a given code, retention, max_visits,
 * title, tags and the routing (`row-routing.ts`); `created_at`, `visit_count` and `author` are kept
 * as given. Pure: the caller stores the result.
 */
import { isExpired, labelsOf, type LinkRecord } from '../store/link-store.ts';
import {
  checkCustomCode,
  checkMaxVisits,
  checkRetention,
  checkTags,
  checkTitle,
  checkUrl,
  checkVisitCount,
  CUSTOM_CODE,
  Refusal,
  type UrlRules,
} from '../links/validate.ts';
import { createDomains, type Domain, type Domains } from '../links/domains.ts';
import { parseCreatedText } from './dates.ts';
import type { Field } from './columns.ts';
import { importedRouting } from './row-routing.ts';

export interface RowRules extends UrlRules {
  minShortLength: number;
  maxShortLength: number;
  /** The instance's reserved words (codes.ts `reservedWords`); default: the service's own. */
  reserved?: ReadonlySet<string>;
  /** The instance's domains (`domains.ts`), which a row's `domain` must name; absent: only `baseUrl`'s host. */
  domains?: Domains | undefined;
}

/** A row's values by field: text from CSV, typed values from JSON. */
export type RowValues = Partial<Record<Field, unknown>>;

/** A valid row: the record to store, `code` undefined when one is to be generated. */
export type CheckedRow = { ok: true; record: Omit<LinkRecord, 'code'>; code: string | undefined; domain: Domain } | { ok: false; detail: string };

/** A clock skew allowance: a creation time up to a day ahead of this server's clock is accepted. */
const FUTURE_SLACK = 86400;

/**
 * `values` checked against `rules` at `now` (Unix seconds). `textual`: the values came from CSV,
 * where numbers are digits and an empty cell means absent. An invalid row is a value, not an
 * exception: a file of a million bad rows costs a million small objects, not a million stacks.
 */
export function checkRow(values: RowValues, rules: RowRules, now: number, textual: boolean): CheckedRow {
  const get = (field: Field): unknown => {
    const v = values[field];
    return textual && v === '' ? undefined : v;
  };
  const url = checkUrl(get('url'), rules);
  if (url instanceof Refusal) return refused(url);
  const code = checkCustomCode(get('code'), rules.minShortLength, rules.maxShortLength, rules.reserved);
  if (code instanceof Refusal) return refused(code);
  const createdAt = created(get('created'), now);
  if (createdAt instanceof Refusal) return refused(createdAt);
  const visits = checkVisitCount(get('visits'), textual);
  if (visits instanceof Refusal) return refused(visits);
  const retentionDays = checkRetention(get('retention'), textual);
  if (retentionDays instanceof Refusal) return refused(retentionDays);
  const maxVisits = checkMaxVisits(get('maxVisits'), textual);
  if (maxVisits instanceof Refusal) return refused(maxVisits);
  const title = checkTitle(get('title'));
  if (title instanceof Refusal) return refused(title);
  // A CSV cell holds the tags joined with commas, as the export writes them.
  const tags = checkTags(get('tags'), textual);
  if (tags instanceof Refusal) return refused(tags);
  const author = checkAuthor(get('author'));
  if (author instanceof Refusal) return refused(author);
  const routing = importedRouting(get, rules, textual);
  if (routing instanceof Refusal) return refused(routing);
  // A host this instance does not serve (another shortener's export names its own) is read as the
  // default domain: that is where its links land when the instance takes its place.
  const named = (rules.domains ?? createDomains(rules.baseUrl)).named(get('domain'));
  const domain = named instanceof Refusal ? null : named;
  // Imported counts have no events (yet): an import of the link's visits turns them into events.
  // Only the labels a row has, as a create stores them: most links have none.
  const record: Omit<LinkRecord, 'code'> = {
    url,
    createdAt,
    retentionDays,
    visits,
    untracked: visits,
    maxVisits,
    ...labelsOf(title, tags),
    ...(author !== undefined && { author }),
    ...(routing !== undefined && { routing }),
  };
  if (isExpired(record, now)) return { ok: false, detail: 'the link has already expired (created_at + retention_days is past)' };
  return { ok: true, record, code, domain };
}

const refused = (refusal: Refusal): CheckedRow => ({ ok: false, detail: refusal.detail });

/** The longest author an import keeps: a key's id is 8 characters, and room is left for other instances' ids. */
const MAX_AUTHOR_LENGTH = 64;

/**
 * The `id` of the key that made the link, kept as given: an import is an admin's, moving links
 * between instances with their authors. Absent, null or empty: none. A key's id is base64url, the
 * custom-code alphabet, so anything else names no key of any instance and is refused, not stored.
 */
function checkAuthor(raw: unknown): string | undefined | Refusal {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > MAX_AUTHOR_LENGTH || !CUSTOM_CODE.test(raw)) {
    return new Refusal(`author must be a key id: 1 to ${MAX_AUTHOR_LENGTH} characters of A-Z a-z 0-9 - _, or empty or null for none`);
  }
  return raw;
}

function created(raw: unknown, now: number): number | Refusal {
  if (raw === undefined || raw === null) return now;
  const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseCreatedText(raw) : undefined;
  if (seconds === undefined || !Number.isInteger(seconds) || seconds < 0) {
    return new Refusal('created_at must be Unix seconds, an ISO 8601 time, or YYYY-MM-DD HH:MM:SS (UTC)');
  }
  if (seconds > now + FUTURE_SLACK) return new Refusal('created_at is in the future');
  return seconds;
}
