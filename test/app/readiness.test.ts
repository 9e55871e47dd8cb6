/**
 * The readiness probe `GET /healthz?ready` (docs/operations.md, readiness): 200 `{"status":"ok"}`
 * while ready, 503 `{"status":"not ready","detail":…}` from the moment a shutdown begins
 * (`beginShutdown()`, which `close()` implies), public under the gate with any query. Plain
 * `/healthz` stays liveness. A real process turning 503 on SIGTERM is in shutdown.test.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { TOKEN } from '../support/gate-helpers.ts';
import { start, type Harness, type Reply } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const READY = '{"status":"ok"}';
const NOT_READY = '{"status":"not ready","detail":"shutting down"}';

/** Every spelling of the probe: a value or none, other parameters, a trailing slash. */
const PROBES = ['/healthz?ready', '/healthz?ready=1', '/healthz/?ready', '/healthz?x=1&ready=', '/healthz?ready&ready'];

function assertJson(r: Reply, status: number, body: string, label: string): void {
  assert.equal(r.status, status, `${label}: status`);
  assert.equal(r.body, body, `${label}: body`);
  assert.equal(r.headers['content-type'], 'application/json', `${label}: content-type`);
  assert.equal(r.headers['access-control-allow-origin'], '*', `${label}: CORS`);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', `${label}: security headers`);
  assert.equal(r.headers['www-authenticate'], undefined, `${label}: no challenge`);
}

async function withHarness(t: TestContext, options: Parameters<typeof start>[1], body: (h: Harness) => Promise<void>): Promise<void> {
  await body(await start(t, options));
}

for (const gate of [false, true]) {
  test(
    `/healthz?ready is 200 while serving and 503 once a shutdown began; /healthz stays 200 (gate ${gate ? 'on, no token sent' : 'off'})`,
    onOneProcess('its own shutdown'),
    async (t) => {
      await withHarness(t, gate ? { apiToken: TOKEN } : {}, async (h) => {
        for (const p of PROBES) assertJson(await h.req(p), 200, READY, p);
        const head = await h.req('/healthz?ready', { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.body, '');

        h.shortener.beginShutdown();
        for (const p of PROBES) assertJson(await h.req(p), 503, NOT_READY, p);
        assert.equal((await h.req('/healthz?ready', { method: 'HEAD' })).status, 503);
        // Liveness and everything else go on: requests in flight and kept-alive clients are served.
        assertJson(await h.req('/healthz'), 200, READY, '/healthz');
        assertJson(await h.req('/healthz?probe=1'), 200, READY, '/healthz?probe=1');
        const health = await h.req('/api/health', gate ? { headers: { authorization: `Bearer ${TOKEN}` } } : {});
        assert.equal(health.status, 200);
      });
    },
  );
}

test('/healthz?ready under a base path', onOneProcess('its own shutdown'), async (t) => {
  await withHarness(t, { baseUrl: 'http://localhost/s' }, async (h) => {
    assertJson(await h.req('/s/healthz?ready'), 200, READY, '/s/healthz?ready');
    h.shortener.beginShutdown();
    assertJson(await h.req('/s/healthz?ready'), 503, NOT_READY, '/s/healthz?ready');
  });
});

test('close() implies beginShutdown(): the probe says not ready', onOneProcess('its own shutdown'), async (t) => {
  await withHarness(t, {}, async (h) => {
    assertJson(await h.req('/healthz?ready'), 200, READY, 'before close');
    await h.shortener.close();
    assertJson(await h.req('/healthz?ready'), 503, NOT_READY, 'after close');
  });
});
