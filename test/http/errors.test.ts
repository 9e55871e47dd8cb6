/**
 * The rows of the error table (docs/api.md, errors); the 401 gate row, the 409, 422 and 431 rows
 * and the 503 disk rows live elsewhere: exact status, Content-Type and body, empty bodies included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listedCodes, start, type Reply } from '../support/helpers.ts';

const JSON_TYPE = 'application/json';
const HTML = 'text/html; charset=utf-8';
const DAY_MS = 86_400_000;

/** Asserts a `{"detail":"…"}` JSON error with a non-empty detail and nothing else. */
function assertDetail(r: Reply, status: number, label: string): string {
  assert.equal(r.status, status, `${label}: status (body ${r.body})`);
  assert.equal(r.headers['content-type'], JSON_TYPE, `${label}: content-type`);
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['detail'], label);
  const detail = body['detail'];
  assert.equal(typeof detail, 'string', label);
  assert.ok((detail as string).length > 0, label);
  return detail as string;
}

function assertEmpty(r: Reply, status: number, label: string): void {
  assert.equal(r.status, status, `${label}: status (body ${r.body})`);
  assert.equal(r.body, '', `${label}: body`);
  assert.equal(r.headers['content-type'], undefined, `${label}: content-type`);
}

test('403 with an empty body: list and delete with a missing or wrong key', async (t) => {
  const h = await start(t, { apiKeys: ['k1', 'k2'] });
  const code = await h.shorten('https://example.com/protected');
  const cases: { name: string; method: string; path: string; headers?: Record<string, string> }[] = [
    { name: 'list, no key', method: 'GET', path: '/api/urls' },
    { name: 'list, wrong header key', method: 'GET', path: '/api/urls', headers: { 'x-api-key': 'nope' } },
    { name: 'list, empty header key', method: 'GET', path: '/api/urls', headers: { 'x-api-key': '' } },
    { name: 'list, key prefix', method: 'GET', path: '/api/urls', headers: { 'x-api-key': 'k' } },
    { name: 'list, key with suffix', method: 'GET', path: '/api/urls', headers: { 'x-api-key': 'k1x' } },
    { name: 'list, wrong query key', method: 'GET', path: '/api/urls?api_key=nope' },
    { name: 'list, empty query key', method: 'GET', path: '/api/urls?api_key=' },
    { name: 'list, both keys joined', method: 'GET', path: '/api/urls?api_key=k1,k2' },
    { name: 'HEAD list, no key', method: 'HEAD', path: '/api/urls' },
    { name: 'delete, no key', method: 'DELETE', path: `/api/urls/${code}` },
    { name: 'delete, wrong header key', method: 'DELETE', path: `/api/urls/${code}`, headers: { 'x-api-key': 'nope' } },
    { name: 'delete, wrong query key', method: 'DELETE', path: `/api/urls/${code}?api_key=nope` },
    { name: 'delete unknown code, no key', method: 'DELETE', path: '/api/urls/zzzzzz' },
    { name: 'delete unknown code, wrong key', method: 'DELETE', path: '/api/urls/zzzzzz', headers: { 'x-api-key': 'nope' } },
    { name: 'delete unknown code, wrong query key', method: 'DELETE', path: '/api/urls/zzzzzz?api_key=nope' },
  ];
  for (const c of cases) {
    assertEmpty(await h.req(c.path, { method: c.method, ...(c.headers ? { headers: c.headers } : {}) }), 403, c.name);
  }
  // Nothing was deleted by the refused requests.
  assert.equal((await h.req(`/api/urls/${code}`)).status, 200);
  // Both configured keys work.
  assert.equal((await h.req('/api/urls', { headers: { 'x-api-key': 'k2' } })).status, 200);
  assert.equal((await h.req('/api/urls?api_key=k1')).status, 200);
});

