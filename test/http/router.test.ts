import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeTarget, stripBase } from '../../src/paths.ts';
import { allowHeader, createRouter } from '../../src/http/router.ts';

describe('normalizeTarget', () => {
  const accepted: [target: string, segments: string[], query: string, trailingSlash: boolean][] = [
    ['/', [], '', false],
    ['/?a=1', [], 'a=1', false],
    ['/api/urls', ['api', 'urls'], '', false],
    ['/api/urls/', ['api', 'urls'], '', true],
    ['/api/urls/?api_key=k', ['api', 'urls'], 'api_key=k', true],
    ['/api/%75rls', ['api', 'urls'], '', false],
    ['/s', ['s'], '', false],
    ['/a%20b', ['a b'], '', false],
    ['/x?y=/../z', ['x'], 'y=/../z', false],
    ['/x#frag', ['x'], '', false],
    ['http://host.example/api/health?x=1', ['api', 'health'], 'x=1', false],
    ['http://host.example', [], '', false],
    ['/...', ['...'], '', false],
    ['/.well-known', ['.well-known'], '', false],
  ];
  for (const [target, segments, query, trailingSlash] of accepted) {
    test(`accepts ${target}`, () => {
      assert.deepEqual(normalizeTarget(target), { ok: true, target: { segments, query, trailingSlash } });
    });
  }

  const refused: [target: string, why: RegExp][] = [
    ['/..', /dot segment/],
    ['/.', /dot segment/],
    ['/a/../api/urls', /dot segment/],
    ['/a/./b', /dot segment/],
    ['/%2e%2e/api', /dot segment/],
    ['/%2E%2e/api', /dot segment/],
    ['/.%2e/api', /dot segment/],
    ['/%2e/api', /dot segment/],
    ['/api%2Furls', /encoded slash/],
    ['/api%2furls', /encoded slash/],
    ['/api%5Curls', /encoded slash/],
    ['/api\\urls', /backslash/],
    ['/x%00', /control/],
    ['/x\u0000', /control/],
    ['//api/urls', /empty segment/],
    ['/api//urls', /empty segment/],
    ['/api/urls//', /empty segment/],
    ['/%zz', /percent-encoding/],
    ['/%', /percent-encoding/],
    ['*', /bad request target/],
    ['api/urls', /bad request target/],
  ];
  for (const [target, why] of refused) {
    test(`refuses ${JSON.stringify(target)}`, () => {
      const n = normalizeTarget(target);
      assert.equal(n.ok, false);
      assert.match(n.ok ? '' : n.detail, why);
    });
  }
});

test('stripBase keeps what lies below the base path and refuses the rest', () => {
  assert.deepEqual(stripBase(['s', 'api'], ['s']), ['api']);
  assert.deepEqual(stripBase(['s'], ['s']), []);
  assert.deepEqual(stripBase(['a', 'b'], []), ['a', 'b']);
  assert.equal(stripBase(['sx'], ['s']), undefined);
  assert.equal(stripBase([], ['s']), undefined);
  assert.equal(stripBase(['a', 's'], ['s']), undefined);
});

test('allowHeader adds HEAD for GET and always OPTIONS, in a fixed order', () => {
  assert.equal(allowHeader(['POST', 'GET']), 'GET, HEAD, POST, OPTIONS');
  assert.equal(allowHeader(['DELETE', 'GET']), 'GET, HEAD, DELETE, OPTIONS');
  assert.equal(allowHeader(['POST']), 'POST, OPTIONS');
});

describe('createRouter', () => {
  const match = createRouter<string>([
    { path: '/', methods: { GET: 'root' } },
    { path: '/static/*', methods: { GET: 'static' } },
    { path: '/api/urls/:code', methods: { GET: 'meta', DELETE: 'delete' } },
    { path: '/:code', accept: (s) => s !== 'api', methods: { GET: 'redirect' } },
  ]);

  test('matches literal, parameter and wildcard routes in table order', () => {
    assert.equal(match('GET', [])?.handler, 'root');
    assert.deepEqual(match('GET', ['static', 'css', 'app.css'])?.params, { '*': 'css/app.css' });
    assert.deepEqual(match('DELETE', ['api', 'urls', 'abc'])?.params, { code: 'abc' });
    assert.equal(match('GET', ['abc'])?.handler, 'redirect');
  });

  test('HEAD falls back to GET; a missing method gives the Allow list', () => {
    assert.equal(match('HEAD', ['api', 'urls', 'x'])?.handler, 'meta');
    const m = match('POST', ['api', 'urls', 'x']);
    assert.equal(m?.handler, undefined);
    assert.equal(m?.allow, 'GET, HEAD, DELETE, OPTIONS');
  });

  test('a route may name its own Allow header (the MCP endpoint says exactly POST)', () => {
    const own = createRouter<string>([{ path: '/mcp', allow: 'POST', methods: { POST: 'mcp' } }]);
    assert.equal(own('GET', ['mcp'])?.allow, 'POST');
    assert.equal(own('DELETE', ['mcp'])?.handler, undefined);
    assert.equal(own('POST', ['mcp'])?.handler, 'mcp');
  });

  test('a route may refuse HEAD although it serves GET (noHead): its GET changes something', () => {
    const shorten = createRouter<string>([{ path: '/api/shorten', noHead: true, allow: 'GET, POST', methods: { GET: 'create', POST: 'create' } }]);
    assert.equal(shorten('GET', ['api', 'shorten'])?.handler, 'create');
    const head = shorten('HEAD', ['api', 'shorten']);
    assert.equal(head?.handler, undefined);
    assert.equal(head?.allow, 'GET, POST');
    // Without the flag, HEAD is GET.
    assert.equal(createRouter<string>([{ path: '/x', methods: { GET: 'x' } }])('HEAD', ['x'])?.handler, 'x');
  });

  test('a parameter test can refuse a segment; unknown shapes do not match', () => {
    assert.equal(match('GET', ['api']), undefined);
    // `*` needs at least one segment, so a bare `/static` falls through to the next route.
    assert.equal(match('GET', ['static'])?.handler, 'redirect');
    assert.equal(match('GET', ['a', 'b']), undefined);
  });
});
