/**
 * Redirect rules: what a rule may hold (`parseRules`, every refusal by its exact
 * words) and which rule a visitor gets (`firstMatch`), condition type by condition type, with the
 * boundaries the module decides: tablets are mobile, `q=0` is no language, mapped IPv4 is IPv4,
 * and at the very second of a date neither `before-date` nor `after-date` holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CONDITION_NAMES,
  CONDITION_TYPES,
  compileRules,
  firstMatch,
  MAX_CONDITIONS,
  MAX_RULES,
  parseRules,
  type RedirectRule,
  type RuleCondition,
  type RuleVisitor,
} from '../../src/links/redirect-rules.ts';
import { acceptedLanguages } from '../../src/links/rule-conditions.ts';
import { checkUrl, Refusal, type UrlRules } from '../../src/links/validate.ts';
import type { Browser, Device, Os } from '../../src/visits/event.ts';

const URL_RULES: UrlRules = { maxLength: 2000, baseUrl: 'https://s.example/' };
const urls = (url: unknown) => checkUrl(url, URL_RULES);

/** What a test visitor knows; everything else is unknown (null, no header, an empty query). */
interface Seen {
  os?: Os | null;
  device?: Device | null;
  browser?: Browser | null;
  language?: string;
  country?: string | null;
  query?: string;
  address?: string | null;
  now?: number;
}

/** A visitor of `seen` that notes each fact it is asked, in order. */
function visitor(seen: Seen = {}): RuleVisitor & { asked: string[] } {
  const asked: string[] = [];
  const note = <T>(name: string, value: T): T => (asked.push(name), value);
  return {
    asked,
    os: () => note('os', seen.os ?? null),
    device: () => note('device', seen.device ?? null),
    browser: () => note('browser', seen.browser ?? null),
    acceptLanguage: () => note('acceptLanguage', seen.language),
    country: () => note('country', seen.country ?? null),
    query: () => note('query', new URLSearchParams(seen.query ?? '')),
    address: () => note('address', seen.address ?? null),
    now: () => note('now', seen.now ?? 1_790_000_000),
  };
}

/** One rule of one condition, stored as `parseRules` stores it. */
function one(type: string, value: unknown, key?: unknown): RedirectRule[] {
  const condition: Record<string, unknown> = { type, value };
  if (key !== undefined) condition['key'] = key;
  const parsed = parseRules([{ url: 'https://example.com/a', conditions: [condition] }], urls);
  assert.ok(!(parsed instanceof Refusal), `${type} ${JSON.stringify(value)}: ${parsed instanceof Refusal ? parsed.detail : ''}`);
  return parsed;
}

/** Whether the one-condition rule holds for the visitor of `seen`. */
const holds = (type: string, value: unknown, seen: Seen, key?: unknown): boolean => firstMatch(one(type, value, key), visitor(seen)) === 0;

test('every condition type is stored in its one spelling', () => {
  const cases: [string, unknown, unknown, RuleCondition][] = [
    ['device', 'IOS', undefined, { type: 'device', key: null, value: 'ios' }],
    ['device', 'chromeos', null, { type: 'device', key: null, value: 'chromeos' }],
    ['browser', 'samsung internet', undefined, { type: 'browser', key: null, value: 'Samsung Internet' }],
    ['browser', 'FIREFOX', '', { type: 'browser', key: null, value: 'Firefox' }],
    ['language', 'FR-ca', undefined, { type: 'language', key: null, value: 'fr-CA' }],
    ['language', 'es-419', undefined, { type: 'language', key: null, value: 'es-419' }],
    ['language', 'Fil', undefined, { type: 'language', key: null, value: 'fil' }],
    ['country', 'fr', undefined, { type: 'country', key: null, value: 'FR' }],
    ['query-param', 'spring', 'utm_campaign', { type: 'query-param', key: 'utm_campaign', value: 'spring' }],
    ['query-param', '', 'ref', { type: 'query-param', key: 'ref', value: '' }],
    ['any-value-query-param', undefined, 'utm', { type: 'any-value-query-param', key: 'utm', value: '' }],
    ['any-value-query-param', null, 'utm', { type: 'any-value-query-param', key: 'utm', value: '' }],
    ['ip-address', '10.0.0.1', undefined, { type: 'ip-address', key: null, value: '10.0.0.1' }],
    ['ip-address', '10.0.0.0/8', undefined, { type: 'ip-address', key: null, value: '10.0.0.0/8' }],
    ['ip-address', '2001:DB8:0:0:0:0:0:0/32', undefined, { type: 'ip-address', key: null, value: '2001:db8::/32' }],
    ['ip-address', '2001:db8:0:0:1:0:0:1', undefined, { type: 'ip-address', key: null, value: '2001:db8::1:0:0:1' }],
    ['ip-address', '::ffff:10.0.0.1', undefined, { type: 'ip-address', key: null, value: '10.0.0.1' }],
    ['ip-address', '::FFFF:10.0.0.0/104', undefined, { type: 'ip-address', key: null, value: '10.0.0.0/8' }],
    ['ip-address', '::/0', undefined, { type: 'ip-address', key: null, value: '::/0' }],
    ['before-date', '1790000000', undefined, { type: 'before-date', key: null, value: '1790000000' }],
    ['after-date', 1790000000, undefined, { type: 'after-date', key: null, value: '1790000000' }],
    ['after-date', '0', undefined, { type: 'after-date', key: null, value: '0' }],
    ['before-date', '007', undefined, { type: 'before-date', key: null, value: '7' }],
    ['before-date', 253402300799, undefined, { type: 'before-date', key: null, value: '253402300799' }],
  ];
  for (const [type, value, key, stored] of cases) {
    assert.deepEqual(one(type, value, key)[0]!.conditions, [stored], `${type} ${JSON.stringify(value)}`);
  }
  assert.deepEqual(Object.keys(CONDITION_TYPES), [...CONDITION_NAMES], 'the table has one row per type');
});

