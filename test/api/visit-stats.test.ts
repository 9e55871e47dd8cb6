/**
 * The visit routes through a real server (docs/analytics.md): `GET /api/urls/<code>/stats`,
 * `GET /api/stats`, `GET` and `DELETE /api/urls/<code>/visits`. Visits are made by real redirects
 * with real `User-Agent`s and `Referer`s on a fake clock; the answers are checked whole. The key
 * comes first (403, empty, also for an unknown code), then the parameters (400 naming the bad one),
 * then the code (404).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataDir, start, type Harness, type Reply } from '../support/helpers.ts';

const KEY = 'k1';
const ADMIN = { 'x-api-key': KEY };
/** 2026-03-29T10:00:00Z: Berlin went to summer time at 01:00Z that day. */
const NOW_MS = Date.UTC(2026, 2, 29, 10);
const NOW_S = NOW_MS / 1000;
const DAY = 86_400;

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const CURL = 'curl/8.5.0';

interface Clock {
  ms: number;
}

async function setup(t: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<{ h: Harness; clock: Clock }> {
  const clock = { ms: NOW_MS };
  const h = await start(t, { apiKeys: [KEY], now: () => clock.ms, ...options });
  return { h, clock };
}

async function visit(h: Harness, code: string, headers: Record<string, string>): Promise<void> {
  const r = await h.req(`/${code}`, { headers });
  assert.equal(r.status, 302, r.body);
}

function ok(r: Reply, label = ''): Record<string, unknown> {
  assert.equal(r.status, 200, `${label} ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/json');
  return JSON.parse(r.body) as Record<string, unknown>;
}

function detail(r: Reply, label: string): string {
  assert.equal(r.status, 400, `${label}: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as { detail: string }).detail;
}

const EMPTY = { top: [], others: 0 };

test("a link's stats: visits, bots, unique visitors, every bucket, the top lists, the echoed range", async (t) => {
  const { h, clock } = await setup(t);
  const code = await h.shorten('https://example.com/a');
  // Yesterday (28 March, UTC): one Chrome visit from Hacker News.
  clock.ms = NOW_MS - DAY * 1000;
  await visit(h, code, { 'user-agent': CHROME, referer: 'https://news.ycombinator.com/item?id=1' });
  clock.ms = NOW_MS;
  await visit(h, code, { 'user-agent': CHROME, referer: 'https://news.ycombinator.com/item?id=2' });
  await visit(h, code, { 'user-agent': CHROME });
  await visit(h, code, { 'user-agent': FIREFOX, referer: 'https://t.co/x' });
  await visit(h, code, { 'user-agent': CURL });
  await visit(h, code, {});

  const from = NOW_S - 2 * DAY;
  const body = ok(await h.req(`/api/urls/${code}/stats?from=${from}&to=${NOW_S + 1}&interval=day`, { headers: ADMIN }));
  assert.deepEqual(body, {
    short_code: code,
    tracking: 'events',
    visit_count: 6,
    untracked_visits: 0,
    from: Date.UTC(2026, 2, 27) / 1000,
    to: Date.UTC(2026, 2, 30) / 1000,
    interval: 'day',
    tz: 'UTC',
    visits: 5,
    // Chrome from one address is one visitor a day: yesterday's and today's, Firefox, and the visit with no User-Agent.
    unique_visitors: 4,
    bots: 1,
    series: [
      { start: Date.UTC(2026, 2, 27) / 1000, visits: 0, unique_visitors: 0 },
      { start: Date.UTC(2026, 2, 28) / 1000, visits: 1, unique_visitors: 1 },
      { start: Date.UTC(2026, 2, 29) / 1000, visits: 4, unique_visitors: 3 },
    ],
    referrers: {
      top: [
        { value: null, visits: 2 },
        { value: 'news.ycombinator.com', visits: 2 },
        { value: 't.co', visits: 1 },
      ],
      others: 0,
    },
    countries: { top: [{ value: null, visits: 5 }], others: 0 },
    browsers: {
      top: [
        { value: 'Chrome', visits: 3 },
        { value: null, visits: 1 },
        { value: 'Firefox', visits: 1 },
      ],
      others: 0,
    },
    os: {
      top: [
        { value: 'Windows', visits: 3 },
        { value: null, visits: 1 },
        { value: 'Linux', visits: 1 },
      ],
      others: 0,
    },
    devices: {
      top: [
        { value: 'desktop', visits: 4 },
        { value: null, visits: 1 },
      ],
      others: 0,
    },
  });

  // bots=only counts the curl visit alone; bots is the same whatever the filter.
  const only = ok(await h.req(`/api/urls/${code}/stats?from=${from}&to=${NOW_S + 1}&interval=day&bots=only`, { headers: ADMIN }));
  assert.deepEqual([only['visits'], only['bots'], only['unique_visitors']], [1, 1, 1]);
  const all = ok(await h.req(`/api/urls/${code}/stats?from=${from}&to=${NOW_S + 1}&interval=day&bots=include`, { headers: ADMIN }));
  assert.deepEqual([all['visits'], all['bots']], [6, 1]);
});

test('defaults: the last 30 days in daily UTC buckets; a Berlin day of 23 hours; hours in Kathmandu', async (t) => {
  const { h } = await setup(t);
  const code = await h.shorten('https://example.com/b');
  await visit(h, code, { 'user-agent': IPHONE });
  const body = ok(await h.req(`/api/urls/${code}/stats`, { headers: ADMIN }));
  assert.equal(body['interval'], 'day');
  assert.equal(body['tz'], 'UTC');
  assert.equal(body['to'], Date.UTC(2026, 2, 30) / 1000);
  assert.equal(body['from'], Date.UTC(2026, 1, 27) / 1000);
  const series = body['series'] as { start: number; visits: number }[];
  assert.equal(series.length, 31);
  assert.deepEqual(series.at(-1), { start: Date.UTC(2026, 2, 29) / 1000, visits: 1, unique_visitors: 1 });
  assert.deepEqual(body['devices'], { top: [{ value: 'mobile', visits: 1 }], others: 0 });

  const berlin = ok(await h.req(`/api/urls/${code}/stats?from=2026-03-29&to=2026-03-30&tz=Europe/Berlin`, { headers: ADMIN }));
  assert.equal(berlin['interval'], 'hour');
  assert.equal((berlin['series'] as unknown[]).length, 23);
  assert.equal(berlin['from'], Date.UTC(2026, 2, 28, 23) / 1000);
  const day = ok(await h.req(`/api/urls/${code}/stats?from=2026-03-29&to=2026-03-30&tz=Europe/Berlin&interval=day`, { headers: ADMIN }));
  assert.deepEqual(day['series'], [{ start: Date.UTC(2026, 2, 28, 23) / 1000, visits: 1, unique_visitors: 1 }]);
  assert.equal(day['to'], Date.UTC(2026, 2, 29, 22) / 1000);
  const kathmandu = ok(await h.req(`/api/urls/${code}/stats?from=2026-03-29T15:00&to=2026-03-29T16:00&tz=Asia/Kathmandu`, { headers: ADMIN }));
  // 15:45 in Kathmandu is 10:00Z.
  assert.deepEqual(kathmandu['series'], [{ start: Date.UTC(2026, 2, 29, 9, 15) / 1000, visits: 1, unique_visitors: 1 }]);
});

test('the key first (403, empty, unknown code too), then the parameters (400 naming them), then the code (404)', async (t) => {
  const { h } = await setup(t);
  const code = await h.shorten('https://example.com/c');
  for (const path of [`/api/urls/${code}/stats`, '/api/urls/nosuch/stats', '/api/stats', `/api/urls/${code}/visits`, '/api/urls/nosuch/visits']) {
    for (const headers of [{}, { 'x-api-key': 'wrong' }]) {
      const r = await h.req(path, { headers });
      assert.deepEqual([r.status, r.body], [403, ''], path);
    }
    if (path.endsWith('/visits')) {
      const r = await h.req(path, { method: 'DELETE', headers: { 'x-api-key': 'wrong' } });
      assert.deepEqual([r.status, r.body], [403, ''], `DELETE ${path}`);
    }
  }
  assert.equal((await h.req('/api/urls/nosuch/stats', { headers: ADMIN })).status, 404);
  assert.equal((await h.req('/api/urls/no.such/stats', { headers: ADMIN })).status, 404);
  assert.equal((await h.req('/api/urls/nosuch/visits', { headers: ADMIN })).status, 404);
  assert.equal((await h.req('/api/urls/nosuch/visits', { method: 'DELETE', headers: ADMIN })).status, 404);
  assert.equal((await h.req('/api/urls/nosuch/stats?tz=Nowhere/Else', { headers: ADMIN })).status, 400);

  const bad: [string, string][] = [
    ['from=yesterday', 'from'],
    ['to=2026-02-30', 'to'],
    [`from=${NOW_S}&to=${NOW_S - 10}`, 'from'],
    ['interval=minute', 'interval'],
    ['tz=Mars/Olympus', 'tz'],
    ['bots=all', 'bots'],
    [`from=${NOW_S - 1001 * 3600}&to=${NOW_S}&interval=hour`, 'interval'],
  ];
  for (const [params, name] of bad) {
    assert.match(detail(await h.req(`/api/urls/${code}/stats?${params}`, { headers: ADMIN }), params), new RegExp(`\\b${name}\\b`), params);
    assert.match(detail(await h.req(`/api/stats?${params}`, { headers: ADMIN }), params), new RegExp(`\\b${name}\\b`), params);
  }
  assert.match(detail(await h.req(`/api/urls/${code}/visits?limit=0`, { headers: ADMIN }), 'limit'), /\blimit\b/);
  assert.match(detail(await h.req(`/api/urls/${code}/visits?limit=1001`, { headers: ADMIN }), 'limit'), /\blimit\b/);
  assert.match(detail(await h.req(`/api/urls/${code}/visits?offset=-1`, { headers: ADMIN }), 'offset'), /\boffset\b/);
  assert.match(detail(await h.req(`/api/urls/${code}/visits?bots=some`, { headers: ADMIN }), 'bots'), /\bbots\b/);
});

test('the stats of every link: visit_count summed, no short_code, the links top list; a deleted link is gone from them', async (t) => {
  const { h } = await setup(t);
  const a = await h.shorten('https://example.com/1');
  const b = await h.shorten('https://example.com/2');
  const c = await h.shorten('https://example.com/3');
  for (let i = 0; i < 3; i++) await visit(h, b, { 'user-agent': CHROME });
  await visit(h, a, { 'user-agent': FIREFOX });
  await visit(h, c, { 'user-agent': FIREFOX });
  await visit(h, c, { 'user-agent': CURL });
  const body = ok(await h.req('/api/stats', { headers: ADMIN }));
  assert.equal(body['short_code'], undefined);
  assert.deepEqual([body['visit_count'], body['visits'], body['bots'], body['unique_visitors']], [6, 5, 1, 2]);
  assert.deepEqual(body['links'], [
    { short_code: b, domain: null, visits: 3 },
    ...[
      { short_code: a, domain: null, visits: 1 },
      { short_code: c, domain: null, visits: 1 },
    ].sort((x, y) => (x.short_code < y.short_code ? -1 : 1)),
  ]);
  assert.equal((await h.req(`/api/urls/${b}`, { method: 'DELETE', headers: ADMIN })).status, 204);
  const after = ok(await h.req('/api/stats', { headers: ADMIN }));
  assert.deepEqual([after['visit_count'], after['visits']], [3, 2]);
  assert.deepEqual((after['links'] as { short_code: string }[]).map((l) => l.short_code).sort(), [a, c].sort());
});

test('the visits of a link: newest first, never the visitor id, paged with X-Total-Count, filtered by from, to and bots', async (t) => {
  const { h, clock } = await setup(t);
  const code = await h.shorten('https://example.com/v');
  const agents = [CHROME, FIREFOX, CURL, IPHONE, CHROME];
  for (const [i, agent] of agents.entries()) {
    clock.ms = NOW_MS + i * 1000;
    await visit(h, code, { 'user-agent': agent, referer: `https://r${i}.example/` });
  }
  const r = await h.req(`/api/urls/${code}/visits`, { headers: ADMIN });
  const body = ok(r);
  assert.equal(r.headers['x-total-count'], '4');
  const visits = body['visits'] as Record<string, unknown>[];
  assert.equal(body['count'], 4);
  assert.deepEqual(
    visits.map((v) => v['time']),
    [4, 3, 1, 0].map((i) => NOW_S + i),
  );
  assert.deepEqual(visits[0], {
    time: NOW_S + 4,
    referrer: 'r4.example',
    country: null,
    browser: 'Chrome',
    os: 'Windows',
    device: 'desktop',
    bot: false,
    rule: null,
  });
  assert.deepEqual(Object.keys(visits[1]!).sort(), ['bot', 'browser', 'country', 'device', 'os', 'referrer', 'rule', 'time']);

  const page = await h.req(`/api/urls/${code}/visits?limit=2&offset=1&bots=include`, { headers: ADMIN });
  assert.equal(page.headers['x-total-count'], '5');
  assert.deepEqual(
    (ok(page)['visits'] as { time: number }[]).map((v) => v.time),
    [NOW_S + 3, NOW_S + 2],
  );
  const bots = ok(await h.req(`/api/urls/${code}/visits?bots=only`, { headers: ADMIN }));
  assert.deepEqual(bots['visits'], [
    { time: NOW_S + 2, referrer: 'r2.example', country: null, browser: 'Other', os: 'Other', device: 'other', bot: true, rule: null },
  ]);
  const ranged = await h.req(`/api/urls/${code}/visits?from=${NOW_S + 1}&to=${NOW_S + 4}&bots=include`, { headers: ADMIN });
  assert.equal(ranged.headers['x-total-count'], '3');
  const iso = await h.req(`/api/urls/${code}/visits?from=2026-03-29T10:00:03Z`, { headers: ADMIN });
  assert.equal(iso.headers['x-total-count'], '2');
});

test('DELETE visits removes the events and sets both counts to 0; a used-up link can be visited again', async (t) => {
  const { h } = await setup(t);
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/once', max_visits: 2 }),
  });
  const code = r.body.slice(r.body.lastIndexOf('/') + 1);
  await visit(h, code, { 'user-agent': CHROME });
  await visit(h, code, { 'user-agent': FIREFOX });
  assert.equal((await h.req(`/${code}`)).status, 410);
  const deleted = await h.req(`/api/urls/${code}/visits`, { method: 'DELETE', headers: ADMIN });
  assert.deepEqual(ok(deleted), { deleted_visits: 2 });
  const stats = ok(await h.req(`/api/urls/${code}/stats`, { headers: ADMIN }));
  assert.deepEqual([stats['visit_count'], stats['untracked_visits'], stats['visits']], [0, 0, 0]);
  assert.equal((await h.req(`/api/urls/${code}/visits`, { headers: ADMIN })).headers['x-total-count'], '0');
  await visit(h, code, { 'user-agent': CHROME });
  assert.deepEqual(ok(await h.req(`/api/urls/${code}/visits`, { method: 'DELETE', headers: ADMIN })), { deleted_visits: 1 });
});