test('403 with an empty body: list and delete when no keys are configured', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/no-keys');
  const cases: { name: string; method: string; path: string; headers?: Record<string, string> }[] = [
    { name: 'list, no key', method: 'GET', path: '/api/urls' },
    { name: 'list, some header key', method: 'GET', path: '/api/urls', headers: { 'x-api-key': 'k1' } },
    { name: 'list, empty header key', method: 'GET', path: '/api/urls', headers: { 'x-api-key': '' } },
    { name: 'list, some query key', method: 'GET', path: '/api/urls?api_key=k1' },
    { name: 'list, empty query key', method: 'GET', path: '/api/urls?api_key=' },
    { name: 'delete, some key', method: 'DELETE', path: `/api/urls/${code}`, headers: { 'x-api-key': 'k1' } },
    { name: 'delete, empty key', method: 'DELETE', path: `/api/urls/${code}?api_key=` },
    { name: 'delete unknown, some key', method: 'DELETE', path: '/api/urls/zzzzzz', headers: { 'x-api-key': 'k1' } },
  ];
  for (const c of cases) {
    assertEmpty(await h.req(c.path, { method: c.method, ...(c.headers ? { headers: c.headers } : {}) }), 403, c.name);
  }
  assert.equal((await h.req(`/api/urls/${code}`)).status, 200);
});

test('404 with an empty body: metadata, lookup and delete misses, and other /api/* paths', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  await h.shorten('https://example.com/exists');
  const cases: { name: string; method: string; path: string; headers?: Record<string, string> }[] = [
    { name: 'metadata, unknown code', method: 'GET', path: '/api/urls/zzzzzz' },
    { name: 'metadata, code outside the alphabet', method: 'GET', path: '/api/urls/abc0' },
    { name: 'HEAD metadata, unknown code', method: 'HEAD', path: '/api/urls/zzzzzz' },
    { name: 'lookup, unknown url', method: 'GET', path: `/api/lookup?url=${encodeURIComponent('https://example.com/missing')}` },
    { name: 'lookup, near miss', method: 'GET', path: `/api/lookup?url=${encodeURIComponent('https://example.com/exists/')}` },
    { name: 'delete, unknown code', method: 'DELETE', path: '/api/urls/zzzzzz', headers: { 'x-api-key': 'k1' } },
    { name: 'delete, code outside the alphabet', method: 'DELETE', path: '/api/urls/OOOOOO', headers: { 'x-api-key': 'k1' } },
    { name: '/api', method: 'GET', path: '/api' },
    { name: '/api/', method: 'GET', path: '/api/' },
    { name: '/api/nope', method: 'GET', path: '/api/nope' },
    { name: 'POST /api/nope', method: 'POST', path: '/api/nope' },
    { name: 'DELETE /api/nope', method: 'DELETE', path: '/api/nope' },
    { name: '/api/urls/a/b', method: 'GET', path: '/api/urls/a/b' },
    { name: '/api/health/x', method: 'GET', path: '/api/health/x' },
    { name: '/api/shorten/x', method: 'POST', path: '/api/shorten/x' },
  ];
  for (const c of cases) {
    assertEmpty(await h.req(c.path, { method: c.method, ...(c.headers ? { headers: c.headers } : {}) }), 404, c.name);
  }
});

test('redirect of an unknown code is a 404 HTML page "Link not found"', async (t) => {
  const h = await start(t);
  for (const path of ['/zzzzzz', '/abc0', '/OOOOOO', '/Il1Il1', '/%C3%A9t%C3%A9', '/a-b_c']) {
    const r = await h.req(path);
    assert.equal(r.status, 404, path);
    assert.equal(r.headers['content-type'], HTML, path);
    assert.match(r.body, /Link not found/, path);
    assert.match(r.body, /^<!doctype html>/i, path);
    assert.equal(r.headers.location, undefined, path);
    const head = await h.req(path, { method: 'HEAD' });
    assert.equal(head.status, 404, `HEAD ${path}`);
  }
});

