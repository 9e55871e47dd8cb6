/**
 * Redirect rules in Shlink's shapes (docs/compat.md): our rules as Shlink 5.1's `GET
 * /rest/v3/short-urls/{shortCode}/redirect-rules` answers them, the body of its `POST` as our
 * rules, each condition type both ways, lists that go round unchanged, and every refusal in
 * Shlink's names. The SDK's types hold the shapes to what Shlink's clients read and send.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRules, type RedirectRule } from '../../src/links/redirect-rules.ts';
import { checkUrl, Refusal } from '../../src/links/validate.ts';
import { fromShlinkRules, type ShlinkConditionType, type ShlinkRulesList, toShlinkRules } from '../../src/peers/shlink/redirect-rules.ts';
import type { ShlinkRedirectConditionType, ShlinkRedirectRulesList, ShlinkSetRedirectRulesData } from '../support/shlink-sdk.ts';

const urls = (url: unknown) => checkUrl(url, { maxLength: 2000, baseUrl: 'https://s.example/' });

/** Our condition types' names, exactly the SDK's: a type error here when either side gains one. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_TYPES: Same<ShlinkConditionType, ShlinkRedirectConditionType> = true;

/** Our stored rules, through `parseRules`. */
function ours(input: unknown): RedirectRule[] {
  const parsed = parseRules(input, urls);
  assert.ok(!(parsed instanceof Refusal), parsed instanceof Refusal ? parsed.detail : '');
  return parsed;
}

/** Shlink's body read as our rules (not refused). */
function read(body: ShlinkSetRedirectRulesData | Record<string, unknown>): RedirectRule[] {
  const parsed = fromShlinkRules(body, urls);
  assert.ok(!(parsed instanceof Refusal), parsed instanceof Refusal ? parsed.detail : '');
  return parsed;
}

const c = (type: string, matchValue: string | null, matchKey: string | null = null) => ({ type, matchKey, matchValue });
const oneRule = (...conditions: unknown[]) => ({ redirectRules: [{ longUrl: 'https://example.com/x', conditions }] });

/** Each condition type: ours as stored, and Shlink's as `GET` writes it (which `POST` reads back). */
const BOTH_WAYS: [object, ReturnType<typeof c>][] = [
  [{ type: 'device', value: 'android' }, c('device', 'android')],
  [{ type: 'device', value: 'mobile' }, c('device', 'mobile')],
  [{ type: 'browser', value: 'Chrome' }, c('browser', 'chrome')],
  [{ type: 'browser', value: 'Firefox' }, c('browser', 'firefox')],
  [{ type: 'browser', value: 'Edge' }, c('browser', 'edge')],
  [{ type: 'browser', value: 'Safari' }, c('browser', 'safari')],
  [{ type: 'browser', value: 'Opera' }, c('browser', 'opera')],
  [{ type: 'browser', value: 'Samsung Internet' }, c('browser', 'samsung_internet')],
  [{ type: 'browser', value: 'Other' }, c('browser', 'other')],
  [{ type: 'language', value: 'fr-CA' }, c('language', 'fr-CA')],
  [{ type: 'language', value: 'en' }, c('language', 'en')],
  [{ type: 'country', value: 'US' }, c('geolocation-country-code', 'US')],
  [{ type: 'query-param', key: 'utm', value: 'spring' }, c('query-param', 'spring', 'utm')],
  [{ type: 'query-param', key: 'ref', value: '' }, c('valueless-query-param', null, 'ref')],
  [{ type: 'any-value-query-param', key: 'foo' }, c('any-value-query-param', null, 'foo')],
  [{ type: 'ip-address', value: '1.2.3.4' }, c('ip-address', '1.2.3.4')],
  [{ type: 'ip-address', value: '192.168.10.0/24' }, c('ip-address', '192.168.10.0/24')],
  [{ type: 'ip-address', value: '2001:db8::/32' }, c('ip-address', '2001:db8::/32')],
  [{ type: 'before-date', value: '1777629600' }, c('before-date', '2026-05-01T10:00:00+00:00')],
  [{ type: 'after-date', value: '0' }, c('after-date', '1970-01-01T00:00:00+00:00')],
  [{ type: 'after-date', value: '253402300799' }, c('after-date', '9999-12-31T23:59:59+00:00')],
];

