/**
 * YOURLS' API with keys of every role (docs/compat.md, keys and roles): the plain `signature` is
 * any API key of the service, held to its role — `shorturl` a create, `expand` and `url-stats` a
 * read of one link (an editor's, of the links it made), `stats` and `db-stats` a list (an editor's
 * totals are its own links'), `version` any good key. A role too low is YOURLS' 403 refusal
 * with the service's sentence; a wrong, revoked or expired key YOURLS' `Please log in`, as before.
 * The timestamped form signs with a key of `API_KEYS` only: the store never keeps a stored key's
 * secret, so a hash of one signs nothing. A link made with a stored key is that key's.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';
import { api, assertAnswer, FORMATS, inFormat, type Expected } from '../support/yourls.ts';
import { ADMIN, ONE, ROLES, type Role, type MadeKey, makeKey, denied, CREATE, READ, LIST } from '../support/keys.ts';

/** YOURLS' refusal of a signature, with `message`. */
const refused = (message: string): Expected => ({ status: 403, fields: { message, errorCode: '403', callback: '' }, simple: message });
const PLEASE_LOG_IN = refused('Please log in');

let urls = 0;

/** Every action, its parameters (`{code}`: a live link; `{url}`: a URL never shortened), and what each role gets: a status, or the refusal's words. */
const ACTIONS: { params: Record<string, string>; want: Record<Role, number | string> }[] = [
  { params: { action: 'shorturl', url: '{url}' }, want: { creator: 200, viewer: denied('viewer', CREATE), editor: 200, admin: 200 } },
  { params: { action: 'expand', shorturl: '{code}' }, want: { creator: denied('creator', READ), viewer: 200, editor: 200, admin: 200 } },
  { params: { action: 'url-stats', shorturl: '{code}' }, want: { creator: denied('creator', READ), viewer: 200, editor: 200, admin: 200 } },
  {
    params: { action: 'stats', filter: 'top', limit: '5' },
    want: { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 },
  },
  { params: { action: 'db-stats' }, want: { creator: denied('creator', LIST), viewer: 200, editor: 200, admin: 200 } },
  { params: { action: 'version' }, want: { creator: 200, viewer: 200, editor: 200, admin: 200 } },
  { params: { action: 'nope' }, want: { creator: 400, viewer: 400, editor: 400, admin: 400 } },
];

/** `params` with `{code}` and `{url}` replaced. */
function filled(params: Record<string, string>, code: string): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === '{code}' ? code : v === '{url}' ? `https://example.com/new-${urls++}` : v]));
}

test('every action answers each role as the roles table says, in every format', ONE, async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [ADMIN], logLevel: 'info' });
  const keys = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await makeKey(h, role)] as const))) as Record<Role, MadeKey>;
  // The link of expand and url-stats is the role's own where it may create (an editor reads its own links), else the admin's.
  const codes = Object.fromEntries(
    await Promise.all(
      ROLES.map(async (role) => {
        const signature = role === 'viewer' ? ADMIN : keys[role].key;
        const r = await api(h, { action: 'shorturl', url: `https://example.com/${role}`, signature, format: 'json' });
        assert.equal(r.status, 200, r.body);
        return [role, (JSON.parse(r.body) as { url: { keyword: string } }).url.keyword] as const;
      }),
    ),
  ) as Record<Role, string>;
  for (const action of ACTIONS) {
    for (const role of ROLES) {
      const want = action.want[role];
      for (const format of FORMATS) {
        const r = await api(h, inFormat({ ...filled(action.params, codes[role]), signature: keys[role].key }, format));
        const label = `${action.params['action']} as ${role} (${format})`;
        if (typeof want === 'number') assert.equal(r.status, want, `${label}: ${r.body}`);
        else assertAnswer(r, format, refused(want));
      }
    }
  }
  for (const key of Object.values(keys)) assert.ok(!h.logs.raw.includes(key.key), 'a secret in the log');
});

