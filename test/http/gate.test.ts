/**
 * The bearer-token gate (docs/security.md): the pure decision of `createGate` over the real route
 * table, then over real sockets every bad `Authorization` value (one table), the exact 401, the
 * public set, a base path and Express-style mounting. Bypass spellings of paths are in
 * gate-bypass.test.ts, the log lines in gate-log.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createGate, headerValues, isPublic, type Refusal } from '../../src/http/gate.ts';
import { createLogger } from '../../src/log.ts';
import { createResponder } from '../../src/http/respond.ts';
import { createRouter } from '../../src/http/router.ts';
import { routeTable } from '../../src/route-table.ts';
import type { Service } from '../../src/links/service.ts';
import { assert401, DETAIL, RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { codeOf, HOST_APP_BODY, mountInHostApp, request, start } from '../support/helpers.ts';

/** The real route table; handlers never run here: the gate only matches paths. */
function tableFor(publicRedirects?: boolean) {
  return routeTable({
    service: {} as Service,
    reply: createResponder([]),
    files: new Map(),
    config: {
      production: false,
      apiToken: TOKEN,
      mcpAllowedOrigins: [],
      maxBodyBytes: 65536,
      baseUrl: 'http://localhost',
      ...(publicRedirects === undefined ? {} : { publicRedirects }),
    },
    log: createLogger('silent'),
  });
}

