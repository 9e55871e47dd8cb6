/**
 * An imported row's routing (docs/api.md, export and import): the columns the export writes, read
 * back and checked by the one routing check every door uses (`links/routing-input.ts`), so a moved
 * link keeps its rules, validity, fallback and password.
 *
 * The password travels only as its hash (`password_hash`). A row with a `password` is refused:
 * stored without it, the link would be open to anyone with no one told; hashed here, each row
 * would cost tens of milliseconds of scrypt, and a file of passwords is one nobody should keep. A
 * row that says `password_protected` but carries no hash (a record copied from the API, which
 * never shows the hash) is refused for the same reason.
 */
import type { Routing } from '../store/link-store.ts';
import { checkRouting, createdRouting } from '../links/routing-input.ts';
import { Refusal, type UrlRules } from '../links/validate.ts';
import { parseCreatedText } from './dates.ts';
import type { Field } from './columns.ts';

/** A row's value of `field`, absent as undefined (an empty CSV cell included). */
export type RowValue = (field: Field) => unknown;

const isNone = (v: unknown): boolean => v === undefined || v === null || v === '';

/** The row's routing: undefined for none, or the refusal of its first invalid field. */
export function importedRouting(get: RowValue, rules: UrlRules, textual: boolean): Routing | undefined | Refusal {
  if (!isNone(get('password'))) {
    return new Refusal('password: an import takes only password_hash, the hash an export writes, never a password');
  }
  const hash = get('passwordHash');
  if (isNone(hash) && isProtected(get('passwordProtected'))) {
    return new Refusal('password_protected is true but password_hash is missing: the link would lose its password');
  }
  const ruleList = rulesOf(get('rules'), textual);
  if (ruleList instanceof Refusal) return ruleList;
  const validSince = instantOf(get('validSince'), 'valid_since');
  if (validSince instanceof Refusal) return validSince;
  const validUntil = instantOf(get('validUntil'), 'valid_until');
  if (validUntil instanceof Refusal) return validUntil;
  const checked = checkRouting(
    { rules: ruleList, forwardQuery: get('forwardQuery'), validSince, validUntil, fallbackUrl: get('fallbackUrl'), passwordHash: hash, textual },
    rules,
  );
  return checked instanceof Refusal ? checked : createdRouting(checked.change);
}

/** `password_protected` as the JSON record (a boolean) or a CSV cell (a word) says it. */
function isProtected(raw: unknown): boolean {
  return raw === true || (typeof raw === 'string' && raw.trim().toLowerCase() === 'true');
}

/** A CSV cell holds the rules as JSON text, as the export writes them; JSON Lines holds the array itself. */
function rulesOf(raw: unknown, textual: boolean): unknown {
  if (!textual || typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return new Refusal('rules: must be the rules as JSON text (an array of {url, conditions}), as the export writes them');
  }
}

/**
 * `valid_since` / `valid_until` in the forms an import reads a creation time in (`dates.ts`): Unix
 * seconds as the export writes them, or ISO 8601 as Shlink does; the routing check then bounds it.
 */
function instantOf(raw: unknown, name: string): unknown {
  if (typeof raw !== 'string') return raw;
  const seconds = parseCreatedText(raw);
  return seconds ?? new Refusal(`${name} must be Unix seconds, an ISO 8601 time or YYYY-MM-DD HH:MM:SS (UTC), or empty for none`);
}
