/**
 * Where a link sends each visitor, through Shlink's surface (docs/compat.md), driven by Shlink's
 * official JS SDK: redirect rules set and read in Shlink's shapes, the same rules in the REST API's
 * shape, the redirect obeying them; `validSince` and `validUntil` as the record's `valid_since` and
 * `valid_until` (Unix seconds there, ISO 8601 in Shlink's shape), with the retention a link may
 * also have; `forwardQuery` as `forward_query`; and a refused rule as Shlink's `invalid-data`. The
 * server's clock is the test's, so instants are exact.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { ADMIN as KEY, ONE, makeKey } from '../support/keys.ts';
import {
  ErrorType,
  problemOf,
  shlinkClient,
  type ShlinkClient,
  type ShlinkRedirectRulesList,
  type ShlinkSetRedirectRulesData,
  type ShlinkShortUrlIdentifier,
} from '../support/shlink-sdk.ts';

const HOUR = 3600;
const DAY = 86400;
const T0 = Date.UTC(2026, 4, 1, 9, 30) / 1000;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const ANDROID_CHROME = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
const WINDOWS_FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** The SDK's client with the redirect-rule setter, which the shared typing leaves out. */
type RulesClient = ShlinkClient & {
  setShortUrlRedirectRules(id: ShlinkShortUrlIdentifier, data: ShlinkSetRedirectRulesData): Promise<ShlinkRedirectRulesList>;
};

interface Served {
  h: Harness;
  sdk: RulesClient;
  clock: { s: number };
}

/** A server speaking Shlink, with a clock the test moves, and the SDK pointed at it. */
async function serve(t: TestContext, extra: Record<string, unknown> = {}): Promise<Served> {
  const clock = { s: T0 };
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], now: () => clock.s * 1000, logLevel: 'warn', ...extra });
  return { h, sdk: shlinkClient(h.shortener.config.baseUrl, KEY) as RulesClient, clock };
}

const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', '+00:00');

