/**
 * Who reaches Shlink's surface, and what `rest` means (docs/compat.md): every route but health
 * needs `X-Api-Key` (one of the admin keys), missing or wrong is Shlink's 401 problem, never the
 * gate's `{"detail"}`; with the gate on the key alone is enough (Shlink's clients cannot send a
 * bearer token) and the rest of the service stays gated; a browser's preflight asking for
 * `X-Api-Key` passes; an unknown `/rest` path is a problem-details 404. With the setting off,
 * `/rest/…` is what it always was. While on, `rest` is reserved: a custom code `rest` is refused,
 * and a link stored under it before stays readable and listed while start-up warns that its
 * redirect is shadowed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORS_HEADERS } from '../../src/http/headers.ts';
import { assert401, RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { dataDir, start, type Harness, type Reply } from '../support/helpers.ts';
import { ErrorType, problemOf, shlinkClient } from '../support/shlink-sdk.ts';

const KEY = 'k1';
const PROBLEM = 'application/problem+json';

function problemBody(r: Reply): Record<string, unknown> {
  assert.equal(r.headers['content-type'], PROBLEM, `content-type of ${r.status} ${r.body}`);
  return JSON.parse(r.body) as Record<string, unknown>;
}

const MISSING = {
  type: 'https://shlink.io/api/error/missing-authentication',
  title: 'Invalid authorization',
  detail: 'Expected one of the following authentication headers, ["X-Api-Key"], but none were provided',
  status: 401,
  expectedHeaders: ['X-Api-Key'],
};
const INVALID = {
  type: 'https://shlink.io/api/error/invalid-api-key',
  title: 'Invalid API key',
  detail: 'Provided API key does not exist or is invalid.',
  status: 401,
};

/** Every route of the surface but health, as a request with `headers`. */
const GUARDED: readonly [string, string][] = [
  ['GET', '/rest/v3/short-urls'],
  ['POST', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/short-urls/abc123'],
  ['PATCH', '/rest/v3/short-urls/abc123'],
  ['DELETE', '/rest/v3/short-urls/abc123'],
  ['GET', '/rest/v3/short-urls/abc123/visits'],
  ['DELETE', '/rest/v3/short-urls/abc123/visits'],
  ['GET', '/rest/v3/short-urls/abc123/redirect-rules'],
  ['GET', '/rest/v3/visits'],
  ['GET', '/rest/v3/tags'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/domains'],
  ['GET', '/rest/v3/mercure-info'],
];

async function assertGuarded(h: Harness, extra: Record<string, string>): Promise<void> {
  for (const [method, path] of GUARDED) {
    const missing = await h.req(path, { method, headers: extra });
    assert.equal(missing.status, 401, `${method} ${path} without a key`);
    assert.deepEqual(problemBody(missing), MISSING, `${method} ${path} without a key`);
    const wrong = await h.req(path, { method, headers: { ...extra, 'x-api-key': 'not-a-key' } });
    assert.equal(wrong.status, 401, `${method} ${path} with a wrong key`);
    assert.deepEqual(problemBody(wrong), INVALID, `${method} ${path} with a wrong key`);
  }
}

test('every route but health needs X-Api-Key: missing is missing-authentication, wrong is invalid-api-key (401 problems)', async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], logLevel: 'warn' });
  await assertGuarded(h, {});
  const sdk = shlinkClient(h.shortener.config.baseUrl, 'wrong');
  assert.equal((await problemOf(sdk.listShortUrls())).type, ErrorType.INVALID_API_KEY);
  // Health is public, as Shlink's, under both its paths.
  for (const path of ['/rest/health', '/rest/v3/health']) {
    const r = await h.req(path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers['content-type'], 'application/health+json', path);
    assert.equal((JSON.parse(r.body) as { status: string }).status, 'pass', path);
  }
});

test('with the gate on, the key alone opens the surface; the gate still guards the rest of the service', async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], apiToken: TOKEN, logLevel: 'warn' });
  const sdk = shlinkClient(h.shortener.config.baseUrl, KEY);
  assert.equal((await sdk.health()).status, 'pass');
  const created = await sdk.createShortUrl({ longUrl: 'https://example.com/gated', customSlug: 'gated1' });
  assert.equal(created.shortCode, 'gated1');
  assert.deepEqual(
    (await sdk.listShortUrls()).data.map((u) => u.shortCode),
    ['gated1'],
  );
  // Without the key: Shlink's problems, not the gate's {"detail"}; a bearer token is no key.
  await assertGuarded(h, {});
  await assertGuarded(h, { authorization: RIGHT });
  // Everything else is still behind the gate, the key notwithstanding.
  assert401(await h.req('/api/urls', { headers: { 'x-api-key': KEY } }), 'missing', 'GET /api/urls with a key only');
  assert401(await h.req('/gated1', { headers: { 'x-api-key': KEY } }), 'missing', 'the short link with a key only');
  // An unknown path under /rest answers only a caller with a key.
  const unknown = await h.req('/rest/v3/nothing');
  assert.deepEqual([unknown.status, problemBody(unknown)], [401, MISSING]);
  const known = await h.req('/rest/v3/nothing', { headers: { 'x-api-key': KEY } });
  assert.equal(known.status, 404);
  assert.equal(problemBody(known)['type'], ErrorType.NOT_FOUND);
});