test('api_key in the query still works and says it is deprecated', async (t) => {
  const { h } = await setup(t);
  const code = await h.shorten('https://example.com/d');
  const r = await h.req(`/api/urls/${code}/stats?api_key=${KEY}`);
  ok(r);
  assert.ok(r.headers.deprecation !== undefined);
  assert.ok(r.headers.link !== undefined);
  assert.equal((await h.req(`/api/urls/${code}/stats`, { headers: ADMIN })).headers.deprecation, undefined);
});

test('with visit_tracking counts the stats still answer and say so; a visit counted then is untracked', async (t) => {
  const { h } = await setup(t, { visitTracking: 'counts' });
  const code = await h.shorten('https://example.com/e');
  await visit(h, code, { 'user-agent': CHROME });
  const body = ok(await h.req(`/api/urls/${code}/stats`, { headers: ADMIN }));
  assert.deepEqual([body['tracking'], body['visit_count'], body['untracked_visits'], body['visits']], ['counts', 1, 1, 0]);
  assert.deepEqual(body['referrers'], EMPTY);
});

test('restarted with visit_tracking counts, the events recorded before still answer; later visits are untracked', async (t) => {
  const data = dataDir(t);
  const clock = { ms: NOW_MS };
  let h = await data.start({ apiKeys: [KEY], now: () => clock.ms });
  const code = await h.shorten('https://example.com/switch');
  await visit(h, code, { 'user-agent': CHROME, referer: 'https://t.co/1' });
  await h.close(true);
  h = await data.start({ apiKeys: [KEY], now: () => clock.ms, visitTracking: 'counts' });
  await visit(h, code, { 'user-agent': FIREFOX });
  const body = ok(await h.req(`/api/urls/${code}/stats`, { headers: ADMIN }));
  assert.deepEqual([body['tracking'], body['visit_count'], body['untracked_visits'], body['visits']], ['counts', 2, 1, 1]);
  assert.deepEqual(body['referrers'], { top: [{ value: 't.co', visits: 1 }], others: 0 });
  assert.deepEqual(body['browsers'], { top: [{ value: 'Chrome', visits: 1 }], others: 0 });
});
