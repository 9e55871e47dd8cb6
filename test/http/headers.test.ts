/**
 * The CORS and security headers (docs/security.md, response headers): the pure `baseHeaders()`
 * table, then every kind of response over real sockets — one table of requests, one loop — for an
 * http and an https base URL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baseHeaders } from '../../src/http/headers.ts';
import { start, type RequestOptions } from '../support/helpers.ts';

const CORS: readonly (readonly [string, string])[] = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key, Mcp-Session-Id, MCP-Protocol-Version'],
  ['Access-Control-Expose-Headers', 'Location, Mcp-Session-Id, Deprecation, Link, X-Total-Count, Content-Disposition'],
  ['Access-Control-Max-Age', '86400'],
];

const SECURITY: readonly (readonly [string, string])[] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Content-Security-Policy', "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"],
  ['X-DNS-Prefetch-Control', 'off'],
];

const HSTS = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as const;

test('baseHeaders({https: false}) is exactly the CORS and security set, without HSTS', () => {
  assert.deepEqual(baseHeaders({ https: false }), [...CORS, ...SECURITY]);
});

test('baseHeaders({https: true}) adds Strict-Transport-Security and nothing else', () => {
  assert.deepEqual(baseHeaders({ https: true }), [...CORS, ...SECURITY, HSTS]);
});

test('baseHeaders never includes Access-Control-Allow-Credentials and has no duplicates', () => {
  for (const https of [false, true]) {
    const names = baseHeaders({ https }).map(([name]) => name.toLowerCase());
    assert.ok(!names.includes('access-control-allow-credentials'));
    assert.equal(new Set(names).size, names.length);
  }
});

/** Codes created before the table runs; paths are built from them. */
interface Fixture {
  /** Base path: '' or '/s'. */
  p: string;
  live: string;
  doomed: string;
  expired: string;
  etag: string;
}

interface Row {
  name: string;
  status: number;
  path: (f: Fixture) => string;
  options?: (f: Fixture) => RequestOptions;
  /** Only meaningful with a non-empty base path (the `/s` → `/s/` redirect, paths outside it). */
  basePathOnly?: true;
}

const KEY = { 'x-api-key': 'k1' };

const ROWS: readonly Row[] = [
  { name: 'GET / (UI)', status: 200, path: (f) => `${f.p}/` },
  { name: 'GET /api/health', status: 200, path: (f) => `${f.p}/api/health` },
  { name: 'HEAD /api/health', status: 200, path: (f) => `${f.p}/api/health`, options: () => ({ method: 'HEAD' }) },
  { name: 'GET /api/urls with key', status: 200, path: (f) => `${f.p}/api/urls`, options: () => ({ headers: KEY }) },
  { name: 'GET /api/urls/<code>', status: 200, path: (f) => `${f.p}/api/urls/${f.live}` },
  { name: 'GET /static/index.html', status: 200, path: (f) => `${f.p}/static/index.html` },
  {
    name: 'POST /api/shorten',
    status: 201,
    path: (f) => `${f.p}/api/shorten`,
    options: () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.org/h"}' }),
  },
  { name: 'DELETE /api/urls/<code>', status: 204, path: (f) => `${f.p}/api/urls/${f.doomed}`, options: () => ({ method: 'DELETE', headers: KEY }) },
  {
    name: 'OPTIONS preflight',
    status: 204,
    path: (f) => `${f.p}/api/urls`,
    options: () => ({
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'x-api-key' },
    }),
  },
  { name: 'OPTIONS on an unknown path', status: 204, path: (f) => `${f.p}/nothing/here`, options: () => ({ method: 'OPTIONS' }) },
  { name: 'GET /s (bare base path)', status: 301, path: (f) => f.p, basePathOnly: true },
  { name: 'GET /<code>', status: 302, path: (f) => `${f.p}/${f.live}` },
  { name: 'HEAD /<code>', status: 302, path: (f) => `${f.p}/${f.live}`, options: () => ({ method: 'HEAD' }) },
  { name: 'If-None-Match static', status: 304, path: (f) => `${f.p}/static/index.html`, options: (f) => ({ headers: { 'if-none-match': f.etag } }) },
  { name: 'bad path', status: 400, path: (f) => `${f.p}/a/../api/urls` },
  { name: 'encoded slash', status: 400, path: (f) => `${f.p}/api%2Furls` },
  { name: 'bad shorten input', status: 400, path: (f) => `${f.p}/api/shorten?url=ftp%3A%2F%2Fx`, options: () => ({ method: 'POST' }) },
  { name: 'list without key', status: 403, path: (f) => `${f.p}/api/urls` },
  { name: 'unknown /api path', status: 404, path: (f) => `${f.p}/api/nope` },
  { name: 'unknown code (HTML page)', status: 404, path: (f) => `${f.p}/zzzzzz` },
  { name: 'outside the base path', status: 404, path: () => '/api/health', basePathOnly: true },
  { name: 'wrong method', status: 405, path: (f) => `${f.p}/api/urls`, options: () => ({ method: 'PUT' }) },
  { name: 'expired link', status: 410, path: (f) => `${f.p}/${f.expired}` },
  {
    name: 'unsupported content type',
    status: 415,
    path: (f) => `${f.p}/api/shorten`,
    options: () => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'https://example.org/' }),
  },
];

const CONFIGS: readonly { name: string; baseUrl?: string; hsts: boolean }[] = [
  { name: 'http, no base path', hsts: false },
  { name: 'http, base path /s', baseUrl: 'http://short.example/s', hsts: false },
  { name: 'https, no base path', baseUrl: 'https://short.example', hsts: true },
  { name: 'https, base path /s', baseUrl: 'https://short.example/s', hsts: true },
];

for (const config of CONFIGS) {
  test(`every response carries the CORS and security headers (${config.name})`, async (t) => {
    let now = 1_700_000_000_000;
    const h = await start(t, { apiKeys: ['k1'], now: () => now, ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}) });
    const p = config.baseUrl ? new URL(config.baseUrl).pathname.replace(/\/$/, '') : '';
    const expired = await h.shorten('https://example.org/expiring', 1);
    now += 2 * 86_400_000;
    const live = await h.shorten('https://example.org/live');
    const doomed = await h.shorten('https://example.org/doomed');
    const etag = (await h.req(`${p}/static/index.html`)).headers.etag;
    assert.ok(etag !== undefined);
    const fixture: Fixture = { p, live, doomed, expired, etag };

    for (const row of ROWS) {
      if (row.basePathOnly && p === '') continue;
      await t.test(row.name, async () => {
        const r = await h.req(row.path(fixture), row.options?.(fixture) ?? {});
        assert.equal(r.status, row.status, `body: ${r.body}`);
        for (const [name, value] of [...CORS, ...SECURITY]) {
          assert.equal(r.headers[name.toLowerCase()], value, name);
        }
        assert.equal(r.headers['strict-transport-security'], config.hsts ? HSTS[1] : undefined, 'Strict-Transport-Security');
        assert.equal(r.headers['access-control-allow-credentials'], undefined, 'Access-Control-Allow-Credentials');
      });
    }
  });
}