/** The REST API's answer to `GET path` with the admin key, parsed. */
async function rest<T>(h: Harness, path: string): Promise<T> {
  const r = await h.req(path, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as T;
}

interface RecordPart {
  rules: unknown[];
  forward_query: boolean;
  valid_since: number | null;
  valid_until: number | null;
  retention_days: number;
  expires_at: number | null;
}

/** The routing fields of the REST record of `code`, and its retention. */
async function recordOf(h: Harness, code: string): Promise<RecordPart> {
  const r = await rest<RecordPart>(h, `/api/urls/${code}`);
  return {
    rules: r.rules,
    forward_query: r.forward_query,
    valid_since: r.valid_since,
    valid_until: r.valid_until,
    retention_days: r.retention_days,
    expires_at: r.expires_at,
  };
}

/** Where a visit of `path` with `headers` goes: the status and the `Location`. */
async function visit(h: Harness, path: string, headers: Record<string, string> = {}): Promise<[number, string | undefined]> {
  const r = await h.req(path, { headers });
  return [r.status, r.headers.location];
}

const cond = (type: string, matchValue: string | null, matchKey: string | null = null) =>
  ({ type, matchKey, matchValue }) as ShlinkSetRedirectRulesData['redirectRules'][number]['conditions'][number];

/** Rules in Shlink's spellings, some of them its loose ones (`fr_CA`, a wildcard, a priority that is ignored). */
const SENT: ShlinkSetRedirectRulesData['redirectRules'] = [
  { longUrl: 'https://example.com/ios-fr', conditions: [cond('device', 'ios'), cond('language', 'fr_CA')] },
  { longUrl: 'https://example.com/campaign', conditions: [cond('query-param', 'spring', 'utm'), cond('valueless-query-param', null, 'ref')] },
  { longUrl: 'https://example.com/android', conditions: [cond('device', 'android'), cond('browser', 'chrome')] },
  { longUrl: 'https://example.com/later', conditions: [cond('after-date', iso(T0 + DAY))] },
  { longUrl: 'https://example.com/office', conditions: [cond('ip-address', '203.0.113.*'), cond('geolocation-country-code', 'fr')] },
];

/** The same rules as Shlink's GET writes them back: in order from 1, in its canonical spellings. */
const READ_BACK: ShlinkRedirectRulesList['redirectRules'] = [
  { longUrl: 'https://example.com/ios-fr', priority: 1, conditions: [cond('device', 'ios'), cond('language', 'fr-CA')] },
  { longUrl: 'https://example.com/campaign', priority: 2, conditions: [cond('query-param', 'spring', 'utm'), cond('valueless-query-param', null, 'ref')] },
  { longUrl: 'https://example.com/android', priority: 3, conditions: [cond('device', 'android'), cond('browser', 'chrome')] },
  { longUrl: 'https://example.com/later', priority: 4, conditions: [cond('after-date', iso(T0 + DAY))] },
  { longUrl: 'https://example.com/office', priority: 5, conditions: [cond('ip-address', '203.0.113.0/24'), cond('geolocation-country-code', 'FR')] },
];

/** The same rules in the REST API's shape (docs/api.md). */
const AS_STORED = [
  {
    url: 'https://example.com/ios-fr',
    conditions: [
      { type: 'device', key: null, value: 'ios' },
      { type: 'language', key: null, value: 'fr-CA' },
    ],
  },
  {
    url: 'https://example.com/campaign',
    conditions: [
      { type: 'query-param', key: 'utm', value: 'spring' },
      { type: 'query-param', key: 'ref', value: '' },
    ],
  },
  {
    url: 'https://example.com/android',
    conditions: [
      { type: 'device', key: null, value: 'android' },
      { type: 'browser', key: null, value: 'Chrome' },
    ],
  },
  { url: 'https://example.com/later', conditions: [{ type: 'after-date', key: null, value: String(T0 + DAY) }] },
  {
    url: 'https://example.com/office',
    conditions: [
      { type: 'ip-address', key: null, value: '203.0.113.0/24' },
      { type: 'country', key: null, value: 'FR' },
    ],
  },
];

test('rules set through the SDK come back the same through the SDK and through the REST API; [] removes them', async (t) => {
  const { h, sdk } = await serve(t);
  const id = { shortCode: 'ruled1' };
  await sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'ruled1' });
  const expected = { defaultLongUrl: 'https://example.com/page', redirectRules: READ_BACK };
  // A priority is Shlink's output: the order of the list is what counts, as in Shlink.
  const sent = SENT.map((rule, i) => ({ ...rule, priority: 10 - i }));
  assert.deepEqual(await sdk.setShortUrlRedirectRules(id, { redirectRules: sent }), expected);
  assert.deepEqual(await sdk.getShortUrlRedirectRules(id), expected);
  assert.deepEqual(await rest(h, '/api/urls/ruled1/rules'), { rules: AS_STORED });
  assert.deepEqual((await recordOf(h, 'ruled1')).rules, AS_STORED);
  assert.equal((await sdk.getShortUrl(id)).hasRedirectRules, true);
  // What the web client does: read the list, change it, write it all back.
  const reordered = [READ_BACK[2]!, READ_BACK[0]!];
  assert.deepEqual((await sdk.setShortUrlRedirectRules(id, { redirectRules: reordered })).redirectRules, [
    { ...READ_BACK[2]!, priority: 1 },
    { ...READ_BACK[0]!, priority: 2 },
  ]);
  assert.deepEqual((await rest<{ rules: unknown[] }>(h, '/api/urls/ruled1/rules')).rules, [AS_STORED[2], AS_STORED[0]]);
  assert.deepEqual(await sdk.setShortUrlRedirectRules(id, { redirectRules: [] }), { defaultLongUrl: 'https://example.com/page', redirectRules: [] });
  assert.deepEqual(await rest(h, '/api/urls/ruled1/rules'), { rules: [] });
  assert.equal((await sdk.getShortUrl(id)).hasRedirectRules, false);
});

test("rules set through the REST API read in Shlink's shape", async (t) => {
  const { h, sdk } = await serve(t);
  await sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'ruled2' });
  const put = await h.req('/api/urls/ruled2/rules', {
    method: 'PUT',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ rules: AS_STORED }),
  });
  assert.equal(put.status, 200, put.body);
  assert.deepEqual(await sdk.getShortUrlRedirectRules({ shortCode: 'ruled2' }), { defaultLongUrl: 'https://example.com/page', redirectRules: READ_BACK });
});

