/**
 * Redirect rules: a link's ordered list of `{url, conditions}`; the first rule whose conditions
 * all hold gives a visitor's target, else the link's own URL. What a rule may hold is decided here
 * for every door (`parseRules`), and which rule a visitor gets is answered here for the redirect
 * (`firstMatch`), which compiles each list once and then asks the visitor only for the facts its
 * conditions read.
 *
 * Decisions the conditions make:
 * - `device`: `mobile` holds for phones and tablets alike (as in Shlink, where iPads and Android
 *   tablets are `mobile`), `desktop` for desktops; the others name the OS.
 * - `language`: `fr` holds for any French the visitor accepts (`fr`, `fr-CA`), `fr-CA` only for
 *   `fr-CA`, each with a weight above `q=0`; `*` holds for no rule.
 * - `query-param`: holds when any occurrence of `key` has exactly `value`; an empty value holds
 *   for a parameter present without one (`?ref` or `?ref=`).
 * - `ip-address`: an IPv4 rule holds for IPv4-mapped IPv6 visitors too; an IPv6 block never holds
 *   for an IPv4 visitor.
 * - `before-date` holds while now < value, `after-date` once now > value: at the very second of
 *   the value neither holds (as in Shlink), so `before X` and `after X` never both hold.
 */
import type { StoredCondition, StoredRule } from '../store/routing.ts';
import type { Browser } from '../visits/event.ts';
import { BROWSERS } from '../visits/packed.ts';
import { codePoints, Refusal, unstorableText } from './refusal.ts';
import { acceptsLanguage, checkIpRule, checkLanguage, Facts, inBlock, ipBlock, type RuleVisitor, notThis } from './rule-conditions.ts';

export type { RuleVisitor } from './rule-conditions.ts';

export const CONDITION_NAMES = [
  'device',
  'browser',
  'language',
  'country',
  'query-param',
  'any-value-query-param',
  'ip-address',
  'before-date',
  'after-date',
] as const;
export type ConditionType = (typeof CONDITION_NAMES)[number];

/** One condition as stored: `key` is the query parameter's name, null for the other types. */
export interface RuleCondition {
  type: ConditionType;
  key: string | null;
  value: string;
}

export interface RedirectRule {
  url: string;
  conditions: RuleCondition[];
}

export const MAX_RULES = 10;
/** Conditions of one rule: ten is more than any real targeting needs, and bounds a visit's work at 100 tests. */
export const MAX_CONDITIONS = 10;
/** The longest query parameter name or value a condition compares, in characters. */
export const MAX_MATCH_LENGTH = 512;

/** The latest instant a date condition may name: 9999-12-31T23:59:59Z, the last ISO 8601 spells. */
export const MAX_RULE_TIME = 253402300799;

/** A rule's `before-date` / `after-date`: Unix seconds, as a number or its decimal digits; stored as digits. */
function checkInstant(value: unknown): string | Refusal {
  const n = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_RULE_TIME) return String(n);
  return new Refusal(`must be an instant in Unix seconds (an integer from 0 to ${MAX_RULE_TIME}) such as "1790000000"${notThis(value)}`);
}

/** A compiled condition: whether it holds for the visitor behind `facts`. */
type ConditionTest = (facts: Facts) => boolean;

/** `device` values, each as the test of the visitor's families it stands for. */
const DEVICE_TESTS: Readonly<Record<string, ConditionTest>> = {
  android: (f) => f.os() === 'Android',
  ios: (f) => f.os() === 'iOS',
  mobile: (f) => f.device() === 'mobile' || f.device() === 'tablet',
  desktop: (f) => f.device() === 'desktop',
  windows: (f) => f.os() === 'Windows',
  macos: (f) => f.os() === 'macOS',
  linux: (f) => f.os() === 'Linux',
  chromeos: (f) => f.os() === 'ChromeOS',
};
export const DEVICE_VALUES: readonly string[] = Object.keys(DEVICE_TESTS);

/** Browser families by their lower-case spelling: a rule names one in any case. */
const BROWSER_NAMES: ReadonlyMap<string, Browser> = new Map(BROWSERS.map((b) => [b.toLowerCase(), b]));

/** What one condition type takes, how its value is stored, and how it is tested. */
export interface ConditionSpec {
  /** Whether the condition names a query parameter in `key` (the others take none). */
  readonly key: boolean;
  /** The value as stored, or why not (worded without its path). */
  readonly check: (value: unknown) => string | Refusal;
  /** The test of a stored condition, made once per rule list. */
  readonly compile: (condition: RuleCondition) => ConditionTest;
}

const KEYLESS = { key: false } as const;
const before =
  (time: number): ConditionTest =>
  (f) =>
    f.now() < time;
