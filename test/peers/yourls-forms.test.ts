/**
 * How YOURLS' clients send their parameters (docs/compat.md#yourls-api), through HTTP: ShareX's
 * exact request (a multipart POST; the answer's body is the short URL and nothing else), the
 * url-encoded forms of the WordPress plugins, a body field winning over the query string as in
 * PHP, file parts and other bodies left out, and the body limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';
import { TYPES } from '../support/yourls.ts';

const KEY = 'sharex-key-1';

/** ShareX's multipart body: `--` + boundary, each field as a form-data part, CRLF line ends, `--` at the end. */
function sharexBody(boundary: string, fields: readonly (readonly [string, string])[]): string {
  return `${fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')}--${boundary}--\r\n`;
}

test("ShareX's request: a multipart POST of signature, action=shorturl, format=simple and url; 200 and the short URL alone", async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY] });
  const base = h.shortener.config.baseUrl;
  // ShareX's boundary: twenty dashes and the clock's ticks in hex.
  const boundary = `--------------------${(638_700_000_000_000_000n).toString(16)}`;
  const url = 'https://example.com/screenshots/2024-06-01_12-00-00.png';
  const body = sharexBody(boundary, [
    ['signature', KEY],
    ['action', 'shorturl'],
    ['format', 'simple'],
    ['url', url],
  ]);
  const reply = await h.req('/yourls-api.php', {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'user-agent': 'ShareX/16.1.0', 'content-length': String(Buffer.byteLength(body)) },
    body,
  });
  assert.equal(reply.status, 200, reply.body);
  assert.equal(reply.headers['content-type'], TYPES.simple);
  assert.match(reply.body, new RegExp(`^${base.replace(/[.]/g, '\\.')}/[1-9A-HJ-NP-Za-km-z]{6}$`));
  const code = reply.body.slice(base.length + 1);
  const redirect = await h.req(`/${code}`);
  assert.deepEqual([redirect.status, redirect.headers.location], [302, url]);
});

test('a url-encoded POST form, as the WordPress plugins send it; a body field wins over the query parameter', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY] });
  const form = new URLSearchParams({
    signature: KEY,
    action: 'shorturl',
    url: 'https://example.com/post?x=1&y=2',
    keyword: 'wp-post',
    title: 'My post',
    format: 'json',
  });
  const reply = await h.req('/yourls-api.php?format=xml&action=version', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    body: form.toString(),
  });
  assert.equal(reply.status, 200, reply.body);
  assert.equal(reply.headers['content-type'], TYPES.json);
  const body = JSON.parse(reply.body) as { status: string; shorturl: string; url: { url: string; title: string } };
  assert.deepEqual(
    [body.status, body.shorturl, body.url.url, body.url.title],
    ['success', `${h.shortener.config.baseUrl}/wp-post`, 'https://example.com/post?x=1&y=2', 'My post'],
  );
  // The signature may come in the query and the rest in the body.
  const mixed = await h.req(`/yourls-api.php?signature=${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=version&format=simple',
  });
  assert.deepEqual([mixed.status, mixed.body], [200, '1.10.4']);
  // Of a name repeated, the last value counts, as PHP reads a form.
  const repeated = await h.req('/yourls-api.php', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `signature=${KEY}&action=expand&action=version&format=simple`,
  });
  assert.deepEqual([repeated.status, repeated.body], [200, '1.10.4']);
});

test('multipart: file parts are no parameters; quoted boundaries and UTF-8 values are read', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY] });
  const boundary = 'b0undary with space';
  const body =
    `--${boundary}\r\nContent-Disposition: form-data; name="signature"\r\n\r\n${KEY}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="action"\r\n\r\nshorturl\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="keyword"\r\n\r\nutf8-title\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nCafé ☕\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="url"; filename="url.txt"\r\nContent-Type: text/plain\r\n\r\nhttps://example.com/from-a-file\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://example.com/from-a-field\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\njson\r\n` +
    `--${boundary}--\r\n`;
  const reply = await h.req('/yourls-api.php', { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` }, body });
  assert.equal(reply.status, 200, reply.body);
  const parsed = JSON.parse(reply.body) as { url: { url: string; title: string } };
  assert.deepEqual([parsed.url.url, parsed.url.title], ['https://example.com/from-a-field', 'Café ☕']);
  assert.ok(reply.body.includes('"title":"Caf\\u00e9 \\u2615"'), reply.body);
});

test('a JSON body is not read as parameters, as PHP does not; a body past MAX_BODY_BYTES is 413', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY], maxBodyBytes: 1024 });
  const json = await h.req(`/yourls-api.php?signature=${KEY}&format=simple`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'version' }),
  });
  assert.deepEqual([json.status, json.body], [400, 'Unknown or missing "action" parameter']);
  const big = await h.req('/yourls-api.php', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `signature=${KEY}&action=version&pad=${'x'.repeat(2000)}`,
  });
  assert.equal(big.status, 413);
  assert.deepEqual(JSON.parse(big.body), { detail: 'request body is larger than 1 KiB' });
});