test("a visit goes to the first rule whose conditions all hold, else to the link's long URL", async (t) => {
  const { h, sdk, clock } = await serve(t);
  await sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'routed' });
  await sdk.setShortUrlRedirectRules({ shortCode: 'routed' }, { redirectRules: SENT });
  const page = 'https://example.com/page';
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': IPHONE, 'accept-language': 'fr-CA,fr;q=0.8' }), [302, 'https://example.com/ios-fr']);
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': IPHONE, 'accept-language': 'en-US' }), [302, page]);
  assert.deepEqual(await visit(h, '/routed?utm=spring&ref', { 'user-agent': WINDOWS_FIREFOX }), [302, 'https://example.com/campaign']);
  assert.deepEqual(await visit(h, '/routed?utm=autumn&ref', { 'user-agent': WINDOWS_FIREFOX }), [302, page]);
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': ANDROID_CHROME }), [302, 'https://example.com/android']);
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': WINDOWS_FIREFOX }), [302, page]);
  // after-date holds once its instant has passed.
  clock.s = T0 + DAY + 1;
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': WINDOWS_FIREFOX }), [302, 'https://example.com/later']);
  // The earlier rule still wins for a visitor it fits.
  assert.deepEqual(await visit(h, '/routed', { 'user-agent': ANDROID_CHROME }), [302, 'https://example.com/android']);
  assert.equal((await sdk.getShortUrl({ shortCode: 'routed' })).visitsSummary.total, 8);
});

test("invalid rules are Shlink's invalid-data naming the field in Shlink's terms, and change nothing", async (t) => {
  const { h, sdk } = await serve(t, { maxUrlLength: 64 });
  const id = { shortCode: 'guarded' };
  await sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'guarded' });
  const kept = { longUrl: 'https://example.com/kept', conditions: [cond('device', 'desktop')] };
  await sdk.setShortUrlRedirectRules(id, { redirectRules: [kept] });
  const one = (...conditions: ReturnType<typeof cond>[]) => [{ longUrl: 'https://example.com/x', conditions }];
  const base = h.shortener.config.baseUrl;
  const cases: [unknown, string][] = [
    ['all', 'redirectRules: must be an array of rules, each with longUrl and conditions'],
    [one(cond('geolocation-city-name', 'Paris')), 'redirectRules[0].conditions[0].type: geolocation-city-name is not supported'],
    [one(cond('device', 'fridge')), 'redirectRules[0].conditions[0].matchValue: must be one of android, ios, mobile, desktop, windows, macos, linux, chromeos'],
    [one(cond('browser', 'android_browser')), 'redirectRules[0].conditions[0].matchValue: android_browser is not a browser family of this service'],
    [one(cond('ip-address', '1.*.3.4')), 'redirectRules[0].conditions[0].matchValue: a wildcard must stand for the last parts of an IPv4 address'],
    [one(cond('before-date', 'next week')), 'redirectRules[0].conditions[0].matchValue: must be an ISO 8601 date or time'],
    [one(cond('query-param', 'x', null)), 'redirectRules[0].conditions[0].matchKey: query-param needs the name of a query parameter'],
    [one(), 'redirectRules[0].conditions: must be an array of 1 to 10 conditions, not 0'],
    [[{ longUrl: 'ftp://example.com/x', conditions: [cond('device', 'ios')] }], 'redirectRules[0].longUrl: url must use http or https, not ftp'],
    [[{ longUrl: `${base}/guarded`, conditions: [cond('device', 'ios')] }], 'redirectRules[0].longUrl: url points at this shortener itself'],
    // Only the service knows its URL length limit: its refusal is said in Shlink's names too.
    [[{ longUrl: `https://example.com/${'x'.repeat(64)}`, conditions: [cond('device', 'ios')] }], 'redirectRules[0].longUrl: url is too long'],
    [Array.from({ length: 11 }, () => kept), 'redirectRules: a link may have at most 10 rules, not 11'],
  ];
  for (const [redirectRules, detail] of cases) {
    const p = await problemOf(sdk.setShortUrlRedirectRules(id, { redirectRules } as ShlinkSetRedirectRulesData));
    assert.deepEqual([p.type, p.title, p.status, p['invalidElements']], [ErrorType.INVALID_ARGUMENT, 'Invalid data', 400, ['redirectRules']], detail);
    assert.ok(p.detail.startsWith(detail), `${p.detail} starts with ${detail}`);
  }
  assert.deepEqual((await sdk.getShortUrlRedirectRules(id)).redirectRules, [{ ...kept, priority: 1 }]);
  assert.equal((await recordOf(h, 'guarded')).rules.length, 1);
  // An unknown code is its 404 whatever the body, as in Shlink.
  assert.equal(
    (await problemOf(sdk.setShortUrlRedirectRules({ shortCode: 'nothing-here' }, { redirectRules: 'x' } as never))).type,
    ErrorType.INVALID_SHORTCODE,
  );
  assert.equal((await problemOf(sdk.getShortUrlRedirectRules({ shortCode: 'nothing-here' }))).type, ErrorType.INVALID_SHORTCODE);
});