test('redirect of an expired code is a 410 HTML page; metadata and lookup are 404, the list omits it', async (t) => {
  let now = 1_700_000_000_000;
  const h = await start(t, { apiKeys: ['k1'], now: () => now });
  const code = await h.shorten('https://example.com/short-lived', 1);
  const forever = await h.shorten('https://example.com/short-lived');
  assert.equal((await h.req(`/${code}`)).status, 302);
  now += DAY_MS;
  const r = await h.req(`/${code}`);
  assert.equal(r.status, 410);
  assert.equal(r.headers['content-type'], HTML);
  assert.match(r.body, /This link has expired/);
  assert.equal(r.headers.location, undefined);
  assertEmpty(await h.req(`/api/urls/${code}`), 404, 'metadata of expired');
  const lookup = await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/short-lived')}`);
  assert.equal(lookup.status, 200);
  assert.equal((JSON.parse(lookup.body) as { short_code: string }).short_code, forever);
  assert.deepEqual(await listedCodes(h.port, 'k1'), [forever]);
});

test('400 {"detail"} for every bad path spelling, before any route decision', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const cases: { method: string; path: string }[] = [
    { method: 'GET', path: '/..' },
    { method: 'GET', path: '/.' },
    { method: 'GET', path: '/a/../api/urls' },
    { method: 'GET', path: '/api/urls/..' },
    { method: 'GET', path: '/api/./health' },
    { method: 'GET', path: '/%2e%2e/x' },
    { method: 'GET', path: '/%2E%2E/x' },
    { method: 'GET', path: '/%2e/api/health' },
    { method: 'GET', path: '/.%2e/x' },
    { method: 'GET', path: '/api%2Furls' },
    { method: 'GET', path: '/api%2furls' },
    { method: 'GET', path: '/api/urls%2Fx' },
    { method: 'GET', path: '/x%00' },
    { method: 'GET', path: '/api/health%00' },
    { method: 'GET', path: '//api/urls' },
    { method: 'GET', path: '/api//urls' },
    // A bad path is 400 even where the method or the key would have been refused.
    { method: 'DELETE', path: '/a/../api/urls/x' },
    { method: 'PUT', path: '/..' },
    { method: 'POST', path: '/api%2Fshorten' },
  ];
  for (const c of cases) {
    const label = `${c.method} ${c.path}`;
    assertDetail(await h.req(c.path, { method: c.method }), 400, label);
  }
});

test('400 {"detail"} for a missing url on lookup', async (t) => {
  const h = await start(t);
  for (const path of ['/api/lookup', '/api/lookup?url=', '/api/lookup?other=1']) {
    assertDetail(await h.req(path), 400, path);
  }
});

test('400 {"detail"} for a bad limit or offset; the bounds themselves are accepted', async (t) => {
  const h = await start(t, { apiKeys: ['k1'] });
  const key = { 'x-api-key': 'k1' };
  for (const query of [
    'limit=0',
    'limit=1001',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=',
    'limit=1e2',
    'offset=-1',
    'offset=x',
    'offset=1.5',
    'offset=',
    'limit=10&offset=-5',
  ]) {
    assertDetail(await h.req(`/api/urls?${query}`, { headers: key }), 400, query);
  }
  for (const query of ['limit=1', 'limit=1000', 'offset=0', 'limit=1000&offset=999']) {
    const r = await h.req(`/api/urls?${query}`, { headers: key });
    assert.equal(r.status, 200, query);
  }
});