test('a rule list is stored with its URLs as the URL rule writes them', () => {
  const parsed = parseRules(
    [
      { url: 'HTTPS://Example.COM/fr', conditions: [{ type: 'language', value: 'fr' }] },
      {
        url: 'https://example.com/ios',
        conditions: [
          { type: 'device', key: null, value: 'ios' },
          { type: 'country', value: 'ca' },
        ],
      },
    ],
    urls,
  );
  assert.deepEqual(parsed, [
    { url: 'https://example.com/fr', conditions: [{ type: 'language', key: null, value: 'fr' }] },
    {
      url: 'https://example.com/ios',
      conditions: [
        { type: 'device', key: null, value: 'ios' },
        { type: 'country', key: null, value: 'CA' },
      ],
    },
  ]);
  assert.deepEqual(parseRules([], urls), []);
});

const RULE = { url: 'https://example.com/', conditions: [{ type: 'device', value: 'ios' }] };
const withCondition = (condition: unknown) => [{ url: 'https://example.com/', conditions: [condition] }];
const AT = 'rules[0].conditions[0]';

test('each refusal names the path of the first fault, in plain words', () => {
  const cases: [unknown, string][] = [
    ['x', 'rules: must be an array of at most 10 rules'],
    [null, 'rules: must be an array of at most 10 rules'],
    [{ rules: [] }, 'rules: must be an array of at most 10 rules'],
    [new Array(MAX_RULES + 1).fill(RULE), 'rules: a link may have at most 10 rules, not 11'],
    [[RULE, 5], 'rules[1]: must be an object with url and conditions'],
    [[RULE, [RULE]], 'rules[1]: must be an object with url and conditions'],
    [[{ ...RULE, url: 'ftp://example.com/' }], 'rules[0].url: url must use http or https, not ftp'],
    [[{ ...RULE, extra: 1 }], 'rules[0]: unknown field "extra" (a rule has url and conditions)'],
    [[{ ...RULE, conditions: [] }], 'rules[0].conditions: must be an array of 1 to 10 conditions, not 0'],
    [[{ ...RULE, conditions: new Array(MAX_CONDITIONS + 1).fill(RULE.conditions[0]) }], 'rules[0].conditions: must be an array of 1 to 10 conditions, not 11'],
    [[{ url: RULE.url }], 'rules[0].conditions: must be an array of 1 to 10 conditions'],
    [[RULE, RULE, { ...RULE, conditions: [RULE.conditions[0], 'ios'] }], 'rules[2].conditions[1]: must be an object with type, key and value'],
    [withCondition({ type: 'device', value: 'ios', note: 'x' }), `${AT}: unknown field "note" (a condition has type, key and value)`],
    [
      withCondition({ type: 'city', value: 'Paris' }),
      `${AT}.type: must be one of device, browser, language, country, query-param, any-value-query-param, ip-address, before-date, after-date, not "city"`,
    ],
    [
      withCondition({ value: 'ios' }),
      `${AT}.type: must be one of device, browser, language, country, query-param, any-value-query-param, ip-address, before-date, after-date (none was given)`,
    ],
    [
      withCondition({ type: 'toString', value: 'ios' }),
      `${AT}.type: must be one of device, browser, language, country, query-param, any-value-query-param, ip-address, before-date, after-date, not "toString"`,
    ],
    [withCondition({ type: 'device', value: 'tv' }), `${AT}.value: must be one of android, ios, mobile, desktop, windows, macos, linux, chromeos, not "tv"`],
    [
      withCondition({ type: 'device', value: 'constructor' }),
      `${AT}.value: must be one of android, ios, mobile, desktop, windows, macos, linux, chromeos, not "constructor"`,
    ],
    [withCondition({ type: 'device', key: 'os', value: 'ios' }), `${AT}.key: device takes no key (null), not "os"`],
    [
      withCondition({ type: 'browser', value: 'Brave' }),
      `${AT}.value: must be one of Chrome, Safari, Firefox, Edge, Opera, Samsung Internet, Other, not "Brave"`,
    ],
    [withCondition({ type: 'browser', value: 3 }), `${AT}.value: must be one of Chrome, Safari, Firefox, Edge, Opera, Samsung Internet, Other, not 3`],
    [withCondition({ type: 'language', value: 'french' }), `${AT}.value: must be a language tag such as fr or fr-CA, not "french"`],
    [withCondition({ type: 'language', value: 'fr-CA-x' }), `${AT}.value: must be a language tag such as fr or fr-CA, not "fr-CA-x"`],
    [withCondition({ type: 'language', value: '*' }), `${AT}.value: must be a language tag such as fr or fr-CA, not "*"`],
    [withCondition({ type: 'language' }), `${AT}.value: must be a language tag such as fr or fr-CA (none was given)`],
    [withCondition({ type: 'country', value: 'FRA' }), `${AT}.value: must be a two-letter country code such as FR, not "FRA"`],
    [withCondition({ type: 'query-param', value: 'x' }), `${AT}.key: query-param needs the name of a query parameter (none was given)`],
    [withCondition({ type: 'query-param', key: '', value: 'x' }), `${AT}.key: query-param needs the name of a query parameter, not ""`],
    [withCondition({ type: 'query-param', key: 'k', value: 5 }), `${AT}.value: must be the text the parameter must have (a string, empty for none), not 5`],
    [withCondition({ type: 'query-param', key: 'k', value: 'a'.repeat(513) }), `${AT}.value: must be at most 512 characters long, not 513`],
    [withCondition({ type: 'query-param', key: 'k'.repeat(513), value: 'a' }), `${AT}.key: must be at most 512 characters long, not 513`],
    [withCondition({ type: 'query-param', key: 'k', value: 'a\0' }), `${AT}.value: the value must not contain a NUL character`],
    [withCondition({ type: 'query-param', key: '\uD800', value: 'a' }), `${AT}.key: the key must not contain a lone UTF-16 surrogate (it is not Unicode text)`],
    [withCondition({ type: 'any-value-query-param', value: null }), `${AT}.key: any-value-query-param needs the name of a query parameter (none was given)`],
    [
      withCondition({ type: 'any-value-query-param', key: 'utm', value: 'x' }),
      `${AT}.value: must be empty ("" or null): this condition holds whatever the parameter's value; query-param matches one value`,
    ],
    [withCondition({ type: 'ip-address', value: '10.0.0.1/8' }), `${AT}.value: 10.0.0.1/8 has bits set past its prefix: the block is 10.0.0.0/8`],
    [withCondition({ type: 'ip-address', value: '2001:db8::1/32' }), `${AT}.value: 2001:db8::1/32 has bits set past its prefix: the block is 2001:db8::/32`],
    [withCondition({ type: 'ip-address', value: '::ffff:10.0.0.0/80' }), `${AT}.value: ::ffff:10.0.0.0/80 has bits set past its prefix: the block is ::/80`],
    [
      withCondition({ type: 'ip-address', value: 'example.com' }),
      `${AT}.value: must be an IPv4 or IPv6 address, or a CIDR block such as 10.0.0.0/8 or 2001:db8::/32, not "example.com"`,
    ],
    [
      withCondition({ type: 'before-date', value: '-1' }),
      `${AT}.value: must be an instant in Unix seconds (an integer from 0 to 253402300799) such as "1790000000", not "-1"`,
    ],
    [
      withCondition({ type: 'after-date', value: 1.5 }),
      `${AT}.value: must be an instant in Unix seconds (an integer from 0 to 253402300799) such as "1790000000", not 1.5`,
    ],
    [
      withCondition({ type: 'after-date', value: 253402300800 }),
      `${AT}.value: must be an instant in Unix seconds (an integer from 0 to 253402300799) such as "1790000000", not 253402300800`,
    ],
    [
      withCondition({ type: 'before-date', value: '2026-01-01' }),
      `${AT}.value: must be an instant in Unix seconds (an integer from 0 to 253402300799) such as "1790000000", not "2026-01-01"`,
    ],
  ];
  for (const [input, detail] of cases) {
    const parsed = parseRules(input, urls);
    assert.ok(parsed instanceof Refusal, `${JSON.stringify(input).slice(0, 80)} is refused`);
    assert.equal(parsed.detail, detail);
  }
});