test('validSince and validUntil are valid_since and valid_until: Unix seconds in the record, ISO 8601 in Shlink; the redirect and the list obey them', async (t) => {
  const { h, sdk, clock } = await serve(t);
  const made = await sdk.createShortUrl({
    longUrl: 'https://example.com/window',
    customSlug: 'window',
    validSince: '2026-05-01T11:30:00+01:00',
    validUntil: iso(T0 + DAY),
  });
  assert.deepEqual(made.meta, { validSince: iso(T0 + HOUR), validUntil: iso(T0 + DAY), maxVisits: null });
  assert.deepEqual(await recordOf(h, 'window'), {
    rules: [],
    forward_query: false,
    valid_since: T0 + HOUR,
    valid_until: T0 + DAY,
    retention_days: 0,
    expires_at: null,
  });
  // Before validSince, an unknown code; within, the link; from validUntil on, expired.
  assert.equal((await visit(h, '/window'))[0], 404);
  clock.s = T0 + HOUR;
  assert.deepEqual(await visit(h, '/window'), [302, 'https://example.com/window']);
  clock.s = T0 + DAY;
  assert.equal((await visit(h, '/window'))[0], 410);
  // Past its validUntil the link is still listed, unless excludePastValidUntil asks otherwise.
  await sdk.createShortUrl({ longUrl: 'https://example.com/open', customSlug: 'open-1' });
  const codes = async (excludePastValidUntil: boolean): Promise<string[]> => (await sdk.listShortUrls({ excludePastValidUntil })).data.map((u) => u.shortCode);
  assert.deepEqual(await codes(false), ['open-1', 'window']);
  assert.deepEqual(await codes(true), ['open-1']);
  clock.s = T0 + DAY - 1;
  assert.deepEqual(await codes(true), ['open-1', 'window']);
  // An edit moves either; null removes it.
  const edited = await sdk.updateShortUrl({ shortCode: 'window' }, { validSince: null, validUntil: iso(T0 + 2 * DAY) });
  assert.deepEqual(edited.meta, { validSince: null, validUntil: iso(T0 + 2 * DAY), maxVisits: null });
  assert.deepEqual([(await recordOf(h, 'window')).valid_since, (await recordOf(h, 'window')).valid_until], [null, T0 + 2 * DAY]);
  const cleared = await sdk.updateShortUrl({ shortCode: 'window' }, { validUntil: null });
  assert.deepEqual(cleared.meta, { validSince: null, validUntil: null, maxVisits: null });
  assert.equal((await recordOf(h, 'window')).valid_until, null);
  // findIfExists compares the instants given.
  const dated = await sdk.createShortUrl({ longUrl: 'https://example.com/dated', validUntil: iso(T0 + 9 * DAY) });
  assert.equal(
    (await sdk.createShortUrl({ longUrl: 'https://example.com/dated', validUntil: iso(T0 + 9 * DAY), findIfExists: true })).shortCode,
    dated.shortCode,
  );
  assert.notEqual(
    (await sdk.createShortUrl({ longUrl: 'https://example.com/dated', validUntil: iso(T0 + 8 * DAY), findIfExists: true })).shortCode,
    dated.shortCode,
  );
});

