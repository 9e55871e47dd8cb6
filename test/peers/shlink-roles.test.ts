/**
 * Shlink's surface with keys of every role (docs/compat.md, keys and roles): `X-Api-Key` is any
 * API key of the service, and each route asks the service's roles table for what it does — one
 * link and its visits a read, the list, the tags and the overview a list (an editor's holds its
 * own links), a create a create, an edit, a delete and a visits' deletion an edit; the domains
 * and Mercure any good key. A role too low is a 403 problem with the service's sentence; a wrong,
 * revoked or expired key Shlink's 401 `invalid-api-key`, as before. An editor reaches only the
 * links it made. A link made with a stored key is that key's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness, type Reply } from '../support/helpers.ts';
import { ADMIN, ONE, ROLES, type Role, type MadeKey, makeKey, denied, CREATE, READ, LIST, EDIT } from '../support/keys.ts';

const V3 = '/rest/v3';

/** The lists, the tags and the overview: an editor's hold its own links (test/api/editor-lists.test.ts). */
const ALL = { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 };

const INVALID = {
  type: 'https://shlink.io/api/error/invalid-api-key',
  title: 'Invalid API key',
  detail: 'Provided API key does not exist or is invalid.',
  status: 401,
};

/** Every route that needs a key, with what each role gets: a status, or the refusal's words. `{code}` is a live link of the test. */
const ROUTES: { method: string; path: string; body?: unknown; want: Record<Role, number | string> }[] = [
  { method: 'GET', path: `${V3}/short-urls`, want: ALL },
  {
    method: 'POST',
    path: `${V3}/short-urls`,
    body: { longUrl: 'https://example.com/made' },
    want: { creator: 200, viewer: denied('viewer', CREATE), editor: 200, admin: 200 },
  },
  { method: 'GET', path: `${V3}/short-urls/{code}`, want: { creator: denied('creator', READ), viewer: 200, editor: 200, admin: 200 } },
  {
    method: 'PATCH',
    path: `${V3}/short-urls/{code}`,
    body: { title: 'edited' },
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 200, admin: 200 },
  },
  { method: 'GET', path: `${V3}/short-urls/{code}/visits`, want: { creator: denied('creator', READ), viewer: 200, editor: 200, admin: 200 } },
  {
    method: 'DELETE',
    path: `${V3}/short-urls/{code}/visits`,
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 200, admin: 200 },
  },
  { method: 'GET', path: `${V3}/short-urls/{code}/redirect-rules`, want: { creator: denied('creator', READ), viewer: 200, editor: 200, admin: 200 } },
  {
    method: 'POST',
    path: `${V3}/short-urls/{code}/redirect-rules`,
    body: { redirectRules: [] },
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 200, admin: 200 },
  },
  { method: 'GET', path: `${V3}/visits`, want: ALL },
  { method: 'GET', path: `${V3}/tags`, want: ALL },
  { method: 'GET', path: `${V3}/tags/stats`, want: ALL },
  { method: 'GET', path: `${V3}/domains`, want: { creator: 200, viewer: 200, editor: 200, admin: 200 } },
  { method: 'GET', path: `${V3}/mercure-info`, want: { creator: 501, viewer: 501, editor: 501, admin: 501 } },
  {
    method: 'DELETE',
    path: `${V3}/short-urls/{code}`,
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 204, admin: 204 },
  },
];

function shlink(h: Harness, method: string, path: string, key: string | undefined, body?: unknown): Promise<Reply> {
  return h.req(path, { method, headers: key === undefined ? {} : { 'x-api-key': key }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** A link made through Shlink's create with `key`: its code. */
async function made(h: Harness, key: string, url = 'https://example.com/own'): Promise<string> {
  const r = await shlink(h, 'POST', `${V3}/short-urls`, key, { longUrl: url });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { shortCode: string }).shortCode;
}

test('every route of the surface answers each role as the roles table says', ONE, async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [ADMIN], logLevel: 'info' });
  const keys = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await makeKey(h, role)] as const))) as Record<Role, MadeKey>;
  for (const route of ROUTES) {
    for (const role of ROLES) {
      // The link is the role's own where it may create (an editor edits its own links), else the admin's.
      const code = await made(h, role === 'viewer' ? ADMIN : keys[role].key);
      const r = await shlink(h, route.method, route.path.replace('{code}', code), keys[role].key, route.body);
      const want = route.want[role];
      const label = `${route.method} ${route.path} as ${role}`;
      if (typeof want === 'number') {
        assert.equal(r.status, want, `${label}: ${r.body}`);
      } else {
        assert.equal(r.status, 403, `${label}: ${r.body}`);
        assert.equal(r.headers['content-type'], 'application/problem+json', label);
        assert.deepEqual(JSON.parse(r.body), { type: 'about:blank', title: 'Forbidden', detail: want, status: 403 }, label);
      }
    }
  }
  for (const key of Object.values(keys)) assert.ok(!h.logs.raw.includes(key.key), 'a secret in the log');
});

