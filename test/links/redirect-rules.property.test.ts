/**
 * Redirect rules against a model: random rule lists and random visitors, with
 * `firstMatch` compared to a plain reading of each condition written here (addresses judged by
 * node's own `BlockList`), the facts it asks compared to the ones the model reads, and every
 * stored list parsed again to itself. `FC_SEED=<n>` replays a run.
 */
import assert from 'node:assert/strict';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEVICE_VALUES, firstMatch, MAX_RULES, parseRules, type RedirectRule, type RuleCondition, type RuleVisitor } from '../../src/links/redirect-rules.ts';
import { checkIpRule } from '../../src/links/rule-conditions.ts';
import { checkUrl, Refusal } from '../../src/links/validate.ts';
import type { Browser, Device, Os } from '../../src/visits/event.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../../src/visits/packed.ts';

const seed = Number(process.env['FC_SEED'] ?? Date.now() % 1e9);
const urls = (url: unknown) => checkUrl(url, { maxLength: 2000, baseUrl: 'https://s.example/' });
const T = 1_790_000_000;

/** A text in a random mix of cases: every condition but the query's ignores case. */
const anyCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((up) => [...text].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
const fromCase = (values: readonly string[]) => fc.constantFrom(...values).chain(anyCase);

const KEYS = ['utm', 'ref', 'a'];
const VALUES = ['', 'x', 'y', 'a b'];
const LANGUAGES = ['fr', 'fr-CA', 'fr-FR', 'en', 'en-US', 'de', 'es-419', 'zh-TW'];
const COUNTRIES = ['FR', 'DE', 'US', 'CA'];

/** An IPv4 network of a small space (so visitors fall in it) as `a.b.c.d[/p]`, sometimes IPv4-mapped. */
const v4Rule = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.option(fc.integer({ min: 0, max: 32 })), fc.boolean())
  .map(([c, d, prefix, mapped]) => {
    const address = (10 * 2 ** 24 + c * 256 + d) >>> 0;
    const bits = prefix ?? 32;
    const network = bits === 0 ? 0 : Number(BigInt(address) & (((1n << BigInt(bits)) - 1n) << BigInt(32 - bits)));
    const text = [24, 16, 8, 0].map((s) => (network >>> s) & 255).join('.');
    if (mapped) return prefix === null ? `::ffff:${text}` : `::ffff:${text}/${prefix + 96}`;
    return prefix === null ? text : `${text}/${prefix}`;
  });

const GROUPS = [0, 0, 1, 0xdb8, 0x2001, 0xffff];
/** An IPv6 address of few distinct groups, as a BigInt. */
const v6Number = fc.array(fc.constantFrom(...GROUPS), { minLength: 8, maxLength: 8 }).map((g) => g.reduce((n, x) => (n << 16n) | BigInt(x), 0n));
const v6Text = (n: bigint) => Array.from({ length: 8 }, (_, k) => ((n >> BigInt(112 - 16 * k)) & 0xffffn).toString(16)).join(':');
const v6Rule = fc.tuple(v6Number, fc.option(fc.integer({ min: 0, max: 128 }))).map(([n, prefix]) => {
  if (prefix === null) return v6Text(n);
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
  return `${v6Text(n & mask)}/${prefix}`;
});

/** A condition as a body would send it: any case where case does not matter, numbers for dates too. */
const conditionInput = fc.oneof(
  fromCase(DEVICE_VALUES).map((value) => ({ type: 'device', value })),
  fromCase(BROWSERS).map((value) => ({ type: 'browser', key: null, value })),
  fromCase(LANGUAGES).map((value) => ({ type: 'language', value })),
  fromCase(COUNTRIES).map((value) => ({ type: 'country', value })),
  fc.record({ type: fc.constant('query-param'), key: fc.constantFrom(...KEYS), value: fc.constantFrom(...VALUES) }),
  fc.record({ type: fc.constant('any-value-query-param'), key: fc.constantFrom(...KEYS), value: fc.constantFrom(null, '') }),
  fc.oneof(v4Rule, v6Rule).map((value) => ({ type: 'ip-address', value })),
  fc.record({
    type: fc.constantFrom('before-date', 'after-date'),
    value: fc.integer({ min: T - 2, max: T + 2 }).chain((t) => fc.constantFrom<number | string>(t, String(t))),
  }),
);

