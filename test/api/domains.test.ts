/**
 * Several short domains on one instance (docs/api.md, domains): the same code on two domains is two
 * links, each redirected on its own host; every REST route of one link takes `?domain=`, the list
 * filters by domain, the QR code holds the domain's short URL; a domain's own redirects (`GET` and
 * `PATCH /api/domains`) send `GET /`, unknown codes and expired links elsewhere with a `302` that
 * is never a visit, and they outlive a restart and a compaction. On the log store and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { validateValue } from '../../src/published/json-schema.ts';
import { RECORD_SCHEMA } from '../../src/published/schemas.ts';
import { qrSvg } from '../../src/qr/svg.ts';
import { dataDir, start, type Harness, type Reply } from '../support/helpers.ts';
import { ADMIN, makeKey, ONE } from '../support/keys.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';

type Door = Pick<Harness, 'req' | 'port'>;

const GO = 'go.example';
const S = 's.example:8443';
const SETTINGS = { apiKeys: [ADMIN], domains: [GO, 'S.Example:8443'], logLevel: 'silent' } as const;
const JSON_TYPE = { 'content-type': 'application/json' };
const ADMIN_JSON = { ...JSON_TYPE, 'x-api-key': ADMIN };
const UNKNOWN_DOMAIN = (port: number): string =>
  JSON.stringify({ detail: `domain must be one of this service's domains (127.0.0.1:${port}, ${GO}, ${S}), or absent for the default one` });

const pg = await pgServer();

function create(door: Door, body: Record<string, unknown>): Promise<Reply> {
  return door.req('/api/shorten', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) });
}

/** `GET /<code>` sent to `host`: the redirect's status and target. */
async function follow(door: Door, path: string, host?: string): Promise<[number, string | undefined]> {
  const r = await door.req(path, host === undefined ? {} : { headers: { host } });
  return [r.status, r.headers.location];
}

async function json<T>(door: Door, path: string, options: { method?: string; body?: string } = {}): Promise<T> {
  const r = await door.req(path, { ...options, headers: ADMIN_JSON });
  assert.equal(r.status, 200, `${options.method ?? 'GET'} ${path}: ${r.body}`);
  return JSON.parse(r.body) as T;
}