test('a browser preflight for the surface, asking for X-Api-Key, passes (gate on or off)', async (t) => {
  for (const apiToken of ['', TOKEN]) {
    const h = await start(t, { shlinkApi: true, apiKeys: [KEY], apiToken, logLevel: 'warn' });
    for (const [method, path] of [
      ['GET', '/rest/v3/short-urls'],
      ['PATCH', '/rest/v3/short-urls/abc123'],
      ['DELETE', '/rest/v3/short-urls/abc123/visits'],
      ['GET', '/rest/v3/health'],
    ]) {
      const r = await h.req(path!, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.shlink.io', 'access-control-request-method': method!, 'access-control-request-headers': 'content-type,x-api-key' },
      });
      assert.equal(r.status, 204, `${method} ${path}`);
      assert.equal(r.body, '');
      for (const [name, value] of CORS_HEADERS) assert.equal(r.headers[name.toLowerCase()], value, `${method} ${path}: ${name}`);
      const allowed = String(r.headers['access-control-allow-headers']).toLowerCase().split(', ');
      for (const header of ['x-api-key', 'content-type']) assert.ok(allowed.includes(header), `${header} allowed`);
      assert.ok(String(r.headers['access-control-allow-methods']).split(', ').includes(method!), `${method} allowed`);
    }
  }
});

test("an unknown path under /rest is a problem-details 404 (Shlink's not-found), whatever the method", async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], logLevel: 'warn' });
  const paths: [string, string][] = [
    ['GET', '/rest/v3/nothing'],
    ['POST', '/rest/v2/short-urls'],
    ['DELETE', '/rest'],
    ['GET', '/rest/v3/short-urls/a/b/c'],
    ['PUT', '/rest/whatever'],
  ];
  for (const [method, path] of paths) {
    const r = await h.req(path, { method, headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.deepEqual(problemBody(r), { type: ErrorType.NOT_FOUND, title: 'Not Found', detail: `Cannot ${method} ${path}`, status: 404 });
  }
});

test('with the setting off, /rest/... is what it always was: a 404 with an empty body, no problem details', async (t) => {
  const h = await start(t, { apiKeys: [KEY], minShortLength: 4, logLevel: 'warn' });
  for (const path of ['/rest/v3/short-urls', '/rest/health', '/rest/v3/health']) {
    const r = await h.req(path, { headers: { 'x-api-key': KEY } });
    assert.deepEqual([r.status, r.body, r.headers['content-type']], [404, '', undefined], path);
  }
  // `rest` is then no reserved word: a code like any other (here 4 characters long).
  const made = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/r', code: 'rest' }),
  });
  assert.equal(made.status, 201, made.body);
});

test('while on, rest is reserved: a custom code rest is refused in any case, through every door', async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [KEY], minShortLength: 4, logLevel: 'warn' });
  for (const code of ['rest', 'REST', 'Rest']) {
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/r', code }),
    });
    assert.deepEqual([r.status, JSON.parse(r.body)], [400, { detail: `code "${code}" is reserved for the service's own paths` }], code);
  }
  const imported = await h.req('/api/import', {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/x-ndjson' },
    body: '{"short_code":"rest","original_url":"https://example.com/r"}\n',
  });
  assert.deepEqual(JSON.parse(imported.body), {
    imported: 0,
    skipped: 1,
    errors: [{ line: 1, detail: 'code "rest" is reserved for the service\'s own paths' }],
  });
  const p = await problemOf(shlinkClient(h.shortener.config.baseUrl, KEY).createShortUrl({ longUrl: 'https://example.com/r', customSlug: 'rest' }));
  assert.deepEqual([p.type, p['invalidElements']], [ErrorType.INVALID_ARGUMENT, ['customSlug']]);
});

test('a link stored as rest before the surface was on: listed and readable, its redirect shadowed, and start-up says so', async (t) => {
  const dir = dataDir(t);
  const before = await dir.start({ apiKeys: [KEY], minShortLength: 4, logLevel: 'warn' });
  const made = await before.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/old', code: 'rest' }),
  });
  assert.equal(made.status, 201, made.body);
  assert.equal((await before.req('/rest')).status, 302);
  await before.close(true);

  const h = await dir.start({ shlinkApi: true, apiKeys: [KEY], minShortLength: 4, logLevel: 'warn' });
  const record = await h.req('/api/urls/rest');
  assert.equal(record.status, 200);
  assert.equal((JSON.parse(record.body) as { original_url: string }).original_url, 'https://example.com/old');
  const listed = await shlinkClient(h.shortener.config.baseUrl, KEY).getShortUrl({ shortCode: 'rest' });
  assert.equal(listed.longUrl, 'https://example.com/old');
  assert.deepEqual(
    (await shlinkClient(h.shortener.config.baseUrl, KEY).listShortUrls()).data.map((u) => u.shortCode),
    ['rest'],
  );
  // GET /rest is the surface's now: no redirect, on the fast path or the general one.
  for (const path of ['/rest', '/rest/']) {
    const r = await h.req(path, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 404, path);
    assert.equal(problemBody(r)['type'], ErrorType.NOT_FOUND, path);
  }
  await waitFor(() =>
    h.logs.find('the link "rest" cannot be opened while SHLINK_API is on: /rest is that surface\'s path; it stays listed and readable through the API'),
  );
  const warning = h.logs.find(
    'the link "rest" cannot be opened while SHLINK_API is on: /rest is that surface\'s path; it stays listed and readable through the API',
  )!;
  assert.deepEqual([warning['level'], warning['code'], warning['short_url']], ['warn', 'rest', `${h.shortener.config.baseUrl}/rest`]);
});

/** Polls `found` (a warning logged once a database answered) for up to 5 s. */
async function waitFor(found: () => unknown): Promise<void> {
  for (let i = 0; i < 100 && !found(); i++) await new Promise((r) => setTimeout(r, 50));
}
