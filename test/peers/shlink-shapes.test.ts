/**
 * The pure parts of the Shlink surface (docs/compat.md), without a socket: the typical
 * `User-Agent` of each browser and OS family (it must parse back to those families, by this
 * service's classifier and, for the pairs that exist, by `bowser`, the parser Shlink's web client
 * uses), Shlink's dates and pagination, the parameters it sends, `validSince` and `validUntil` as
 * instants, which of `valid_until` and the retention's end shows as `validUntil`, and problem
 * details whose `type` is one the SDK knows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import bowser from 'bowser';
import { classifyUserAgent } from '../../src/visits/user-agent.ts';
import type { Browser, Os } from '../../src/visits/event.ts';
import { typicalUserAgent } from '../../src/peers/shlink/user-agents.ts';
import { isoDate, pageBounds, pagination, validUntilOf, visitJson } from '../../src/peers/shlink/shapes.ts';
import { instantOf, parseCreateBody, parseEditBody } from '../../src/peers/shlink/bodies.ts';
import { isProblem, parseListParams, parseOrder, parseVisitParams } from '../../src/peers/shlink/params.ts';
import { INVALID_KEY, MERCURE_OFF, MISSING_KEY, nonUniqueSlug, refusedInput, routeNotFound, shortUrlNotFound } from '../../src/peers/shlink/problems.ts';
import { ErrorType } from '../support/shlink-sdk.ts';

const BROWSERS: readonly Browser[] = ['Chrome', 'Safari', 'Firefox', 'Edge', 'Opera', 'Samsung Internet', 'Other'];
const SYSTEMS: readonly Os[] = ['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'ChromeOS', 'Other'];

/** bowser's names of our families (what Shlink's web client shows). */
const BOWSER_BROWSER: Readonly<Record<Exclude<Browser, 'Other'>, string>> = {
  Chrome: 'Chrome',
  Safari: 'Safari',
  Firefox: 'Firefox',
  Edge: 'Microsoft Edge',
  Opera: 'Opera',
  'Samsung Internet': 'Samsung Internet for Android',
};
const BOWSER_OS: Readonly<Record<Exclude<Os, 'Other'>, string>> = {
  Windows: 'Windows',
  macOS: 'macOS',
  iOS: 'iOS',
  Android: 'Android',
  Linux: 'Linux',
  ChromeOS: 'Chrome OS',
};

/** Pairs no real client sends: bowser may name them otherwise (Safari on Android reads as Android's browser). */
const UNREAL = new Set(['Safari|Android']);

test('the typical User-Agent of every browser and OS family classifies back to them, as no bot', () => {
  for (const browser of BROWSERS) {
    for (const os of SYSTEMS) {
      const c = classifyUserAgent(typicalUserAgent(browser, os));
      assert.deepEqual([c.browser, c.os, c.bot], [browser, os, false], `${browser} on ${os}`);
    }
  }
});

test("bowser, the web client's parser, reads the same families from them; Other is no family it names", () => {
  for (const browser of BROWSERS) {
    for (const os of SYSTEMS) {
      if (UNREAL.has(`${browser}|${os}`)) continue;
      const parsed = bowser.parse(typicalUserAgent(browser, os));
      const label = `${browser} on ${os}`;
      if (browser === 'Other') assert.ok(!Object.values(BOWSER_BROWSER).includes(parsed.browser.name ?? ''), label);
      else assert.equal(parsed.browser.name, BOWSER_BROWSER[browser], label);
      if (os === 'Other') assert.equal(parsed.os.name, undefined, label);
      else assert.equal(parsed.os.name, BOWSER_OS[os], label);
    }
  }
});

test('a visit without a User-Agent (or one that asked not to be tracked) shows an empty one', () => {
  assert.equal(typicalUserAgent(null, null), '');
  const v = visitJson({ time: 0, referrer: null, country: null, browser: null, os: null, device: null, bot: false }, 'https://s.example/abc');
  assert.deepEqual(v, {
    referer: '',
    date: '1970-01-01T00:00:00+00:00',
    userAgent: '',
    visitLocation: null,
    potentialBot: false,
    visitedUrl: 'https://s.example/abc',
  });
});

test('dates are ISO 8601 with an offset, as Shlink writes them', () => {
  assert.equal(isoDate(1_777_627_800), '2026-05-01T09:30:00+00:00');
});

