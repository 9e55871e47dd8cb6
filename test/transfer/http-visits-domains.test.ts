/**
 * The visits export and import on several domains (docs/analytics.md, moving history; docs/api.md,
 * domains): each event comes out with its link's bare code and its `domain` (the last CSV column,
 * empty for the default domain; `null` in JSON Lines); `?code=X&domain=<host>` exports the events of
 * X on that domain alone, an unknown host is 400; an import records each event on the link of its
 * code on its domain (absent, empty, null, `default`, the default host or a host the instance does
 * not serve: the default domain), so an export imported into a fresh instance with the same
 * domains (links first) exports the same and each link's stats are the same. On the log store and
 * on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';

type Door = Pick<Harness, 'req' | 'port'>;

/** A fresh instance with `DOMAINS=go.example`, and the host of its default domain. */
type Open = () => Promise<{ door: Door; home: string }>;

const KEY = 'admin-key';
const GO = 'go.example';
const CODE = 'same01';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;
const HEADER = 'short_code,time,referrer,country,browser,os,device,bot,domain,rule';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

const pg = await pgServer();

/** The clock of every instance of a test, in milliseconds. */
const clock = { ms: NOW * 1000 };
const SETTINGS = { apiKeys: [KEY], domains: [GO], logLevel: 'silent', now: () => clock.ms } as const;

const ADMIN = { 'x-api-key': KEY };

async function get(door: Door, path: string): Promise<string> {
  const r = await door.req(path, { headers: ADMIN });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return r.body;
}

async function post(door: Door, path: string, type: string, body: string): Promise<unknown> {
  const r = await door.req(path, { method: 'POST', headers: { ...ADMIN, 'content-type': type }, body });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return JSON.parse(r.body);
}

async function shorten(door: Door, body: Record<string, unknown>): Promise<void> {
  const r = await door.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.body);
}

/** `GET /<code>` on `host` (absent: the default domain) at `at` (Unix seconds): a redirect to `target`. */
async function visit(door: Door, at: number, target: string, headers: Record<string, string>): Promise<void> {
  clock.ms = at * 1000;
  const r = await door.req(`/${CODE}`, { headers });
  assert.deepEqual([r.status, r.headers.location], [302, target]);
}

type Event = {
  short_code: string;
  time: number;
  referrer: string | null;
  country: null;
  browser: string;
  os: string;
  device: string;
  bot: boolean;
  domain: string | null;
  rule: number | null;
};

/** The events of the scenario, oldest first: three on go.example's link, one on the default domain's. */
const EVENTS: Event[] = [
  {
    short_code: CODE,
    time: NOW,
    referrer: 'news.example',
    country: null,
    browser: 'Firefox',
    os: 'Linux',
    device: 'desktop',
    bot: false,
    domain: GO,
    rule: null,
  },
  { short_code: CODE, time: NOW + 60, referrer: null, country: null, browser: 'Safari', os: 'iOS', device: 'mobile', bot: false, domain: null, rule: null },
  { short_code: CODE, time: NOW + 120, referrer: null, country: null, browser: 'Other', os: 'Other', device: 'other', bot: true, domain: GO, rule: null },
  {
    short_code: CODE,
    time: NOW + 3600,
    referrer: 'social.example',
    country: null,
    browser: 'Safari',
    os: 'iOS',
    device: 'mobile',
    bot: false,
    domain: GO,
    rule: null,
  },
];