async function assertSameCodeOnTwoDomains(door: Door): Promise<void> {
  const base = `http://127.0.0.1:${door.port}`;
  const onDefault = await create(door, { url: 'https://example.com/default', code: 'promo1' });
  assert.equal(onDefault.status, 201, onDefault.body);
  assert.equal(onDefault.body, `${base}/promo1`);
  const onGo = await create(door, { url: 'https://example.com/go', code: 'promo1', domain: 'Go.Example' });
  assert.equal(onGo.status, 201, onGo.body);
  assert.equal(onGo.body, `http://${GO}/promo1`, "the short URL is on the domain, with base_url's scheme");
  assert.equal(onGo.headers.location, `http://${GO}/promo1`);
  // The code is taken on each domain now, and free on the third.
  assert.equal((await create(door, { url: 'https://example.com/again', code: 'promo1', domain: GO })).status, 409);
  assert.equal((await create(door, { url: 'https://example.com/again', code: 'promo1', domain: 'default' })).status, 409);
  assert.equal((await create(door, { url: 'https://example.com/again', code: 'promo1', domain: `127.0.0.1:${door.port}` })).status, 409);
  const onS = await create(door, { url: 'https://example.com/s', code: 'promo1', domain: S });
  assert.equal(onS.body, `http://${S}/promo1`);
  const refused = await create(door, { url: 'https://example.com/x', code: 'promo2', domain: 'x.example' });
  assert.deepEqual([refused.status, refused.body], [400, UNKNOWN_DOMAIN(door.port)]);
  // A link to another domain of this instance would loop, as one to the default domain would.
  const loop = await create(door, { url: `http://${GO}/promo1` });
  assert.deepEqual([loop.status, loop.body], [400, '{"detail":"url points at this shortener itself; a short link to a short link would loop"}']);

  // Each host redirects to its own link; an unlisted host is the default domain.
  assert.deepEqual(await follow(door, '/promo1'), [302, 'https://example.com/default']);
  assert.deepEqual(await follow(door, '/promo1', GO), [302, 'https://example.com/go']);
  assert.deepEqual(await follow(door, '/promo1', 'GO.EXAMPLE'), [302, 'https://example.com/go']);
  assert.deepEqual(await follow(door, '/promo1', S), [302, 'https://example.com/s']);
  assert.deepEqual(await follow(door, '/promo1', 'elsewhere.example'), [302, 'https://example.com/default']);
  // Off the fast path (a query string) the answer is the same.
  assert.deepEqual(await follow(door, '/promo1?utm=1', GO), [302, 'https://example.com/go']);
  // Without trust_proxy, X-Forwarded-Host names nothing.
  const forwarded = await door.req('/promo1', { headers: { 'x-forwarded-host': GO } });
  assert.equal(forwarded.headers.location, 'https://example.com/default');

  const goRecord = await json<UrlRecord>(door, `/api/urls/promo1?domain=${GO}`);
  assert.deepEqual(validateValue(RECORD_SCHEMA, goRecord), []);
  assert.deepEqual(
    { code: goRecord.short_code, domain: goRecord.domain, url: goRecord.short_url, to: goRecord.original_url, visits: goRecord.visit_count },
    { code: 'promo1', domain: GO, url: `http://${GO}/promo1`, to: 'https://example.com/go', visits: 3 },
  );
  const defaultRecord = await json<UrlRecord>(door, '/api/urls/promo1');
  assert.deepEqual([defaultRecord.domain, defaultRecord.visit_count, defaultRecord.original_url], [null, 3, 'https://example.com/default']);
  assert.deepEqual(await json<UrlRecord>(door, '/api/urls/promo1?domain=default'), defaultRecord);
  const bad = await door.req('/api/urls/promo1?domain=x.example');
  assert.deepEqual([bad.status, bad.body], [400, UNKNOWN_DOMAIN(door.port)]);

  // The QR code holds the domain's short URL.
  const qr = await door.req(`/api/urls/promo1/qr?domain=${GO}`);
  assert.equal(qr.status, 200);
  assert.equal(qr.body, qrSvg(`http://${GO}/promo1`));
  assert.equal((await door.req('/api/urls/promo1/qr')).body, qrSvg(`${base}/promo1`));

  // An edit, the stats and the visits of one domain's link leave the other's alone.
  const edited = await json<UrlRecord>(door, `/api/urls/promo1?domain=${GO}`, { method: 'PATCH', body: '{"url":"https://example.com/go2"}' });
  assert.equal(edited.original_url, 'https://example.com/go2');
  assert.equal((await json<UrlRecord>(door, '/api/urls/promo1')).original_url, 'https://example.com/default');
  const stats = await json<{ short_code: string; visit_count: number }>(door, `/api/urls/promo1/stats?domain=${GO}`);
  assert.deepEqual([stats.short_code, stats.visit_count], ['promo1', 3]);
  const visits = await door.req(`/api/urls/promo1/visits?domain=${S}`, { headers: ADMIN_JSON });
  assert.deepEqual([visits.status, visits.headers['x-total-count']], [200, '1']);

  // The list: every domain's links, or one domain's.
  const listed = async (query: string): Promise<[string, string | null][]> =>
    (await json<{ urls: UrlRecord[] }>(door, `/api/urls${query}`)).urls.map((r) => [r.short_code, r.domain]);
  assert.deepEqual(await listed(''), [
    ['promo1', S],
    ['promo1', GO],
    ['promo1', null],
  ]);
  assert.deepEqual(await listed(`?domain=${GO}`), [['promo1', GO]]);
  assert.deepEqual(await listed('?domain=default'), [['promo1', null]]);
  assert.deepEqual(await listed('?domain=DEFAULT&q=promo'), [['promo1', null]]);
  const badList = await door.req('/api/urls?domain=x.example', { headers: ADMIN_JSON });
  assert.deepEqual([badList.status, badList.body], [400, UNKNOWN_DOMAIN(door.port)]);

  // A delete on one domain.
  const removed = await door.req(`/api/urls/promo1?domain=${GO}`, { method: 'DELETE', headers: ADMIN_JSON });
  assert.equal(removed.status, 204);
  assert.equal((await follow(door, '/promo1', GO))[0], 404);
  assert.deepEqual(await follow(door, '/promo1'), [302, 'https://example.com/default']);
  assert.equal((await door.req(`/api/urls/promo1?domain=${GO}`)).status, 404);
}

