/**
 * What each field of a link may be (docs/api.md) as pure functions: each `check…` returns the clean
 * value or a `Refusal` whose reason is written for the person who sent the request. The service
 * asks them for every door's create and edit, and the import for each of its rows; what a URL may
 * be is `url-rules.ts`, what a list may ask `list-query.ts`.
 */
import { MAX_COUNT, MAX_DIGITS, MAX_RETENTION_DAYS, MAX_VISITS } from '../store/record-limits.ts';
import { isReserved } from './codes.ts';
import { codePoints, Refusal, unstorableText } from './refusal.ts';

export { MAX_COUNT, MAX_RETENTION_DAYS, MAX_VISITS };
export { Refusal, unstorableText } from './refusal.ts';
export { checkUrl, type UrlRules } from './url-rules.ts';

/**
 * `retention_days`: absent (undefined/null) = 0 = forever; otherwise an integer 0–36500. From a
 * query string or a form (`textual`) it arrives as decimal digits; in JSON it must be a number.
 */
export function checkRetention(raw: unknown, textual = false): number | Refusal {
  if (raw === undefined || raw === null) return 0;
  const value = textual && typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETENTION_DAYS) {
    return new Refusal(`retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever)`);
  }
  return value;
}

/**
 * `retention_days` of an edit: present, so an integer 0–36500. Unlike `max_visits`, whose `null`
 * clears the limit, `null` is no retention: `0` is the one spelling of "forever", so a client
 * that meant "leave it" (or sent an empty form field) does not make a 30-day link permanent.
 */
export function checkRetentionChange(raw: unknown): number | Refusal {
  if (raw === null) return new Refusal(`retention_days must be an integer from 0 to ${MAX_RETENTION_DAYS} (0 keeps the link forever), not null`);
  return checkRetention(raw);
}

/** The characters a custom code may use (docs/api.md); generated codes use a subset. */
export const CUSTOM_CODE = /^[A-Za-z0-9_-]+$/;

/**
 * `code`: absent (undefined/null/'') = generate one; otherwise characters from `A-Z a-z 0-9 - _`,
 * a length in `min`..`max` (the limit holds for every code), and no reserved word in any case.
 * Codes are case-sensitive and kept as given. `reserved`: the instance's reserved words (codes.ts
 * `reservedWords`).
 */
export function checkCustomCode(raw: unknown, min: number, max: number, reserved?: ReadonlySet<string>): string | undefined | Refusal {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return new Refusal('code must be a string');
  if (!CUSTOM_CODE.test(raw)) return new Refusal('code may only use the letters A-Z and a-z, digits, "-" and "_"');
  if (raw.length < min || raw.length > max) {
    // The instance's numbers, not its settings' names: the person who typed the code reads this.
    return new Refusal(`code must be ${min} to ${max} characters long, not ${raw.length}`);
  }
  if (isReserved(raw, reserved)) return new Refusal(`code "${raw}" is reserved for the service's own paths`);
  return raw;
}

/**
 * `max_visits`: absent or null = unlimited (null); otherwise an integer 1–2147483647. From a query
 * string or a form (`textual`) it arrives as decimal digits (or empty, or `null`, for unlimited).
 */
export function checkMaxVisits(raw: unknown, textual = false): number | null | Refusal {
  if (raw === undefined || raw === null) return null;
  if (textual && (raw === '' || raw === 'null')) return null;
  const value = textual && typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_VISITS) {
    return new Refusal(`max_visits must be an integer from 1 to ${MAX_VISITS}, or null for no limit`);
  }
  return value;
}

export const MAX_TITLE_LENGTH = 512;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
/** The longest page of the list (`list-query.ts`), and of a link's events. */
export const MAX_LIMIT = 1000;
/** The longest search of the list (`list-query.ts`), in characters. */
export const MAX_SEARCH_LENGTH = 200;