test("pagination as Shlink's: pages of at least one, -1 is every item on one page", () => {
  const cases: [number, number, number, number, ReturnType<typeof pagination>, [number, number]][] = [
    [1, 10, 0, 0, { currentPage: 1, pagesCount: 1, itemsPerPage: 10, itemsInCurrentPage: 0, totalItems: 0 }, [0, 0]],
    [2, 3, 7, 3, { currentPage: 2, pagesCount: 3, itemsPerPage: 3, itemsInCurrentPage: 3, totalItems: 7 }, [3, 6]],
    [3, 3, 7, 1, { currentPage: 3, pagesCount: 3, itemsPerPage: 3, itemsInCurrentPage: 1, totalItems: 7 }, [6, 7]],
    [9, 3, 7, 0, { currentPage: 9, pagesCount: 3, itemsPerPage: 3, itemsInCurrentPage: 0, totalItems: 7 }, [7, 7]],
    [1, -1, 7, 7, { currentPage: 1, pagesCount: 1, itemsPerPage: 7, itemsInCurrentPage: 7, totalItems: 7 }, [0, 7]],
    [1, -1, 0, 0, { currentPage: 1, pagesCount: 1, itemsPerPage: 1, itemsInCurrentPage: 0, totalItems: 0 }, [0, 0]],
    [2, -1, 7, 0, { currentPage: 2, pagesCount: 1, itemsPerPage: 7, itemsInCurrentPage: 0, totalItems: 7 }, [7, 7]],
  ];
  for (const [page, perPage, total, inPage, expected, bounds] of cases) {
    assert.deepEqual(pagination(page, perPage, total, inPage), expected, `page ${page} of ${perPage}, ${total} items`);
    assert.deepEqual(pageBounds(page, perPage, total), bounds, `bounds of page ${page} of ${perPage}, ${total} items`);
  }
});

test("orderBy: field-ASC or field-DESC of Shlink's fields; absent is newest first; anything else is invalid-data", () => {
  assert.deepEqual(parseOrder(null), { field: 'dateCreated', dir: 'DESC' });
  assert.deepEqual(parseOrder('nonBotVisits-ASC'), { field: 'nonBotVisits', dir: 'ASC' });
  assert.deepEqual(parseOrder('title'), { field: 'title', dir: 'ASC' });
  for (const bad of ['colour-ASC', 'title-UP', 'visits-asc']) {
    const p = parseOrder(bad);
    assert.ok(isProblem(p), bad);
    assert.deepEqual(p.body['invalidElements'], ['orderBy'], bad);
  }
});

test("the list's parameters: defaults, PHP-style arrays, the domain as sent, and each bad value named", () => {
  const params = parseListParams(new URLSearchParams('tags[]=a&tags[]=b&tags[]=a&domain=DEFAULT&excludeMaxVisitsReached=true'));
  assert.ok(!isProblem(params));
  assert.deepEqual(params, {
    page: 1,
    itemsPerPage: 10,
    searchTerm: undefined,
    tags: ['a', 'b'],
    tagsMode: 'any',
    excludeTags: [],
    excludeTagsMode: 'any',
    order: { field: 'dateCreated', dir: 'DESC' },
    startDate: undefined,
    endDate: undefined,
    excludeMaxVisitsReached: true,
    domain: 'DEFAULT',
    excludePastValidUntil: false,
  });
  assert.equal((parseListParams(new URLSearchParams('excludePastValidUntil=true')) as { excludePastValidUntil: boolean }).excludePastValidUntil, true);
  // The domain is passed on as sent (the service tells a host from DEFAULT); absent or empty: every domain's.
  for (const [query, domain] of [
    ['domain=S.example', 'S.example'],
    ['domain=other.example', 'other.example'],
    ['domain=', undefined],
    ['', undefined],
  ] as const) {
    const p = parseListParams(new URLSearchParams(query));
    assert.ok(!isProblem(p), query);
    assert.equal(p.domain, domain, query);
  }
  for (const [query, element] of [
    ['page=0', 'page'],
    ['itemsPerPage=0', 'itemsPerPage'],
    ['itemsPerPage=-2', 'itemsPerPage'],
    ['tagsMode=some', 'tagsMode'],
    ['endDate=2026-02-30', 'endDate'],
    [`searchTerm=${'x'.repeat(201)}`, 'searchTerm'],
  ]) {
    const p = parseListParams(new URLSearchParams(query));
    assert.ok(isProblem(p), query);
    assert.deepEqual([p.status, p.body['type'], p.body['invalidElements']], [400, ErrorType.INVALID_ARGUMENT, [element]], query);
  }
});

