/**
 * Stored API keys over REST (docs/security.md, keys with roles): `POST/GET /api/keys`,
 * `DELETE /api/keys/<id>`, and what each role may do on every REST route that needs a key. A
 * missing, wrong, revoked or expired key is a `403` with an empty body; a role too low is a `403`
 * that says which role and what it may not do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fillableDisk } from '../support/disk-full.ts';
import { start, type Harness } from '../support/helpers.ts';
import { ADMIN, ONE, type MadeKey, makeKey, denied, READ, LIST, READ_ALL, EDIT } from '../support/keys.ts';

/**
 * Each test makes a key and uses it at once: on several instances a key made on one reaches the
 * others by a notification, within a second, which test/store/postgres/keys.test.ts checks.
 */
const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * Every REST route that needs a key, with what each role gets: a status, or the refusal's words.
 * `{code}` is a link made by the admin for the test.
 */
const ROUTES: { method: string; path: string; body?: string; type?: string; want: Record<string, number | string> }[] = [
  {
    method: 'POST',
    path: '/api/shorten',
    body: '{"url":"https://example.com/made"}',
    want: { creator: 201, viewer: denied('viewer', 'creating links'), editor: 201, admin: 201 },
  },
  { method: 'GET', path: '/api/urls', want: { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 } },
  // {code} is the admin's link: an editor's key reaches only its own links, and another's is 404.
  { method: 'GET', path: '/api/urls/{code}/stats', want: { creator: denied('creator', READ), viewer: 200, editor: 404, admin: 200 } },
  { method: 'GET', path: '/api/stats', want: { creator: denied('creator', READ_ALL), viewer: 200, editor: denied('editor', READ_ALL), admin: 200 } },
  { method: 'GET', path: '/api/urls/{code}/visits', want: { creator: denied('creator', READ), viewer: 200, editor: 404, admin: 200 } },
  { method: 'GET', path: '/api/export', want: { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 } },
  { method: 'GET', path: '/api/visits/export', want: { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 } },
  {
    method: 'PATCH',
    path: '/api/urls/{code}',
    body: '{"title":"t"}',
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 404, admin: 200 },
  },
  {
    method: 'DELETE',
    path: '/api/urls/{code}/visits',
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 404, admin: 200 },
  },
  {
    method: 'POST',
    path: '/api/import',
    body: '{"url":"https://example.com/imported"}\n',
    type: 'application/x-ndjson',
    want: { creator: denied('creator', 'importing'), viewer: denied('viewer', 'importing'), editor: denied('editor', 'importing'), admin: 200 },
  },
  {
    method: 'POST',
    path: '/api/visits/import',
    body: '',
    type: 'application/x-ndjson',
    want: { creator: denied('creator', 'importing'), viewer: denied('viewer', 'importing'), editor: denied('editor', 'importing') },
  },
  {
    method: 'GET',
    path: '/api/keys',
    want: { creator: denied('creator', 'managing keys'), viewer: denied('viewer', 'managing keys'), editor: denied('editor', 'managing keys'), admin: 200 },
  },
  {
    method: 'POST',
    path: '/api/keys',
    body: '{"name":"n","role":"viewer"}',
    want: { creator: denied('creator', 'managing keys'), viewer: denied('viewer', 'managing keys'), editor: denied('editor', 'managing keys'), admin: 201 },
  },
  { method: 'DELETE', path: '/api/urls/{code}', want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 404, admin: 204 } },
];