test("an editor's key reaches only the links it made: another author's link is not found to expand and url-stats", ONE, async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [ADMIN], logLevel: 'silent' });
  const editor = await makeKey(h, 'editor');
  const other = await makeKey(h, 'editor');
  const made = await api(h, { action: 'shorturl', url: 'https://example.com/theirs', signature: other.key, format: 'json' });
  const theirs = (JSON.parse(made.body) as { url: { keyword: string } }).url.keyword;
  for (const code of [theirs, await h.shorten('https://example.com/anonymous')]) {
    const expand = await api(h, { action: 'expand', shorturl: code, signature: editor.key, format: 'json' });
    assert.deepEqual([expand.status, JSON.parse(expand.body)], [404, { keyword: code, message: 'Error: short URL not found', errorCode: '404' }], code);
    const stats = await api(h, { action: 'url-stats', shorturl: code, signature: editor.key, format: 'json' });
    assert.deepEqual([stats.status, JSON.parse(stats.body)], [404, { statusCode: '404', message: 'Error: short URL not found' }], code);
  }
  assert.equal((await api(h, { action: 'expand', shorturl: theirs, signature: other.key, format: 'json' })).status, 200, "its author's key reaches it");
});

test('a wrong, revoked or expired key is "Please log in" for every action, and nothing is made', ONE, async (t) => {
  let now = 1_800_000_000_000;
  const h = await start(t, { yourlsApi: true, apiKeys: [ADMIN], now: () => now, logLevel: 'silent' });
  const expiring = await makeKey(h, 'admin', { expires_at: 1_800_000_000 + 60 });
  const revoked = await makeKey(h, 'admin');
  assert.equal((await h.req(`/api/keys/${revoked.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } })).status, 204);
  const code = await h.shorten('https://example.com/kept');
  assert.equal((await api(h, { action: 'db-stats', format: 'json', signature: expiring.key })).status, 200, 'the key works until it expires');
  now = (1_800_000_000 + 60) * 1000;
  for (const action of ACTIONS) {
    for (const [why, key] of [
      ['expired', expiring.key],
      ['revoked', revoked.key],
      ['wrong', 'us_wrong'],
    ] as const) {
      const r = await api(h, { ...filled(action.params, code), signature: key, format: 'json' });
      assert.equal(r.body, '{"message":"Please log in","errorCode":"403","callback":""}', `${action.params['action']}: ${why}`);
      assertAnswer(r, 'json', PLEASE_LOG_IN);
    }
  }
  assert.equal(h.shortener.count, 1);
});

test('the timestamped signature works with an API_KEYS key only; a hash of a stored key signs nothing', ONE, async (t) => {
  const now = 1_800_000_000_000;
  const h = await start(t, { yourlsApi: true, apiKeys: [ADMIN], now: () => now, logLevel: 'silent' });
  const stored = await makeKey(h, 'admin');
  const timestamp = String(now / 1000);
  const signed = (key: string) => ({
    timestamp,
    signature: createHash('md5')
      .update(timestamp + key)
      .digest('hex'),
  });
  const stats = { action: 'db-stats', format: 'json' };
  assert.equal((await api(h, { ...stats, ...signed(ADMIN) })).status, 200, 'an API_KEYS key, timestamped: an admin');
  assertAnswer(await api(h, { ...stats, ...signed(stored.key) }), 'json', PLEASE_LOG_IN);
  assert.equal((await api(h, { ...stats, signature: stored.key })).status, 200, 'the same key, plain');
});

test('a link made by shorturl with a stored key has that key as its author; with an API_KEYS key, none', ONE, async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [ADMIN], logLevel: 'silent' });
  const creator = await makeKey(h, 'creator');
  const editor = await makeKey(h, 'editor');
  const authors: unknown[] = [];
  for (const [signature, url] of [
    [creator.key, 'https://example.com/a'],
    [editor.key, 'https://example.com/b'],
    [ADMIN, 'https://example.com/c'],
  ] as const) {
    const made = await api(h, { action: 'shorturl', url, signature, format: 'json' });
    assert.equal(made.status, 200, made.body);
    // The stored record, as the REST API reads it back.
    const code = (JSON.parse(made.body) as { url: { keyword: string } }).url.keyword;
    const stored = await h.req(`/api/urls/${code}`);
    assert.equal(stored.status, 200, stored.body);
    authors.push((JSON.parse(stored.body) as { author: unknown }).author);
  }
  assert.deepEqual(authors, [creator.id, editor.id, null]);
});