test('a visit list: every visit by default, excludeBots set by its presence (as Shlink reads it), endDate inclusive', () => {
  assert.deepEqual(parseVisitParams(new URLSearchParams('')), { page: 1, itemsPerPage: -1, from: undefined, to: undefined, excludeBots: false });
  assert.deepEqual(parseVisitParams(new URLSearchParams('excludeBots=false&page=0&itemsPerPage=-5')), {
    page: 1,
    itemsPerPage: -1,
    from: undefined,
    to: undefined,
    excludeBots: true,
  });
  assert.deepEqual(parseVisitParams(new URLSearchParams('startDate=2026-05-01T00:00:00%2B02:00&endDate=2026-05-01')), {
    page: 1,
    itemsPerPage: -1,
    from: Date.UTC(2026, 3, 30, 22) / 1000,
    to: Date.UTC(2026, 4, 1) / 1000 + 1,
    excludeBots: false,
  });
  const reversed = parseVisitParams(new URLSearchParams('startDate=2026-05-02&endDate=2026-05-01'));
  assert.ok(isProblem(reversed));
});

test('validSince and validUntil: ISO 8601 as Unix seconds (UTC without an offset), null or empty for none, anything else refused naming the field', () => {
  assert.equal(instantOf('2026-05-01T10:00:00+02:00', 'validUntil'), Date.UTC(2026, 4, 1, 8) / 1000);
  assert.equal(instantOf('2026-05-01T10:00:00', 'validSince'), Date.UTC(2026, 4, 1, 10) / 1000);
  assert.equal(instantOf('2026-05-01', 'validSince'), Date.UTC(2026, 4, 1) / 1000);
  // Past 2106 (the last second a visit's time can hold) and up to the last second ISO 8601 spells.
  assert.equal(instantOf('9999-12-31T23:59:59Z', 'validUntil'), 253402300799);
  assert.equal(instantOf(null, 'validUntil'), null);
  assert.equal(instantOf('', 'validSince'), null);
  assert.equal(instantOf(undefined, 'validUntil'), undefined);
  for (const bad of ['soon', '1777629600', '2026-02-30', '1969-01-01', 42, true]) {
    for (const name of ['validSince', 'validUntil'] as const) {
      const p = instantOf(bad, name);
      assert.ok(isProblem(p), `${name} ${String(bad)}`);
      assert.deepEqual([p.body['type'], p.body['invalidElements']], [ErrorType.INVALID_ARGUMENT, [name]], `${name} ${String(bad)}`);
    }
  }
});

test("Shlink's validUntil is the link's valid_until, or its retention's end when that comes first or alone", () => {
  assert.equal(validUntilOf({ valid_until: null, expires_at: null }), null);
  assert.equal(validUntilOf({ valid_until: 500, expires_at: null }), 500);
  assert.equal(validUntilOf({ valid_until: null, expires_at: 700 }), 700);
  assert.equal(validUntilOf({ valid_until: 500, expires_at: 700 }), 500);
  assert.equal(validUntilOf({ valid_until: 900, expires_at: 700 }), 700);
});

test('an edit of validUntil: null or later than the retention removes the retention, so the end set is the end read back', () => {
  const at = (s: number): string => new Date(s * 1000).toISOString();
  assert.deepEqual(parseEditBody({ validUntil: at(900) }, 700), { routing: { validUntil: 900 }, retentionDays: 0 });
  assert.deepEqual(parseEditBody({ validUntil: null }, 700), { routing: { validUntil: null }, retentionDays: 0 });
  // An earlier end, or the retention's own (what a client that writes back what it read sends), keeps it.
  assert.deepEqual(parseEditBody({ validUntil: at(500) }, 700), { routing: { validUntil: 500 } });
  assert.deepEqual(parseEditBody({ validUntil: at(700) }, 700), { routing: { validUntil: 700 } });
  // Without a retention, nothing to remove; validSince and forwardQuery are the routing's alone.
  assert.deepEqual(parseEditBody({ validUntil: null, validSince: at(100), forwardQuery: true }, null), {
    routing: { validSince: 100, validUntil: null, forwardQuery: true },
  });
  assert.deepEqual(parseEditBody({ title: 'x' }, 700), { title: 'x' });
});

