/**
 * The public probes (docs/security.md, the bearer-token gate): GET /healthz and GET /auth-check,
 * exact bodies, for a service with and without a gate token. (The gate itself is another change;
 * these only report.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';

for (const [token, required] of [
  ['', false],
  ['s3cret-token', true],
] as const) {
  test(`/healthz is {"status":"ok"} and /auth-check says auth_required ${required}`, async (t) => {
    const h = await start(t, { apiToken: token });
    const health = await h.req('/healthz');
    assert.equal(health.status, 200);
    assert.equal(health.headers['content-type'], 'application/json');
    assert.equal(health.body, '{"status":"ok"}');
    const check = await h.req('/auth-check/');
    assert.equal(check.status, 200);
    assert.equal(check.headers['content-type'], 'application/json');
    assert.equal(check.body, `{"auth_required":${required}}`);
    assert.ok(!check.body.includes('s3cret'));
    const head = await h.req('/healthz', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    const post = await h.req('/auth-check', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
  });
}