test('an address that is no address, or a block that is no block, is refused: strict IPv4 and IPv6', () => {
  const bad = ['256.0.0.1', '1.2.3', '1.2.3.4.5', '010.0.0.1', '1.2.3.4/33', '1.2.3.4/08', '1.2.3.4/', '/8', '1.2.3.4/-1', ' 1.2.3.4', '1.2.3.4 '];
  bad.push('::1/129', '1:::2', '12345::', 'fe80::1%eth0', '[::1]', '::1.2.3', '1:2:3:4:5:6:7:8:9', '1.2.3.4::', ':1::', '::g', '', '*');
  for (const value of bad) {
    const parsed = parseRules(withCondition({ type: 'ip-address', value }), urls);
    assert.ok(parsed instanceof Refusal, `${JSON.stringify(value)} is refused`);
    assert.match(parsed.detail, /^rules\[0\]\.conditions\[0\]\.value: must be an IPv4 or IPv6 address, or a CIDR block/);
  }
});

test('device: the OS names match the OS, mobile holds for phones and tablets, desktop for desktops', () => {
  const cases: [string, Seen, boolean][] = [
    ['android', { os: 'Android', device: 'mobile' }, true],
    ['android', { os: 'Linux', device: 'desktop' }, false],
    ['ios', { os: 'iOS', device: 'tablet' }, true],
    ['ios', { os: 'macOS', device: 'desktop' }, false],
    ['windows', { os: 'Windows' }, true],
    ['macos', { os: 'macOS' }, true],
    ['linux', { os: 'Linux' }, true],
    ['linux', { os: 'Android' }, false],
    ['chromeos', { os: 'ChromeOS' }, true],
    ['mobile', { device: 'mobile' }, true],
    ['mobile', { device: 'tablet' }, true],
    ['mobile', { device: 'desktop' }, false],
    ['mobile', { device: 'other' }, false],
    ['desktop', { device: 'desktop' }, true],
    ['desktop', { device: 'tablet' }, false],
    ['desktop', {}, false],
    ['windows', {}, false],
  ];
  for (const [value, seen, expected] of cases) assert.equal(holds('device', value, seen), expected, `${value} for ${JSON.stringify(seen)}`);
});