test('400 {"detail"} for invalid shorten input', async (t) => {
  const h = await start(t);
  const own = `http://127.0.0.1:${h.port}`;
  const json = (value: unknown): { type: string; body: string } => ({ type: 'application/json', body: JSON.stringify(value) });
  const cases: { name: string; type?: string; body?: string; query?: string }[] = [
    { name: 'no url at all' },
    { name: 'empty JSON object', ...json({}) },
    { name: 'empty url', ...json({ url: '' }) },
    { name: 'url not a string', ...json({ url: 42 }) },
    { name: 'relative url', ...json({ url: '/just/a/path' }) },
    { name: 'not a url', ...json({ url: 'not a url' }) },
    { name: 'ftp scheme', ...json({ url: 'ftp://example.com/file' }) },
    { name: 'javascript scheme', ...json({ url: 'javascript:alert(1)' }) },
    { name: 'data scheme', ...json({ url: 'data:text/html,hi' }) },
    { name: 'file scheme', ...json({ url: 'file:///etc/passwd' }) },
    { name: 'no host', ...json({ url: 'http://' }) },
    { name: 'userinfo', ...json({ url: 'https://bank.com@evil.example/' }) },
    { name: 'user and password', ...json({ url: 'https://user:pw@example.com/' }) },
    { name: 'too long', ...json({ url: `https://example.com/${'a'.repeat(8192)}` }) },
    { name: 'own short link', ...json({ url: `${own}/abcdef` }) },
    { name: 'own root', ...json({ url: `${own}/` }) },
    { name: 'retention -1', ...json({ url: 'https://example.com/', retention_days: -1 }) },
    { name: 'retention 36501', ...json({ url: 'https://example.com/', retention_days: 36501 }) },
    { name: 'retention 1.5', ...json({ url: 'https://example.com/', retention_days: 1.5 }) },
    { name: 'retention string', ...json({ url: 'https://example.com/', retention_days: 'ten' }) },
    { name: 'retention query not a number', query: `url=${encodeURIComponent('https://example.com/')}&retention_days=x` },
    { name: 'url in query invalid', query: 'url=ftp%3A%2F%2Fexample.com' },
    { name: 'malformed JSON', type: 'application/json', body: '{"url":' },
    { name: 'JSON array', ...json(['https://example.com/']) },
    { name: 'JSON string', ...json('https://example.com/') },
    { name: 'form without url', type: 'application/x-www-form-urlencoded', body: 'retention_days=1' },
  ];
  for (const c of cases) {
    const r = await h.req(`/api/shorten${c.query ? `?${c.query}` : ''}`, {
      method: 'POST',
      ...(c.type ? { headers: { 'content-type': c.type } } : {}),
      ...(c.body === undefined ? {} : { body: c.body }),
    });
    assertDetail(r, 400, c.name);
  }
  // Nothing was stored by the refused requests.
  assert.equal(h.shortener.count, 0);
  // The boundaries themselves are accepted.
  await h.shorten('https://example.com/', 36500);
  await h.shorten('https://example.com/', 0);
});

test('405 {"detail"} with an Allow header for a wrong method on a known path', async (t) => {
  const h = await start(t);
  const code = await h.shorten('https://example.com/405');
  const cases: { method: string; path: string; allow: string[] }[] = [
    { method: 'PUT', path: '/api/urls', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'POST', path: '/api/urls', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'DELETE', path: '/api/urls', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'POST', path: '/api/urls/x', allow: ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH'] },
    { method: 'PUT', path: `/api/urls/${code}`, allow: ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH'] },
    { method: 'PATCH', path: `/${code}`, allow: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
    { method: 'PATCH', path: '/api/urls', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'DELETE', path: '/api/health', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'POST', path: '/api/health', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'PUT', path: '/api/shorten', allow: ['GET', 'POST'] },
    { method: 'DELETE', path: '/api/shorten', allow: ['GET', 'POST'] },
    { method: 'POST', path: '/api/lookup', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'DELETE', path: `/${code}`, allow: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
    { method: 'POST', path: '/', allow: ['GET', 'HEAD', 'OPTIONS'] },
    { method: 'PATCH', path: '/static/index.html', allow: ['GET', 'HEAD', 'OPTIONS'] },
  ];
  for (const c of cases) {
    const label = `${c.method} ${c.path}`;
    const r = await h.req(c.path, { method: c.method });
    assertDetail(r, 405, label);
    const allow = r.headers.allow;
    assert.ok(allow !== undefined, `${label}: Allow`);
    assert.deepEqual(
      allow
        .split(',')
        .map((m) => m.trim())
        .sort(),
      c.allow,
      label,
    );
    assert.ok(
      !allow
        .split(',')
        .map((m) => m.trim())
        .includes(c.method),
      `${label}: Allow lists the refused method`,
    );
  }
  // POST on a code did not count a visit or change the link.
  const meta = JSON.parse((await h.req(`/api/urls/${code}`)).body) as { visit_count: number };
  assert.equal(meta.visit_count, 0);
});

test('413 {"detail"} for a body over 64 KiB; exactly 64 KiB is accepted', async (t) => {
  const h = await start(t);
  const prefix = '{"url":"https://example.com/big","pad":"';
  const suffix = '"}';
  const exact = prefix + 'x'.repeat(64 * 1024 - prefix.length - suffix.length) + suffix;
  assert.equal(Buffer.byteLength(exact), 64 * 1024);
  const ok = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: exact });
  assert.equal(ok.status, 201);

  const over = prefix + 'x'.repeat(64 * 1024 - prefix.length - suffix.length + 1) + suffix;
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: over });
  assertDetail(r, 413, 'one byte over');
  // Without a Content-Length the limit holds while streaming.
  const chunked = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body: over,
  });
  assertDetail(chunked, 413, 'chunked, one byte over');
  assert.equal(h.shortener.count, 1);
});