/**
 * `title` (docs/api.md): absent, null or empty = no title (null); otherwise text of at most 512
 * characters (code points) that every store can hold. Any other character is kept as sent: a
 * page title may hold anything, and every door escapes what it writes.
 */
export function checkTitle(raw: unknown): string | null | Refusal {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') return new Refusal(`title must be a string of at most ${MAX_TITLE_LENGTH} characters, or null`);
  const unstorable = unstorableText(raw, 'title');
  if (unstorable !== undefined) return new Refusal(unstorable);
  // Most titles are short: only one longer in UTF-16 units than the limit is counted.
  if (raw.length > MAX_TITLE_LENGTH && codePoints(raw) > MAX_TITLE_LENGTH)
    return new Refusal(`title must be at most ${MAX_TITLE_LENGTH} characters long, not ${codePoints(raw)}`);
  return raw;
}

/**
 * A tag as it is stored and compared (docs/api.md, titles and tags): in Unicode NFC, so `é` typed
 * as one code point or as `e` plus a combining accent is one tag, whichever door it came through.
 * Case is kept (`a` and `A` are two tags, as in Shlink), and letters of other scripts that look
 * alike (Latin `a`, Cyrillic `а`) stay apart: folding them would merge real words of other
 * languages.
 */
export function normalTag(text: string): string {
  return text.normalize('NFC');
}

/**
 * `tags` (docs/api.md): absent or null = none; otherwise an array of strings (JSON, MCP) or, as
 * text (`textual`: a query string, a form, a CSV cell), one string or several (a repeated field),
 * each holding tags separated by commas. Each tag is trimmed and put in NFC (`normalTag`) and must
 * then be 1 to 50 characters without a comma; duplicates are dropped, at most 20 remain, kept
 * sorted (by UTF-16 code units, as every store compares them), so two spellings of one set are one
 * value.
 */
export function checkTags(raw: unknown, textual = false): string[] | Refusal {
  if (raw === undefined || raw === null) return [];
  let pieces: unknown[];
  if (textual && (typeof raw === 'string' || Array.isArray(raw))) {
    pieces = [];
    for (const item of typeof raw === 'string' ? [raw] : raw) {
      if (typeof item !== 'string') return new Refusal('tags must be strings');
      for (const piece of item.split(',')) if (piece.trim() !== '') pieces.push(piece);
    }
  } else if (Array.isArray(raw)) {
    pieces = raw;
  } else {
    return new Refusal(`tags must be an array of at most ${MAX_TAGS} strings`);
  }
  const tags = new Set<string>();
  for (const piece of pieces) {
    if (typeof piece !== 'string') return new Refusal('tags must be strings');
    const tag = normalTag(piece.trim());
    const length = codePoints(tag);
    if (length < 1 || length > MAX_TAG_LENGTH)
      return new Refusal(`a tag must be 1 to ${MAX_TAG_LENGTH} characters long (after trimming spaces), not ${length}`);
    if (tag.includes(',')) return new Refusal(`a tag must not contain a comma: ${JSON.stringify(tag)}`);
    const unstorable = unstorableText(tag, 'a tag');
    if (unstorable !== undefined) return new Refusal(unstorable);
    tags.add(tag);
  }
  if (tags.size > MAX_TAGS) return new Refusal(`a link may have at most ${MAX_TAGS} distinct tags, not ${tags.size}`);
  return [...tags].sort();
}

const DIGITS = new RegExp(`^\\d{1,${MAX_DIGITS}}$`);

/**
 * `visit_count` of an imported link (the only door that sets one): absent or null = 0; otherwise an
 * integer from 0 to `MAX_COUNT`. As text (CSV) it is decimal digits, as many as `MAX_COUNT` has.
 */
export function checkVisitCount(raw: unknown, textual = false): number | Refusal {
  if (raw === undefined || raw === null) return 0;
  const value = textual && typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_COUNT) {
    return new Refusal(`visit_count must be an integer from 0 to ${MAX_COUNT}`);
  }
  return value;
}
