/**
 * Our redirect rules in Shlink's shapes and back (docs/compat.md), as Shlink's REST API v3 has them
 * at `/rest/v3/short-urls/{shortCode}/redirect-rules`: `GET` answers `{defaultLongUrl,
 * redirectRules: [{longUrl, priority, conditions: [{type, matchKey, matchValue}]}]}`, `POST` takes
 * `{redirectRules: [{longUrl, conditions}]}` and answers as `GET` does. Pure: what a rule may be is
 * decided by `links/redirect-rules.ts`; only names, shapes and Shlink's spellings are translated.
 *
 * The condition set is Shlink 5.1's (`RedirectConditionType`, 5.1.5): `device`, `language`,
 * `query-param`, `any-value-query-param`, `valueless-query-param`, `ip-address`,
 * `geolocation-country-code`, `geolocation-city-name`, `before-date`, `after-date`, `browser`.
 * - `geolocation-country-code` is our `country`; `geolocation-city-name` is refused (a visit is
 *   located to its country, never a city).
 * - `valueless-query-param` is our `query-param` with an empty value (Shlink refuses an empty
 *   `query-param` value, so ours is written back as `valueless-query-param`).
 * - `browser`: Shlink's `chrome`, `firefox`, `edge`, `safari`, `opera` are our families; its
 *   `android_browser` is refused (we count that browser as another family). Our `Samsung Internet`
 *   and `Other` are written in Shlink's style (`samsung_internet`, `other`) and read back, so a
 *   client that writes back the list it read keeps them.
 * - Dates are ISO 8601 in Shlink (a time without an offset is UTC), Unix seconds in ours.
 * - `ip-address`: Shlink's wildcards are taken where they are a CIDR block (`1.2.*.*` is
 *   `1.2.0.0/16`, and is read back so); one inside an address (`1.*.3.4`) is refused.
 * - `matchKey` of a type that takes none is ignored, as Shlink ignores it; so is a rule's `priority`
 *   in a `POST`: the order of the list is the order of the rules, as in Shlink.
 */
import { type ConditionType, MAX_RULE_TIME, parseRules, type RedirectRule, type RuleCondition } from '../../links/redirect-rules.ts';
import { Refusal } from '../../links/refusal.ts';
import { notThis } from '../../links/rule-conditions.ts';
import type { UrlRecord } from '../../links/record.ts';
import { isoSeconds } from './params.ts';
import { isoDate } from './shapes.ts';

export interface ShlinkCondition {
  type: ShlinkConditionType;
  matchKey: string | null;
  matchValue: string | null;
}

export interface ShlinkRule {
  longUrl: string;
  priority: number;
  conditions: ShlinkCondition[];
}

export interface ShlinkRulesList {
  defaultLongUrl: string;
  redirectRules: ShlinkRule[];
}

/** Our browser families in Shlink's spelling. */
const SHLINK_BROWSERS: Readonly<Record<string, string>> = {
  Chrome: 'chrome',
  Firefox: 'firefox',
  Edge: 'edge',
  Safari: 'safari',
  Opera: 'opera',
  'Samsung Internet': 'samsung_internet',
  Other: 'other',
};
const OUR_BROWSERS: ReadonlyMap<string, string> = new Map(Object.entries(SHLINK_BROWSERS).map(([ours, theirs]) => [theirs, ours]));

/** A rule and a condition as a record holds them. */
type StoredRule = UrlRecord['rules'][number];
type StoredCondition = StoredRule['conditions'][number];

const condition = (type: ShlinkConditionType, matchKey: string | null, matchValue: string | null): ShlinkCondition => ({ type, matchKey, matchValue });

