/**
 * Every spelling of a protected request we could think of, in one table, sent as raw bytes (a client
 * library would clean many of them up): none reaches a protected handler without the token. Each row
 * pins the exact status without the token and with it; with it, the rows that name a real route
 * reach it, which shows the spelling was a real attempt. Decisively, a spy on the service counts the
 * protected operations that ran, and the store must not change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assert401, RIGHT, spyOnProtected, TOKEN } from '../support/gate-helpers.ts';
import { codeOf, start, type Harness } from '../support/helpers.ts';
import { sendRaw, type RawReply } from '../support/raw-http.ts';

interface Row {
  /** The request line's method and target; `{code}` is a live short code. */
  method: string;
  target: string;
  /** Status without the token (`closed`: the server drops the connection without an answer). */
  without: number | 'closed';
  /** Status with the right token. */
  with: number | 'closed';
  /** Extra header lines. */
  headers?: readonly string[];
  body?: string;
}

const JSON_BODY = '{"url":"https://example.com/bypass"}';
const SHORTEN = { headers: ['Content-Type: application/json'], body: JSON_BODY } as const;
const URL_Q = `url=${encodeURIComponent('https://example.com/q')}`;

const ROWS: readonly Row[] = [
  // The plain protected routes, as a baseline.
  { method: 'GET', target: '/api/urls', without: 401, with: 200 },
  { method: 'GET', target: '/api/health', without: 401, with: 200 },
  { method: 'GET', target: '/api/urls/{code}', without: 401, with: 200 },
  { method: 'GET', target: `/api/lookup?${URL_Q}`, without: 401, with: 404 },
  { method: 'POST', target: '/api/shorten', ...SHORTEN, without: 401, with: 201 },
  { method: 'DELETE', target: '/api/urls/{code}', without: 401, with: 204 },
  // Trailing slashes, queries, fragments.
  { method: 'GET', target: '/api/urls/', without: 401, with: 200 },
  { method: 'GET', target: '/api/urls/?api_key=k1', without: 401, with: 200 },
  { method: 'GET', target: '/api/urls?x=/../../healthz', without: 401, with: 200 },
  { method: 'GET', target: '/api/urls?/healthz', without: 401, with: 200 },
  { method: 'GET', target: '/api/urls#/healthz', without: 401, with: 200 },
  { method: 'POST', target: '/api/shorten/', ...SHORTEN, without: 401, with: 201 },
  { method: 'DELETE', target: '/api/urls/{code}/', without: 401, with: 204 },
  // Several slashes.
  { method: 'GET', target: '//api/urls', without: 400, with: 400 },
  { method: 'GET', target: '///api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/api//urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls//', without: 400, with: 400 },
  { method: 'GET', target: '//healthz/../api/urls', without: 400, with: 400 },
  // Case: routes are case-sensitive, so these are unknown paths.
  { method: 'GET', target: '/API/urls', without: 401, with: 404 },
  { method: 'GET', target: '/Api/Urls', without: 401, with: 404 },
  { method: 'GET', target: '/api/URLS', without: 401, with: 404 },
  { method: 'POST', target: '/api/Shorten', ...SHORTEN, without: 401, with: 404 },
  { method: 'DELETE', target: '/API/urls/{code}', without: 401, with: 404 },
  { method: 'GET', target: '/HEALTHZ/../api/urls', without: 400, with: 400 },
  // Percent-encoded letters decode to the protected route: gated like it.
  { method: 'GET', target: '/%61pi/urls', without: 401, with: 200 },
  { method: 'GET', target: '/api/%75%72%6c%73', without: 401, with: 200 },
  { method: 'GET', target: '/%61%70%69/%75rls/', without: 401, with: 200 },
  { method: 'GET', target: '/%41PI/urls', without: 401, with: 404 },
  // Dot segments, plain and encoded, also climbing out of the public /static/ and /healthz.
  { method: 'GET', target: '/./api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/./urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls/.', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls/..', without: 400, with: 400 },
  { method: 'GET', target: '/x/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/healthz/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/auth-check/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/../../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2e%2e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2E%2e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2E%2E/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/.%2e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2e./api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2e/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/%2e%2e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/%2e/api/urls', without: 400, with: 400 },
  { method: 'POST', target: '/static/../api/shorten', ...SHORTEN, without: 400, with: 400 },
  { method: 'POST', target: '/healthz/%2e%2e/api/shorten', ...SHORTEN, without: 400, with: 400 },
  { method: 'DELETE', target: '/static/../api/urls/{code}', without: 400, with: 400 },
  // Encoded separators: never decoded into a path separator.
  { method: 'GET', target: '/api%2Furls', without: 400, with: 400 },
  { method: 'GET', target: '/api%2furls', without: 400, with: 400 },
  { method: 'GET', target: '/api%5Curls', without: 400, with: 400 },
  { method: 'GET', target: '/api\\urls', without: 400, with: 400 },
  { method: 'GET', target: '/static/..%2fapi%2furls', without: 400, with: 400 },
  { method: 'GET', target: '/static/%2e%2e%2fapi%2furls', without: 400, with: 400 },
  { method: 'GET', target: '/static/..%5capi%5curls', without: 400, with: 400 },
  // Double encoding is decoded once: a file name under the public /static/ (missing), or a short
  // code (unknown; short links are gated too).
  { method: 'GET', target: '/static/%252e%252e/api/urls', without: 404, with: 404 },
  { method: 'GET', target: '/api%252Furls', without: 401, with: 404 },
  // `;` parameters are part of the segment: unknown paths, or dot segments when they hide one.
  { method: 'GET', target: '/api;/urls', without: 401, with: 404 },
  { method: 'GET', target: '/api/urls;', without: 401, with: 404 },
  { method: 'GET', target: '/api/urls;jsessionid=1', without: 401, with: 404 },
  { method: 'GET', target: '/healthz/..;/api/urls', without: 401, with: 404 },
  { method: 'GET', target: '/healthz;/api/urls', without: 401, with: 404 },
  { method: 'GET', target: '/static;/../api/urls', without: 400, with: 400 },
  // NUL, control characters, spaces, other encoded punctuation.
  { method: 'GET', target: '/api/urls%00', without: 400, with: 400 },
  { method: 'GET', target: '/healthz%00/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls%09', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls%20', without: 401, with: 404 },
  { method: 'GET', target: '/api/urls%3F', without: 401, with: 404 },
  { method: 'GET', target: '/api/urls%23', without: 401, with: 404 },
  { method: 'GET', target: '/api/urls%3Fx=/healthz', without: 401, with: 404 },
  { method: 'GET', target: '/api/ urls', without: 400, with: 400 },
  { method: 'GET', target: '/%zz/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls%', without: 400, with: 400 },
  // Unicode: look-alikes are other paths; overlong or IIS-style encodings are invalid.
  { method: 'GET', target: '/%D0%B0pi/urls', without: 401, with: 404 },
  { method: 'GET', target: '/api%EF%BC%8Furls', without: 401, with: 404 },
  { method: 'GET', target: '/%C0%AE%C0%AE/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/%u002e%u002e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: '/api/urls/\u00e9', without: 400, with: 400 },
  // Long paths: still gated; past the header limit Node itself refuses them.
  { method: 'GET', target: `/api/urls/${'a'.repeat(8000)}`, without: 401, with: 404 },
  { method: 'GET', target: `/api/urls?${'a'.repeat(8000)}`, without: 401, with: 200 },
  { method: 'GET', target: `/api/urls/${'a'.repeat(20_000)}`, without: 431, with: 431 },
  // Absolute-form targets are routed by their path, whatever the host.
  { method: 'GET', target: 'http://127.0.0.1/api/urls', without: 401, with: 200 },
  { method: 'GET', target: 'HTTP://EVIL.EXAMPLE/api/urls', without: 401, with: 200 },
  { method: 'GET', target: 'https://evil.example:443/api/urls/', without: 401, with: 200 },
  { method: 'GET', target: 'http://user:pass@evil.example/api/urls', without: 401, with: 200 },
  { method: 'GET', target: 'http://evil.example/healthz/../api/urls', without: 400, with: 400 },
  { method: 'GET', target: 'http://evil.example/static/%2e%2e/api/urls', without: 400, with: 400 },
  { method: 'GET', target: 'http://evil.example//api/urls', without: 400, with: 400 },
  { method: 'GET', target: 'http:/api/urls', without: 400, with: 400 },
  { method: 'GET', target: 'api/urls', without: 400, with: 400 },
  { method: 'GET', target: '*', without: 400, with: 400 },
  { method: 'OPTIONS', target: '*', without: 400, with: 400 },
  // Methods: HEAD is GET without a body; other methods are 405 only past the gate.
  { method: 'HEAD', target: '/api/urls', without: 401, with: 200 },
  { method: 'HEAD', target: `/api/shorten?${URL_Q}`, without: 401, with: 405 },
  { method: 'GET', target: `/api/shorten?${URL_Q}`, without: 401, with: 201 },
  { method: 'OPTIONS', target: '/api/urls', without: 204, with: 204 },
  { method: 'OPTIONS', target: '/api/urls/{code}', without: 204, with: 204 },
  { method: 'POST', target: '/api/urls', without: 401, with: 405 },
  { method: 'PUT', target: '/api/urls/{code}', without: 401, with: 405 },
  { method: 'PATCH', target: '/api/urls/{code}', without: 401, with: 415 },
  { method: 'PATCH', target: '/api/urls/{code}', headers: ['Content-Type: application/json'], body: '{"max_visits":3}', without: 401, with: 200 },
  {
    method: 'PATCH',
    target: '/api/urls/{code}/',
    headers: ['Content-Type: application/json'],
    body: '{"url":"https://example.com/x"}',
    without: 401,
    with: 200,
  },
  { method: 'PATCH', target: '/api/urls', without: 401, with: 405 },
  { method: 'TRACE', target: '/api/urls', without: 401, with: 405 },
  { method: 'PROPFIND', target: '/api/urls', without: 401, with: 405 },
  { method: 'SEARCH', target: '/api/urls', without: 401, with: 405 },
  { method: 'M-SEARCH', target: '/api/urls', without: 401, with: 405 },
  { method: 'POST', target: '/{code}', without: 401, with: 415 },
  { method: 'DELETE', target: '/{code}', without: 401, with: 405 },
  // Short links themselves: a gated instance is a private one (docs/security.md).
  { method: 'GET', target: '/{code}', without: 401, with: 302 },
  { method: 'HEAD', target: '/{code}', without: 401, with: 302 },
  { method: 'GET', target: '/{code}/?x=1', without: 401, with: 302 },
  { method: 'GET', target: 'http://evil.example/{code}', without: 401, with: 302 },
  { method: 'get', target: '/api/urls', without: 400, with: 400 },
  { method: 'GETS', target: '/api/urls', without: 400, with: 400 },
  { method: 'G\tET', target: '/api/urls', without: 400, with: 400 },
  { method: 'CONNECT', target: '127.0.0.1:80', without: 'closed', with: 'closed' },
  { method: 'CONNECT', target: '/api/urls', without: 'closed', with: 'closed' },
  // Headers that some stacks trust to rewrite the method or path: ignored here.
  { method: 'GET', target: '/api/urls', headers: ['X-HTTP-Method-Override: GET'], without: 401, with: 200 },
  { method: 'POST', target: '/healthz', headers: ['X-HTTP-Method-Override: DELETE'], without: 405, with: 405 },
  { method: 'GET', target: '/api/urls', headers: ['X-Original-URL: /healthz'], without: 401, with: 200 },
  { method: 'GET', target: '/api/urls', headers: ['X-Rewrite-URL: /healthz'], without: 401, with: 200 },
  { method: 'GET', target: '/api/urls', headers: ['X-Forwarded-Prefix: /static'], without: 401, with: 200 },
  { method: 'GET', target: '/healthz', headers: ['X-Original-URL: /api/urls'], without: 200, with: 200 },
  // Body framing tricks on a write: Node refuses the ambiguous ones, the rest is gated.
  {
    method: 'POST',
    target: '/api/shorten',
    headers: ['Content-Type: application/json', 'Transfer-Encoding: chunked', `Content-Length: ${JSON_BODY.length}`],
    body: JSON_BODY,
    without: 400,
    with: 400,
  },
  {
    method: 'POST',
    target: '/api/shorten',
    headers: ['Content-Type: application/json', 'Transfer-Encoding: chunked, identity'],
    body: JSON_BODY,
    without: 400,
    with: 400,
  },
  {
    method: 'POST',
    target: '/api/shorten',
    headers: ['Content-Type: application/json', `Content-Length: ${JSON_BODY.length}`, `Content-Length: ${JSON_BODY.length}`],
    body: JSON_BODY,
    without: 400,
    with: 400,
  },
  {
    method: 'POST',
    target: '/api/shorten',
    headers: ['Content-Type: application/json', 'Transfer-Encoding: chunked'],
    body: `${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n\r\n`,
    without: 401,
    with: 201,
  },
];

function build(row: Row, code: string, auth: string | undefined): string {
  const lines = [
    `${row.method} ${row.target.replace('{code}', code)} HTTP/1.1`,
    'Host: 127.0.0.1',
    'X-API-Key: k1',
    ...(auth === undefined ? [] : [`Authorization: ${auth}`]),
    ...(row.headers ?? []),
  ];
  const framed = row.headers?.some((h) => /^(content-length|transfer-encoding):/i.test(h));
  if (row.body !== undefined && !framed) lines.push(`Content-Length: ${Buffer.byteLength(row.body)}`);
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n${row.body ?? ''}`;
}

function statusOf(r: RawReply, label: string): number | 'closed' {
  assert.equal(r.end, 'closed', `${label}: the server ended the exchange`);
  assert.ok(r.responses.length <= 1, `${label}: one response, got ${r.text}`);
  return r.responses[0]?.status ?? 'closed';
}

async function newCode(h: Harness): Promise<string> {
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { authorization: RIGHT, 'content-type': 'application/json' },
    body: '{"url":"https://example.com/target"}',
  });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

test('no spelling of a protected request reaches its handler without the token', async (t) => {
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] });
  const code = await newCode(h);
  const spy = spyOnProtected(h.shortener.service);
  const before = h.shortener.count;
  for (const row of ROWS) {
    const label = `${row.method} ${row.target.slice(0, 80)}`;
    const r = await sendRaw(h.port, build(row, code, undefined), { head: row.method === 'HEAD' });
    assert.equal(statusOf(r, label), row.without, `${label}: ${r.text.slice(0, 300)}`);
    if (row.without === 401) assert401(r.responses[0]!, 'missing', label, row.method === 'HEAD');
    assert.deepEqual(spy.calls, [], `${label}: no protected operation ran`);
    assert.equal(r.text.includes('url-shortener'), false, `${label}: /api/health did not answer`);
  }
  assert.equal(h.shortener.count, before, 'no link created or deleted');
  const meta = await h.req(`/api/urls/${code}`, { headers: { authorization: RIGHT } });
  assert.equal(meta.status, 200, 'the link is still there');
});

test('with the token the same spellings get the router’s own answers (so they were real attempts)', async (t) => {
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] });
  for (const row of ROWS) {
    const label = `${row.method} ${row.target.slice(0, 80)}`;
    // A fresh code per row: some rows delete theirs.
    const code = await newCode(h);
    const r = await sendRaw(h.port, build(row, code, RIGHT), { head: row.method === 'HEAD' });
    assert.equal(statusOf(r, label), row.with, `${label}: ${r.text.slice(0, 300)}`);
  }
});

test('a request pipelined behind a public one is gated on its own', async (t) => {
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] });
  const spy = spyOnProtected(h.shortener.service);
  const smuggled =
    'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' +
    `POST /api/shorten HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${JSON_BODY.length}\r\n\r\n${JSON_BODY}` +
    'GET /api/urls HTTP/1.1\r\nHost: x\r\nX-API-Key: k1\r\nConnection: close\r\n\r\n';
  const r = await sendRaw(h.port, smuggled);
  assert.deepEqual(
    r.responses.map((x) => x.status),
    [200, 401, 401],
    r.text,
  );
  // A body that looks like a request is a body: with a Content-Length it is never parsed as one.
  const inBody = `GET /api/urls HTTP/1.1\r\nHost: x\r\n\r\n`;
  const r2 = await sendRaw(h.port, `POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: ${inBody.length}\r\nConnection: close\r\n\r\n${inBody}`);
  assert.deepEqual(
    r2.responses.map((x) => x.status),
    [405],
    r2.text,
  );
  assert.deepEqual(spy.calls, []);
  assert.equal(h.shortener.count, 0);
});