describe('createGate (pure, over the real route table)', () => {
  const routes = tableFor();
  const openLinks = tableFor(true);
  // The gate decides on the route the router matches, as dispatch does.
  const match = createRouter(routes);
  const matchOpen = createRouter(openLinks);
  const routeOf = (method: string, segments: readonly string[] | undefined) => (segments ? match(method, segments)?.route : undefined);
  const gate = createGate(TOKEN);
  const auth = (value: string): string[] => ['Host', 'x', 'Authorization', value];

  test('an empty token lets every request pass, whatever it carries', () => {
    const open = createGate('');
    for (const segments of [['api', 'urls'], ['mcp'], ['nope', 'x'], undefined]) {
      assert.deepEqual(open('DELETE', routeOf('DELETE', segments), []), { pass: true });
      assert.deepEqual(open('GET', routeOf('GET', segments), auth('Bearer wrong')), { pass: true });
    }
  });

  const rows: [label: string, method: string, segments: string[] | undefined, raw: string[], expected: 'pass' | Refusal][] = [
    ['UI', 'GET', [], [], 'pass'],
    ['UI, any method (405 follows)', 'POST', [], [], 'pass'],
    ['static file', 'GET', ['static', 'index.html'], [], 'pass'],
    ['static, nested', 'HEAD', ['static', 'a', 'b.js'], [], 'pass'],
    ['healthz', 'GET', ['healthz'], [], 'pass'],
    ['healthz, any method (405 follows)', 'DELETE', ['healthz'], [], 'pass'],
    ['auth-check', 'GET', ['auth-check'], [], 'pass'],
    ['short link GET (a gated instance is a private one)', 'GET', ['abc123'], [], 'missing'],
    ['short link HEAD', 'HEAD', ['abc123'], [], 'missing'],
    ['short link GET, wrong token', 'GET', ['abc123'], auth('Bearer wrong'), 'invalid'],
    ['short link GET, right token', 'GET', ['abc123'], auth(RIGHT), 'pass'],
    ['short link POST', 'POST', ['abc123'], [], 'missing'],
    ['short link DELETE', 'DELETE', ['abc123'], [], 'missing'],
    ['reserved word is no short link', 'GET', ['favicon.ico'], [], 'missing'],
    ['bare /static is no file', 'GET', ['static'], [], 'missing'],
    ['/api/health', 'GET', ['api', 'health'], [], 'missing'],
    ['/api/urls', 'GET', ['api', 'urls'], [], 'missing'],
    ['/api/shorten', 'POST', ['api', 'shorten'], [], 'missing'],
    ['/mcp', 'POST', ['mcp'], [], 'missing'],
    ['/docs', 'GET', ['docs'], [], 'missing'],
    ['/openapi.json', 'GET', ['openapi.json'], [], 'missing'],
    ['/schemas/v2/x.json', 'GET', ['schemas', 'v2', 'x.json'], [], 'missing'],
    ['unknown path', 'GET', ['nope', 'deeper'], [], 'missing'],
    ['case matters: /API/urls is unknown', 'GET', ['API', 'urls'], [], 'missing'],
    ['outside the base path', 'GET', undefined, [], 'missing'],
    ['outside the base path, right token', 'GET', undefined, auth(RIGHT), 'pass'],
    ['right token', 'DELETE', ['api', 'urls', 'x'], auth(RIGHT), 'pass'],
    ['header name in any case', 'GET', ['api', 'urls'], ['aUtHoRiZaTiOn', RIGHT], 'pass'],
    ['empty value', 'GET', ['api', 'urls'], auth(''), 'invalid'],
    ['leading space (never trimmed here)', 'GET', ['api', 'urls'], auth(` ${RIGHT}`), 'invalid'],
    ['trailing space (never trimmed here)', 'GET', ['api', 'urls'], auth(`${RIGHT} `), 'invalid'],
    ['lower-case scheme', 'GET', ['api', 'urls'], auth(`bearer ${TOKEN}`), 'invalid'],
    ['prefix of the token', 'GET', ['api', 'urls'], auth(RIGHT.slice(0, -1)), 'invalid'],
    ['token plus one character', 'GET', ['api', 'urls'], auth(`${RIGHT}=`), 'invalid'],
    ['two headers, both right', 'GET', ['api', 'urls'], [...auth(RIGHT), 'Authorization', RIGHT], 'repeated'],
    ['two headers, on a public path', 'GET', ['healthz'], [...auth(RIGHT), 'Authorization', 'x'], 'pass'],
  ];
  for (const [label, method, segments, raw, expected] of rows) {
    test(`${label}: ${expected}`, () => {
      const verdict = gate(method, routeOf(method, segments), raw);
      if (expected === 'pass') assert.deepEqual(verdict, { pass: true });
      else assert.deepEqual(verdict, { pass: false, reason: expected, detail: DETAIL[expected] });
    });
  }

  // public_redirects opens GET and HEAD of a short link, and nothing else.
  const openRows: [label: string, method: string, segments: string[], raw: string[], expected: 'pass' | Refusal][] = [
    ['short link GET', 'GET', ['abc123'], [], 'pass'],
    ['short link HEAD', 'HEAD', ['abc123'], [], 'pass'],
    ['short link GET, wrong token (not looked at)', 'GET', ['abc123'], auth('Bearer wrong'), 'pass'],
    ['short link GET, two headers (not looked at)', 'GET', ['abc123'], [...auth(RIGHT), 'Authorization', RIGHT], 'pass'],
    ['short link POST (a password form)', 'POST', ['abc123'], [], 'pass'],
    ['short link DELETE', 'DELETE', ['abc123'], [], 'missing'],
    ['short link PUT, wrong token', 'PUT', ['abc123'], auth('Bearer wrong'), 'invalid'],
    ['reserved word is no short link', 'GET', ['robots.txt'], [], 'missing'],
    ['two segments are no short link', 'GET', ['abc123', 'x'], [], 'missing'],
    ['/api/urls/:code stays gated', 'GET', ['api', 'urls', 'abc123'], [], 'missing'],
    ['/api/shorten stays gated', 'POST', ['api', 'shorten'], [], 'missing'],
    ['UI stays public', 'GET', [], [], 'pass'],
  ];
  for (const [label, method, segments, raw, expected] of openRows) {
    test(`public_redirects on, ${label}: ${expected}`, () => {
      const verdict = gate(method, matchOpen(method, segments)?.route, raw);
      if (expected === 'pass') assert.deepEqual(verdict, { pass: true });
      else assert.deepEqual(verdict, { pass: false, reason: expected, detail: DETAIL[expected] });
    });
  }

  test('isPublic reads the route table: true for every method, or a method list', () => {
    assert.equal(isPublic({ public: true }, 'PATCH'), true);
    assert.equal(isPublic({ public: ['GET', 'HEAD'] }, 'HEAD'), true);
    assert.equal(isPublic({ public: ['GET', 'HEAD'] }, 'POST'), false);
    assert.equal(isPublic({}, 'GET'), false);
    const table = Object.fromEntries(routes.map((r) => [r.path, r.public ?? 'protected']));
    assert.deepEqual(table, {
      '/': true,
      '/static/*': true,
      '/robots.txt': 'protected',
      '/healthz': true,
      '/auth-check': true,
      '/api/health': 'protected',
      '/api/shorten': 'protected',
      '/api/urls': 'protected',
      '/api/urls/:code': 'protected',
      '/api/urls/:code/qr': 'protected',
      '/api/urls/:code/rules': 'protected',
      '/api/lookup': 'protected',
      '/api/deprecations': 'protected',
      '/api/export': 'protected',
      '/api/import': 'protected',
      '/api/keys': 'protected',
      '/api/keys/:id': 'protected',
      '/api/domains': 'protected',
      '/api/domains/:host': 'protected',
      '/api/webhooks': 'protected',
      '/api/webhooks/:id': 'protected',
      '/api/webhooks/:id/test': 'protected',
      '/api/webhooks/:id/deliveries': 'protected',
      '/api/stats': 'protected',
      '/api/visits/orphan': 'protected',
      '/api/urls/:code/stats': 'protected',
      '/api/urls/:code/visits': 'protected',
      '/api/visits/export': 'protected',
      '/api/visits/import': 'protected',
      '/mcp': 'protected',
      '/metrics': 'protected',
      '/openapi.json': 'protected',
      '/docs': 'protected',
      '/schemas/v2/DeprecationNoticeNotification.json': 'protected',
      '/:code': 'protected',
    });
    // public_redirects changes exactly one entry; absent from the table's config means off.
    const open = Object.fromEntries(openLinks.map((r) => [r.path, r.public ?? 'protected']));
    assert.deepEqual(open, { ...table, '/:code': ['GET', 'HEAD', 'POST'] });
    assert.deepEqual(Object.fromEntries(tableFor(false).map((r) => [r.path, r.public ?? 'protected'])), table);
  });

  test('the gate and the OpenAPI document agree on what is public, operation by operation, with and without public_redirects', () => {
    for (const table of [routes, openLinks]) {
      let checked = 0;
      for (const route of table) {
        for (const [method, op] of Object.entries(route.doc ?? {})) {
          assert.equal(isPublic(route, method), op.access === 'public', `${method} ${route.path}`);
          checked++;
        }
      }
      assert.ok(checked >= 15, `${checked} operations checked`);
    }
  });

  test('headerValues finds every value of a header, in order, whatever the case of its name', () => {
    const raw = ['Host', 'h', 'Authorization', 'a', 'X-Other', 'b', 'AUTHORIZATION', 'c', 'authorization', ''];
    assert.deepEqual(headerValues(raw, 'authorization'), ['a', 'c', '']);
    assert.deepEqual(headerValues(raw, 'cookie'), []);
    assert.deepEqual(headerValues([], 'authorization'), []);
  });
});