test("a link's retention still shows as validUntil when it ends the link first; a validUntil set through Shlink is what reads back", async (t) => {
  const { h, sdk } = await serve(t);
  const shorten = async (code: string): Promise<void> => {
    const body = JSON.stringify({ url: 'https://example.com/kept', code, retention_days: 2 });
    const r = await h.req('/api/shorten', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body });
    assert.equal(r.status, 201, r.body);
  };
  const meta = async (code: string) => (await sdk.getShortUrl({ shortCode: code })).meta.validUntil;
  const ends = async (code: string) => {
    const r = await recordOf(h, code);
    return [r.valid_until, r.retention_days, r.expires_at];
  };
  await shorten('kept-1');
  assert.equal(await meta('kept-1'), iso(T0 + 2 * DAY));
  // Earlier than the retention's end: the link ends then; the retention stays, and ends it later in any case.
  await sdk.updateShortUrl({ shortCode: 'kept-1' }, { validUntil: iso(T0 + DAY) });
  assert.equal(await meta('kept-1'), iso(T0 + DAY));
  assert.deepEqual(await ends('kept-1'), [T0 + DAY, 2, T0 + 2 * DAY]);
  // Later: the retention would end the link first, so it goes, and the link lives to the validUntil asked for.
  await sdk.updateShortUrl({ shortCode: 'kept-1' }, { validUntil: iso(T0 + 5 * DAY) });
  assert.equal(await meta('kept-1'), iso(T0 + 5 * DAY));
  assert.deepEqual(await ends('kept-1'), [T0 + 5 * DAY, 0, null]);
  // null: no end at all, the retention's included.
  await shorten('kept-2');
  await sdk.updateShortUrl({ shortCode: 'kept-2' }, { validUntil: null });
  assert.equal(await meta('kept-2'), null);
  assert.deepEqual(await ends('kept-2'), [null, 0, null]);
  // An edit that leaves validUntil out leaves the retention too.
  await shorten('kept-3');
  await sdk.updateShortUrl({ shortCode: 'kept-3' }, { title: 'renamed' });
  assert.deepEqual(await ends('kept-3'), [null, 2, T0 + 2 * DAY]);
});

test("forwardQuery is forward_query: the short URL's query is added to the long URL's", async (t) => {
  const { h, sdk } = await serve(t);
  const made = await sdk.createShortUrl({ longUrl: 'https://example.com/page?x=1#top', customSlug: 'fwd-01', forwardQuery: true });
  assert.equal(made.forwardQuery, true);
  assert.equal((await recordOf(h, 'fwd-01')).forward_query, true);
  assert.deepEqual(await visit(h, '/fwd-01?utm=mail&a=%C3%A9'), [302, 'https://example.com/page?x=1&utm=mail&a=%C3%A9#top']);
  const off = await sdk.updateShortUrl({ shortCode: 'fwd-01' }, { forwardQuery: false });
  assert.equal(off.forwardQuery, false);
  assert.equal((await recordOf(h, 'fwd-01')).forward_query, false);
  assert.deepEqual(await visit(h, '/fwd-01?utm=mail'), [302, 'https://example.com/page?x=1#top']);
  assert.equal((await sdk.updateShortUrl({ shortCode: 'fwd-01' }, { forwardQuery: true })).forwardQuery, true);
  assert.equal((await sdk.getShortUrl({ shortCode: 'fwd-01' })).forwardQuery, true);
  // Absent, this service's default: no query forwarded (Shlink's own default is to forward; docs/compat.md).
  assert.equal((await sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'plain-1' })).forwardQuery, false);
  assert.equal((await recordOf(h, 'plain-1')).forward_query, false);
});

test("an editor's key sets the rules of the links it made; another's link is short-url-not-found; a viewer's is refused", ONE, async (t) => {
  const { h, sdk } = await serve(t);
  const editor = shlinkClient(h.shortener.config.baseUrl, (await makeKey(h, 'editor')).key) as RulesClient;
  const viewer = shlinkClient(h.shortener.config.baseUrl, (await makeKey(h, 'viewer')).key) as RulesClient;
  await editor.createShortUrl({ longUrl: 'https://example.com/mine', customSlug: 'mine-1' });
  await sdk.createShortUrl({ longUrl: 'https://example.com/theirs', customSlug: 'theirs-1' });
  const redirectRules = [{ longUrl: 'https://example.com/ios', conditions: [cond('device', 'ios')] }];
  assert.equal((await editor.setShortUrlRedirectRules({ shortCode: 'mine-1' }, { redirectRules })).redirectRules.length, 1);
  assert.equal((await problemOf(editor.setShortUrlRedirectRules({ shortCode: 'theirs-1' }, { redirectRules }))).type, ErrorType.INVALID_SHORTCODE);
  const refused = await problemOf(viewer.setShortUrlRedirectRules({ shortCode: 'theirs-1' }, { redirectRules }));
  assert.deepEqual([refused.status, refused.detail], [403, "this key's role (viewer) does not allow editing or deleting links"]);
  assert.deepEqual((await recordOf(h, 'theirs-1')).rules, []);
  // Reading them is a read: the viewer may.
  assert.deepEqual((await viewer.getShortUrlRedirectRules({ shortCode: 'mine-1' })).redirectRules.length, 1);
});
