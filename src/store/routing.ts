/**
 * Where a link sends each visitor, as every store keeps it (docs/api.md): its redirect
 * rules, whether it forwards the short URL's query, its validity, its fallback and its password's
 * hash. One optional object on a record: most links have none of these, so a store keeps nothing
 * for them, and the redirect asks one question ("has it routing?") before the plain answer.
 *
 * What each part may be is the rules' to say (`src/links/`); here is only the stored shape, and a
 * check of a stored value (a log line, a database row) that tells one this build can use from
 * anything else, so that a damaged or foreign value is never taken as a link's routing.
 */

/** One condition of a rule, as stored: `key` names a query parameter, null for the other types. */
export interface StoredCondition {
  readonly type: string;
  readonly key: string | null;
  readonly value: string;
}

export interface StoredRule {
  readonly url: string;
  readonly conditions: readonly StoredCondition[];
}

/** Only the parts a link has are present; an empty object is no routing (`routingOf`). */
export interface Routing {
  readonly rules?: readonly StoredRule[];
  readonly forwardQuery?: true;
  /** Unix seconds: before, the link answers as an unknown code. */
  readonly validSince?: number;
  /** Unix seconds: from then on, the link answers as expired. */
  readonly validUntil?: number;
  /** Where an expired, no longer valid or used-up link sends a visitor instead of its page. */
  readonly fallbackUrl?: string;
  /** The password's salted hash (`src/links/link-password.ts`), never the password. */
  readonly passwordHash?: string;
}

/** The most rules and conditions a stored list may hold: the rules' own limits (redirect-rules.ts). */
const MOST_RULES = 10;
const MOST_CONDITIONS = 10;

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isInstant = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function isCondition(v: unknown): v is StoredCondition {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const { type, key, value, ...rest } = v as Record<string, unknown>;
  return Object.keys(rest).length === 0 && isText(type) && (key === null || typeof key === 'string') && typeof value === 'string';
}

function isRule(v: unknown): v is StoredRule {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const { url, conditions, ...rest } = v as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    isText(url) &&
    Array.isArray(conditions) &&
    conditions.length > 0 &&
    conditions.length <= MOST_CONDITIONS &&
    conditions.every(isCondition)
  );
}

/** Each part's check of a stored value. */
const PARTS: Readonly<Record<keyof Routing, (v: unknown) => boolean>> = {
  rules: (v) => Array.isArray(v) && v.length > 0 && v.length <= MOST_RULES && v.every(isRule),
  forwardQuery: (v) => v === true,
  validSince: isInstant,
  validUntil: isInstant,
  fallbackUrl: isText,
  passwordHash: isText,
};

/**
 * A stored value as routing: the routing it is, `undefined` for none (null, or an object without
 * any part), or `false` when it is no routing at all (an unknown part, a part of the wrong shape).
 */
export function routingOf(value: unknown): Routing | undefined | false {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [part, v] of entries) {
    const check = PARTS[part as keyof Routing] as ((v: unknown) => boolean) | undefined;
    if (check === undefined || !check(v)) return false;
  }
  return entries.length === 0 ? undefined : (value as Routing);
}

/** Routing as given (absent, null or empty = none): undefined when it holds no part. */
export function someRouting(routing: Routing | null | undefined): Routing | undefined {
  return routing === null || routing === undefined || Object.keys(routing).length === 0 ? undefined : routing;
}

/** An edit of a link's routing: each part given replaces that part, a part given as null removes it. */
export type RoutingChange = { readonly [K in keyof Routing]?: Routing[K] | null };

/**
 * `old` with `change` applied (`null`: every part removed): undefined when no part is left. The
 * stores apply it in the edit's own atomic step, so two edits of different parts both hold.
 */
export function mergeRouting(old: Routing | null | undefined, change: RoutingChange | null): Routing | undefined {
  if (change === null) return undefined;
  const merged: Record<string, unknown> = { ...old };
  for (const [part, value] of Object.entries(change)) {
    if (value === null) delete merged[part];
    else if (value !== undefined) merged[part] = value;
  }
  return someRouting(merged as Routing);
}

/**
 * A redirect's answer for a link with routing, asked without `routed` (link-store.ts
 * `countVisit`): nothing counted. `gone`: expired, or used up, which its fallback may answer.
 */
export interface RoutedDecision {
  readonly kind: 'routed';
  readonly url: string;
  readonly limited: boolean;
  readonly routing: Routing;
  readonly gone: 'expired' | 'limit_reached' | null;
}