test('413 at a configured max_body_bytes, named in the detail; exactly the limit is accepted', async (t) => {
  for (const [limit, named] of [
    [2048, '2 KiB'],
    [1500, '1500 bytes'],
  ] as const) {
    const h = await start(t, { maxBodyBytes: limit });
    const prefix = '{"url":"https://example.com/limit","pad":"';
    const suffix = '"}';
    const exact = prefix + 'x'.repeat(limit - prefix.length - suffix.length) + suffix;
    const headers = { 'content-type': 'application/json' };
    assert.equal((await h.req('/api/shorten', { method: 'POST', headers, body: exact })).status, 201);
    const over = await h.req('/api/shorten', { method: 'POST', headers, body: `${exact} ` });
    assert.equal(assertDetail(over, 413, `${limit}: one byte over`), `request body is larger than ${named}`);
    assert.equal(over.headers.connection, 'close');
    const chunked = await h.req('/api/shorten', { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' }, body: `${exact} ` });
    assertDetail(chunked, 413, `${limit}: chunked, one byte over`);
    assert.equal(h.shortener.count, 1);
    await h.close();
  }
});

test('415 {"detail"} for a body with an unsupported content type', async (t) => {
  const h = await start(t);
  const cases: { name: string; headers: Record<string, string> }[] = [
    { name: 'text/plain', headers: { 'content-type': 'text/plain' } },
    { name: 'text/plain; charset', headers: { 'content-type': 'text/plain; charset=utf-8' } },
    { name: 'multipart', headers: { 'content-type': 'multipart/form-data; boundary=x' } },
    { name: 'no content type', headers: {} },
  ];
  for (const c of cases) {
    const r = await h.req('/api/shorten', { method: 'POST', headers: c.headers, body: 'https://example.com/' });
    assertDetail(r, 415, c.name);
  }
  assert.equal(h.shortener.count, 0);
});

test('503 {"detail"} when the code space is exhausted', async (t) => {
  // Zero bytes always yield the code "1": with one length only, the second link has nowhere to go.
  const h = await start(t, { minShortLength: 1, maxShortLength: 1, random: (buffer) => buffer.fill(0) });
  assert.equal(await h.shorten('https://example.com/first'), '1');
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/second"}' });
  assertDetail(r, 503, 'exhausted');
  assert.equal(h.shortener.count, 1);
});

test('500 {"detail":"internal error"} for anything unexpected; the stack goes to the log only', async (t) => {
  let broken = false;
  const h = await start(t, {
    now: () => {
      if (broken) throw new Error('clock exploded SECRET-STACK-MARKER');
      return Date.now();
    },
  });
  broken = true;
  const r = await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/')}`);
  assert.equal(r.status, 500);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  assert.equal(r.body, '{"detail":"internal error"}');
  assert.ok(h.logs.raw.includes('SECRET-STACK-MARKER'), 'the error is logged');
  const entry = h.logs.lines.find((l) => l['level'] === 'error');
  assert.ok(entry, 'an error line is logged');
  assert.match(String(JSON.stringify(entry)), /at /);
  broken = false;
  assert.equal((await h.req('/api/health')).status, 200);
});