test("every condition type is written in Shlink's names and read back from them", () => {
  assert.equal(SAME_TYPES, true);
  for (const [condition, shlink] of BOTH_WAYS) {
    const rules = ours([{ url: 'https://example.com/x', conditions: [condition] }]);
    const written = toShlinkRules(rules, 'https://example.com/');
    assert.deepEqual(written.redirectRules[0]!.conditions, [shlink], JSON.stringify(condition));
    assert.deepEqual(read(oneRule(shlink)), rules, `${JSON.stringify(shlink)} is read back`);
  }
});

test("GET's shape: the default long URL, and each rule's priority from 1 in the list's order", () => {
  const rules = ours([
    {
      url: 'https://example.com/en',
      conditions: [
        { type: 'language', value: 'en' },
        { type: 'any-value-query-param', key: 'foo' },
      ],
    },
    { url: 'https://example.com/q', conditions: [{ type: 'query-param', key: 'hello', value: 'world' }] },
  ]);
  const expected = {
    defaultLongUrl: 'https://example.com/default',
    redirectRules: [
      { longUrl: 'https://example.com/en', priority: 1, conditions: [c('language', 'en'), c('any-value-query-param', null, 'foo')] },
      { longUrl: 'https://example.com/q', priority: 2, conditions: [c('query-param', 'world', 'hello')] },
    ],
  };
  const written: ShlinkRedirectRulesList = toShlinkRules(rules, 'https://example.com/default');
  assert.deepEqual(written, expected);
  const none: ShlinkRulesList = toShlinkRules([], 'https://example.com/default');
  assert.deepEqual(none, { defaultLongUrl: 'https://example.com/default', redirectRules: [] });
});

test("POST's body as Shlink's clients send it: other spellings Shlink takes, priority and matchKey of keyless types ignored", () => {
  const body: ShlinkSetRedirectRulesData = {
    redirectRules: [
      {
        longUrl: 'HTTPS://Example.com/b',
        conditions: [
          { type: 'device', matchKey: 'ignored', matchValue: 'ios' },
          { type: 'language', matchKey: null, matchValue: 'fr_ca' },
          { type: 'geolocation-country-code', matchKey: null, matchValue: 'us' },
          { type: 'browser', matchKey: null, matchValue: 'Chrome' },
          { type: 'ip-address', matchKey: null, matchValue: '1.2.*.*' },
          { type: 'before-date', matchKey: null, matchValue: '2026-05-01T10:00:00+02:00' },
          { type: 'after-date', matchKey: null, matchValue: '2026-05-01' },
        ],
      },
      { longUrl: 'https://example.com/a', conditions: [{ type: 'ip-address', matchKey: null, matchValue: '*.*.*.*' }] },
      { longUrl: 'https://example.com/c', conditions: [{ type: 'ip-address', matchKey: null, matchValue: '10.1.2.*' }] },
    ],
  };
  (body.redirectRules[0] as unknown as Record<string, unknown>)['priority'] = 9;
  assert.deepEqual(read(body), [
    {
      url: 'https://example.com/b',
      conditions: [
        { type: 'device', key: null, value: 'ios' },
        { type: 'language', key: null, value: 'fr-CA' },
        { type: 'country', key: null, value: 'US' },
        { type: 'browser', key: null, value: 'Chrome' },
        { type: 'ip-address', key: null, value: '1.2.0.0/16' },
        { type: 'before-date', key: null, value: '1777622400' },
        { type: 'after-date', key: null, value: '1777593600' },
      ],
    },
    { url: 'https://example.com/a', conditions: [{ type: 'ip-address', key: null, value: '0.0.0.0/0' }] },
    { url: 'https://example.com/c', conditions: [{ type: 'ip-address', key: null, value: '10.1.2.0/24' }] },
  ]);
  assert.deepEqual(read({ redirectRules: [] }), [], 'an empty list clears the rules');
});

test('a list goes round unchanged: ours → Shlink → ours, and Shlink → ours → Shlink', () => {
  const rules = ours(
    BOTH_WAYS.reduce<{ url: string; conditions: object[] }[]>((list, [condition], i) => {
      if (i % 3 === 0) list.push({ url: `https://example.com/${i}`, conditions: [] });
      list.at(-1)!.conditions.push(condition);
      return list;
    }, []),
  );
  assert.equal(rules.length, 7);
  const written = toShlinkRules(rules, 'https://example.com/');
  assert.deepEqual(read(written), rules, 'what GET answers, POSTed back, is the same list');
  assert.deepEqual(toShlinkRules(read(written), 'https://example.com/'), written);
});

