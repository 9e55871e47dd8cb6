/**
 * Orphan visits (docs/analytics.md): a GET that no link answered — a domain's `GET /` where the UI
 * is not served, an unknown code, an expired or used-up link — is recorded with its type, its domain
 * and the private fields of a visit, never the path; a HEAD, a redirect and the UI are none. They
 * are paged by `GET /api/visits/orphan`, counted apart in `/api/stats`, served to Shlink's SDK, kept
 * through a compaction and a restart, and not recorded with `VISIT_TRACKING=counts`. On the log
 * store and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateValue } from '../../src/published/json-schema.ts';
import { ORPHAN_LIST_SCHEMA } from '../../src/published/visit-schemas.ts';
import { onOneProcess } from '../support/cluster.ts';
import { dataDir, start, type Harness } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';
import { shlinkClient } from '../support/shlink-sdk.ts';

type Door = Pick<Harness, 'req' | 'shortener'>;

const KEY = 'admin-key';
const GO = 'go.example';
const SETTINGS = { apiKeys: [KEY], domains: [GO], shlinkApi: true, logLevel: 'silent' } as const;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const JSON_KEY = { 'content-type': 'application/json', 'x-api-key': KEY };

const pg = await pgServer();

interface Orphan {
  type: string;
  domain: string | null;
  browser: string | null;
  bot: boolean;
  referrer: string | null;
}

async function orphans(door: Door, query = '?bots=include'): Promise<{ total: string | undefined; visits: Orphan[] }> {
  const r = await door.req(`/api/visits/orphan${query}`, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, r.body);
  const body = JSON.parse(r.body) as { count: number; visits: Orphan[] };
  assert.deepEqual(validateValue(ORPHAN_LIST_SCHEMA, body), []);
  assert.equal(body.count, body.visits.length);
  return { total: r.headers['x-total-count'] as string | undefined, visits: body.visits };
}

/** The orphan visits a door has, once each background write has landed. */
async function settled(door: Door, n: number): Promise<Orphan[]> {
  for (let i = 0; i < 500; i++) {
    const { visits } = await orphans(door);
    if (visits.length >= n) return visits;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return (await orphans(door)).visits;
}

const brief = (v: Orphan): string => `${v.type} ${v.domain} ${v.browser} ${v.bot}${v.referrer === null ? '' : ` ${v.referrer}`}`;

async function assertOrphans(door: Door, reopen?: () => Promise<Door>): Promise<void> {
  const made = await door.req('/api/shorten', {
    method: 'POST',
    headers: JSON_KEY,
    body: JSON.stringify({ url: 'https://example.com/once', code: 'once01', max_visits: 1 }),
  });
  assert.equal(made.status, 201, made.body);
  const set = await door.req(`/api/domains/${GO}`, { method: 'PATCH', headers: JSON_KEY, body: '{"base_url":"https://home.example/"}' });
  assert.equal(set.status, 200, set.body);

  // None of these is an orphan visit: a redirect, a HEAD, the UI on the default domain.
  assert.equal((await door.req('/once01')).status, 302);
  assert.equal((await door.req('/nope42', { method: 'HEAD' })).status, 404);
  assert.equal((await door.req('/')).status, 200);
  // These are, in this order.
  assert.equal((await door.req('/wp-login.php', { headers: { 'user-agent': CHROME, referer: 'https://scan.example/x' } })).status, 404);
  assert.equal((await door.req('/nope42', { headers: { host: GO, 'user-agent': 'curl/8.5.0' } })).status, 404);
  assert.equal((await door.req('/', { headers: { host: GO, 'user-agent': CHROME } })).status, 302);
  assert.equal((await door.req('/once01', { headers: { 'user-agent': CHROME } })).status, 410);

  const expected = [
    'expired null Chrome false',
    `base_url ${GO} Chrome false`,
    `invalid_short_url ${GO} Other true`,
    'invalid_short_url null Chrome false scan.example',
  ];
  assert.deepEqual((await settled(door, 4)).map(brief), expected, 'newest first');
  const raw = (await door.req('/api/visits/orphan?bots=include', { headers: { 'x-api-key': KEY } })).body;
  assert.doesNotMatch(raw, /wp-login|nope42/, 'the path asked for is never kept');

  // Paged and filtered like a link's visits; X-Total-Count counts what the filter keeps.
  const byDefault = await orphans(door, '');
  assert.deepEqual([byDefault.total, byDefault.visits.map(brief)], ['3', [expected[0], expected[1], expected[3]]], 'bots are left out by default');
  const page = await orphans(door, '?bots=include&limit=2&offset=1');
  assert.deepEqual([page.total, page.visits.map(brief)], ['4', expected.slice(1, 3)]);
  assert.equal((await orphans(door, '?bots=only')).total, '1');
  const bad = await door.req('/api/visits/orphan?limit=0', { headers: { 'x-api-key': KEY } });
  assert.deepEqual([bad.status, bad.body], [400, '{"detail":"limit must be an integer from 1 to 1000"}']);

  // Counted apart: the stats of every link count them alone, and no link's visits moved.
  const stats = async (bots: string): Promise<{ orphan_visits: number; visit_count: number }> =>
    JSON.parse((await door.req(`/api/stats?bots=${bots}`, { headers: { 'x-api-key': KEY } })).body) as { orphan_visits: number; visit_count: number };
  assert.deepEqual([(await stats('include')).orphan_visits, (await stats('exclude')).orphan_visits, (await stats('only')).orphan_visits], [4, 3, 1]);
  assert.equal((await stats('include')).visit_count, 1, 'the one redirect');

  // Shlink's clients see them too.
  const sdk = shlinkClient(door.shortener.config.baseUrl, KEY);
  const overview = await sdk.getVisitsOverview();
  assert.deepEqual(overview.orphanVisits, { total: 4, nonBots: 3, bots: 1 });
  const listed = await sdk.getOrphanVisits();
  assert.deepEqual(
    listed.data.map((v) => [(v as unknown as { type: string }).type, v.potentialBot]),
    [
      ['invalid_short_url', false],
      ['base_url', false],
      ['invalid_short_url', true],
      ['invalid_short_url', false],
    ],
  );

  const viewerOnly = await door.req('/api/keys', { method: 'POST', headers: JSON_KEY, body: '{"name":"c","role":"creator"}' });
  const creator = (JSON.parse(viewerOnly.body) as { key: string }).key;
  assert.equal((await door.req('/api/visits/orphan', { headers: { 'x-api-key': creator } })).status, 403);

  if (reopen !== undefined) assert.deepEqual((await settled(await reopen(), 4)).map(brief), expected, 'kept through a compaction and a restart');
}

test(
  'orphan visits are recorded with their type and domain, paged, counted apart, and kept (log store)',
  onOneProcess('it compacts its log and starts again on it'),
  async (t) => {
    const dir = dataDir(t);
    const first = await dir.start(SETTINGS);
    await assertOrphans(first, async () => {
      await first.shortener.compact?.();
      await first.close(true);
      return dir.start(SETTINGS);
    });
  },
);

test('orphan visits are recorded with their type and domain, paged and counted apart (PostgreSQL)', {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const url = await pg!.createDatabase();
  const app = await openOnDatabase(SETTINGS, url);
  t.after(() => app.close());
  await assertOrphans(app, async () => {
    const other = await openOnDatabase(SETTINGS, url);
    t.after(() => other.close());
    return other;
  });
});

test('with VISIT_TRACKING=counts no orphan visit is recorded', async (t) => {
  const h = await start(t, { ...SETTINGS, visitTracking: 'counts' });
  assert.equal((await h.req('/nope42')).status, 404);
  assert.equal((await h.req('/', { headers: { host: GO } })).status, 404);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await orphans(h), { total: '0', visits: [] });
});