test('browser and country compare the visitor family and code; unknown ones never match', () => {
  assert.equal(holds('browser', 'chrome', { browser: 'Chrome' }), true);
  assert.equal(holds('browser', 'Samsung Internet', { browser: 'Samsung Internet' }), true);
  assert.equal(holds('browser', 'Chrome', { browser: 'Edge' }), false);
  assert.equal(holds('browser', 'Other', {}), false);
  assert.equal(holds('country', 'de', { country: 'DE' }), true);
  assert.equal(holds('country', 'DE', { country: 'AT' }), false);
  assert.equal(holds('country', 'DE', { country: null }), false);
});

test('language: q-values count, q=0 excludes, a primary tag matches its regions, a region only itself', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['fr', 'fr', true],
    ['fr', 'fr-CA', true],
    ['fr', 'en-US,en;q=0.9,fr-FR;q=0.8', true],
    ['fr', 'fr;q=0, en', false],
    ['fr', 'fr;q=0.0, en', false],
    ['fr', 'fr;q=0.000', false],
    ['fr', 'fr;q=0.001', true],
    ['fr', 'fr;q=1.0', true],
    ['fr', 'fr;q=2', false],
    ['fr', 'fr;q=0.5x', false],
    ['fr', 'FR-ca', true],
    ['fr', 'fro', false],
    ['fr', 'fr_CA', false],
    ['fr', '*', false],
    ['fr', '*;q=1', false],
    ['fr', '', false],
    ['fr', undefined, false],
    ['fr-CA', 'fr-CA', true],
    ['fr-CA', 'fr-ca;q=0.5', true],
    ['fr-CA', 'fr', false],
    ['fr-CA', 'fr-FR', false],
    ['fr-CA', 'fr-CA;q=0', false],
    ['zh-TW', 'zh-Hant-TW', true],
    ['zh', 'zh-Hant', true],
    ['es-419', 'es-419,es;q=0.8', true],
    ['en', ' de , en ; q=0.3 ', true],
    ['de', ' de , en ; q=0.3 ', true],
  ];
  for (const [rule, header, expected] of cases) {
    const seen: Seen = header === undefined ? {} : { language: header };
    assert.equal(holds('language', rule, seen), expected, `${rule} for ${JSON.stringify(header)}`);
  }
});