test('every REST route that needs a key answers each role as the roles table says', ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], logLevel: 'info' });
  const keys = Object.fromEntries(await Promise.all(['creator', 'viewer', 'editor', 'admin'].map(async (role) => [role, await makeKey(h, role)] as const)));
  for (const route of ROUTES) {
    for (const [role, want] of Object.entries(route.want)) {
      const code = await h.shorten(`https://example.com/${role}`);
      const headers: Record<string, string> = { 'x-api-key': keys[role]!.key };
      if (route.body !== undefined) headers['content-type'] = route.type ?? 'application/json';
      const res = await h.req(route.path.replace('{code}', code), { method: route.method, headers, ...(route.body === undefined ? {} : { body: route.body }) });
      const label = `${route.method} ${route.path} as ${role}`;
      if (typeof want === 'number') {
        assert.equal(res.status, want, `${label}: ${res.body}`);
      } else {
        assert.equal(res.status, 403, label);
        assert.deepEqual(JSON.parse(res.body), { detail: want }, label);
      }
    }
  }
  // No secret is ever logged, listed or counted.
  const listed = await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } });
  const metrics = await h.req('/metrics');
  for (const key of Object.values(keys)) {
    assert.ok(!h.logs.raw.includes(key.key), 'a secret in the log');
    assert.ok(!listed.body.includes(key.key) && !metrics.body.includes(key.key), 'a secret in an answer');
  }
});

test("an editor's key reads, edits and deletes the links it made, and no other", ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], logLevel: 'silent' });
  const editor = await makeKey(h, 'editor');
  const other = await makeKey(h, 'editor');
  const made = await h.req('/api/shorten', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': editor.key }, body: '{"url":"https://example.com/mine"}' });
  assert.equal(made.status, 201);
  const code = new URL(made.body).pathname.slice(1);
  const as = (key: string, method: string, path: string, body?: string) =>
    h.req(path, { method, headers: { ...JSON_TYPE, 'x-api-key': key }, ...(body === undefined ? {} : { body }) });
  assert.equal((await as(other.key, 'PATCH', `/api/urls/${code}`, '{"title":"theirs"}')).status, 404, "another editor's link does not exist for it");
  assert.equal((await as(other.key, 'GET', `/api/urls/${code}/stats`)).status, 404);
  assert.equal((await as(editor.key, 'GET', `/api/urls/${code}/stats`)).status, 200);
  assert.equal((await as(editor.key, 'GET', `/api/urls/${code}/visits`)).status, 200);
  const edited = await as(editor.key, 'PATCH', `/api/urls/${code}`, '{"title":"mine"}');
  assert.equal(edited.status, 200);
  assert.equal((JSON.parse(edited.body) as { title: string }).title, 'mine');
  assert.equal((await as(other.key, 'DELETE', `/api/urls/${code}`)).status, 404);
  assert.equal((await as(editor.key, 'DELETE', `/api/urls/${code}`)).status, 204);
});

test('POST /api/keys shows the secret once; GET lists without it; a revoked key is refused with an empty 403', ONE, async (t) => {
  let now = 1_800_000_000_000;
  const h = await start(t, { apiKeys: [ADMIN], now: () => now, logLevel: 'silent' });
  const made = await makeKey(h, 'viewer', { expires_at: 1_800_000_000 + 3600 });
  assert.match(made.key, /^us_[A-Za-z0-9_-]{43}$/);
  assert.match(made.id, /^[A-Za-z0-9_-]{8}$/);
  assert.deepEqual(
    { ...made, id: 'x', key: 'x' },
    { id: 'x', name: 'viewer key', role: 'viewer', domain: null, created_at: 1_800_000_000, expires_at: 1_800_003_600, last_used_at: null, key: 'x' },
  );
  const list = await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } });
  assert.equal(list.status, 200);
  assert.match(String(list.headers['content-type']), /^application\/json/);
  const { key: _secret, ...view } = made;
  assert.deepEqual(JSON.parse(list.body), { count: 1, keys: [view] });

  // A use is recorded (once a minute at most), never on the redirect path.
  assert.equal((await h.req('/api/urls', { headers: { 'x-api-key': made.key } })).status, 200);
  for (let i = 0; i < 100; i++) {
    const keys = (JSON.parse((await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } })).body) as { keys: MadeKey[] }).keys;
    if (keys[0]!.last_used_at === 1_800_000_000) break;
    assert.ok(i < 99, 'last_used_at recorded');
    await new Promise((resolve) => setImmediate(resolve));
  }

  // Expired: refused on the second after expires_at, with nothing to tell it from a wrong key.
  now = (1_800_003_600 + 1) * 1000;
  const expired = await h.req('/api/urls', { headers: { 'x-api-key': made.key } });
  assert.deepEqual([expired.status, expired.body], [403, '']);

  const fresh = await makeKey(h, 'creator');
  const revoked = await h.req(`/api/keys/${fresh.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } });
  assert.deepEqual([revoked.status, revoked.body], [204, '']);
  const again = await h.req(`/api/keys/${fresh.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } });
  assert.equal(again.status, 404);
  const refused = await h.req('/api/shorten', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': fresh.key }, body: '{"url":"https://example.com/r"}' });
  assert.deepEqual([refused.status, refused.body], [403, ''], 'a revoked key creates nothing, even on an open instance');
  const wrong = await h.req('/api/shorten', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': 'us_wrong' }, body: '{"url":"https://example.com/r"}' });
  assert.deepEqual([wrong.status, wrong.body], [403, '']);
});

