/**
 * Shlink's REST API v3 (docs/compat.md), proven with Shlink's official JS SDK driving a running
 * server: one row per SDK method, each asserting the values that come back (a failing call: the
 * `type` of the problem it rejects with, as the SDK's own `ErrorType` names it). The server's clock
 * is the test's, so dates are exact; visits are seeded by real redirects with browser
 * `User-Agent`s, a `Referer` and a trusted proxy's country header.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { open, type Harness } from '../support/helpers.ts';
import { ErrorType, problemOf, shlinkClient, type ShlinkClient, type ShlinkShortUrl } from '../support/shlink-sdk.ts';

const KEY = 'k1';
const DAY = 86400;
const T0 = Date.UTC(2026, 4, 1, 9, 30) / 1000;
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0';
const CURL = 'curl/8.5.0';

/** A server speaking Shlink, with a clock the test moves, and the SDK pointed at it. */
async function serve(): Promise<{ h: Harness; sdk: ShlinkClient; clock: { s: number }; iso: (s: number) => string }> {
  const clock = { s: T0 };
  const h = await open({ shlinkApi: true, apiKeys: [KEY], now: () => clock.s * 1000, trustProxy: 1, geoipHeader: 'CF-IPCountry', logLevel: 'warn' });
  const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', '+00:00');
  return { h, sdk: shlinkClient(h.shortener.config.baseUrl, KEY), clock, iso };
}

/** A counted redirect of `code` from a browser. */
async function visit(h: Harness, code: string, headers: Record<string, string>): Promise<void> {
  const r = await h.req(`/${code}`, { headers });
  assert.equal(r.status, 302, `visit of ${code}`);
}