test("refusals name Shlink's fields", () => {
  const cases: [unknown, string][] = [
    [null, 'redirectRules: must be an array of rules, each with longUrl and conditions'],
    [{}, 'redirectRules: must be an array of rules, each with longUrl and conditions'],
    [{ redirectRules: 'x' }, 'redirectRules: must be an array of rules, each with longUrl and conditions'],
    [{ redirectRules: ['foo'] }, 'redirectRules[0]: must be an object with longUrl and conditions'],
    [{ redirectRules: [{ longUrl: 'https://example.com/', conditions: 'foo' }] }, 'redirectRules[0].conditions: must be an array of conditions'],
    [oneRule(), 'redirectRules[0].conditions: must be an array of 1 to 10 conditions, not 0'],
    [{ redirectRules: new Array(11).fill(oneRule(c('device', 'ios')).redirectRules[0]) }, 'redirectRules: a link may have at most 10 rules, not 11'],
    [
      { redirectRules: [{ longUrl: 'invalid', conditions: [c('device', 'ios')] }] },
      'redirectRules[0].longUrl: url must be an absolute URL such as https://example.com/page',
    ],
    [oneRule('x'), 'redirectRules[0].conditions[0]: must be an object with type, matchKey and matchValue'],
    [
      oneRule(c('invalid', 'foo')),
      'redirectRules[0].conditions[0].type: must be one of device, browser, language, geolocation-country-code, geolocation-city-name, query-param, valueless-query-param, any-value-query-param, ip-address, before-date, after-date, not "invalid"',
    ],
    [
      oneRule(c('device', 'ios'), c('geolocation-city-name', 'Paris')),
      'redirectRules[0].conditions[1].type: geolocation-city-name is not supported: visits are located to their country, never a city',
    ],
    [
      oneRule(c('device', 'invalid-device')),
      'redirectRules[0].conditions[0].matchValue: must be one of android, ios, mobile, desktop, windows, macos, linux, chromeos, not "invalid-device"',
    ],
    [
      oneRule(c('browser', 'android_browser')),
      'redirectRules[0].conditions[0].matchValue: android_browser is not a browser family of this service (its visits count as another family)',
    ],
    [
      oneRule(c('browser', 'brave')),
      'redirectRules[0].conditions[0].matchValue: must be one of chrome, firefox, edge, safari, opera, samsung_internet, other, not "brave"',
    ],
    [
      oneRule(c('ip-address', 'not an IP address')),
      'redirectRules[0].conditions[0].matchValue: must be an IPv4 or IPv6 address, or a CIDR block such as 10.0.0.0/8 or 2001:db8::/32, not "not an IP address"',
    ],
    [
      oneRule(c('ip-address', '1.2.*.4')),
      'redirectRules[0].conditions[0].matchValue: a wildcard must stand for the last parts of an IPv4 address (1.2.*.*, the block 1.2.0.0/16), not "1.2.*.4"',
    ],
    [
      oneRule(c('geolocation-country-code', 'not a country code')),
      'redirectRules[0].conditions[0].matchValue: must be a two-letter country code such as FR, not "not a country code"',
    ],
    [oneRule(c('language', 'english')), 'redirectRules[0].conditions[0].matchValue: must be a language tag such as fr or fr-CA, not "english"'],
    [oneRule(c('query-param', 'world')), 'redirectRules[0].conditions[0].matchKey: query-param needs the name of a query parameter, not null'],
    [
      oneRule(c('any-value-query-param', 'foo')),
      'redirectRules[0].conditions[0].matchKey: any-value-query-param needs the name of a query parameter, not null',
    ],
    [
      oneRule(c('before-date', '1790000000')),
      'redirectRules[0].conditions[0].matchValue: must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00, not "1790000000"',
    ],
    [
      oneRule(c('after-date', '2026-02-30')),
      'redirectRules[0].conditions[0].matchValue: must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00, not "2026-02-30"',
    ],
    [
      oneRule(c('after-date', '1969-12-31T23:59:59Z')),
      'redirectRules[0].conditions[0].matchValue: must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00, not "1969-12-31T23:59:59Z"',
    ],
    [
      oneRule(c('before-date', null)),
      'redirectRules[0].conditions[0].matchValue: must be an ISO 8601 date or time from 1970 to 9999, such as 2026-05-01T10:00:00+02:00, not null',
    ],
  ];
  for (const [body, detail] of cases) {
    const parsed = fromShlinkRules(body, urls);
    assert.ok(parsed instanceof Refusal, `${JSON.stringify(body)?.slice(0, 80)} is refused`);
    assert.equal(parsed.detail, detail);
  }
});
