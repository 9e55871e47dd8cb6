/**
 * The credential of YOURLS' API (docs/compat.md#yourls-api), through HTTP: an `API_KEYS` key as
 * `signature`, or a timestamped hash of it (md5, sha1, sha256; either order; 12 hours either side
 * of the server's clock); every refusal in YOURLS' own shape and status, in the requested format,
 * also behind the gate, which the signature alone gets past; `username`/`password` never work;
 * without the setting the path is an unknown code; secrets never reach the log.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';
import { api, assertAnswer, FORMATS, inFormat, TYPES } from '../support/yourls.ts';

const KEYS = ['first-key-1', 'second-key-2'];
const NOW = Date.UTC(2031, 5, 7, 8, 9, 10);
const SECONDS = NOW / 1000;
const HALF_DAY = 12 * 3600;

const VERSION_OK = { status: 200, fields: { version: '1.10.4' }, simple: '1.10.4' };
const refused = (message: string) => ({ status: 403, fields: { message, errorCode: '403', callback: '' }, simple: message });
const PLEASE_LOG_IN = refused('Please log in');

function hash(algorithm: string, text: string): string {
  return createHash(algorithm).update(text).digest('hex');
}

async function version(h: Harness, params: Record<string, string>, format: 'json' | 'simple' = 'json') {
  return api(h, { action: 'version', format, ...params });
}

test('no signature, or a wrong one: 403 "Please log in" in every format, the callback always named', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS });
  for (const params of [{}, { signature: 'wrong' }, { signature: `${KEYS[0]} ` }, { signature: KEYS[0]!.toUpperCase() }, { signature: '' }]) {
    for (const format of FORMATS) {
      const reply = await api(h, inFormat({ action: 'version', ...params }, format));
      // jsonp: the refusal carries the callback it was given, and the tests' helper expects it there.
      assertAnswer(reply, format, PLEASE_LOG_IN);
    }
  }
  // YOURLS names the callback of a refusal even when none was sent: JSONP then refuses the empty name.
  const noCallback = await api(h, { action: 'version', format: 'jsonp' });
  assert.deepEqual(
    [noCallback.status, noCallback.headers['content-type'], noCallback.body],
    [400, TYPES.jsonp, '{"errorCode":"400","error":"Invalid callback parameter"}'],
  );
  // The XML of a refusal, whole.
  const xml = await api(h, { action: 'shorturl', url: 'https://example.com/' });
  assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<root><message>Please log in</message><errorCode>403</errorCode><callback/></root>\n');
  assert.equal(h.shortener.count, 0);
});

test('either key of API_KEYS is a signature', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS });
  for (const key of KEYS) for (const format of FORMATS) assertAnswer(await api(h, inFormat({ action: 'version', signature: key }, format)), format, VERSION_OK);
});

test('username and password are never a credential: 403 "Invalid username or password"', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS });
  for (const params of [{ username: 'admin', password: KEYS[0]! }, { username: 'admin' }, { password: '' }]) {
    for (const format of FORMATS)
      assertAnswer(await api(h, inFormat({ action: 'version', ...params }, format)), format, refused('Invalid username or password'));
  }
});

test('a timestamped signature: md5 (the default), sha1 or sha256 of timestamp and key, either order, for each key', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS, now: () => NOW });
  const timestamp = String(SECONDS);
  for (const key of KEYS) {
    for (const algorithm of ['md5', 'sha1', 'sha256']) {
      for (const signature of [hash(algorithm, timestamp + key), hash(algorithm, key + timestamp)]) {
        const params = algorithm === 'md5' ? { timestamp, signature } : { timestamp, signature, hash: algorithm };
        const reply = await version(h, params);
        assert.deepEqual([reply.status, reply.body], [200, '{"version":"1.10.4"}'], `${algorithm} ${key}`);
      }
    }
  }
  const md5 = hash('md5', timestamp + KEYS[0]);
  for (const params of [
    { timestamp, signature: md5.toUpperCase() },
    { timestamp, signature: md5, hash: 'sha1' },
    { timestamp, signature: hash('sha512', timestamp + KEYS[0]), hash: 'sha512' },
    { timestamp, signature: md5, hash: 'MD5' },
    { timestamp, signature: hash('md5', `${timestamp}not-a-key`) },
    // With a timestamp the signature must be the hash: the key itself is refused.
    { timestamp, signature: KEYS[0]! },
    // An empty or zero timestamp is no timestamp to YOURLS, and then not the plain form either.
    { timestamp: '', signature: KEYS[0]! },
    { timestamp: '0', signature: KEYS[0]! },
    { timestamp, signature: '' },
  ]) {
    const reply = await version(h, params, 'simple');
    assert.deepEqual([reply.status, reply.body], [403, 'Please log in'], JSON.stringify(params));
  }
});

test("a signed timestamp is accepted within 12 hours of the server's clock, either side, and not at 12 hours", async (t) => {
  let clock = NOW;
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS, now: () => clock });
  const status = async (timestamp: number) =>
    (await version(h, { timestamp: String(timestamp), signature: hash('sha256', timestamp + KEYS[1]!), hash: 'sha256' })).status;
  assert.equal(await status(SECONDS), 200);
  assert.equal(await status(SECONDS - HALF_DAY + 1), 200);
  assert.equal(await status(SECONDS + HALF_DAY - 1), 200);
  assert.equal(await status(SECONDS - HALF_DAY), 403);
  assert.equal(await status(SECONDS + HALF_DAY), 403);
  // The same signature expires as the clock moves on.
  const signedAt = SECONDS;
  clock = NOW + (HALF_DAY - 1) * 1000;
  assert.equal(await status(signedAt), 200);
  clock = NOW + HALF_DAY * 1000;
  assert.equal(await status(signedAt), 403);
  const expired = await version(h, { timestamp: String(signedAt), signature: hash('md5', signedAt + KEYS[0]!) }, 'json');
  assert.deepEqual([expired.status, expired.body], [403, '{"message":"Please log in","errorCode":"403","callback":""}']);
});

test('with API_KEYS empty nothing authenticates', async (t) => {
  const h = await start(t, { yourlsApi: true, now: () => NOW });
  for (const params of [{ signature: 'anything' }, { timestamp: String(SECONDS), signature: hash('md5', String(SECONDS)) }, { signature: '' }]) {
    const reply = await version(h, params, 'simple');
    assert.deepEqual([reply.status, reply.body], [403, 'Please log in']);
  }
});

test("behind the gate the signature alone passes; without it the refusal is YOURLS', never the gate's", async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS, apiToken: 'gate-token-1' });
  const ok = await version(h, { signature: KEYS[0]! });
  assert.deepEqual([ok.status, ok.body], [200, '{"version":"1.10.4"}']);
  assert.equal(ok.headers['www-authenticate'], undefined);
  const missing = await version(h, {});
  assert.deepEqual(
    [missing.status, missing.headers['content-type'], missing.body],
    [403, TYPES.json, '{"message":"Please log in","errorCode":"403","callback":""}'],
  );
  assert.equal(missing.headers['www-authenticate'], undefined);
  // The bearer token is not this surface's credential.
  const bearer = await h.req('/yourls-api.php?action=version&format=simple', { headers: { authorization: 'Bearer gate-token-1' } });
  assert.deepEqual([bearer.status, bearer.body], [403, 'Please log in']);
  // The rest stays gated.
  assert.equal((await h.req('/api/health')).status, 401);
});

test('without YOURLS_API, /yourls-api.php is an unknown code: 404, behind the gate 401', async (t) => {
  const h = await start(t, { apiKeys: KEYS });
  const reply = await version(h, { signature: KEYS[0]! });
  assert.equal(reply.status, 404);
  assert.equal(reply.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(reply.body, /Link not found/);
  // A POST is what it is on any code: a password form's, which is 415 without a form.
  const post = await h.req('/yourls-api.php', { method: 'POST' });
  assert.deepEqual([post.status, post.body], [415, (await h.req('/abcdef', { method: 'POST' })).body]);
  const gated = await start(t, { apiKeys: KEYS, apiToken: 'gate-token-1' });
  assert.equal((await version(gated, { signature: KEYS[0]! })).status, 401);
});

test('HEAD, PUT and DELETE are 405 with Allow: GET, POST (shorturl creates a link, and a HEAD must change nothing)', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: KEYS });
  for (const method of ['HEAD', 'PUT', 'DELETE']) {
    const reply = await h.req(`/yourls-api.php?signature=${KEYS[0]}&action=shorturl&url=https%3A%2F%2Fexample.com%2F`, { method });
    assert.equal(reply.status, 405, method);
    assert.equal(reply.headers['allow'], 'GET, POST');
  }
  assert.equal(h.shortener.count, 0);
});

test(
  'signature and password never reach the log: their values are redacted in logged paths',
  onOneProcess('its log lines, which the cluster target relays from three processes as they come'),
  async (t) => {
    const h = await start(t, { yourlsApi: true, apiKeys: KEYS, logLevel: 'debug' });
    await api(h, { action: 'version', signature: KEYS[0]! });
    await api(h, { action: 'version', username: 'admin', password: 'PASSWORD-MARKER' });
    await api(h, { action: 'nope', signature: KEYS[1]! });
    const paths = h.logs.lines.filter((l) => l['msg'] === 'request').map((l) => l['path']);
    assert.deepEqual(paths, [
      '/yourls-api.php?action=version&signature=***',
      '/yourls-api.php?action=version&username=admin&password=***',
      '/yourls-api.php?action=nope&signature=***',
    ]);
    for (const secret of [...KEYS, 'PASSWORD-MARKER']) assert.ok(!h.logs.raw.includes(secret), secret);
  },
);
