/**
 * `stats` and `db-stats` of YOURLS' API (docs/compat.md#yourls-api), through HTTP: which links each
 * filter returns and in what order (ties newest first), `limit` and `start` read as PHP reads them,
 * and the totals after visits, deletes and expiry.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { api } from '../support/yourls.ts';

const KEY = 'stats-key-1';
const DAY = 86_400_000;

interface StatsBody {
  links?: Record<string, { shorturl: string; url: string; title: string; timestamp: string; ip: string; clicks: number }>;
  stats: { total_links: number; total_clicks: number };
  statusCode: string;
  message: string;
}

async function stats(h: Harness, params: Record<string, string>): Promise<StatsBody> {
  const reply = await api(h, { signature: KEY, action: 'stats', format: 'json', ...params });
  assert.equal(reply.status, 200, reply.body);
  return JSON.parse(reply.body) as StatsBody;
}

/** The codes a stats answer lists, in order; its keys must be link_1, link_2, … */
function codes(body: StatsBody): string[] {
  const links = Object.entries(body.links ?? {});
  assert.deepEqual(
    links.map(([key]) => key),
    links.map((_, i) => `link_${i + 1}`),
  );
  return links.map(([, link]) => link.shorturl.slice(link.shorturl.lastIndexOf('/') + 1));
}

/**
 * Five links a minute apart, oldest first, with 2, 5, 0, 5 and 1 visits: a tie at the top and
 * nothing else equal.
 */
async function fiveLinks(t: Parameters<typeof start>[0]) {
  let clock = Date.UTC(2030, 3, 4, 5, 0, 0);
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY], now: () => clock });
  const visits = { a: 2, b: 5, c: 0, d: 5, e: 1 };
  const code: Record<string, string> = {};
  for (const [name, count] of Object.entries(visits)) {
    code[name] = await h.shorten(`https://example.com/${name}`);
    for (let i = 0; i < count; i++) assert.equal((await h.req(`/${code[name]}`)).status, 302);
    clock += 60_000;
  }
  const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((n) => code[n]!);
  return { h, a: a!, b: b!, c: c!, d: d!, e: e!, advance: (ms: number) => (clock += ms) };
}

test('each filter returns its links in its order; ties newest first', async (t) => {
  const { h, a, b, c, d, e } = await fiveLinks(t);
  assert.deepEqual(codes(await stats(h, { filter: 'top', limit: '10' })), [d, b, a, e, c]);
  assert.deepEqual(codes(await stats(h, { filter: 'bottom', limit: '10' })), [c, e, a, d, b]);
  assert.deepEqual(codes(await stats(h, { filter: 'last', limit: '10' })), [e, d, c, b, a]);
  const shuffled = codes(await stats(h, { filter: 'rand', limit: '10' }));
  assert.deepEqual([...shuffled].sort(), [a, b, c, d, e].sort());
  const three = codes(await stats(h, { filter: 'random', limit: '3' }));
  assert.equal(new Set(three).size, 3);
  for (const code of three) assert.ok([a, b, c, d, e].includes(code));
  // No filter, or an unknown one, is top.
  assert.deepEqual(codes(await stats(h, { limit: '2' })), [d, b]);
  assert.deepEqual(codes(await stats(h, { filter: 'best', limit: '2' })), [d, b]);
});

test("limit and start: a slice of the filter's order; no limit (or 0, or less) lists no links, as in YOURLS", async (t) => {
  const { h, a, b, d, e } = await fiveLinks(t);
  assert.deepEqual(codes(await stats(h, { filter: 'top', limit: '2', start: '1' })), [b, a]);
  assert.deepEqual(codes(await stats(h, { filter: 'bottom', limit: '2', start: '3' })), [d, b]);
  assert.deepEqual(codes(await stats(h, { filter: 'last', limit: '2', start: '3' })), [b, a]);
  assert.deepEqual(codes(await stats(h, { filter: 'last', limit: '9', start: '4' })), [a]);
  assert.equal(codes(await stats(h, { filter: 'rand', limit: '9', start: '3' })).length, 2);
  assert.deepEqual(codes(await stats(h, { filter: 'last', limit: '3', start: '5' })), []);
  // PHP's intval: leading digits count, the rest is ignored; a negative start is the beginning.
  assert.deepEqual(codes(await stats(h, { filter: 'last', limit: ' 2links', start: '-4' })), [e, d]);
  for (const limit of [undefined, '0', '-3', 'ten']) {
    const body = await stats(h, limit === undefined ? { filter: 'top' } : { filter: 'top', limit });
    assert.deepEqual(Object.keys(body), ['stats', 'statusCode', 'message'], String(limit));
    assert.deepEqual(body.stats, { total_links: 5, total_clicks: 13 });
  }
});

test('a listed link: its short URL, URL, title, date, no address, clicks', async (t) => {
  const { h, d } = await fiveLinks(t);
  const body = await stats(h, { filter: 'top', limit: '1' });
  assert.deepEqual(body, {
    links: {
      link_1: {
        shorturl: `${h.shortener.config.baseUrl}/${d}`,
        url: 'https://example.com/d',
        title: 'https://example.com/d',
        timestamp: '2030-04-04 05:03:00',
        ip: '',
        clicks: 5,
      },
    },
    stats: { total_links: 5, total_clicks: 13 },
    statusCode: '200',
    message: 'success',
  });
});

test('db-stats counts the live links and their visits: after visits, a delete and an expiry', async (t) => {
  const { h, a, e, advance } = await fiveLinks(t);
  const dbStats = async () => {
    const reply = await api(h, { signature: KEY, action: 'db-stats', format: 'json' });
    assert.equal(reply.status, 200);
    return JSON.parse(reply.body) as { 'db-stats': { total_links: number; total_clicks: number } };
  };
  assert.deepEqual((await dbStats())['db-stats'], { total_links: 5, total_clicks: 13 });
  for (let i = 0; i < 4; i++) await h.req(`/${e}`);
  assert.deepEqual((await dbStats())['db-stats'], { total_links: 5, total_clicks: 17 });
  const removed = await h.req(`/api/urls/${a}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
  assert.equal(removed.status, 204);
  assert.deepEqual((await dbStats())['db-stats'], { total_links: 4, total_clicks: 15 });
  const brief = await h.shorten('https://example.com/brief', 1);
  await h.req(`/${brief}`);
  assert.deepEqual((await dbStats())['db-stats'], { total_links: 5, total_clicks: 16 });
  advance(2 * DAY);
  assert.deepEqual((await dbStats())['db-stats'], { total_links: 4, total_clicks: 15 });
  assert.deepEqual((await stats(h, { limit: '10' })).stats, { total_links: 4, total_clicks: 15 });
});