test("a create: what the service checks passes through; what is Shlink's alone is decided here", () => {
  const limits = { minShortLength: 6, maxShortLength: 12 };
  assert.deepEqual(
    parseCreateBody({ longUrl: 'https://e.example/', customSlug: 'x', crawlable: true, forwardQuery: false, shortCodeLength: 12, domain: 's.example' }, limits),
    {
      url: 'https://e.example/',
      code: 'x',
      title: undefined,
      tags: undefined,
      maxVisits: undefined,
      routing: { forwardQuery: false },
      validSince: undefined,
      validUntil: undefined,
      findIfExists: false,
      domain: 's.example',
    },
  );
  const dated = parseCreateBody({ longUrl: 'https://e.example/', validSince: '2026-01-01', validUntil: '2026-02-01T00:00:00Z', forwardQuery: true }, limits);
  assert.ok(!isProblem(dated));
  const [since, until] = [Date.UTC(2026, 0, 1) / 1000, Date.UTC(2026, 1, 1) / 1000];
  assert.deepEqual([dated.routing, dated.validSince, dated.validUntil], [{ validSince: since, validUntil: until, forwardQuery: true }, since, until]);
  assert.equal((parseCreateBody({ longUrl: 'https://e.example/' }, limits) as { routing: unknown }).routing, undefined);
  // The domain is the service's to check (a host of another instance is its invalid-data): passed on as sent.
  for (const domain of ['other.example', 'DEFAULT', null, undefined]) {
    const p = parseCreateBody({ longUrl: 'https://e.example/', domain }, limits);
    assert.ok(!isProblem(p), String(domain));
    assert.equal(p.domain, domain, String(domain));
  }
  for (const [body, element] of [
    [{ validSince: 'tomorrow' }, 'validSince'],
    [{ validUntil: '1777629600' }, 'validUntil'],
    [{ pathPrefix: 'p' }, 'pathPrefix'],
    [{ shortCodeLength: 5 }, 'shortCodeLength'],
    [{ shortCodeLength: 13 }, 'shortCodeLength'],
    [{ findIfExists: 'yes' }, 'findIfExists'],
    [{ forwardQuery: 'yes' }, 'forwardQuery'],
    [{ redirectRules: [{ longUrl: 'https://x.example/', conditions: [] }] }, 'redirectRules'],
  ] as const) {
    const p = parseCreateBody({ longUrl: 'https://e.example/', ...body }, limits);
    assert.ok(isProblem(p), element);
    assert.deepEqual(p.body['invalidElements'], [element], element);
  }
});

test("problems: Shlink's types (the SDK's ErrorType), titles, statuses and extra fields; our reasons name Shlink's fields", () => {
  assert.deepEqual(shortUrlNotFound('abc').body, {
    type: ErrorType.INVALID_SHORTCODE,
    title: 'Short URL not found',
    detail: 'No URL found with short code "abc"',
    status: 404,
    shortCode: 'abc',
  });
  assert.deepEqual(nonUniqueSlug('abc').body, {
    type: ErrorType.INVALID_SLUG,
    title: 'Invalid custom slug',
    detail: 'Provided slug "abc" is already in use.',
    status: 400,
    customSlug: 'abc',
  });
  assert.equal(MISSING_KEY.body.type, ErrorType.INVALID_AUTHORIZATION);
  assert.equal(INVALID_KEY.body.type, ErrorType.INVALID_API_KEY);
  assert.equal(MERCURE_OFF.body.type, ErrorType.MERCURE_NOT_CONFIGURED);
  assert.equal(routeNotFound('GET', '/rest/x').body.type, ErrorType.NOT_FOUND);
  const cases: [string, string, string][] = [
    ['url must use http or https, not ftp', 'longUrl', 'longUrl must use http or https, not ftp'],
    ['code must be 6 to 12 characters long, not 2', 'customSlug', 'customSlug must be 6 to 12 characters long, not 2'],
    [
      'max_visits must be an integer from 1 to 2147483647, or null for no limit',
      'maxVisits',
      'maxVisits must be an integer from 1 to 2147483647, or null for no limit',
    ],
    [
      'valid_since must be before valid_until: the link would never be valid',
      'validSince',
      'validSince must be before validUntil: the link would never be valid',
    ],
    ['forward_query must be true or false', 'forwardQuery', 'forwardQuery must be true or false'],
    ['a tag must not contain a comma: "a,b"', 'tags', 'a tag must not contain a comma: "a,b"'],
    ['title must be at most 512 characters long, not 600', 'title', 'title must be at most 512 characters long, not 600'],
  ];
  for (const [reason, element, detail] of cases) {
    assert.deepEqual(
      refusedInput(reason).body,
      { type: ErrorType.INVALID_ARGUMENT, title: 'Invalid data', detail, status: 400, invalidElements: [element] },
      reason,
    );
  }
});