const after =
  (time: number): ConditionTest =>
  (f) =>
    f.now() > time;

export const CONDITION_TYPES: Readonly<Record<ConditionType, ConditionSpec>> = {
  device: {
    ...KEYLESS,
    check: (v) =>
      typeof v === 'string' && Object.hasOwn(DEVICE_TESTS, v.toLowerCase())
        ? v.toLowerCase()
        : new Refusal(`must be one of ${DEVICE_VALUES.join(', ')}${notThis(v)}`),
    compile: (c) => DEVICE_TESTS[c.value]!,
  },
  browser: {
    ...KEYLESS,
    check: (v) => (typeof v === 'string' && BROWSER_NAMES.get(v.toLowerCase())) || new Refusal(`must be one of ${BROWSERS.join(', ')}${notThis(v)}`),
    compile: (c) => (f) => f.browser() === c.value,
  },
  language: {
    ...KEYLESS,
    check: checkLanguage,
    compile: (c) => (f) => acceptsLanguage(f.languages(), c.value),
  },
  country: {
    ...KEYLESS,
    check: (v) =>
      typeof v === 'string' && /^[A-Za-z]{2}$/.test(v) ? v.toUpperCase() : new Refusal(`must be a two-letter country code such as FR${notThis(v)}`),
    compile: (c) => (f) => f.country() === c.value,
  },
  'query-param': {
    key: true,
    check: (v) =>
      typeof v === 'string'
        ? (matchText(v, 'the value') ?? v)
        : new Refusal(`must be the text the parameter must have (a string, empty for none)${notThis(v)}`),
    compile: (c) => (f) => f.query().has(c.key!, c.value),
  },
  'any-value-query-param': {
    key: true,
    check: (v) =>
      v === undefined || v === null || v === ''
        ? ''
        : new Refusal(`must be empty ("" or null): this condition holds whatever the parameter's value; query-param matches one value`),
    compile: (c) => (f) => f.query().has(c.key!),
  },
  'ip-address': {
    ...KEYLESS,
    check: checkIpRule,
    compile: ({ value }) => {
      const block = ipBlock(value)!;
      return (f) => inBlock(f.address(), block);
    },
  },
  'before-date': {
    ...KEYLESS,
    check: checkInstant,
    compile: (c) => before(Number(c.value)),
  },
  'after-date': {
    ...KEYLESS,
    check: checkInstant,
    compile: (c) => after(Number(c.value)),
  },
};

const TYPE_NAMES = CONDITION_NAMES.join(', ');

/** Why a query parameter's name or value cannot be compared, or undefined when it can. */
function matchText(text: string, field: 'the key' | 'the value'): Refusal | undefined {
  if (text.length > MAX_MATCH_LENGTH && codePoints(text) > MAX_MATCH_LENGTH) {
    return new Refusal(`must be at most ${MAX_MATCH_LENGTH} characters long, not ${codePoints(text)}`);
  }
  const unstorable = unstorableText(text, field);
  return unstorable === undefined ? undefined : new Refusal(unstorable);
}

/** Where a field was refused: `rules[2].conditions[0].value: …`. */
const at = (path: string, refusal: Refusal): Refusal => new Refusal(`${path}: ${refusal.detail}`);

const isObject = (raw: unknown): raw is Record<string, unknown> => typeof raw === 'object' && raw !== null && !Array.isArray(raw);

/** The first field of `raw` not in `fields`, as a refusal at `path`. */
function unknownField(raw: Record<string, unknown>, fields: readonly string[], path: string, what: string): Refusal | undefined {
  const extra = Object.keys(raw).find((name) => !fields.includes(name));
  return extra === undefined ? undefined : new Refusal(`${path}: unknown field ${JSON.stringify(extra)} (${what})`);
}

/**
 * A body's `rules`: an array of at most `MAX_RULES` rules, each `{url, conditions}` with 1 to
 * `MAX_CONDITIONS` conditions `{type, key, value}`, every value checked by its type's row of
 * `CONDITION_TYPES` and every `url` by `checkUrl` (which returns the URL as stored, or a refusal).
 * The answer is the list as stored, or a `Refusal` whose detail names the path of the first fault.
 */
export function parseRules(input: unknown, checkUrl: (url: unknown) => string | { detail: string }): RedirectRule[] | Refusal {
  if (!Array.isArray(input)) return new Refusal(`rules: must be an array of at most ${MAX_RULES} rules`);
  if (input.length > MAX_RULES) return new Refusal(`rules: a link may have at most ${MAX_RULES} rules, not ${input.length}`);
  const rules: RedirectRule[] = [];
  for (let i = 0; i < input.length; i++) {
    const rule = parseRule(input[i], `rules[${i}]`, checkUrl);
    if (rule instanceof Refusal) return rule;
    rules.push(rule);
  }
  return rules;
}

