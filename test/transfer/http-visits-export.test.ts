/**
 * GET /api/visits/export over HTTP: events recorded by real redirects come out oldest first, as
 * JSON Lines or CSV, with the exact headers; the code, from, to and bots filters; the refusals
 * (400 naming the parameter, 403, 401); the visitor id is never in it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

/** An instance with links `alpha1` and `beta22` and five events at NOW, +60, +120, +3600, +7200. */
async function withEvents(t: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<Harness> {
  let clock = NOW * 1000;
  const h = await start(t, { apiKeys: [KEY], now: () => clock, ...options });
  const auth: Record<string, string> = options.apiToken ? { authorization: `Bearer ${options.apiToken}` } : {};
  for (const code of ['alpha1', 'beta22']) {
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://example.com/${code}`, code }),
    });
    assert.equal(r.status, 201, r.body);
  }
  const visit = async (code: string, at: number, headers: Record<string, string>): Promise<void> => {
    clock = at * 1000;
    assert.equal((await h.req(`/${code}`, { headers: { ...auth, ...headers } })).status, 302);
  };
  await visit('alpha1', NOW, { 'user-agent': FIREFOX, referer: 'https://News.Example/path?secret=1' });
  await visit('beta22', NOW + 60, { 'user-agent': IPHONE });
  await visit('alpha1', NOW + 120, { 'user-agent': 'curl/8.5.0' });
  await visit('beta22', NOW + 3600, { 'user-agent': FIREFOX, referer: 'https://social.example/', dnt: '1' });
  await visit('alpha1', NOW + 7200, { 'user-agent': IPHONE, referer: 'android-app://com.google.android.gm/' });
  clock = (NOW + 86400) * 1000;
  return h;
}

const ALL = [
  {
    short_code: 'alpha1',
    time: NOW,
    referrer: 'news.example',
    country: null,
    browser: 'Firefox',
    os: 'Linux',
    device: 'desktop',
    bot: false,
    domain: null,
    rule: null,
  },
  { short_code: 'beta22', time: NOW + 60, referrer: null, country: null, browser: 'Safari', os: 'iOS', device: 'mobile', bot: false, domain: null, rule: null },
  { short_code: 'alpha1', time: NOW + 120, referrer: null, country: null, browser: 'Other', os: 'Other', device: 'other', bot: true, domain: null, rule: null },
  // DNT: 1 — the event holds only time and bot.
  { short_code: 'beta22', time: NOW + 3600, referrer: null, country: null, browser: null, os: null, device: null, bot: false, domain: null, rule: null },
  {
    short_code: 'alpha1',
    time: NOW + 7200,
    referrer: 'com.google.android.gm',
    country: null,
    browser: 'Safari',
    os: 'iOS',
    device: 'mobile',
    bot: false,
    domain: null,
    rule: null,
  },
];

const jsonl = (events: readonly object[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join('');

async function exported(h: Harness, query: string, headers: Record<string, string> = {}) {
  return h.req(`/api/visits/export${query}`, { headers: { 'x-api-key': KEY, ...headers } });
}

test('JSON Lines: every event, oldest first, exactly, with its headers; no visitor id', async (t) => {
  const h = await withEvents(t);
  const r = await exported(h, '');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/x-ndjson');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="visits-2024-05-02.jsonl"');
  assert.equal(r.headers['deprecation'], undefined);
  assert.equal(r.body, jsonl(ALL));
  assert.doesNotMatch(r.body, /visitor/);
});

test('CSV: the exact header, empty fields for null, true/false for bot', async (t) => {
  const h = await withEvents(t);
  const r = await exported(h, '?format=csv');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/csv');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="visits-2024-05-02.csv"');
  assert.equal(
    r.body,
    'short_code,time,referrer,country,browser,os,device,bot,domain,rule\r\n' +
      `alpha1,${NOW},news.example,,Firefox,Linux,desktop,false,,\r\n` +
      `beta22,${NOW + 60},,,Safari,iOS,mobile,false,,\r\n` +
      `alpha1,${NOW + 120},,,Other,Other,other,true,,\r\n` +
      `beta22,${NOW + 3600},,,,,,false,,\r\n` +
      `alpha1,${NOW + 7200},com.google.android.gm,,Safari,iOS,mobile,false,,\r\n`,
  );
  const empty = await start(t, { apiKeys: [KEY] });
  const none = await exported(empty, '?format=csv');
  assert.equal(none.status, 200);
  assert.equal(none.body, 'short_code,time,referrer,country,browser,os,device,bot,domain,rule\r\n', 'no events: the header alone');
  assert.equal((await exported(empty, '')).body, '');
});