test('a key the input refuses is a 400 saying why; a form is a 415', ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], now: () => 1_800_000_000_000, logLevel: 'silent' });
  const cases: [body: string, detail: RegExp][] = [
    ['{"role":"viewer"}', /^name is required/],
    [JSON.stringify({ name: 'x'.repeat(65), role: 'viewer' }), /^name must be 1 to 64 characters/],
    ['{"name":"a\\u0001","role":"viewer"}', /control characters/],
    ['{"name":"n","role":"owner"}', /^role must be one of creator, viewer, editor, admin$/],
    ['{"name":"n","role":"viewer","domain":"other.example"}', /^domain/],
    ['{"name":"n","role":"viewer","expires_at":1799999999}', /^expires_at must be in the future$/],
    ['{"name":"n","role":"viewer","expires_at":"soon"}', /^expires_at must be a whole number/],
  ];
  for (const [body, detail] of cases) {
    const res = await h.req('/api/keys', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': ADMIN }, body });
    assert.equal(res.status, 400, body);
    assert.match((JSON.parse(res.body) as { detail: string }).detail, detail, body);
  }
  assert.equal((await makeKey(h, 'viewer', { name: 'x'.repeat(64) })).name.length, 64);
  const form = await h.req('/api/keys', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': ADMIN },
    body: 'name=n&role=viewer',
  });
  assert.equal(form.status, 415);
});

test('create_access=key: a create needs a key whose role may create; the link is made with no key on an open instance', ONE, async (t) => {
  const closed = await start(t, { apiKeys: [ADMIN], createAccess: 'key', logLevel: 'silent' });
  const post = (h: Harness, key?: string) =>
    h.req('/api/shorten', { method: 'POST', headers: { ...JSON_TYPE, ...(key ? { 'x-api-key': key } : {}) }, body: '{"url":"https://example.com/k"}' });
  const noKey = await post(closed);
  assert.deepEqual([noKey.status, noKey.body], [403, '']);
  const creator = await makeKey(closed, 'creator');
  assert.equal((await post(closed, creator.key)).status, 201);
  assert.equal((await post(closed, ADMIN)).status, 201);
  const viewer = await makeKey(closed, 'viewer');
  assert.equal((await post(closed, viewer.key)).status, 403);

  const open = await start(t, { apiKeys: [ADMIN], logLevel: 'silent' });
  assert.equal((await post(open)).status, 201);
});

test('a key write the disk refuses is a 503, and nothing is made or revoked', ONE, async (t) => {
  const { fs, disk } = fillableDisk();
  const h = await start(t, { apiKeys: [ADMIN], fs, logLevel: 'silent' });
  const kept = await makeKey(h, 'viewer');
  disk.full = true;
  const made = await h.req('/api/keys', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': ADMIN }, body: '{"name":"n","role":"viewer"}' });
  assert.equal(made.status, 503);
  const revoke = await h.req(`/api/keys/${kept.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } });
  assert.equal(revoke.status, 503);
  disk.full = false;
  const list = JSON.parse((await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } })).body) as { count: number };
  assert.equal(list.count, 1);
  assert.equal((await h.req('/api/urls', { headers: { 'x-api-key': kept.key } })).status, 200, 'the key still works');
});