test('an Accept-Language is read into the languages it accepts, and remembered', () => {
  assert.deepEqual(acceptedLanguages('en-US,en;q=0.9,fr;q=0,*;q=0.1,de-de;q=0.5'), ['en-US', 'en', 'de-DE']);
  assert.deepEqual(acceptedLanguages(undefined), []);
  const header = 'pt-BR,pt;q=0.9';
  assert.equal(acceptedLanguages(header), acceptedLanguages(header), 'the same header answers the same list');
  const long = `it, ${'de;q=0, '.repeat(40)}`;
  assert.ok(long.length > 256);
  assert.deepEqual(acceptedLanguages(long), ['it'], 'a long header is read too (and not remembered)');
  assert.deepEqual(acceptedLanguages(`${'nl;q=0.5,'.repeat(40)}it`).length, 32, 'at most 32 tags are read');
});

test('query-param holds for any occurrence with the value; an empty value for a parameter without one', () => {
  const cases: [string, string, string, boolean][] = [
    ['utm', 'a', 'utm=a', true],
    ['utm', 'a', 'x=1&utm=b&utm=a', true],
    ['utm', 'a', 'utm=A', false],
    ['utm', 'a', 'utm=a%20', false],
    ['utm', 'a b', 'utm=a+b', true],
    ['utm', 'a', '', false],
    ['ref', '', 'ref', true],
    ['ref', '', 'ref=', true],
    ['ref', '', 'ref=x', false],
    ['ref', '', 'referrer=', false],
  ];
  for (const [key, value, query, expected] of cases) assert.equal(holds('query-param', value, { query }, key), expected, `${key}=${value} in ${query}`);
  assert.equal(holds('any-value-query-param', null, { query: 'utm=1' }, 'utm'), true);
  assert.equal(holds('any-value-query-param', null, { query: 'utm' }, 'utm'), true);
  assert.equal(holds('any-value-query-param', null, { query: 'UTM=1' }, 'utm'), false);
});

