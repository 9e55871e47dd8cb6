/**
 * Where a link sends each visitor, as the doors take it (docs/api.md): `rules`, `forward_query`,
 * `valid_since`, `valid_until`, `fallback_url` and `password` on a create, an edit and an import
 * row, checked here once for every door, and the record's view of them. A create and an edit alike
 * give a change of the stored routing (store/routing.ts `RoutingChange`): each field given sets its
 * part, `null` (or an empty value: `[]` rules, `false`) removes it, an absent one leaves it.
 *
 * The password is checked here and hashed by `hashedChange` (scrypt is slow on purpose, and runs
 * off the event loop); an import may carry only a hash (`password_hash`), never a password.
 */
import type { Routing, RoutingChange, StoredRule } from '../store/link-store.ts';
import { checkPassword, hashPassword, isPasswordHash } from './link-password.ts';
import { MAX_RULE_TIME, parseRules } from './redirect-rules.ts';
import { Refusal } from './refusal.ts';
import { checkUrl, type UrlRules } from './url-rules.ts';

/** The routing fields of a request, as they arrived (absent: undefined). */
export interface RoutingInput {
  rules?: unknown;
  forwardQuery?: unknown;
  validSince?: unknown;
  validUntil?: unknown;
  fallbackUrl?: unknown;
  password?: unknown;
  /** An import row's `password_hash` (transfer only). */
  passwordHash?: unknown;
  /** Which fields came as text (a query string, a form, a CSV cell): numbers as digits, booleans as words. */
  textual?: boolean;
}

/** The routing fields by the record's names (docs/api.md), as every door that uses those names reads them. */
export const ROUTING_FIELDS: ReadonlyMap<string, Exclude<keyof RoutingInput, 'textual' | 'passwordHash'>> = new Map([
  ['rules', 'rules'],
  ['forward_query', 'forwardQuery'],
  ['valid_since', 'validSince'],
  ['valid_until', 'validUntil'],
  ['fallback_url', 'fallbackUrl'],
  ['password', 'password'],
] as const);

/** The routing fields `field` finds by their record names; undefined when none is given. */
export function routingInputOf(field: (name: string) => unknown): RoutingInput | undefined {
  let input: Record<string, unknown> | undefined;
  for (const [name, part] of ROUTING_FIELDS) {
    const value = field(name);
    if (value !== undefined) (input ??= {})[part] = value;
  }
  return input;
}

/** A checked routing input: the change, and the password still to hash. */
export interface CheckedRouting {
  change: RoutingChange;
  password: string | undefined;
}

const NONE: CheckedRouting = { change: {}, password: undefined };

/** The routing fields, as the record shows them (docs/api.md): present on every record. */
export interface RoutingView {
  rules: StoredRule[];
  forward_query: boolean;
  valid_since: number | null;
  valid_until: number | null;
  fallback_url: string | null;
  password_protected: boolean;
}

export function routingView(routing: Routing | null | undefined): RoutingView {
  return {
    rules: routing?.rules === undefined ? [] : routing.rules.map((rule) => ({ url: rule.url, conditions: rule.conditions.map((c) => ({ ...c })) })),
    forward_query: routing?.forwardQuery === true,
    valid_since: routing?.validSince ?? null,
    valid_until: routing?.validUntil ?? null,
    fallback_url: routing?.fallbackUrl ?? null,
    password_protected: routing?.passwordHash !== undefined,
  };
}

const TRUE_WORDS = new Set(['true', '1', 'on', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'off', 'no', '']);

function checkForwardQuery(raw: unknown, textual: boolean): true | null | Refusal {
  const value = textual && typeof raw === 'string' ? (TRUE_WORDS.has(raw.toLowerCase()) ? true : FALSE_WORDS.has(raw.toLowerCase()) ? false : raw) : raw;
  if (value === true) return true;
  if (value === false || value === null) return null;
  return new Refusal('forward_query must be true or false');
}

function checkInstant(raw: unknown, field: string, textual: boolean): number | null | Refusal {
  if (raw === null || (textual && raw === '')) return null;
  const value = textual && typeof raw === 'string' && /^\d{1,12}$/.test(raw) ? Number(raw) : raw;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_RULE_TIME) return value;
  return new Refusal(`${field} must be an instant in Unix seconds (an integer from 0 to ${MAX_RULE_TIME}), or null for none`);
}

/** Each field given, checked, as a change of the stored routing; or the first refusal, in the fields' order. */
export function checkRouting(input: RoutingInput, urlRules: UrlRules): CheckedRouting | Refusal {
  const textual = input.textual === true;
  const change: { -readonly [K in keyof RoutingChange]: RoutingChange[K] } = {};
  if (input.rules !== undefined) {
    const rules = input.rules === null ? [] : parseRules(input.rules, (url) => checkUrl(url, urlRules));
    if (rules instanceof Refusal) return rules;
    change.rules = rules.length === 0 ? null : rules;
  }
  if (input.forwardQuery !== undefined) {
    const forward = checkForwardQuery(input.forwardQuery, textual);
    if (forward instanceof Refusal) return forward;
    change.forwardQuery = forward;
  }
  for (const [field, part, raw] of [
    ['valid_since', 'validSince', input.validSince],
    ['valid_until', 'validUntil', input.validUntil],
  ] as const) {
    if (raw === undefined) continue;
    const instant = checkInstant(raw, field, textual);
    if (instant instanceof Refusal) return instant;
    change[part] = instant;
  }
  const since = change.validSince;
  const until = change.validUntil;
  if (typeof since === 'number' && typeof until === 'number' && since >= until) {
    return new Refusal('valid_since must be before valid_until: the link would never be valid');
  }
  if (input.fallbackUrl !== undefined) {
    const fallback = input.fallbackUrl === null || (textual && input.fallbackUrl === '') ? null : checkUrl(input.fallbackUrl, urlRules);
    if (fallback instanceof Refusal) return new Refusal(`fallback_url: ${fallback.detail}`);
    change.fallbackUrl = fallback;
  }
  const password = checkPasswordFields(input, change);
  if (password instanceof Refusal) return password;
  return Object.keys(change).length === 0 && password === undefined ? NONE : { change, password };
}

/** `password` (to be hashed) or an import's `password_hash` (taken as it is); never both. */
function checkPasswordFields(input: RoutingInput, change: { passwordHash?: string | null }): string | undefined | Refusal {
  if (input.password !== undefined && input.passwordHash !== undefined) return new Refusal('give password or password_hash, not both');
  if (input.passwordHash !== undefined) {
    if (input.passwordHash === null || input.passwordHash === '') return undefined;
    if (!isPasswordHash(input.passwordHash))
      return new Refusal('password_hash must be a hash this service wrote (scrypt$N=…,r=…,p=…$salt$hash), within its bounds');
    change.passwordHash = input.passwordHash as string;
    return undefined;
  }
  if (input.password === undefined) return undefined;
  if (input.password === null) {
    change.passwordHash = null;
    return undefined;
  }
  const password = checkPassword(input.password);
  return password instanceof Refusal ? password : password;
}

/** The change with its password hashed: what the store is given. */
export async function hashedChange(checked: CheckedRouting): Promise<RoutingChange> {
  if (checked.password === undefined) return checked.change;
  return { ...checked.change, passwordHash: await hashPassword(checked.password) };
}

/** A create's routing from its checked change: the parts it sets (a create has nothing to remove). */
export function createdRouting(change: RoutingChange): Routing | undefined {
  const parts = Object.entries(change).filter(([, value]) => value !== null && value !== undefined);
  return parts.length === 0 ? undefined : (Object.fromEntries(parts) as Routing);
}
