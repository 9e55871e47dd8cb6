/**
 * `GET /healthz` and `GET /auth-check` (docs/security.md, the bearer-token gate): exact bodies,
 * with and without the gate, with a trailing slash, HEAD, a wrong method, and under a base path.
 * Both are public.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { start, type Reply } from '../support/helpers.ts';

function assertJson(r: Reply, body: string, label: string): void {
  assert.equal(r.status, 200, `${label}: status`);
  assert.equal(r.headers['content-type'], 'application/json', `${label}: content-type`);
  assert.equal(r.body, body, `${label}: body`);
  assert.equal(r.headers['content-length'], String(body.length), `${label}: content-length`);
  assert.equal(r.headers['www-authenticate'], undefined, `${label}: no challenge`);
  assert.equal(r.headers['access-control-allow-origin'], '*', `${label}: CORS`);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', `${label}: security headers`);
}

const CASES: readonly { name: string; apiToken?: string; baseUrl?: string; p: string }[] = [
  { name: 'gate off', p: '' },
  { name: 'gate on', apiToken: TOKEN, p: '' },
  { name: 'gate on, base path /s', apiToken: TOKEN, baseUrl: 'http://localhost/s', p: '/s' },
];

for (const c of CASES) {
  test(`/healthz and /auth-check (${c.name})`, async (t) => {
    const h = await start(t, { ...(c.apiToken ? { apiToken: c.apiToken } : {}), ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}) });
    const authCheck = JSON.stringify({ auth_required: c.apiToken !== undefined });
    // No Authorization, a wrong one and the right one: public paths do not look at it.
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: RIGHT }]) {
      const label = JSON.stringify(headers);
      for (const suffix of ['', '/', '?probe=1', '/?probe=1']) {
        assertJson(await h.req(`${c.p}/healthz${suffix}`, { headers }), '{"status":"ok"}', `/healthz${suffix} ${label}`);
        assertJson(await h.req(`${c.p}/auth-check${suffix}`, { headers }), authCheck, `/auth-check${suffix} ${label}`);
      }
    }
    for (const path of ['/healthz', '/auth-check']) {
      const head = await h.req(`${c.p}${path}`, { method: 'HEAD' });
      assert.equal(head.status, 200, `HEAD ${path}`);
      assert.equal(head.body, '', `HEAD ${path}: no body`);
      assert.equal(head.headers['content-type'], 'application/json', `HEAD ${path}`);
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const r = await h.req(`${c.p}${path}`, { method });
        assert.equal(r.status, 405, `${method} ${path}`);
        assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS', `${method} ${path}`);
        assert.equal(r.body, JSON.stringify({ detail: `${method} is not allowed here` }), `${method} ${path}`);
      }
    }
    // Neither path is a short code, and neither touched the store.
    assert.equal(h.shortener.count, 0);
  });
}