const jsonl = (events: readonly Event[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join('');

const csvOf = (events: readonly Event[]): string =>
  `${HEADER}\r\n` +
  events.map((e) => `${[e.short_code, e.time, e.referrer ?? '', '', e.browser, e.os, e.device, e.bot, e.domain ?? '', ''].join(',')}\r\n`).join('');

/** `same01` on the default domain and on go.example, each visited through its own host. */
async function withVisits(door: Door): Promise<void> {
  clock.ms = NOW * 1000;
  await shorten(door, { url: 'https://example.com/default', code: CODE });
  await shorten(door, { url: 'https://example.com/go', code: CODE, domain: GO });
  await visit(door, NOW, 'https://example.com/go', { host: GO, 'user-agent': FIREFOX, referer: 'https://News.Example/path?q=1' });
  await visit(door, NOW + 60, 'https://example.com/default', { 'user-agent': IPHONE });
  await visit(door, NOW + 120, 'https://example.com/go', { host: GO, 'user-agent': 'curl/8.5.0' });
  await visit(door, NOW + 3600, 'https://example.com/go', { host: GO, 'user-agent': IPHONE, referer: 'https://social.example/' });
  clock.ms = (NOW + 86400) * 1000;
}

/** A link's stats over the scenario's day, bots included. */
async function stats(door: Door, domain: string | null): Promise<Record<string, unknown>> {
  const query = new URLSearchParams({ from: String(NOW - 3600), to: String(NOW + 86400), interval: 'hour', bots: 'include' });
  if (domain !== null) query.set('domain', domain);
  return JSON.parse(await get(door, `/api/urls/${CODE}/stats?${query}`)) as Record<string, unknown>;
}

async function assertExportByDomain(door: Door, home: string): Promise<void> {
  await withVisits(door);
  const onGo = EVENTS.filter((e) => e.domain === GO);
  const onDefault = EVENTS.filter((e) => e.domain === null);

  // Every event with its bare code (never the store's `go.example/same01`) and its domain.
  assert.equal(await get(door, '/api/visits/export'), jsonl(EVENTS));
  assert.equal(await get(door, '/api/visits/export?format=csv'), csvOf(EVENTS));

  // code and domain: the link of that code on that domain, and no other.
  const cases: [string, Event[]][] = [
    [`?code=${CODE}&domain=${GO}`, onGo],
    [`?code=${CODE}&domain=GO.Example`, onGo],
    [`?code=${CODE}&domain=${GO}&bots=exclude`, onGo.filter((e) => !e.bot)],
    [`?code=${CODE}&domain=${GO}&from=${NOW + 60}`, onGo.slice(1)],
    [`?code=${CODE}`, onDefault],
    [`?code=${CODE}&domain=default`, onDefault],
    [`?code=${CODE}&domain=${home}`, onDefault],
  ];
  for (const [query, expected] of cases) {
    assert.equal(await get(door, `/api/visits/export${query}`), jsonl(expected), query);
  }
  assert.equal(await get(door, `/api/visits/export?format=csv&code=${CODE}&domain=${GO}`), csvOf(onGo));

  // A host this instance does not serve: 400, naming its domains.
  for (const query of [`?code=${CODE}&domain=x.example`, `?format=csv&code=${CODE}&domain=go.example.org`]) {
    const r = await door.req(`/api/visits/export${query}`, { headers: ADMIN });
    assert.equal(r.status, 400, query);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { detail: `domain must be one of this service's domains (${home}, ${GO}), or absent for the default one` }, query);
  }
}

/** The scenario exported from one instance and imported (links, then visits) into fresh ones, in both formats. */
async function assertMovedByDomain(open: Open): Promise<void> {
  const { door: from } = await open();
  await withVisits(from);
  const links = await get(from, '/api/export');
  const events = await get(from, '/api/visits/export');
  const csv = await get(from, '/api/visits/export?format=csv');
  assert.equal(events, jsonl(EVENTS));
  const goStats = await stats(from, GO);
  const defaultStats = await stats(from, null);
  assert.deepEqual(
    [goStats['visits'], goStats['bots'], defaultStats['visits'], defaultStats['bots']],
    [3, 1, 1, 0],
    "each link's own visits: three on go.example, one on the default domain",
  );

  for (const [format, type, file] of [
    ['jsonl', 'application/x-ndjson', events],
    ['csv', 'text/csv', csv],
  ] as const) {
    const { door: to } = await open();
    assert.deepEqual(await post(to, '/api/import', 'application/x-ndjson', links), { imported: 2, skipped: 0, errors: [] }, format);
    assert.deepEqual(await post(to, '/api/visits/import', type, file), { imported: EVENTS.length, skipped: 0, errors: [] }, format);
    assert.equal(await get(to, '/api/visits/export'), events, `${format}: the same events, on the same domains, in the same order`);
    assert.equal(await get(to, '/api/visits/export?format=csv'), csv, format);
    assert.equal(await get(to, `/api/visits/export?code=${CODE}&domain=${GO}`), jsonl(EVENTS.filter((e) => e.domain === GO)), format);
    // Every visit came from another agent, so even the unique visitors (one per imported event) agree.
    assert.deepEqual(await stats(to, GO), goStats, `${format}: go.example's link`);
    assert.deepEqual(await stats(to, null), defaultStats, `${format}: the default domain's link`);
  }
}

/** How an import reads `domain`: the default domain unless it names another domain of this instance. */
async function assertImportReadsDomain(door: Door, home: string): Promise<void> {
  clock.ms = NOW * 1000;
  await shorten(door, { url: 'https://example.com/default', code: CODE });
  await shorten(door, { url: 'https://example.com/go', code: CODE, domain: GO });
  await shorten(door, { url: 'https://example.com/home-only', code: 'home01' });
  await shorten(door, { url: 'https://example.com/go-only', code: 'goonly', domain: GO });
  const rows: [string, number, unknown][] = [
    [CODE, 1, undefined], // 1: absent
    [CODE, 2, null], // 2
    [CODE, 3, ''], // 3
    [CODE, 4, 'default'], // 4
    [CODE, 5, home], // 5: the default host
    [CODE, 6, 'elsewhere.example'], // 6: not served here: the default domain
    [CODE, 7, GO], // 7
    [CODE, 8, 'GO.EXAMPLE'], // 8
    ['home01', 9, GO], // 9: no such link on go.example
    ['goonly', 10, null], // 10: no such link on the default domain
    ['goonly', 11, GO], // 11
  ];
  const body = rows
    .map(([code, at, domain]) => JSON.stringify({ short_code: code, time: NOW - 100 + at, ...(domain === undefined ? {} : { domain }) }))
    .join('\n');
  const unknown = 'no live link has this short_code (import the links first)';
  assert.deepEqual(await post(door, '/api/visits/import', 'application/x-ndjson', body), {
    imported: 9,
    skipped: 2,
    errors: [
      { line: 9, detail: unknown },
      { line: 10, detail: unknown },
    ],
  });
  const times = async (query: string): Promise<[number, string | null][]> =>
    (await get(door, `/api/visits/export${query}`))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event)
      .map((e) => [e.time - (NOW - 100), e.domain]);
  assert.deepEqual(
    await times(`?code=${CODE}`),
    [1, 2, 3, 4, 5, 6].map((n) => [n, null]),
  );
  assert.deepEqual(await times(`?code=${CODE}&domain=${GO}`), [
    [7, GO],
    [8, GO],
  ]);
  assert.deepEqual(await times(`?code=goonly&domain=${GO}`), [[11, GO]]);
  assert.deepEqual(await times('?code=home01'), []);

  // CSV: an empty cell is the default domain.
  const csv = ['short_code,time,domain', `${CODE},${NOW - 50},`, `${CODE},${NOW - 49},${GO}`, `goonly,${NOW - 48},`, `${CODE},${NOW - 47},default`].join(
    '\r\n',
  );
  assert.deepEqual(await post(door, '/api/visits/import', 'text/csv', csv), { imported: 3, skipped: 1, errors: [{ line: 4, detail: unknown }] });
  assert.deepEqual(
    (await times(`?code=${CODE}&from=${NOW - 50}`)).map(([n]) => n),
    [50, 53],
  );
  assert.deepEqual(
    (await times(`?code=${CODE}&domain=${GO}&from=${NOW - 50}`)).map(([n]) => n),
    [51],
  );
  // Each link's count: its own events (and nothing on the other domain's link of the code).
  const counts = (await get(door, '/api/export'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { short_code: string; domain: string | null; visit_count: number })
    .map((r) => [r.short_code, r.domain, r.visit_count]);
  const name = ([code, domain]: unknown[]): string => `${domain ?? ''}/${code}`;
  assert.deepEqual(
    counts.sort((a, b) => name(a).localeCompare(name(b))),
    [
      ['home01', null, 0],
      [CODE, null, 8],
      ['goonly', GO, 1],
      [CODE, GO, 3],
    ],
  );
}

// ---- the log store ---------------------------------------------------------------------------

const openLog =
  (t: TestContext): Open =>
  async () => {
    const h = await start(t, SETTINGS);
    return { door: h, home: `127.0.0.1:${h.port}` };
  };

test('the export names each event by its bare code and its domain; code and domain pick one link; an unknown domain is 400 (log store)', async (t) => {
  const { door, home } = await openLog(t)();
  await assertExportByDomain(door, home);
});

test('an export of visits on two domains imported into a fresh instance exports the same, with the same stats per link (log store)', async (t) => {
  await assertMovedByDomain(openLog(t));
});

test("the import records each event on its domain's link; a domain it does not serve is the default one (log store)", async (t) => {
  const { door, home } = await openLog(t)();
  await assertImportReadsDomain(door, home);
});

// ---- PostgreSQL ------------------------------------------------------------------------------

const onPg = { ...(pg ? {} : { skip: NO_POSTGRES }), timeout: 60_000 };

const openPg =
  (t: TestContext): Open =>
  async () => {
    const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
    t.after(() => app.close());
    return { door: app, home: `127.0.0.1:${app.port}` };
  };

test('the export names each event by its bare code and its domain; code and domain pick one link; an unknown domain is 400 (PostgreSQL)', onPg, async (t) => {
  const { door, home } = await openPg(t)();
  await assertExportByDomain(door, home);
});

test('an export of visits on two domains imported into a fresh instance exports the same, with the same stats per link (PostgreSQL)', onPg, async (t) => {
  await assertMovedByDomain(openPg(t));
});

test("the import records each event on its domain's link; a domain it does not serve is the default one (PostgreSQL)", onPg, async (t) => {
  const { door, home } = await openPg(t)();
  await assertImportReadsDomain(door, home);
});