test('ip-address: addresses and blocks of both families, IPv4-mapped visitors as IPv4', () => {
  const cases: [string, string | null, boolean][] = [
    ['10.0.0.1', '10.0.0.1', true],
    ['10.0.0.1', '10.0.0.2', false],
    ['10.0.0.0/8', '10.255.3.4', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['10.0.0.0/8', '::ffff:10.0.0.1', true],
    ['10.0.0.0/8', '::FFFF:a00:1', true],
    ['10.0.0.1', '::ffff:10.0.0.1', true],
    ['::ffff:10.0.0.1', '10.0.0.1', true],
    ['0.0.0.0/0', '203.0.113.9', true],
    ['0.0.0.0/0', '2001:db8::1', false],
    ['192.168.1.128/25', '192.168.1.127', false],
    ['192.168.1.128/25', '192.168.1.200', true],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['2001:db8::/32', '2001:db9::1', false],
    ['2001:db8::/32', '2001:DB8:0:0::5', true],
    ['2001:db8::1', '2001:db8:0:0:0:0:0:1', true],
    ['2001:db8::/33', '2001:db8:8000::', false],
    ['2001:db8::/33', '2001:db8:7fff::', true],
    ['::/0', '10.0.0.1', false],
    ['::/0', '::ffff:10.0.0.1', false],
    ['::/0', '::1', true],
    ['fe80::/10', 'fe80::1%eth0', true],
    ['10.0.0.1', null, false],
    ['10.0.0.1', 'unknown', false],
    ['10.0.0.1', '10.0.0.1:8080', false],
  ];
  for (const [rule, address, expected] of cases) assert.equal(holds('ip-address', rule, { address }), expected, `${rule} for ${address}`);
});

test('dates: before-date holds while now < value, after-date once now > value, neither at the second itself', () => {
  const t = 1_790_000_000;
  const cases: [string, number, boolean][] = [
    ['before-date', t - 1, true],
    ['before-date', t - 0.5, true],
    ['before-date', t, false],
    ['before-date', t + 1, false],
    ['after-date', t - 1, false],
    ['after-date', t, false],
    ['after-date', t + 0.5, true],
    ['after-date', t + 1, true],
  ];
  for (const [type, now, expected] of cases) assert.equal(holds(type, String(t), { now }), expected, `${type} ${t} at ${now}`);
});

const list = (rules: { url: string; conditions: object[] }[]): RedirectRule[] => {
  const parsed = parseRules(rules, urls);
  assert.ok(!(parsed instanceof Refusal), parsed instanceof Refusal ? parsed.detail : '');
  return parsed;
};

test('the first rule whose conditions all hold wins; none gives null', () => {
  const rules = list([
    {
      url: 'https://example.com/ios-fr',
      conditions: [
        { type: 'device', value: 'ios' },
        { type: 'country', value: 'FR' },
      ],
    },
    { url: 'https://example.com/ios', conditions: [{ type: 'device', value: 'ios' }] },
    { url: 'https://example.com/fr', conditions: [{ type: 'country', value: 'FR' }] },
    { url: 'https://example.com/ios-again', conditions: [{ type: 'device', value: 'ios' }] },
  ]);
  assert.equal(firstMatch(rules, visitor({ os: 'iOS', country: 'FR' })), 0);
  assert.equal(firstMatch(rules, visitor({ os: 'iOS', country: 'DE' })), 1, 'one of two conditions is not enough');
  assert.equal(firstMatch(rules, visitor({ os: 'Android', country: 'FR' })), 2);
  assert.equal(firstMatch(rules, visitor({ os: 'Android', country: 'DE' })), null);
  assert.equal(firstMatch([], visitor()), null);
  const compiled = compileRules(rules);
  assert.equal(firstMatch(compiled, visitor({ os: 'iOS', country: 'DE' })), 1, 'a compiled list answers the same');
  assert.equal(firstMatch(compiled, visitor({ os: 'Android', country: 'DE' })), null);
});

test('facts are asked only when a condition reads them, each at most once per match', () => {
  const throwing = (name: keyof RuleVisitor): RuleVisitor => ({
    ...visitor({ query: 'utm=a' }),
    [name]: () => {
      throw new Error(`${name} was asked`);
    },
  });
  const queryOnly = list([
    { url: 'https://example.com/a', conditions: [{ type: 'query-param', key: 'utm', value: 'b' }] },
    { url: 'https://example.com/b', conditions: [{ type: 'any-value-query-param', key: 'utm' }] },
  ]);
  for (const name of ['os', 'device', 'browser', 'acceptLanguage', 'country', 'address', 'now'] as const) {
    assert.equal(firstMatch(queryOnly, throwing(name)), 1, `${name} is never asked`);
  }
  assert.throws(() => firstMatch(queryOnly, throwing('query')), /query was asked/, 'the throwing visitor does throw when asked');

  const many = list([
    {
      url: 'https://example.com/1',
      conditions: [
        { type: 'device', value: 'ios' },
        { type: 'country', value: 'FR' },
      ],
    },
    {
      url: 'https://example.com/2',
      conditions: [
        { type: 'device', value: 'mobile' },
        { type: 'device', value: 'android' },
      ],
    },
    {
      url: 'https://example.com/3',
      conditions: [
        { type: 'device', value: 'android' },
        { type: 'language', value: 'fr' },
      ],
    },
    {
      url: 'https://example.com/4',
      conditions: [
        { type: 'language', value: 'de' },
        { type: 'after-date', value: '0' },
      ],
    },
  ]);
  const v = visitor({ os: 'Android', device: 'tablet', language: 'de' });
  assert.equal(firstMatch(many, v), 1);
  assert.deepEqual(v.asked, ['os', 'device'], 'the first rule stops at its first condition; the second reads each fact once');
  const w = visitor({ os: 'Windows', device: 'desktop', language: 'de' });
  assert.equal(firstMatch(many, w), 3);
  assert.deepEqual(w.asked, ['os', 'device', 'acceptLanguage', 'now']);
  const again = visitor({ os: 'Windows', device: 'desktop', language: 'de' });
  assert.equal(firstMatch(many, again), 3);
  assert.deepEqual(again.asked, w.asked, 'a second visitor is asked afresh, not answered from the first');
});