/** Each of our condition types as Shlink writes it. */
const TO_SHLINK: Readonly<Record<ConditionType, (c: RuleCondition) => ShlinkCondition>> = {
  device: (c) => condition('device', null, c.value),
  browser: (c) => condition('browser', null, SHLINK_BROWSERS[c.value] ?? c.value),
  language: (c) => condition('language', null, c.value),
  country: (c) => condition('geolocation-country-code', null, c.value),
  'query-param': (c) => (c.value === '' ? condition('valueless-query-param', c.key, null) : condition('query-param', c.key, c.value)),
  'any-value-query-param': (c) => condition('any-value-query-param', c.key, null),
  'ip-address': (c) => condition('ip-address', null, c.value),
  'before-date': (c) => condition('before-date', null, isoDate(Number(c.value))),
  'after-date': (c) => condition('after-date', null, isoDate(Number(c.value))),
};

/**
 * A condition in our input shape (checked by `parseRules` after), or why Shlink's cannot be one,
 * naming its field (`type: …`, `matchValue: …`).
 */
type Translated = { type: ConditionType; key: unknown; value: unknown } | Refusal;

const keyless = (type: ConditionType, value: unknown): Translated => ({ type, key: null, value });

/** Each of Shlink's condition types (5.1) read as ours. */
const FROM_SHLINK = {
  device: (_, v) => keyless('device', v),
  browser: (_, v) => browser(v),
  // Shlink reads `fr_CA` as `fr-CA`.
  language: (_, v) => keyless('language', typeof v === 'string' ? v.trim().replaceAll('_', '-') : v),
  'geolocation-country-code': (_, v) => keyless('country', v),
  'geolocation-city-name': () => new Refusal('type: geolocation-city-name is not supported: visits are located to their country, never a city'),
  'query-param': (k, v) => ({ type: 'query-param', key: k, value: v }),
  'valueless-query-param': (k) => ({ type: 'query-param', key: k, value: '' }),
  'any-value-query-param': (k) => ({ type: 'any-value-query-param', key: k, value: null }),
  'ip-address': (_, v) => (typeof v === 'string' ? wildcardBlock(v) : keyless('ip-address', v)),
  'before-date': (_, v) => instant('before-date', v),
  'after-date': (_, v) => instant('after-date', v),
} satisfies Record<string, (key: unknown, value: unknown) => Translated>;

/** Shlink's condition types, as its `RedirectConditionType` names them. */
export type ShlinkConditionType = keyof typeof FROM_SHLINK;

/** Shlink's condition types, in its order. */
export const SHLINK_CONDITION_TYPES = Object.keys(FROM_SHLINK) as ShlinkConditionType[];

const SHLINK_TYPES = SHLINK_CONDITION_TYPES.join(', ');

/** Shlink's browser names (and ours in its style) as our families. */
function browser(value: unknown): Translated {
  const ours = typeof value === 'string' ? OUR_BROWSERS.get(value.toLowerCase()) : undefined;
  if (ours !== undefined) return keyless('browser', ours);
  if (value === 'android_browser')
    return new Refusal('matchValue: android_browser is not a browser family of this service (its visits count as another family)');
  return new Refusal(`matchValue: must be one of ${[...OUR_BROWSERS.keys()].join(', ')}${notThis(value)}`);
}

/** Shlink's ISO 8601 instant as our Unix seconds. */
function instant(type: ConditionType, value: unknown): Translated {
  const seconds = typeof value === 'string' && !/^\d*$/.test(value) ? isoSeconds(value, MAX_RULE_TIME) : undefined;
  if (seconds !== undefined) return keyless(type, seconds);
  return new Refusal(`matchValue: must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00${notThis(value)}`);
}

/** Shlink's `1.2.*.*` as the CIDR block it stands for (`1.2.0.0/16`); any other value as sent. */
function wildcardBlock(value: string): Translated {
  if (!value.includes('*')) return keyless('ip-address', value);
  const parts = value.split('.');
  const first = parts.indexOf('*');
  if (parts.length !== 4 || first === -1 || parts.slice(first).some((p) => p !== '*')) {
    return new Refusal(`matchValue: a wildcard must stand for the last parts of an IPv4 address (1.2.*.*, the block 1.2.0.0/16)${notThis(value)}`);
  }
  return keyless('ip-address', `${[...parts.slice(0, first), ...parts.slice(first).map(() => '0')].join('.')}/${first * 8}`);
}

