/**
 * PATCH /api/urls/<code> (docs/api.md, edit): the key before anything (403 empty, also before a
 * 404), a JSON object only (415, 400), the editable fields validated as on a create and any other
 * refused by name, 200 with the updated record, what never changes, and the edits that expire or
 * use up a link at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { codeOf, start, type Harness, type Reply, type RequestOptions } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const KEY = 'k1';
const NOW_MS = Date.UTC(2026, 2, 1);
const NOW_S = NOW_MS / 1000;
const JSON_HEADERS = { 'content-type': 'application/json', 'x-api-key': KEY };

function patch(h: Harness, code: string, body: string, headers: Record<string, string> = JSON_HEADERS, query = ''): Promise<Reply> {
  const options: RequestOptions = { method: 'PATCH', headers, body };
  return h.req(`/api/urls/${code}${query}`, options);
}

async function create(h: Harness, body: Record<string, unknown>): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

function detail(r: Reply, status: number, label: string): string {
  assert.equal(r.status, status, `${label}: ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/json', label);
  return (JSON.parse(r.body) as { detail: string }).detail;
}

test('PATCH changes url, retention_days and max_visits, answers 200 with the record; the rest never changes', async (t) => {
  let now = NOW_MS;
  const h = await start(t, { apiKeys: [KEY], now: () => now });
  const code = await create(h, { url: 'https://example.com/old', retention_days: 5 });
  assert.equal((await h.req(`/${code}`)).status, 302);
  now += 60_000;
  const r = await patch(h, code, JSON.stringify({ url: 'HTTPS://Example.COM/new path', retention_days: 10, max_visits: 4 }));
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers.deprecation, undefined);
  const expected: UrlRecord = {
    short_code: code,
    domain: null,
    short_url: `http://127.0.0.1:${h.port}/${code}`,
    original_url: 'https://example.com/new%20path',
    created_at: NOW_S,
    visit_count: 1,
    untracked_visits: 0,
    retention_days: 10,
    max_visits: 4,
    expires_at: NOW_S + 10 * 86400,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  };
  assert.deepEqual(JSON.parse(r.body), expected);
  assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}`)).body), expected);
  // The redirect follows the new URL; lookup finds the link by it, and no longer by the old one.
  assert.equal((await h.req(`/${code}`)).headers.location, 'https://example.com/new%20path');
  assert.equal(JSON.parse((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/new path')}`)).body).short_code, code);
  assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/old')}`)).status, 404);

  // One field at a time; null clears the limit; an empty object changes nothing.
  const cleared = await patch(h, code, '{"max_visits":null}');
  assert.deepEqual(JSON.parse(cleared.body), { ...expected, visit_count: 2, max_visits: null });
  const forever = await patch(h, code, '{"retention_days":0}');
  assert.deepEqual(JSON.parse(forever.body), { ...expected, visit_count: 2, max_visits: null, retention_days: 0, expires_at: null });
  const same = await patch(h, code, '{}');
  assert.deepEqual(JSON.parse(same.body), JSON.parse(forever.body));
  // An edited link keeps its place: it is not a new link.
  const newer = await create(h, { url: 'https://example.com/newer' });
  await patch(h, code, '{"url":"https://example.com/edited-again"}');
  const list = JSON.parse((await h.req('/api/urls', { headers: { 'x-api-key': KEY } })).body) as { urls: UrlRecord[] };
  assert.deepEqual(
    list.urls.map((u) => u.short_code),
    [newer, code],
  );
});

test('the key comes first: 403 with an empty body, for unknown codes too; api_key works and is deprecated', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await create(h, { url: 'https://example.com/k' });
  for (const [label, target, headers] of [
    ['no key', code, { 'content-type': 'application/json' }],
    ['wrong key', code, { 'content-type': 'application/json', 'x-api-key': 'nope' }],
    ['no key, unknown code', 'zzzzzz', { 'content-type': 'application/json' }],
    ['no key, bad body', code, { 'content-type': 'text/plain' }],
  ] as const) {
    const r = await patch(h, target, '{"max_visits":1}', headers);
    assert.equal(r.status, 403, label);
    assert.equal(r.body, '', label);
    assert.equal(r.headers['content-length'], '0', label);
  }
  assert.equal(JSON.parse((await h.req(`/api/urls/${code}`)).body).max_visits, null, 'nothing changed');
  const viaQuery = await patch(h, code, '{"max_visits":9}', { 'content-type': 'application/json' }, `?api_key=${KEY}`);
  assert.equal(viaQuery.status, 200, viaQuery.body);
  assert.match(String(viaQuery.headers.deprecation), /^@\d+$/);
  assert.equal(JSON.parse(viaQuery.body).max_visits, 9);
});

test('JSON only: another content type is 415, malformed JSON or a non-object 400', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await create(h, { url: 'https://example.com/j' });
  for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
    assert.match(detail(await patch(h, code, 'max_visits=1', { 'x-api-key': KEY, 'content-type': type }), 415, type), /application\/json/);
  }
  assert.match(detail(await patch(h, code, '{"max_visits":1}', { 'x-api-key': KEY }), 415, 'no content type'), /Content-Type: application\/json/);
  assert.equal(detail(await patch(h, code, '{"max_visits":', JSON_HEADERS), 400, 'malformed'), 'request body is not valid JSON');
  assert.equal(detail(await patch(h, code, '', JSON_HEADERS), 400, 'empty'), 'request body is not valid JSON');
  for (const body of ['[]', '[{"max_visits":1}]', '"text"', '5', 'null']) {
    assert.equal(detail(await patch(h, code, body, JSON_HEADERS), 400, body), 'request body must be a JSON object');
  }
  // Charset parameters and +json types are JSON.
  assert.equal((await patch(h, code, '{"max_visits":2}', { 'x-api-key': KEY, 'content-type': 'application/json; charset=utf-8' })).status, 200);
  assert.equal((await patch(h, code, '{"max_visits":3}', { 'x-api-key': KEY, 'content-type': 'application/merge-patch+json' })).status, 200);
});

// Refused by the process that reads it, before any store is asked; and the answer comes before
// the rest of the body is read, so the connection is reset after it: a proxy still sending that
// rest (the cluster target's) gets the reset and may lose the answer with it (a 502).
test(
  'a body over 64 KiB is 413',
  onOneProcess('the body is refused before it is read, and the reset that follows can beat the answer through a proxy'),
  async (t) => {
    const h = await start(t, { apiKeys: [KEY] });
    const code = await create(h, { url: 'https://example.com/b' });
    const big = JSON.stringify({ url: `https://example.com/${'x'.repeat(70 * 1024)}` });
    assert.match(detail(await patch(h, code, big, JSON_HEADERS), 413, 'too large'), /64 KiB/);
  },
);

test('each field is validated as on a create, and any other field is 400 naming it', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await create(h, { url: 'https://example.com/v' });
  const cases: [Record<string, unknown>, string | RegExp][] = [
    [
      { short_code: 'other1' },
      '"short_code" cannot be changed; an edit may hold url, retention_days, max_visits, title, tags, rules, forward_query, valid_since, valid_until, fallback_url, password',
    ],
    [{ created_at: 1 }, /^"created_at" cannot be changed/],
    [{ visit_count: 0, url: 'https://example.com/ok' }, /^"visit_count" cannot be changed/],
    [{ code: 'abc' }, /^"code" cannot be changed/],
    [{ url: 'ftp://example.com/' }, 'url must use http or https, not ftp'],
    [{ url: '' }, 'url is required'],
    [{ url: null }, 'url is required'],
    [{ url: 5 }, 'url must be a string'],
    [{ url: `http://127.0.0.1:${h.port}/abc` }, /loop/],
    [{ retention_days: -1 }, /^retention_days must be an integer from 0 to 36500/],
    [{ retention_days: '3' }, /^retention_days must be an integer/],
    [{ retention_days: 36501 }, /^retention_days must be an integer/],
    [{ max_visits: 0 }, 'max_visits must be an integer from 1 to 2147483647, or null for no limit'],
    [{ max_visits: '2' }, /^max_visits must be an integer/],
    [{ max_visits: 2.5 }, /^max_visits must be an integer/],
  ];
  for (const [fields, reason] of cases) {
    const got = detail(await patch(h, code, JSON.stringify(fields), JSON_HEADERS), 400, JSON.stringify(fields));
    if (typeof reason === 'string') assert.equal(got, reason);
    else assert.match(got, reason);
  }
  const record = JSON.parse((await h.req(`/api/urls/${code}`)).body) as UrlRecord;
  assert.equal(record.original_url, 'https://example.com/v');
  assert.equal(record.retention_days, 0);
  assert.equal(record.max_visits, null);
});

test('unknown, deleted and expired codes are 404 with an empty body', async (t) => {
  let now = NOW_MS;
  const h = await start(t, { apiKeys: [KEY], now: () => now });
  const doomed = await create(h, { url: 'https://example.com/d' });
  const brief = await create(h, { url: 'https://example.com/b', retention_days: 1 });
  assert.equal((await h.req(`/api/urls/${doomed}`, { method: 'DELETE', headers: { 'x-api-key': KEY } })).status, 204);
  now += 86_400_000;
  for (const code of ['zzzzzz', doomed, brief]) {
    const r = await patch(h, code, '{"retention_days":0}');
    assert.equal(r.status, 404, code);
    assert.equal(r.body, '', code);
  }
  assert.equal((await h.req(`/${brief}`)).status, 410, 'an expired link is not revived by an edit');
});

test('a shorter retention can expire the link at once; a max_visits at or below visit_count uses it up', async (t) => {
  let now = NOW_MS;
  const h = await start(t, { apiKeys: [KEY], now: () => now });
  const code = await create(h, { url: 'https://example.com/e', retention_days: 30 });
  now += 3 * 86_400_000;
  const r = await patch(h, code, '{"retention_days":2}');
  assert.equal(r.status, 200, r.body);
  assert.equal(JSON.parse(r.body).expires_at, NOW_S + 2 * 86400);
  assert.equal((await h.req(`/api/urls/${code}`)).status, 404);
  assert.equal((await h.req(`/${code}`)).status, 410);

  const used = await create(h, { url: 'https://example.com/u' });
  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/${used}`)).status, 302);
  const limited = await patch(h, used, '{"max_visits":2}');
  assert.equal(JSON.parse(limited.body).visit_count, 3);
  const gone = await h.req(`/${used}`);
  assert.equal(gone.status, 410);
  assert.match(gone.body, /This link has reached its visit limit/);
  // Raising the limit again opens it for the visits left.
  await patch(h, used, '{"max_visits":4}');
  assert.equal((await h.req(`/${used}`)).status, 302);
  assert.equal((await h.req(`/${used}`)).status, 410);
  assert.equal(JSON.parse((await h.req(`/api/urls/${used}`)).body).visit_count, 4);
});

test('an edit the store cannot write is 503 with the reason, and nothing changed', onOneProcess('it fills its disk'), async (t) => {
  const { fs, disk } = fillableDisk();
  const h = await start(t, { apiKeys: [KEY], fs, logLevel: 'silent' });
  const code = await create(h, { url: 'https://example.com/w' });
  disk.full = true;
  assert.match(detail(await patch(h, code, '{"url":"https://example.com/x","max_visits":1}'), 503, 'disk full'), /ENOSPC/);
  disk.full = false;
  const record = JSON.parse((await h.req(`/api/urls/${code}`)).body) as UrlRecord;
  assert.equal(record.original_url, 'https://example.com/w');
  assert.equal(record.max_visits, null);
  assert.equal((await patch(h, code, '{"max_visits":1}')).status, 200, 'works again once the disk does');
});
