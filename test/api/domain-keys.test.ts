/**
 * Keys for one domain (docs/security.md): a stored key made with a `domain` acts on that domain
 * only, on every door. Its creates land there (another domain named is a 400), its lists and
 * exports hold that domain's links, a link of another domain is a 404, and what concerns every
 * domain (the instance's totals, orphan visits, imports, keys, domains) is a 403 whatever its role.
 * On the log store and on PostgreSQL; MCP, Shlink's SDK, YOURLS and the command line on the log store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkKeyInput } from '../../src/links/keys.ts';
import { createDomains, domainScope } from '../../src/links/domains.ts';
import { Refusal } from '../../src/links/refusal.ts';
import { dataDir, runCli, start, tempDir, type Harness, type Reply } from '../support/helpers.ts';
import { ADMIN, makeKey, ONE } from '../support/keys.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';
import { problemOf, shlinkClient } from '../support/shlink-sdk.ts';

type Door = Pick<Harness, 'req' | 'port'>;

const GO = 'go.example';
const S = 's.example';
const SETTINGS = { apiKeys: [ADMIN], domains: [GO, S], logLevel: 'silent', yourlsApi: true, shlinkApi: true } as const;
const ONLY_GO = '{"detail":"domain: this key acts on go.example only"}';
const WHOLE = (what: string): string => JSON.stringify({ detail: `this key acts on go.example only, and ${what} concerns every domain` });

const pg = await pgServer();

const send = (door: Door, key: string, path: string, method = 'GET', body?: unknown): Promise<Reply> =>
  door.req(path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const codes = (r: Reply): string[] =>
  (JSON.parse(r.body) as { urls: { short_code: string; domain: string | null }[] }).urls.map((u) => `${u.domain ?? '-'}/${u.short_code}`).sort();

test('a key names a domain of the instance, kept as its host; anything else is refused (no sockets)', () => {
  const domains = createDomains('https://sho.rt', [GO]);
  const check = (domain: unknown) => checkKeyInput({ name: 'k', role: 'editor', domain }, 0, domains.hostOf);
  assert.equal((check('Go.Example') as { domain: string }).domain, GO);
  assert.equal((check('default') as { domain: string }).domain, 'sho.rt');
  for (const every of [undefined, null, '']) assert.equal((check(every) as { domain: null }).domain, null);
  assert.match((check('x.example') as Refusal).detail, /^domain must be one of this service's domains \(sho\.rt, go\.example\)/);
  // Without the instance's domains, a key cannot be limited at all.
  assert.ok(checkKeyInput({ name: 'k', role: 'editor', domain: GO }, 0) instanceof Refusal);

  // The domain of a list: the one asked for, narrowed to the key's.
  const named = domains.named;
  assert.equal(domainScope(named, undefined), undefined, 'every domain');
  assert.equal(domainScope(named, GO), GO);
  assert.equal(domainScope(named, undefined, { domain: GO }), GO, "absent: the key's");
  assert.equal(domainScope(named, 'default', { domain: 'sho.rt' }), null);
  assert.equal(domainScope(named, GO, { domain: GO }), GO);
  assert.equal((domainScope(named, 'default', { domain: GO }) as Refusal).detail, 'domain: this key acts on go.example only');
  assert.ok(domainScope(named, undefined, { domain: 'gone.example' }) instanceof Refusal, 'a host no longer served reaches nothing');
});

async function assertDomainKeys(door: Door): Promise<void> {
  // One link on each domain, made by the admin.
  for (const [domain, code] of [
    [undefined, 'home01'],
    [GO, 'go0001'],
    [S, 's00001'],
  ] as const) {
    const made = await send(door, ADMIN, '/api/shorten', 'POST', { url: `https://example.com/${code}`, code, domain });
    assert.equal(made.status, 201, made.body);
  }
  const refusedKey = await send(door, ADMIN, '/api/keys', 'POST', { name: 'x', role: 'admin', domain: 'x.example' });
  assert.equal(refusedKey.status, 400);
  const admin = await makeKey(door, 'admin', { domain: 'Go.Example' });
  assert.equal(admin.domain, GO);
  const listedKeys = JSON.parse((await send(door, ADMIN, '/api/keys')).body) as { keys: { id: string; domain: string | null }[] };
  assert.equal(listedKeys.keys.find((k) => k.id === admin.id)!.domain, GO);
  const creator = await makeKey(door, 'creator', { domain: GO });

  // Creates land on the key's domain; another domain named is refused, and nothing is made.
  const made = await send(door, creator.key, '/api/shorten', 'POST', { url: 'https://example.com/by-creator', code: 'mine01' });
  assert.deepEqual([made.status, made.body], [201, `http://${GO}/mine01`]);
  const named = await send(door, creator.key, '/api/shorten', 'POST', { url: 'https://example.com/x', code: 'mine02', domain: GO });
  assert.deepEqual([named.status, named.body], [201, `http://${GO}/mine02`]);
  for (const domain of ['default', S]) {
    const other = await send(door, creator.key, '/api/shorten', 'POST', { url: 'https://example.com/x', code: 'mine03', domain });
    assert.deepEqual([other.status, other.body], [400, ONLY_GO], domain);
  }
  assert.equal((await send(door, ADMIN, '/api/urls/mine03?domain=s.example')).status, 404);

  // Lists and exports hold the key's domain's links only.
  assert.deepEqual(codes(await send(door, ADMIN, '/api/urls')), [
    '-/home01',
    'go.example/go0001',
    'go.example/mine01',
    'go.example/mine02',
    's.example/s00001',
  ]);
  const own = await send(door, admin.key, '/api/urls');
  assert.deepEqual([own.headers['x-total-count'], codes(own)], ['3', ['go.example/go0001', 'go.example/mine01', 'go.example/mine02']]);
  assert.deepEqual(codes(await send(door, admin.key, `/api/urls?domain=${GO}`)), ['go.example/go0001', 'go.example/mine01', 'go.example/mine02']);
  const otherList = await send(door, admin.key, `/api/urls?domain=${S}`);
  assert.deepEqual([otherList.status, otherList.body], [400, ONLY_GO]);
  const exported = (await send(door, admin.key, '/api/export')).body.trim().split('\n');
  assert.deepEqual(exported.map((l) => (JSON.parse(l) as { short_code: string }).short_code).sort(), ['go0001', 'mine01', 'mine02']);

  // A link of another domain is unknown on every route of one link that needs a key (reading a
  // record and its QR code needs none); its own domain's answer.
  for (const [method, path] of [
    ['GET', '/api/urls/home01/stats'],
    ['GET', `/api/urls/s00001/stats?domain=${S}`],
    ['GET', `/api/urls/s00001/visits?domain=${S}`],
    ['PATCH', `/api/urls/s00001?domain=${S}`],
    ['DELETE', `/api/urls/s00001?domain=${S}`],
  ] as const) {
    const r = await send(door, admin.key, path, method, method === 'PATCH' ? { title: 'mine now' } : undefined);
    assert.deepEqual([r.status, r.body], [404, ''], `${method} ${path}`);
  }
  assert.equal((await send(door, admin.key, `/api/urls/go0001/stats?domain=${GO}`)).status, 200);
  assert.equal((await send(door, admin.key, `/api/urls/go0001?domain=${GO}`, 'PATCH', { title: 'Go' })).status, 200);
  assert.equal(JSON.parse((await send(door, ADMIN, `/api/urls/s00001?domain=${S}`)).body).title, null, 'not edited');

  // A visit of each domain: the key's visits export holds its domain's only.
  assert.equal((await door.req('/go0001', { headers: { host: GO } })).status, 302);
  assert.equal((await door.req('/s00001', { headers: { host: S } })).status, 302);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const visits = (await send(door, admin.key, '/api/visits/export')).body.trim().split('\n');
  assert.deepEqual(
    visits.map((l) => (JSON.parse(l) as { short_code: string }).short_code),
    ['go0001'],
  );

  // What concerns every domain is refused, whatever the role.
  for (const [method, path, what] of [
    ['GET', '/api/stats', "reading the whole instance's stats"],
    ['GET', '/api/visits/orphan', "reading the whole instance's stats"],
    ['GET', '/api/keys', 'managing keys'],
    ['POST', '/api/keys', 'managing keys'],
    ['GET', '/api/domains', 'managing domains'],
    ['POST', '/api/import', 'importing'],
  ] as const) {
    const r = await send(door, admin.key, path, method, method === 'POST' ? { name: 'x', role: 'admin' } : undefined);
    assert.deepEqual([r.status, r.body], [403, WHOLE(what)], `${method} ${path}`);
  }
}

test('a key for one domain acts on that domain only: creates, lists, exports, links of others, what concerns every domain (log store)', ONE, async (t) => {
  const dir = dataDir(t);
  await assertDomainKeys(await dir.start(SETTINGS));
});

test('a key for one domain acts on that domain only (PostgreSQL)', { ...(pg ? {} : { skip: NO_POSTGRES }), ...ONE }, async (t) => {
  const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
  t.after(() => app.close());
  await assertDomainKeys(app);
});

test("MCP, Shlink's SDK and YOURLS with a key for one domain: creates land there, lists hold its links", ONE, async (t) => {
  const h = await start(t, SETTINGS);
  for (const [domain, code] of [
    [undefined, 'home01'],
    [S, 's00001'],
  ] as const) {
    assert.equal((await send(h, ADMIN, '/api/shorten', 'POST', { url: `https://example.com/${code}`, code, domain })).status, 201);
  }
  const editor = await makeKey(h, 'editor', { domain: GO });

  // MCP: shorten_url without a domain makes the link on go.example; list_urls holds it alone.
  let id = 1;
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await h.req('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': editor.key },
      body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name, arguments: args } }),
    });
    return (JSON.parse(r.body) as { result: { structuredContent?: Record<string, unknown>; isError?: boolean; content: { text: string }[] } }).result;
  };
  assert.equal((await tool('shorten_url', { url: 'https://example.com/mcp', code: 'mcp001' })).structuredContent!['domain'], GO);
  const listed = (await tool('list_urls', {})).structuredContent as { urls: { short_code: string }[] };
  assert.deepEqual(
    listed.urls.map((u) => u.short_code),
    ['mcp001'],
  );
  const elsewhere = await tool('get_stats', { code: 's00001', domain: S });
  assert.equal(elsewhere.isError, true);
  assert.equal(elsewhere.content[0]!.text, (await tool('get_stats', { code: 'nosuch', domain: S })).content[0]!.text.replace('nosuch', 's00001'));

  // Shlink's SDK: a create without a domain lands on go.example; the list and the overview hold its links.
  const sdk = shlinkClient(h.shortener.config.baseUrl, editor.key);
  const created = await sdk.createShortUrl({ longUrl: 'https://example.com/shlink', customSlug: 'shl001' });
  assert.deepEqual([created.domain, created.shortUrl], [GO, `http://${GO}/shl001`]);
  assert.equal((await problemOf(sdk.createShortUrl({ longUrl: 'https://example.com/x', domain: S }))).type, 'https://shlink.io/api/error/invalid-data');
  assert.equal((await problemOf(sdk.getShortUrl({ shortCode: 's00001', domain: S }))).type, 'https://shlink.io/api/error/short-url-not-found');
  const list = await sdk.listShortUrls();
  assert.deepEqual(list.data.map((u) => u.shortCode).sort(), ['mcp001', 'shl001']);
  assert.equal((await h.req('/mcp001', { headers: { host: GO } })).status, 302);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const overview = await sdk.getVisitsOverview();
  assert.equal(overview.nonOrphanVisits.total, 1, "its links' visits, and no orphan visit");

  // YOURLS, called on the default host, makes the link on the key's domain, and counts its links.
  const yourls = async (params: Record<string, string>) =>
    JSON.parse((await h.req(`/yourls-api.php?${new URLSearchParams({ signature: editor.key, format: 'json', ...params })}`)).body) as Record<string, unknown>;
  assert.equal((await yourls({ action: 'shorturl', url: 'https://example.com/yourls', keyword: 'yrl001' }))['shorturl'], `http://${GO}/yrl001`);
  assert.deepEqual((await yourls({ action: 'db-stats' }))['db-stats'], { total_links: 3, total_clicks: 1 }, 'its three links, and their one visit');
  assert.equal((await yourls({ action: 'expand', shorturl: `http://${S}/s00001` }))['errorCode'], '404');
});

test('keys create --domain on the command line: the key acts on that domain; a host the instance does not serve is exit 2', async (t) => {
  const dir = tempDir(t);
  const settings = ['--data-dir', dir, '--domains', GO];
  const made = await runCli(['keys', 'create', '--name', 'go', '--role', 'creator', '--domain', GO, ...settings]);
  assert.equal(made.code, 0, made.err);
  assert.equal((JSON.parse(made.out) as { domain: string }).domain, GO);
  const refused = await runCli(['keys', 'create', '--name', 'x', '--role', 'creator', '--domain', 'x.example', ...settings]);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /^url-shortener keys create: domain must be one of this service's domains \(localhost:3000, go\.example\)/);
});

test('an admin key for one domain is not the instance admin: the first admin key is still made beside it', async (t) => {
  const h = await start(t, { domains: [GO], logLevel: 'silent' });
  const keys = h.shortener.service.keys;
  assert.equal((await keys.create({ name: 'go admin', role: 'admin', domain: GO })).ok, true);
  const first = await keys.initialAdmin();
  assert.match(first ?? '', /^us_/, 'made: no admin key acted on every domain');
  assert.equal(await keys.initialAdmin(), undefined, 'not twice');
});