test('filters: code, from (inclusive), to (exclusive) as Unix seconds or ISO 8601, bots (default include)', async (t) => {
  const h = await withEvents(t);
  const cases: [string, typeof ALL][] = [
    ['?code=alpha1', ALL.filter((e) => e.short_code === 'alpha1')],
    ['?code=beta22&format=jsonl', ALL.filter((e) => e.short_code === 'beta22')],
    ['?code=nolink', []],
    // The default domain, named as `default` or as its host, is the one a code without a domain names.
    ['?code=alpha1&domain=default', ALL.filter((e) => e.short_code === 'alpha1')],
    [`?code=beta22&domain=127.0.0.1:${h.port}`, ALL.filter((e) => e.short_code === 'beta22')],
    [`?from=${NOW + 60}`, ALL.slice(1)],
    [`?to=${NOW + 3600}`, ALL.slice(0, 3)],
    [`?from=${NOW + 60}&to=${NOW + 3601}`, ALL.slice(1, 4)],
    ['?from=2024-05-01T13:00:00Z', ALL.slice(3)],
    ['?from=2024-05-01T15:00:00%2B02:00', ALL.slice(3) /* 13:00Z */],
    ['?to=2024-05-01T12:02:00', ALL.slice(0, 2)], // no offset: UTC
    ['?bots=include', ALL],
    ['?bots=exclude', ALL.filter((e) => !e.bot)],
    ['?bots=only', ALL.filter((e) => e.bot)],
    [`?code=alpha1&bots=exclude&from=${NOW + 1}`, [ALL[4]!]],
  ];
  for (const [query, expected] of cases) {
    const r = await exported(h, query);
    assert.equal(r.status, 200, query);
    assert.equal(r.body, jsonl(expected), query);
  }
});

test('400 naming the bad parameter; 403 empty without the key; 401 at the gate; 405 for another method', async (t) => {
  const h = await withEvents(t, { apiToken: 'tok' });
  const bearer = { authorization: 'Bearer tok' };
  const bad: [string, string][] = [
    ['?format=xml', 'format must be jsonl or csv'],
    ['?code=a.b', 'code must be a short code: 1 to 64 characters of A-Z a-z 0-9 - _'],
    ['?code=', 'code must be a short code: 1 to 64 characters of A-Z a-z 0-9 - _'],
    ['?from=yesterday', 'from must be Unix seconds or an ISO 8601 date or time such as 2026-03-29 or 2026-03-29T14:00:00Z, not "yesterday"'],
    ['?to=2024-02-30', 'to must be Unix seconds or an ISO 8601 date or time, not "2024-02-30" (no such date or time)'],
    ['?to=99999999999', 'to: 99999999999 (Unix seconds) is after 2106-02-07T06:28:15Z, the latest time'],
    [`?from=${NOW}&to=${NOW}`, 'from: 2024-05-01T12:00:00Z is not before to, 2024-05-01T12:00:00Z'],
    ['?to=0', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    ['?bots=some', 'bots must be one of exclude, include, only'],
    // This instance serves its default domain alone.
    ['?code=alpha1&domain=go.example', `domain must be one of this service's domains (127.0.0.1:${h.port}), or absent for the default one`],
  ];
  for (const [query, detail] of bad) {
    const r = await exported(h, query, bearer);
    assert.equal(r.status, 400, query);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { detail }, query);
  }
  for (const key of [undefined, '', 'wrong']) {
    const r = await h.req('/api/visits/export', { headers: key === undefined ? bearer : { ...bearer, 'x-api-key': key } });
    assert.equal(r.status, 403, String(key));
    assert.equal(r.body, '');
  }
  const gated = await h.req('/api/visits/export', { headers: { 'x-api-key': KEY } });
  assert.equal(gated.status, 401);
  assert.equal(gated.headers['www-authenticate'], 'Bearer');
  const ok = await exported(h, '', bearer);
  assert.equal(ok.status, 200);
  assert.equal(ok.body, jsonl(ALL));
  const query = await h.req(`/api/visits/export?api_key=${KEY}`, { headers: bearer });
  assert.equal(query.status, 200);
  assert.match(String(query.headers['deprecation']), /^@\d+$/, 'the deprecated api_key works, and says so');
  assert.equal((await h.req('/api/visits/export', { method: 'POST', headers: { ...bearer, 'x-api-key': KEY } })).status, 405);
});

test("a deleted link's events go with it: not exported", async (t) => {
  const h = await withEvents(t);
  assert.equal((await h.req('/api/urls/beta22', { method: 'DELETE', headers: { 'x-api-key': KEY } })).status, 204);
  assert.equal((await exported(h, '')).body, jsonl(ALL.filter((e) => e.short_code === 'alpha1')));
});