/** Links imported with their creation dates and counts, oldest first (the list's order then). */
async function importLinks(h: Harness, rows: readonly Record<string, unknown>[]): Promise<void> {
  const body = `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
  const r = await h.req('/api/import', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/x-ndjson' }, body });
  assert.equal(r.status, 200, r.body);
  assert.equal((JSON.parse(r.body) as { imported: number }).imported, rows.length, r.body);
}

describe('health, domains, mercure-info', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => (s = await serve()));
  after(() => s.h.close());

  test('health: pass, and the Shlink version this surface implements', async () => {
    assert.deepEqual(await s.sdk.health(), {
      status: 'pass',
      version: '4.2.0',
      links: { about: 'https://shlink.io', project: 'https://github.com/shlinkio/shlink' },
    });
  });

  test('listDomains: the one default domain, without redirects', async () => {
    const none = { baseUrlRedirect: null, regular404Redirect: null, invalidShortUrlRedirect: null };
    assert.deepEqual(await s.sdk.listDomains(), {
      data: [{ domain: new URL(s.h.shortener.config.baseUrl).host, isDefault: true, redirects: none }],
      defaultRedirects: none,
    });
  });

  test('mercureInfo: mercure-not-configured (501), as Shlink answers without Mercure', async () => {
    const p = await problemOf(s.sdk.mercureInfo());
    assert.deepEqual(p, {
      type: ErrorType.MERCURE_NOT_CONFIGURED,
      title: 'Mercure integration not configured',
      detail: 'This Shlink instance is not integrated with a mercure hub.',
      status: 501,
    });
  });
});

describe('short URLs: create, get, update, delete', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => (s = await serve()));
  after(() => s.h.close());

  const expected = (over: Partial<ShlinkShortUrl> & { shortCode: string }): ShlinkShortUrl => ({
    shortUrl: `${s.h.shortener.config.baseUrl}/${over.shortCode}`,
    longUrl: 'https://example.com/page',
    dateCreated: s.iso(T0),
    visitsSummary: { total: 0, nonBots: 0, bots: 0 },
    tags: [],
    meta: { validSince: null, validUntil: null, maxVisits: null },
    domain: null,
    title: null,
    crawlable: false,
    forwardQuery: false,
    hasRedirectRules: false,
    ...over,
  });

  test('createShortUrl: customSlug, tags, title, maxVisits, validSince, validUntil and forwardQuery', async () => {
    const created = await s.sdk.createShortUrl({
      longUrl: 'https://example.com/page',
      customSlug: 'launch-1',
      tags: ['promo', 'blog', 'promo'],
      title: 'Launch',
      maxVisits: 7,
      validSince: s.iso(T0 - DAY),
      // To the second: a day and a half, no rounding.
      validUntil: s.iso(T0 + DAY + DAY / 2),
      crawlable: true,
      forwardQuery: true,
    });
    assert.deepEqual(
      created,
      expected({
        shortCode: 'launch-1',
        tags: ['blog', 'promo'],
        title: 'Launch',
        meta: { validSince: s.iso(T0 - DAY), validUntil: s.iso(T0 + DAY + DAY / 2), maxVisits: 7 },
        forwardQuery: true,
      }),
    );
  });

  test('createShortUrl without a slug: a generated code of the configured length, 200 with the ShortUrl', async () => {
    const created = await s.sdk.createShortUrl({ longUrl: 'https://example.com/other', shortCodeLength: 8 });
    assert.match(created.shortCode, /^[1-9A-HJ-NP-Za-km-z]{6}$/);
    assert.deepEqual(created, expected({ shortCode: created.shortCode, longUrl: 'https://example.com/other' }));
  });

  test('createShortUrl with findIfExists: the newest link of the URL when every given field matches, else a new one', async () => {
    const first = await s.sdk.createShortUrl({ longUrl: 'https://example.com/same', maxVisits: 3 });
    const again = await s.sdk.createShortUrl({ longUrl: 'https://example.com/same', findIfExists: true });
    assert.equal(again.shortCode, first.shortCode);
    const sameLimit = await s.sdk.createShortUrl({ longUrl: 'https://example.com/same', maxVisits: 3, findIfExists: true });
    assert.equal(sameLimit.shortCode, first.shortCode);
    const otherLimit = await s.sdk.createShortUrl({ longUrl: 'https://example.com/same', maxVisits: 4, findIfExists: true });
    assert.notEqual(otherLimit.shortCode, first.shortCode);
    const withoutFind = await s.sdk.createShortUrl({ longUrl: 'https://example.com/same' });
    assert.notEqual(withoutFind.shortCode, otherLimit.shortCode);
    // A slug held by this very URL is found; held by another URL it is a non-unique slug.
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/slugged', customSlug: 'slugged' });
    assert.equal((await s.sdk.createShortUrl({ longUrl: 'https://example.com/slugged', customSlug: 'slugged', findIfExists: true })).shortCode, 'slugged');
    const taken = await problemOf(s.sdk.createShortUrl({ longUrl: 'https://example.com/elsewhere', customSlug: 'slugged', findIfExists: true }));
    assert.equal(taken.type, ErrorType.INVALID_SLUG);
  });

  test('createShortUrl refusals: a taken slug, a date that is none, another domain, a bad long URL or slug, a reserved slug', async () => {
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'taken1' });
    assert.deepEqual(await problemOf(s.sdk.createShortUrl({ longUrl: 'https://example.com/x', customSlug: 'taken1' })), {
      type: ErrorType.INVALID_SLUG,
      title: 'Invalid custom slug',
      detail: 'Provided slug "taken1" is already in use.',
      status: 400,
      customSlug: 'taken1',
    });
    const cases: [Parameters<ShlinkClient['createShortUrl']>[0], string][] = [
      [{ longUrl: 'https://example.com/x', validSince: 'yesterday' }, 'validSince'],
      [{ longUrl: 'https://example.com/x', validSince: s.iso(T0 + DAY), validUntil: s.iso(T0) }, 'validSince'],
      [{ longUrl: 'https://example.com/x', domain: 'other.example' }, 'domain'],
      [{ longUrl: 'ftp://example.com/x' }, 'longUrl'],
      [{ longUrl: 'https://example.com/x', customSlug: 'no/slash' }, 'customSlug'],
      [{ longUrl: 'https://example.com/x', customSlug: 'rest' }, 'customSlug'],
      [{ longUrl: 'https://example.com/x', maxVisits: -1 }, 'maxVisits'],
      [{ longUrl: 'https://example.com/x', validUntil: '2026-02-30T00:00:00Z' }, 'validUntil'],
      [{ longUrl: 'https://example.com/x', shortCodeLength: 99 }, 'shortCodeLength'],
    ];
    for (const [data, element] of cases) {
      const p = await problemOf(s.sdk.createShortUrl(data));
      assert.equal(p.type, ErrorType.INVALID_ARGUMENT, element);
      assert.equal(p.status, 400, element);
      assert.equal(p.title, 'Invalid data', element);
      assert.deepEqual(p['invalidElements'], [element], element);
    }
  });

  test('a create body is JSON whatever its Content-Type; unknown fields (status and body too) are ignored; bad JSON is malformed-request-body', async () => {
    const post = (body: string, type: string) => s.h.req('/rest/v3/short-urls', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': type }, body });
    const made = await post(
      JSON.stringify({ longUrl: 'https://example.com/page', customSlug: 'odd-body', status: 500, body: 'x', apiKey: 'ignored' }),
      'text/plain',
    );
    assert.deepEqual([made.status, made.headers['content-type'], JSON.parse(made.body)], [200, 'application/json', expected({ shortCode: 'odd-body' })]);
    const bad = await post('{"longUrl":', 'application/json');
    assert.deepEqual(
      [bad.status, bad.headers['content-type'], JSON.parse(bad.body)],
      [
        400,
        'application/problem+json',
        {
          type: 'https://shlink.io/api/error/malformed-request-body',
          title: 'Malformed request body',
          detail: 'Provided request does not contain a valid JSON body.',
          status: 400,
        },
      ],
    );
  });

  test('getShortUrl: the link; an unknown code is short-url-not-found naming it', async () => {
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'get-me', maxVisits: 2 });
    assert.deepEqual(
      await s.sdk.getShortUrl({ shortCode: 'get-me' }),
      expected({ shortCode: 'get-me', meta: { validSince: null, validUntil: null, maxVisits: 2 } }),
    );
    assert.deepEqual(await problemOf(s.sdk.getShortUrl({ shortCode: 'nothing-here' })), {
      type: ErrorType.INVALID_SHORTCODE,
      title: 'Short URL not found',
      detail: 'No URL found with short code "nothing-here"',
      status: 404,
      shortCode: 'nothing-here',
    });
  });

  test('updateShortUrl: longUrl, title, tags, maxVisits, validSince, validUntil and forwardQuery; null clears each', async () => {
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'edit-me' });
    s.clock.s = T0 + 100;
    const updated = await s.sdk.updateShortUrl(
      { shortCode: 'edit-me' },
      {
        longUrl: 'https://example.com/new',
        title: 'New',
        tags: ['x'],
        maxVisits: 9,
        validSince: s.iso(T0 + 50),
        validUntil: s.iso(T0 + 3 * DAY + 1),
        forwardQuery: true,
      },
    );
    assert.deepEqual(
      updated,
      expected({
        shortCode: 'edit-me',
        longUrl: 'https://example.com/new',
        title: 'New',
        tags: ['x'],
        meta: { validSince: s.iso(T0 + 50), validUntil: s.iso(T0 + 3 * DAY + 1), maxVisits: 9 },
        forwardQuery: true,
      }),
    );
    const cleared = await s.sdk.updateShortUrl(
      { shortCode: 'edit-me' },
      { title: null, maxVisits: null, validSince: null, validUntil: null, tags: [], forwardQuery: false },
    );
    assert.deepEqual(cleared, expected({ shortCode: 'edit-me', longUrl: 'https://example.com/new' }));
    assert.deepEqual(await s.sdk.getShortUrl({ shortCode: 'edit-me' }), cleared);
    s.clock.s = T0;
    assert.equal((await problemOf(s.sdk.updateShortUrl({ shortCode: 'nothing-here' }, { title: 'x' }))).type, ErrorType.INVALID_SHORTCODE);
    const since = await problemOf(s.sdk.updateShortUrl({ shortCode: 'edit-me' }, { validSince: 'soon' }));
    assert.deepEqual([since.type, since['invalidElements']], [ErrorType.INVALID_ARGUMENT, ['validSince']]);
    const badUrl = await problemOf(s.sdk.updateShortUrl({ shortCode: 'edit-me' }, { longUrl: 'not a url' }));
    assert.deepEqual([badUrl.type, badUrl['invalidElements']], [ErrorType.INVALID_ARGUMENT, ['longUrl']]);
  });

  test('deleteShortUrl: 204 once, then the link is short-url-not-found', async () => {
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'delete-me' });
    assert.equal(await s.sdk.deleteShortUrl({ shortCode: 'delete-me' }), undefined);
    assert.equal((await problemOf(s.sdk.getShortUrl({ shortCode: 'delete-me' }))).type, ErrorType.INVALID_SHORTCODE);
    assert.equal((await problemOf(s.sdk.deleteShortUrl({ shortCode: 'delete-me' }))).type, ErrorType.INVALID_SHORTCODE);
  });

  test('getShortUrlRedirectRules: none, the long URL is the only target', async () => {
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'no-rules' });
    assert.deepEqual(await s.sdk.getShortUrlRedirectRules({ shortCode: 'no-rules' }), { defaultLongUrl: 'https://example.com/page', redirectRules: [] });
  });
});

describe('visits', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    s = await serve();
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/page', customSlug: 'visited' });
    // Oldest first: a Chrome visit from Germany with a referrer, a Firefox visit, then a bot.
    s.clock.s = T0 + 10;
    await visit(s.h, 'visited', {
      'user-agent': CHROME_WINDOWS,
      referer: 'https://News.Example/story?id=1',
      'x-forwarded-for': '203.0.113.7',
      'cf-ipcountry': 'DE',
    });
    s.clock.s = T0 + 20;
    await visit(s.h, 'visited', { 'user-agent': FIREFOX_MAC });
    s.clock.s = T0 + 30;
    await visit(s.h, 'visited', { 'user-agent': CURL });
    s.clock.s = T0 + 40;
  });
  after(() => s.h.close());

  const shortUrl = (): string => `${s.h.shortener.config.baseUrl}/visited`;
  const chrome = () => ({
    referer: 'https://news.example/',
    date: s.iso(T0 + 10),
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    visitLocation: {
      countryCode: 'DE',
      countryName: 'Germany',
      regionName: null,
      cityName: null,
      latitude: null,
      longitude: null,
      timezone: null,
      isEmpty: false,
    },
    potentialBot: false,
    visitedUrl: shortUrl(),
  });
  const firefox = () => ({
    referer: '',
    date: s.iso(T0 + 20),
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7; rv:127.0) Gecko/20100101 Firefox/127.0',
    visitLocation: null,
    potentialBot: false,
    visitedUrl: shortUrl(),
  });

  test("getShortUrlVisits: every visit newest first, in Shlink's shape", async () => {
    const list = await s.sdk.getShortUrlVisits({ shortCode: 'visited' });
    assert.equal(list.data.length, 3);
    const bot = list.data[0]!;
    assert.deepEqual([bot.date, bot.potentialBot, bot.referer, bot.visitLocation], [s.iso(T0 + 30), true, '', null]);
    assert.deepEqual(list.data.slice(1), [firefox(), chrome()]);
    assert.deepEqual(list.pagination, { currentPage: 1, pagesCount: 1, itemsPerPage: 3, itemsInCurrentPage: 3, totalItems: 3 });
  });

  test('getShortUrlVisits with excludeBots: the two browsers', async () => {
    const list = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { excludeBots: true });
    assert.deepEqual(list.data, [firefox(), chrome()]);
    assert.equal(list.pagination.totalItems, 2);
  });

  test('getShortUrlVisits paged: page 2 of 1 is the second newest', async () => {
    const list = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { page: 2, itemsPerPage: 1 });
    assert.deepEqual(list.data, [firefox()]);
    assert.deepEqual(list.pagination, { currentPage: 2, pagesCount: 3, itemsPerPage: 1, itemsInCurrentPage: 1, totalItems: 3 });
    const past = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { page: 4, itemsPerPage: 1 });
    assert.deepEqual(past.pagination, { currentPage: 4, pagesCount: 3, itemsPerPage: 1, itemsInCurrentPage: 0, totalItems: 3 });
    assert.deepEqual(past.data, []);
  });

  test('getShortUrlVisits by date: startDate and endDate are inclusive', async () => {
    const between = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { startDate: s.iso(T0 + 10), endDate: s.iso(T0 + 20) });
    assert.deepEqual(between.data, [firefox(), chrome()]);
    const after20 = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { startDate: s.iso(T0 + 21) });
    assert.deepEqual(
      after20.data.map((v) => v.date),
      [s.iso(T0 + 30)],
    );
    const before10 = await s.sdk.getShortUrlVisits({ shortCode: 'visited' }, { endDate: s.iso(T0 + 9) });
    assert.deepEqual(before10.data, []);
  });

  test('getShortUrlVisits of an unknown code: short-url-not-found', async () => {
    assert.equal((await problemOf(s.sdk.getShortUrlVisits({ shortCode: 'nothing-here' }))).type, ErrorType.INVALID_SHORTCODE);
  });

  test("the short URL's visitsSummary and the visits overview count the bot apart", async () => {
    assert.deepEqual((await s.sdk.getShortUrl({ shortCode: 'visited' })).visitsSummary, { total: 3, nonBots: 2, bots: 1 });
    assert.deepEqual(await s.sdk.getVisitsOverview(), { nonOrphanVisits: { total: 3, nonBots: 2, bots: 1 }, orphanVisits: { total: 0, nonBots: 0, bots: 0 } });
  });

  test('deleteShortUrlVisits: the number deleted, then no visits and zero counts', async () => {
    assert.deepEqual(await s.sdk.deleteShortUrlVisits({ shortCode: 'visited' }), { deletedVisits: 3 });
    assert.deepEqual((await s.sdk.getShortUrlVisits({ shortCode: 'visited' })).data, []);
    assert.deepEqual((await s.sdk.getShortUrl({ shortCode: 'visited' })).visitsSummary, { total: 0, nonBots: 0, bots: 0 });
    assert.deepEqual(await s.sdk.getVisitsOverview(), { nonOrphanVisits: { total: 0, nonBots: 0, bots: 0 }, orphanVisits: { total: 0, nonBots: 0, bots: 0 } });
    assert.equal((await problemOf(s.sdk.deleteShortUrlVisits({ shortCode: 'nothing-here' }))).type, ErrorType.INVALID_SHORTCODE);
  });
});

describe('listShortUrls', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  // Four links created a day apart (oldest first): codes, URLs and counts ordered differently each.
  const DATES = [T0 - 4 * DAY, T0 - 3 * DAY, T0 - 2 * DAY, T0 - DAY];
  before(async () => {
    s = await serve();
    await importLinks(s.h, [
      { short_code: 'zeta01', original_url: 'https://b.example/', created_at: DATES[0], visit_count: 0 },
      { short_code: 'alfa02', original_url: 'https://d.example/', created_at: DATES[1], visit_count: 4 },
      { short_code: 'moon03', original_url: 'https://a.example/', created_at: DATES[2], visit_count: 1 },
      { short_code: 'beta04', original_url: 'https://c.example/', created_at: DATES[3], visit_count: 0 },
    ]);
    // moon03: 1 + 3 bot visits; beta04: 2 browser visits.
    for (let i = 0; i < 3; i++) await visit(s.h, 'moon03', { 'user-agent': CURL });
    for (let i = 0; i < 2; i++) await visit(s.h, 'beta04', { 'user-agent': CHROME_WINDOWS });
  });
  after(() => s.h.close());

  const codes = async (params: Parameters<ShlinkClient['listShortUrls']>[0]): Promise<string[]> =>
    (await s.sdk.listShortUrls(params)).data.map((u) => u.shortCode);

  test('newest first by default, ten to a page, with visits summaries', async () => {
    const list = await s.sdk.listShortUrls();
    assert.deepEqual(
      list.data.map((u) => [u.shortCode, u.dateCreated, u.visitsSummary]),
      [
        ['beta04', s.iso(DATES[3]!), { total: 2, nonBots: 2, bots: 0 }],
        ['moon03', s.iso(DATES[2]!), { total: 4, nonBots: 1, bots: 3 }],
        ['alfa02', s.iso(DATES[1]!), { total: 4, nonBots: 4, bots: 0 }],
        ['zeta01', s.iso(DATES[0]!), { total: 0, nonBots: 0, bots: 0 }],
      ],
    );
    assert.deepEqual(list.pagination, { currentPage: 1, pagesCount: 1, itemsPerPage: 10, itemsInCurrentPage: 4, totalItems: 4 });
  });

  test('paging: page 2 of 3, and -1 for all on one page', async () => {
    const second = await s.sdk.listShortUrls({ page: '2', itemsPerPage: 3 });
    assert.deepEqual(
      second.data.map((u) => u.shortCode),
      ['zeta01'],
    );
    assert.deepEqual(second.pagination, { currentPage: 2, pagesCount: 2, itemsPerPage: 3, itemsInCurrentPage: 1, totalItems: 4 });
    const all = await s.sdk.listShortUrls({ itemsPerPage: -1 });
    assert.deepEqual(all.pagination, { currentPage: 1, pagesCount: 1, itemsPerPage: 4, itemsInCurrentPage: 4, totalItems: 4 });
    assert.deepEqual(await codes({ page: '1', itemsPerPage: 3, orderBy: { field: 'dateCreated', dir: 'ASC' } }), ['zeta01', 'alfa02', 'moon03']);
  });

  test('searchTerm: the code or the long URL contains it', async () => {
    assert.deepEqual(await codes({ searchTerm: 'ALFA' }), ['alfa02']);
    assert.deepEqual(await codes({ searchTerm: 'a.example' }), ['moon03']);
    assert.deepEqual(await codes({ searchTerm: 'nowhere' }), []);
  });

  test('orderBy: every field Shlink orders by, both ways (ties newest first)', async () => {
    const cases: [string, 'ASC' | 'DESC', string[]][] = [
      ['dateCreated', 'ASC', ['zeta01', 'alfa02', 'moon03', 'beta04']],
      ['dateCreated', 'DESC', ['beta04', 'moon03', 'alfa02', 'zeta01']],
      ['shortCode', 'ASC', ['alfa02', 'beta04', 'moon03', 'zeta01']],
      ['shortCode', 'DESC', ['zeta01', 'moon03', 'beta04', 'alfa02']],
      ['longUrl', 'ASC', ['moon03', 'zeta01', 'beta04', 'alfa02']],
      ['longUrl', 'DESC', ['alfa02', 'beta04', 'zeta01', 'moon03']],
      ['visits', 'ASC', ['zeta01', 'beta04', 'moon03', 'alfa02']],
      ['visits', 'DESC', ['moon03', 'alfa02', 'beta04', 'zeta01']],
      ['nonBotVisits', 'ASC', ['zeta01', 'moon03', 'beta04', 'alfa02']],
      ['nonBotVisits', 'DESC', ['alfa02', 'beta04', 'moon03', 'zeta01']],
      // No title sorts as empty: first going up.
      ['title', 'ASC', ['beta04', 'moon03', 'alfa02', 'zeta01']],
    ];
    for (const [field, dir, expected] of cases) {
      assert.deepEqual(await codes({ orderBy: { field: field as 'title', dir } }), expected, `${field}-${dir}`);
    }
    const bad = await problemOf(s.sdk.listShortUrls({ orderBy: { field: 'colour' as 'title', dir: 'ASC' } }));
    assert.deepEqual([bad.type, bad['invalidElements']], [ErrorType.INVALID_ARGUMENT, ['orderBy']]);
  });

  test('startDate and endDate: the creation date, inclusive both', async () => {
    assert.deepEqual(await codes({ startDate: s.iso(DATES[1]!) }), ['beta04', 'moon03', 'alfa02']);
    assert.deepEqual(await codes({ endDate: s.iso(DATES[2]!) }), ['moon03', 'alfa02', 'zeta01']);
    assert.deepEqual(await codes({ startDate: s.iso(DATES[1]!), endDate: s.iso(DATES[2]!), orderBy: { field: 'shortCode', dir: 'ASC' } }), [
      'alfa02',
      'moon03',
    ]);
    const bad = await problemOf(s.sdk.listShortUrls({ startDate: 'yesterday' }));
    assert.deepEqual([bad.type, bad['invalidElements']], [ErrorType.INVALID_ARGUMENT, ['startDate']]);
  });
});

describe('tags and titles', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    s = await serve();
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/1', customSlug: 'tagged1', tags: ['news', 'promo'], title: 'Spring sale' });
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/2', customSlug: 'tagged2', tags: ['news'], title: 'Autumn notes' });
    await s.sdk.createShortUrl({ longUrl: 'https://example.com/3', customSlug: 'plain03' });
    await visit(s.h, 'tagged1', { 'user-agent': CHROME_WINDOWS });
    await visit(s.h, 'tagged1', { 'user-agent': CURL });
    await visit(s.h, 'tagged2', { 'user-agent': FIREFOX_MAC });
  });
  after(() => s.h.close());

  const codes = async (params: Parameters<ShlinkClient['listShortUrls']>[0]): Promise<string[]> =>
    (await s.sdk.listShortUrls(params)).data.map((u) => u.shortCode);

  test('listTags: every tag of a live link, sorted', async () => {
    assert.deepEqual((await s.sdk.listTags()).data, ['news', 'promo']);
  });

  test('tagsStats: links and visits per tag', async () => {
    assert.deepEqual((await s.sdk.tagsStats()).data, [
      { tag: 'news', shortUrlsCount: 2, visitsSummary: { total: 3, nonBots: 2, bots: 1 } },
      { tag: 'promo', shortUrlsCount: 1, visitsSummary: { total: 2, nonBots: 1, bots: 1 } },
    ]);
  });

  test('listShortUrls by tags: any of them by default, all of them with tagsMode all; searchTerm matches titles', async () => {
    assert.deepEqual(await codes({ tags: ['promo'] }), ['tagged1']);
    assert.deepEqual(await codes({ tags: ['promo', 'news'] }), ['tagged2', 'tagged1']);
    assert.deepEqual(await codes({ tags: ['promo', 'news'], tagsMode: 'all' }), ['tagged1']);
    assert.deepEqual(await codes({ searchTerm: 'autumn' }), ['tagged2']);
    assert.deepEqual(await codes({ orderBy: { field: 'title', dir: 'DESC' } }), ['tagged1', 'tagged2', 'plain03']);
  });

  test('getShortUrl shows the title and tags stored', async () => {
    const got = await s.sdk.getShortUrl({ shortCode: 'tagged1' });
    assert.deepEqual([got.title, got.tags], ['Spring sale', ['news', 'promo']]);
  });
});