function parseRule(raw: unknown, path: string, checkUrl: (url: unknown) => string | { detail: string }): RedirectRule | Refusal {
  if (!isObject(raw)) return new Refusal(`${path}: must be an object with url and conditions`);
  const extra = unknownField(raw, ['url', 'conditions'], path, 'a rule has url and conditions');
  if (extra !== undefined) return extra;
  const url = checkUrl(raw['url']);
  if (typeof url !== 'string') return new Refusal(`${path}.url: ${url.detail}`);
  const list = raw['conditions'];
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_CONDITIONS) {
    const count = Array.isArray(list) ? `, not ${list.length}` : '';
    return new Refusal(`${path}.conditions: must be an array of 1 to ${MAX_CONDITIONS} conditions${count}`);
  }
  const conditions: RuleCondition[] = [];
  for (let j = 0; j < list.length; j++) {
    const condition = parseCondition(list[j], `${path}.conditions[${j}]`);
    if (condition instanceof Refusal) return condition;
    conditions.push(condition);
  }
  return { url, conditions };
}

function parseCondition(raw: unknown, path: string): RuleCondition | Refusal {
  if (!isObject(raw)) return new Refusal(`${path}: must be an object with type, key and value`);
  const extra = unknownField(raw, ['type', 'key', 'value'], path, 'a condition has type, key and value');
  if (extra !== undefined) return extra;
  const type = raw['type'];
  if (typeof type !== 'string' || !Object.hasOwn(CONDITION_TYPES, type)) return new Refusal(`${path}.type: must be one of ${TYPE_NAMES}${notThis(type)}`);
  const spec = CONDITION_TYPES[type as ConditionType];
  const key = raw['key'];
  let storedKey: string | null = null;
  if (spec.key) {
    if (typeof key !== 'string' || key === '') return new Refusal(`${path}.key: ${type} needs the name of a query parameter${notThis(key)}`);
    const refused = matchText(key, 'the key');
    if (refused !== undefined) return at(`${path}.key`, refused);
    storedKey = key;
  } else if (key !== undefined && key !== null && key !== '') {
    return new Refusal(`${path}.key: ${type} takes no key (null)${notThis(key)}`);
  }
  const value = spec.check(raw['value']);
  if (value instanceof Refusal) return at(`${path}.value`, value);
  return { type: type as ConditionType, key: storedKey, value };
}

/** A rule list made ready for `firstMatch`: each condition's test, made once. */
export class CompiledRules {
  constructor(readonly tests: readonly (readonly ConditionTest[])[]) {}
}

const NEVER: ConditionTest = () => false;

/** One stored condition's test; one this build cannot read (a newer type, a damaged value) never holds. */
function compileCondition(c: StoredCondition): ConditionTest {
  if (!Object.hasOwn(CONDITION_TYPES, c.type)) return NEVER;
  const spec = CONDITION_TYPES[c.type as ConditionType];
  if (spec.key !== (typeof c.key === 'string' && c.key !== '') || spec.check(c.value) !== c.value) return NEVER;
  return spec.compile(c as RuleCondition);
}

/** A list of stored rules (as `parseRules` answers them), compiled. */
export function compileRules(rules: readonly StoredRule[]): CompiledRules {
  return new CompiledRules(rules.map((rule) => rule.conditions.map(compileCondition)));
}

/**
 * Lists compiled for `firstMatch`, by the array that holds them: a link's rules are compiled on
 * its first visit and again only when the link is given a new list (a list is never changed in
 * place). Weak, so a replaced list is forgotten with its record.
 */
const compiled = new WeakMap<readonly StoredRule[], CompiledRules>();

/** One visitor's facts at a time: `firstMatch` runs to its end before another can start. */
const facts = new Facts();

/**
 * The index of the first rule whose conditions all hold for `visitor`, or null when none does.
 * Each of the visitor's facts is asked at most once, and only when a condition reads it.
 */
export function firstMatch(rules: readonly StoredRule[] | CompiledRules, visitor: RuleVisitor): number | null {
  let list: CompiledRules | undefined;
  if (rules instanceof CompiledRules) list = rules;
  else if ((list = compiled.get(rules)) === undefined) compiled.set(rules, (list = compileRules(rules)));
  facts.reset(visitor);
  let found: number | null = null;
  for (let i = 0; i < list.tests.length && found === null; i++) {
    const tests = list.tests[i]!;
    let all = true;
    for (let j = 0; j < tests.length && all; j++) all = tests[j]!(facts);
    if (all) found = i;
  }
  facts.reset(undefined);
  return found;
}