describe('over sockets: every bad Authorization value is the exact 401', () => {
  const bad: [label: string, value: string | string[] | undefined, reason: Refusal][] = [
    ['missing', undefined, 'missing'],
    ['empty', '', 'invalid'],
    ['scheme only', 'Bearer', 'invalid'],
    ['scheme and a space (the space is stripped in transit)', 'Bearer ', 'invalid'],
    ['wrong token', 'Bearer not-the-token', 'invalid'],
    ['lower-case bearer', `bearer ${TOKEN}`, 'invalid'],
    ['upper-case BEARER', `BEARER ${TOKEN}`, 'invalid'],
    ['two spaces after Bearer', `Bearer  ${TOKEN}`, 'invalid'],
    ['a tab after Bearer', `Bearer\t${TOKEN}`, 'invalid'],
    ['Basic with the token', `Basic ${TOKEN}`, 'invalid'],
    ['Basic user:token', `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`, 'invalid'],
    ['Token scheme', `Token ${TOKEN}`, 'invalid'],
    ['prefix of the token', RIGHT.slice(0, -1), 'invalid'],
    ['first character only', 'Bearer g', 'invalid'],
    ['token plus one character', `${RIGHT}x`, 'invalid'],
    ['token twice', `${RIGHT} ${TOKEN}`, 'invalid'],
    ['token with a comma', `${RIGHT},`, 'invalid'],
    ['token in quotes', `Bearer "${TOKEN}"`, 'invalid'],
    ['token in upper case', `Bearer ${TOKEN.toUpperCase()}`, 'invalid'],
    ['token without Bearer', TOKEN, 'invalid'],
    ['token and a non-breaking space', `${RIGHT}\u00a0`, 'invalid'],
    ['two values joined by a comma', `${RIGHT}, ${RIGHT}`, 'invalid'],
    ['two headers, right then wrong', [RIGHT, 'Bearer wrong'], 'repeated'],
    ['two headers, wrong then right', ['Bearer wrong', RIGHT], 'repeated'],
    ['two headers, both right', [RIGHT, RIGHT], 'repeated'],
  ];

  test('each is refused on a read and on a write, and the write is not made', async (t) => {
    const h = await start(t, { apiToken: TOKEN });
    for (const [label, value, reason] of bad) {
      const headers: Record<string, string | string[]> = value === undefined ? {} : { authorization: value };
      assert401(await h.req('/api/health', { headers }), reason, `GET ${label}`);
      const created = await h.req('/api/shorten', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"url":"https://example.com/refused"}',
      });
      assert401(created, reason, `POST ${label}`);
      assert401(await h.req('/api/health', { method: 'HEAD', headers }), reason, `HEAD ${label}`, true);
    }
    assert.equal(h.shortener.count, 0, 'no refused write was made');
  });

  test('the token elsewhere than in Authorization does not count', async (t) => {
    const h = await start(t, { apiToken: TOKEN });
    const elsewhere: [string, string, Record<string, string>][] = [
      ['query access_token', `/api/health?access_token=${encodeURIComponent(TOKEN)}`, {}],
      ['query token', `/api/health?token=${encodeURIComponent(TOKEN)}`, {}],
      ['X-API-Key', '/api/health', { 'x-api-key': TOKEN }],
      ['Cookie', '/api/health', { cookie: `token=${TOKEN}` }],
      ['Proxy-Authorization', '/api/health', { 'proxy-authorization': RIGHT }],
    ];
    for (const [label, path, headers] of elsewhere) assert401(await h.req(path, { headers }), 'missing', label);
  });

  test('the exact value passes, for every method of every protected route', async (t) => {
    const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] });
    const headers = { authorization: RIGHT };
    const health = await h.req('/api/health', { headers });
    assert.equal(health.status, 200);
    assert.equal(health.body, '{"status":"ok","service":"url-shortener"}');
    assert.equal(health.headers['www-authenticate'], undefined);
    const created = await h.req('/api/shorten', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"url":"https://example.com/allowed"}',
    });
    assert.equal(created.status, 201, created.body);
    const code = codeOf(created);
    assert.equal((await h.req(`/api/urls/${code}`, { headers })).status, 200);
    assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/allowed')}`, { headers })).status, 200);
    // The gate comes before the API key: the token alone is not an admin key.
    assert.equal((await h.req('/api/urls', { headers })).status, 403);
    assert.equal((await h.req('/api/urls', { headers: { ...headers, 'x-api-key': 'k1' } })).status, 200);
    assert.equal((await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { ...headers, 'x-api-key': 'k1' } })).status, 204);
    // Past the gate, the router's own answers: 405 with Allow, 404 for unknown paths.
    const wrongMethod = await h.req('/api/health', { method: 'PUT', headers });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD, OPTIONS');
    assert.equal((await h.req('/nope/deeper', { headers })).status, 404);
  });

  test('spaces and tabs around the value are stripped by HTTP itself (RFC 9110 §5.5): the value arrives exact', async (t) => {
    // The gate never trims (see the pure rows above); the HTTP parser drops optional whitespace
    // around a field value before any handler sees it, so these are the exact value on arrival.
    const h = await start(t, { apiToken: TOKEN });
    for (const value of [` ${RIGHT}`, `${RIGHT} `, `\t${RIGHT}\t`, `  ${RIGHT}  `]) {
      assert.equal((await h.req('/api/health', { headers: { authorization: value } })).status, 200, JSON.stringify(value));
    }
  });
});