test('the same code on two domains is two links: created, redirected, read, edited, counted, listed and deleted apart (log store)', async (t) => {
  await assertSameCodeOnTwoDomains(await start(t, SETTINGS));
});

test('the same code on two domains is two links: created, redirected, read, edited, counted, listed and deleted apart (PostgreSQL)', {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
  t.after(() => app.close());
  await assertSameCodeOnTwoDomains(app);
});

interface DomainJson {
  domain: string;
  is_default: boolean;
  links: number;
  redirects: { base_url: string | null; not_found: string | null; expired: string | null };
}

const NONE = { base_url: null, not_found: null, expired: null };

async function assertDomainRedirects(door: Door, fresh: () => Promise<Door>): Promise<void> {
  const host = `127.0.0.1:${door.port}`;
  assert.equal((await create(door, { url: 'https://example.com/once', code: 'once01', domain: GO, max_visits: 1 })).status, 201);
  assert.deepEqual(await json<{ count: number; domains: DomainJson[] }>(door, '/api/domains'), {
    count: 3,
    domains: [
      { domain: host, is_default: true, links: 0, redirects: NONE },
      { domain: GO, is_default: false, links: 1, redirects: NONE },
      { domain: S, is_default: false, links: 0, redirects: NONE },
    ],
  });
  // Without redirects: the pages, and no UI on another domain than the default one.
  assert.equal((await follow(door, '/nope42', GO))[0], 404);
  const home = await door.req('/', { headers: { host: GO } });
  assert.deepEqual([home.status, home.body], [404, '']);
  assert.equal((await door.req('/')).status, 200, 'the UI on the default domain');

  const patch = (target: string, body: unknown, key = ADMIN): Promise<Reply> =>
    door.req(`/api/domains/${target}`, { method: 'PATCH', headers: { ...JSON_TYPE, 'x-api-key': key }, body: JSON.stringify(body) });
  const set = await patch(GO, { base_url: 'https://home.example/', not_found: 'https://home.example/404', expired: 'https://home.example/gone' });
  assert.equal(set.status, 200, set.body);
  assert.deepEqual(JSON.parse(set.body), {
    domain: GO,
    is_default: false,
    links: 1,
    redirects: { base_url: 'https://home.example/', not_found: 'https://home.example/404', expired: 'https://home.example/gone' },
  });
  // An absent field stays, null clears one.
  const cleared = await patch(GO.toUpperCase(), { base_url: null });
  assert.deepEqual(JSON.parse(cleared.body).redirects, { base_url: null, not_found: 'https://home.example/404', expired: 'https://home.example/gone' });
  assert.equal((await patch(GO, { base_url: 'https://home.example/' })).status, 200);
  assert.equal((await patch(host, { not_found: 'https://default.example/404' })).status, 200);
  // Refusals: a bad URL, a link into this instance, an unknown host, another field, a key that is no admin.
  assert.deepEqual(await refusal(patch(GO, { expired: 'ftp://x.example/' })), [400, '{"detail":"expired must use http or https, not ftp"}']);
  assert.deepEqual(await refusal(patch(GO, { not_found: `http://${S}/x` })), [
    400,
    '{"detail":"not_found points at this shortener itself; a short link to a short link would loop"}',
  ]);
  assert.deepEqual(await refusal(patch('x.example', { expired: null })), [404, '']);
  assert.deepEqual(await refusal(patch(GO, { title: 'x' })), [
    400,
    '{"detail":"\\"title\\" is not a redirect of a domain; a change may hold base_url, not_found, expired"}',
  ]);
  // A key for one domain manages no domain: that concerns every domain.
  const scoped = await makeKey(door, 'admin', { domain: GO });
  assert.deepEqual(await refusal(patch(GO, { expired: null }, scoped.key)), [
    403,
    '{"detail":"this key acts on go.example only, and managing domains concerns every domain"}',
  ]);
  const editor = await makeKey(door, 'editor');
  assert.deepEqual(await refusal(patch(GO, { expired: null }, editor.key)), [403, '{"detail":"this key\'s role (editor) does not allow managing domains"}']);
  assert.equal((await door.req('/api/domains', { headers: { 'x-api-key': editor.key } })).status, 403);

  // The one visit of the limited link, then what is left of it.
  assert.deepEqual(await follow(door, '/once01', GO), [302, 'https://example.com/once']);
  await assertRedirected(door);
  // Kept in the store: another instance over it (a restart, or after a compaction) sends them the
  // same, the default domain's included, whatever host its base URL names now.
  await assertRedirected(await fresh());
}