const rulesInput = fc.array(
  fc.record({ url: fc.constantFrom('https://example.com/a', 'https://example.com/b'), conditions: fc.array(conditionInput, { minLength: 1, maxLength: 4 }) }),
  { maxLength: MAX_RULES },
);

/** A visitor's facts as plain data. */
interface Seen {
  os: Os | null;
  device: Device | null;
  browser: Browser | null;
  language: string | undefined;
  country: string | null;
  query: string;
  address: string | null;
  now: number;
}

const HEADER_TAGS = ['fr', 'fr-CA', 'FR-ca', 'fr-FR', 'fro', 'en', 'en-US', 'de', 'es-419', 'zh-Hant-TW', 'zh', '*'];
const WEIGHTS = ['', ';q=0', ';q=0.0', ';q=0.5', ';q=1', ';q=0.001'];
const header = fc
  .array(fc.tuple(fc.constantFrom(...HEADER_TAGS), fc.constantFrom(...WEIGHTS)), { maxLength: 4 })
  .map((tags) => tags.map(([t, w]) => `${t}${w}`).join(', '));
const queryPart = fc.tuple(fc.constantFrom(...KEYS, 'other'), fc.constantFrom(...VALUES, null));
const v4Visitor = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.boolean())
  .map(([c, d, mapped]) => `${mapped ? '::ffff:' : ''}10.0.${c}.${d}`);

const seen: fc.Arbitrary<Seen> = fc.record({
  os: fc.constantFrom(null, ...SYSTEMS),
  device: fc.constantFrom(null, ...DEVICES),
  browser: fc.constantFrom(null, ...BROWSERS),
  language: fc.option(header, { nil: undefined }),
  country: fc.constantFrom(null, ...COUNTRIES, 'IT'),
  query: fc.array(queryPart, { maxLength: 4 }).map((parts) => parts.map(([k, v]) => (v === null ? k : `${k}=${encodeURIComponent(v)}`)).join('&')),
  address: fc.oneof(fc.constant(null), v4Visitor, v6Number.map(v6Text)),
  now: fc.integer({ min: T - 3, max: T + 3 }),
});

type Fact = 'os' | 'device' | 'browser' | 'acceptLanguage' | 'country' | 'query' | 'address' | 'now';

/** The fact a condition reads. */
function factOf(c: RuleCondition): Fact {
  switch (c.type) {
    case 'device':
      return c.value === 'mobile' || c.value === 'desktop' ? 'device' : 'os';
    case 'language':
      return 'acceptLanguage';
    case 'query-param':
    case 'any-value-query-param':
      return 'query';
    case 'ip-address':
      return 'address';
    case 'before-date':
    case 'after-date':
      return 'now';
    default:
      return c.type;
  }
}

/** The model's languages of a header of `HEADER_TAGS`: `[primary, region | undefined]` of weight above 0. */
function languagesOf(text: string | undefined): [string, string | undefined][] {
  if (text === undefined) return [];
  return text
    .split(',')
    .map((piece) => piece.split(';').map((s) => s.trim()))
    .filter(([, weight]) => weight === undefined || Number.parseFloat(weight.slice(2)) > 0)
    .map(([tag]) => tag!.split('-'))
    .map((parts) => [
      parts[0]!.toLowerCase(),
      parts
        .slice(1)
        .find((p) => p.length !== 4)
        ?.toUpperCase(),
    ]);
}

/**
 * The visitor as an address condition reads it: an IPv4-mapped IPv6 address as its IPv4 address,
 * however it is written (`::ffff:10.0.0.1`, or in groups, `0:0:0:0:0:ffff:a00:1`), found through
 * the WHATWG URL parser's spelling of it.
 */