describe('over sockets: the public set stays public with the gate on', () => {
  test('UI, static files, /healthz, /auth-check and preflights need no token; short links do (see gate-links.test.ts)', async (t) => {
    const h = await start(t, { apiToken: TOKEN });
    const created = await h.req('/api/shorten', {
      method: 'POST',
      headers: { authorization: RIGHT, 'content-type': 'application/json' },
      body: '{"url":"https://example.com/public"}',
    });
    const code = codeOf(created);

    const ui = await h.req('/');
    assert.equal(ui.status, 200);
    assert.equal(ui.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await h.req('/', { method: 'HEAD' })).status, 200);
    assert.equal((await h.req('/static/index.html')).status, 200);
    assert.equal((await h.req('/static/index.html/')).status, 200);
    const missing = await h.req('/static/no-such-file.js');
    assert.equal(missing.status, 404, 'a missing static file is the static route’s 404, not a 401');
    assert.equal(missing.body, '');
    assert.equal((await h.req('/healthz')).body, '{"status":"ok"}');
    assert.equal((await h.req('/auth-check')).body, '{"auth_required":true}');

    // A gated instance is a private one: its short links too (PUBLIC_REDIRECTS opens them).
    for (const method of ['GET', 'HEAD']) assert401(await h.req(`/${code}`, { method }), 'missing', `${method} /<code>`, method === 'HEAD');
    assert401(await h.req('/zzzzzz'), 'missing', 'an unknown code');

    // Preflights: 204, no token, no challenge (browsers never send credentials on one).
    for (const path of ['/api/urls', '/mcp', '/nope/deeper', `/${code}`, '/healthz']) {
      const r = await h.req(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      assert.equal(r.status, 204, path);
      assert.equal(r.body, '', path);
      assert.equal(r.headers['www-authenticate'], undefined, path);
      assert.equal(r.headers['access-control-allow-headers'], 'Authorization, Content-Type, X-API-Key, Mcp-Session-Id, MCP-Protocol-Version');
    }

    // Public paths are public for every method: a wrong one is the router's 405, not a 401.
    for (const [path, method] of [
      ['/healthz', 'POST'],
      ['/auth-check', 'DELETE'],
      ['/', 'POST'],
      ['/static/index.html', 'PUT'],
    ] as const) {
      const r = await h.req(path, { method });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS', `${method} ${path}`);
    }
    // The refused GET above counted no visit: the redirect never ran.
    const meta = JSON.parse((await h.req(`/api/urls/${code}`, { headers: { authorization: RIGHT } })).body) as { visit_count: number };
    assert.equal(meta.visit_count, 0);
  });

  test('with PRODUCTION on, GET / is still public (its 404, not a 401)', async (t) => {
    const h = await start(t, { apiToken: TOKEN, production: true });
    const r = await h.req('/');
    assert.equal(r.status, 404);
    assert.equal(r.headers['www-authenticate'], undefined);
  });

  test('everything else is protected: 401 without the token; unknown paths 404 with it', async (t) => {
    const h = await start(t, { apiToken: TOKEN });
    const unknown = ['/nope/deeper', '/api', '/api/', '/api/nope', '/static', '/favicon.ico', '/metrics/x', '/healthz/x', '/auth-check/x'];
    for (const path of unknown) {
      assert401(await h.req(path), 'missing', path);
      assert401(await h.req(path, { method: 'POST' }), 'missing', `POST ${path}`);
      assert.equal((await h.req(path, { headers: { authorization: RIGHT } })).status, 404, `${path} with the token`);
    }
    // The routes another part of the service serves: whatever they answer, not without the token.
    const others: [string, string][] = [
      ['POST', '/mcp'],
      ['GET', '/mcp'],
      ['GET', '/docs'],
      ['GET', '/openapi.json'],
      ['GET', '/schemas/v2/DeprecationNoticeNotification.json'],
      ['GET', '/robots.txt'],
    ];
    for (const [method, path] of others) {
      assert401(await h.req(path, { method }), 'missing', `${method} ${path}`);
      assert.notEqual((await h.req(path, { method, headers: { authorization: RIGHT } })).status, 401, `${method} ${path} with the token`);
    }
  });

  test('with the gate off nothing asks for a token, and a stray Authorization header is ignored', async (t) => {
    const h = await start(t);
    assert.equal((await h.req('/api/health')).status, 200);
    assert.equal((await h.req('/api/health', { headers: { authorization: 'Bearer whatever' } })).status, 200);
    assert.equal((await h.req('/api/health', { headers: { authorization: ['a', 'b'] } })).status, 200);
    assert.equal((await h.req('/nope')).status, 404);
    assert.equal(h.logs.lines.filter((l) => l['level'] === 'warn').length, 0);
  });
});