test('a wrong, revoked or expired key is invalid-api-key on every route; a viewer creates nothing, a creator reads nothing', ONE, async (t) => {
  let now = 1_800_000_000_000;
  const h = await start(t, { shlinkApi: true, apiKeys: [ADMIN], now: () => now, logLevel: 'silent' });
  const expiring = await makeKey(h, 'admin', { expires_at: 1_800_000_000 + 60 });
  const revoked = await makeKey(h, 'admin');
  const viewer = await makeKey(h, 'viewer');
  const creator = await makeKey(h, 'creator');
  assert.equal((await h.req(`/api/keys/${revoked.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } })).status, 204);
  const code = await made(h, expiring.key, 'https://example.com/kept');
  now = (1_800_000_000 + 60) * 1000;
  for (const route of ROUTES) {
    for (const [why, key] of [
      ['expired', expiring.key],
      ['revoked', revoked.key],
      ['wrong', 'us_wrong'],
    ] as const) {
      const r = await shlink(h, route.method, route.path.replace('{code}', code), key, route.body);
      assert.equal(r.status, 401, `${route.method} ${route.path}: ${why}`);
      assert.deepEqual(JSON.parse(r.body), INVALID, `${route.method} ${route.path}: ${why}`);
    }
  }
  assert.equal((await shlink(h, 'POST', `${V3}/short-urls`, viewer.key, { longUrl: 'https://example.com/v' })).status, 403);
  assert.equal(h.shortener.count, 1, 'nothing made, edited away or deleted');
  // A creator may create, and nothing else that needs a key: not even the link it made, which its create answered.
  assert.equal((await shlink(h, 'GET', `${V3}/short-urls/${code}`, creator.key)).status, 403);
  assert.equal((await shlink(h, 'GET', `${V3}/short-urls`, creator.key)).status, 403);
  assert.equal((await h.req(`/api/urls/${code}`)).status, 200, 'the link is still there');
});

test("an editor's key reaches only the links it made: another author's link is short-url-not-found on every route of one link", ONE, async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [ADMIN], logLevel: 'silent' });
  const editor = await makeKey(h, 'editor');
  const other = await makeKey(h, 'editor');
  for (const code of [await made(h, other.key, 'https://example.com/theirs'), await made(h, ADMIN, 'https://example.com/anonymous')]) {
    for (const route of ROUTES.filter((route) => route.path.includes('{code}'))) {
      const r = await shlink(h, route.method, route.path.replace('{code}', code), editor.key, route.body);
      const label = `${route.method} ${route.path} of another's link`;
      assert.equal(r.status, 404, `${label}: ${r.body}`);
      assert.equal((JSON.parse(r.body) as { type: string }).type, 'https://shlink.io/api/error/short-url-not-found', label);
    }
  }
  assert.equal(h.shortener.count, 2, 'nothing was deleted');
});

test('a link made with a stored key has that key as its author; with an API_KEYS key, none', ONE, async (t) => {
  const h = await start(t, { shlinkApi: true, apiKeys: [ADMIN], logLevel: 'silent' });
  const creator = await makeKey(h, 'creator');
  const editor = await makeKey(h, 'editor');
  const authors: unknown[] = [];
  for (const [key, url] of [
    [creator.key, 'https://example.com/a'],
    [editor.key, 'https://example.com/b'],
    [ADMIN, 'https://example.com/c'],
  ] as const) {
    // The stored record, as the REST API reads it back.
    const stored = await h.req(`/api/urls/${await made(h, key, url)}`);
    assert.equal(stored.status, 200, stored.body);
    authors.push((JSON.parse(stored.body) as { author: unknown }).author);
  }
  assert.deepEqual(authors, [creator.id, editor.id, null]);
});