async function refusal(reply: Promise<Reply>): Promise<[number, string]> {
  const r = await reply;
  return [r.status, r.body];
}

/** The redirects set by `assertDomainRedirects`, each a 302 that counts no visit. */
async function assertRedirected(door: Door): Promise<void> {
  const host = `127.0.0.1:${door.port}`;
  assert.deepEqual(await follow(door, '/nope42', GO), [302, 'https://home.example/404']);
  assert.deepEqual(await follow(door, '/nope42'), [302, 'https://default.example/404']);
  assert.equal((await follow(door, '/nope42', S))[0], 404, 'a domain without redirects answers the page');
  assert.deepEqual(await follow(door, '/', GO), [302, 'https://home.example/']);
  assert.equal((await door.req('/')).status, 200, 'the UI stays on the default domain');
  // A used-up link goes where its domain sends expired links; neither answer counts a visit.
  assert.deepEqual(await follow(door, '/once01', GO), [302, 'https://home.example/gone']);
  const once = await json<UrlRecord>(door, `/api/urls/once01?domain=${GO}`);
  assert.equal(once.visit_count, 1);
  const listed = await json<{ domains: DomainJson[] }>(door, '/api/domains');
  assert.deepEqual(
    listed.domains.map((d) => [d.domain, d.redirects]),
    [
      [host, { base_url: null, not_found: 'https://default.example/404', expired: null }],
      [GO, { base_url: 'https://home.example/', not_found: 'https://home.example/404', expired: 'https://home.example/gone' }],
      [S, NONE],
    ],
  );
}

test("a domain's own redirects: listed, set, refused, each a 302 that is no visit, kept through a compaction and a restart (log store)", ONE, async (t) => {
  const dir = dataDir(t);
  const first = await dir.start(SETTINGS);
  await assertDomainRedirects(first, async () => {
    // A compaction writes the log anew (and its checkpoint); the next start reads them.
    await first.shortener.compact?.();
    await first.close(true);
    return dir.start(SETTINGS);
  });
});

test("a domain's own redirects: listed, set, refused, each a 302 that is no visit, seen by another instance (PostgreSQL)", {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const url = await pg!.createDatabase();
  const app = await openOnDatabase(SETTINGS, url);
  t.after(() => app.close());
  await assertDomainRedirects(app, async () => {
    const other = await openOnDatabase(SETTINGS, url);
    t.after(() => other.close());
    return other;
  });
});