function asRead(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  if (mapped === null) return address;
  const n = Number.parseInt(mapped[1]!, 16) * 65_536 + Number.parseInt(mapped[2]!, 16);
  return [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
}

/** The model of an address condition: node's `BlockList`, the visitor's IPv4-mapped address as IPv4. */
function inRule(rule: string, address: string | null): boolean {
  if (address === null) return false;
  const visitor = asRead(address);
  const [network, prefix] = rule.split('/') as [string, string | undefined];
  const family = isIPv4(network) ? 'ipv4' : 'ipv6';
  if ((family === 'ipv4') !== isIPv4(visitor)) return false;
  const list = new BlockList();
  if (prefix === undefined) list.addAddress(network, family);
  else list.addSubnet(network, Number(prefix), family);
  return list.check(visitor, family);
}

/** The model of one condition. */
function holds(c: RuleCondition, s: Seen): boolean {
  switch (c.type) {
    case 'device':
      if (c.value === 'mobile') return s.device === 'mobile' || s.device === 'tablet';
      if (c.value === 'desktop') return s.device === 'desktop';
      return s.os?.toLowerCase() === c.value;
    case 'browser':
      return s.browser === c.value;
    case 'language': {
      const [primary, region] = c.value.split('-');
      return languagesOf(s.language).some(([p, r]) => p === primary!.toLowerCase() && (region === undefined || r === region));
    }
    case 'country':
      return s.country === c.value;
    case 'query-param':
      return new URLSearchParams(s.query).getAll(c.key!).includes(c.value);
    case 'any-value-query-param':
      return new URLSearchParams(s.query).getAll(c.key!).length > 0;
    case 'ip-address':
      return inRule(c.value, s.address);
    case 'before-date':
      return s.now < Number(c.value);
    case 'after-date':
      return s.now > Number(c.value);
  }
}

/** The model's answer, and the facts it read (each condition in order, up to the first that fails). */
function model(rules: readonly RedirectRule[], s: Seen): { index: number | null; read: Set<Fact> } {
  const read = new Set<Fact>();
  for (let i = 0; i < rules.length; i++) {
    if (rules[i]!.conditions.every((c) => (read.add(factOf(c)), holds(c, s)))) return { index: i, read };
  }
  return { index: null, read };
}

function visitorOf(s: Seen): RuleVisitor & { asked: Fact[] } {
  const asked: Fact[] = [];
  const note = <T>(fact: Fact, value: T): T => (asked.push(fact), value);
  return {
    asked,
    os: () => note('os', s.os),
    device: () => note('device', s.device),
    browser: () => note('browser', s.browser),
    acceptLanguage: () => note('acceptLanguage', s.language),
    country: () => note('country', s.country),
    query: () => note('query', new URLSearchParams(s.query)),
    address: () => note('address', s.address),
    now: () => note('now', s.now),
  };
}

const stored = (input: unknown): RedirectRule[] => {
  const parsed = parseRules(input, urls);
  assert.ok(!(parsed instanceof Refusal), parsed instanceof Refusal ? parsed.detail : '');
  return parsed;
};

test('firstMatch answers as the model does, asking each fact the model reads exactly once', () => {
  fc.assert(
    fc.property(rulesInput, fc.array(seen, { minLength: 1, maxLength: 5 }), (input, visitors) => {
      const rules = stored(input);
      for (const s of visitors) {
        const expected = model(rules, s);
        const v = visitorOf(s);
        assert.equal(firstMatch(rules, v), expected.index, JSON.stringify({ rules, s }));
        assert.equal(new Set(v.asked).size, v.asked.length, `each fact at most once: ${v.asked}`);
        assert.deepEqual(new Set(v.asked), expected.read, 'the facts the model reads, and no other');
      }
    }),
    { numRuns: 400, seed },
  );
});

test('a stored rule list parses again to itself, through JSON too', () => {
  fc.assert(
    fc.property(rulesInput, (input) => {
      const rules = stored(input);
      assert.deepEqual(stored(rules), rules);
      assert.deepEqual(stored(JSON.parse(JSON.stringify(rules))), rules);
    }),
    { numRuns: 300, seed },
  );
});

test('an IPv6 rule is stored as the WHATWG URL parser writes the address (RFC 5952), a mapped one as IPv4', () => {
  fc.assert(
    fc.property(v6Number, (n) => {
      const text = v6Text(n);
      const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
      const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
      const expected =
        mapped === null ? canonical : [mapped[1]!, mapped[2]!].flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 255]).join('.');
      assert.equal(checkIpRule(text), expected);
      assert.equal(checkIpRule(expected), expected, 'the stored spelling is stored as itself');
    }),
    { numRuns: 300, seed },
  );
});