/**
 * A stored condition as Shlink writes it. One of a type this build does not know (a newer one, on
 * a store another build shares) is written with its own names: it never holds here, and a client
 * that writes the list back is refused for it rather than dropping it unseen.
 */
function toShlinkCondition(c: StoredCondition): ShlinkCondition {
  const write = Object.hasOwn(TO_SHLINK, c.type) ? TO_SHLINK[c.type as ConditionType] : undefined;
  return write === undefined ? condition(c.type as ShlinkConditionType, c.key, c.value) : write(c as RuleCondition);
}

/** Our rules (as a record holds them) as Shlink's `GET` (and `POST`) answers them; `priority` counts from 1, as Shlink's does. */
export function toShlinkRules(rules: readonly StoredRule[], defaultLongUrl: string): ShlinkRulesList {
  return {
    defaultLongUrl,
    redirectRules: rules.map((rule, i) => ({ longUrl: rule.url, priority: i + 1, conditions: rule.conditions.map(toShlinkCondition) })),
  };
}

const isObject = (raw: unknown): raw is Record<string, unknown> => typeof raw === 'object' && raw !== null && !Array.isArray(raw);

/**
 * A refusal of our rules (`parseRules`, here or the service's) in Shlink's names:
 * `rules[0].conditions[1].value: …` → `redirectRules[0].conditions[1].matchValue: …`.
 */
export function shlinkPath(detail: string): string {
  return detail
    .replace(/^rules\b/, 'redirectRules')
    .replace(/^(redirectRules\[\d+\])\.url:/, '$1.longUrl:')
    .replace(
      /^(redirectRules\[\d+\]\.conditions\[\d+\])\.(key|value):/,
      (_, path: string, field: string) => `${path}.match${field === 'key' ? 'Key' : 'Value'}:`,
    );
}

/**
 * The body of Shlink's `POST` as our rules (as `parseRules` stores them), or a refusal whose detail
 * names the field in Shlink's terms. `checkUrl` is the service's URL rule, as for `parseRules`.
 */
export function fromShlinkRules(body: unknown, checkUrl: (url: unknown) => string | { detail: string }): RedirectRule[] | Refusal {
  const list = isObject(body) ? body['redirectRules'] : undefined;
  if (!Array.isArray(list)) return new Refusal('redirectRules: must be an array of rules, each with longUrl and conditions');
  const rules: unknown[] = [];
  for (let i = 0; i < list.length; i++) {
    const rule: unknown = list[i];
    if (!isObject(rule)) return new Refusal(`redirectRules[${i}]: must be an object with longUrl and conditions`);
    const conditions = rule['conditions'];
    if (!Array.isArray(conditions)) return new Refusal(`redirectRules[${i}].conditions: must be an array of conditions`);
    const ours: unknown[] = [];
    for (let j = 0; j < conditions.length; j++) {
      const translated = fromShlinkCondition(conditions[j], `redirectRules[${i}].conditions[${j}]`);
      if (translated instanceof Refusal) return translated;
      ours.push(translated);
    }
    rules.push({ url: rule['longUrl'], conditions: ours });
  }
  const parsed = parseRules(rules, checkUrl);
  return parsed instanceof Refusal ? new Refusal(shlinkPath(parsed.detail)) : parsed;
}

function fromShlinkCondition(raw: unknown, path: string): Translated {
  if (!isObject(raw)) return new Refusal(`${path}: must be an object with type, matchKey and matchValue`);
  const type = raw['type'];
  const read = typeof type === 'string' && Object.hasOwn(FROM_SHLINK, type) ? FROM_SHLINK[type as ShlinkConditionType] : undefined;
  if (read === undefined) return new Refusal(`${path}.type: must be one of ${SHLINK_TYPES}${notThis(type)}`);
  const translated = read(raw['matchKey'], raw['matchValue']);
  return translated instanceof Refusal ? new Refusal(`${path}.${translated.detail}`) : translated;
}