describe('with a base path', () => {
  test('the gate works the same below /s; outside it is an unknown path', async (t) => {
    const h = await start(t, { apiToken: TOKEN, baseUrl: 'http://localhost/s' });
    const created = await h.req('/s/api/shorten', {
      method: 'POST',
      headers: { authorization: RIGHT, 'content-type': 'application/json' },
      body: '{"url":"https://example.com/based"}',
    });
    assert.equal(created.status, 201, created.body);
    assert.ok(created.body.startsWith('http://localhost/s/'));
    const code = codeOf(created);

    assert401(await h.req('/s/api/health'), 'missing', '/s/api/health');
    assert401(await h.req('/s/api/urls/'), 'missing', '/s/api/urls/');
    assert401(await h.req('/s/api/health', { headers: { authorization: 'Bearer wrong' } }), 'invalid', '/s/api/health wrong');
    assert401(await h.req(`/s/${code}`, { method: 'POST' }), 'missing', 'POST /s/<code>');
    assert.equal((await h.req('/s/api/health', { headers: { authorization: RIGHT } })).status, 200);

    assert.equal((await h.req('/s/')).status, 200);
    assert.equal((await h.req('/s/healthz')).body, '{"status":"ok"}');
    assert.equal((await h.req('/s/auth-check/')).body, '{"auth_required":true}');
    assert.equal((await h.req('/s/static/index.html')).status, 200);
    assert401(await h.req(`/s/${code}`), 'missing', 'GET /s/<code>');
    assert.equal((await h.req(`/s/${code}`, { headers: { authorization: RIGHT } })).status, 302);
    const bare = await h.req('/s?x=1');
    assert.equal(bare.status, 301, 'the bare base path is the UI’s address: public');
    assert.equal(bare.headers.location, '/s/?x=1');
    assert.equal((await h.req('/s', { method: 'POST' })).status, 405);
    assert.equal((await h.req('/s/api/urls', { method: 'OPTIONS' })).status, 204);

    // Outside the base path, without a host app: an unknown path, so 401 first and 404 with the token.
    for (const path of ['/api/health', '/healthz', '/', `/${code}`, '/sx/api/health', '/other']) {
      assert401(await h.req(path), 'missing', `outside: ${path}`);
      assert.equal((await h.req(path, { headers: { authorization: RIGHT } })).status, 404, `outside with the token: ${path}`);
    }
    // A bad path is 400 before the gate decides anything (docs/api.md, paths).
    assert.equal((await h.req('/s/../api/health')).status, 400);
    assert.equal((await h.req('/s/%2e%2e/api/health')).status, 400);
  });

  test('Express-style: outside the base path the request goes to next() untouched, gate or not', async (t) => {
    const { port, passed } = await mountInHostApp(t, '/s', { apiToken: TOKEN, logger: createLogger('silent') });
    for (const path of ['/other', '/api/health', '/sx/api/urls']) {
      const r = await request(port, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.body, HOST_APP_BODY, path);
      assert.equal(r.headers['www-authenticate'], undefined, path);
    }
    assert401(await request(port, '/s/api/health'), 'missing', '/s/api/health');
    assert.equal((await request(port, '/s/healthz')).status, 200);
    assert.deepEqual(passed, ['/other', '/api/health', '/sx/api/urls']);
  });
});
