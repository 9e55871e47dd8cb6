/**
 * Logging of the gate (docs/security.md, the bearer-token gate; docs/operations.md, logs): each
 * refused request is exactly one warning line with its method and path, secret query values
 * redacted; the token, right or wrong, never appears in a log line or a response.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { start } from '../support/helpers.ts';

const WRONG = 'WRONG-TOKEN-MARKER-1234';

test('each refused request is one warning line: method, redacted path, reason', async (t) => {
  const h = await start(t, { apiToken: TOKEN });
  await h.req('/api/urls?api_key=S3CRET-KEY&limit=5&token=S3CRET-T&access_token=S3CRET-A');
  await h.req('/api/shorten', { method: 'POST', headers: { authorization: `Bearer ${WRONG}` } });
  await h.req('/nope/deeper', { method: 'DELETE', headers: { authorization: [RIGHT, RIGHT] } });
  await h.req('/abc123', { method: 'PUT' });

  const warnings = h.logs.lines.filter((l) => l['level'] === 'warn');
  assert.equal(warnings.length, 4, h.logs.raw);
  for (const w of warnings) {
    assert.deepEqual(Object.keys(w), ['time', 'level', 'msg', 'method', 'path', 'reason']);
    assert.equal(w['msg'], 'request refused by the gate');
  }
  assert.deepEqual(
    warnings.map((w) => [w['method'], w['path'], w['reason']]),
    [
      ['GET', '/api/urls?api_key=***&limit=5&token=***&access_token=***', 'missing'],
      ['POST', '/api/shorten', 'invalid'],
      ['DELETE', '/nope/deeper', 'repeated'],
      ['PUT', '/abc123', 'missing'],
    ],
  );
  assert.doesNotMatch(h.logs.raw, /S3CRET/);
});

test('requests that pass the gate, public or with the token, log no warning', async (t) => {
  const h = await start(t, { apiToken: TOKEN });
  await h.req('/healthz');
  await h.req('/');
  await h.req('/zzzzzz', { headers: { authorization: RIGHT } });
  await h.req('/api/urls', { method: 'OPTIONS' });
  await h.req('/api/health', { headers: { authorization: RIGHT } });
  await h.req('/nope/deeper', { headers: { authorization: RIGHT } });
  await h.req('/a/../b');
  assert.deepEqual(
    h.logs.lines.filter((l) => l['level'] !== 'debug'),
    [],
  );
});

test('the token and wrong tokens never appear in a log line or a response body', async (t) => {
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] });
  const bodies: string[] = [];
  const attempts: { path: string; method?: string; headers?: Record<string, string | string[]> }[] = [
    { path: '/api/health', headers: { authorization: RIGHT } },
    { path: '/api/health', headers: { authorization: `Bearer ${WRONG}` } },
    { path: '/api/health', headers: { authorization: WRONG } },
    { path: '/api/health', headers: { authorization: `${RIGHT}x` } },
    { path: '/api/health', headers: { authorization: [RIGHT, `Bearer ${WRONG}`] } },
    { path: `/api/health?access_token=${encodeURIComponent(TOKEN)}` },
    { path: `/api/health?token=${WRONG}`, headers: { authorization: `Bearer ${WRONG}` } },
    { path: '/api/shorten', method: 'POST', headers: { authorization: `Bearer ${WRONG}`, 'content-type': 'application/json' } },
    { path: '/api/shorten?url=nope', method: 'POST', headers: { authorization: RIGHT } },
    { path: '/api/urls/%zz', headers: { authorization: RIGHT } },
    { path: '/api/urls', method: 'PUT', headers: { authorization: RIGHT } },
    { path: '/zzzzzz', headers: { authorization: `Bearer ${WRONG}` } },
  ];
  for (const a of attempts) {
    const r = await h.req(a.path, { method: a.method ?? 'GET', ...(a.headers ? { headers: a.headers } : {}) });
    bodies.push(r.body, JSON.stringify(r.headers));
  }
  // Both levels of detail: the warnings, and the debug request lines the harness logs too.
  assert.ok(h.logs.lines.some((l) => l['level'] === 'warn'));
  assert.ok(h.logs.lines.some((l) => l['level'] === 'debug'));
  for (const secret of [TOKEN, encodeURIComponent(TOKEN), WRONG]) {
    assert.ok(!h.logs.raw.includes(secret), `the log holds ${secret}:\n${h.logs.raw}`);
    for (const b of bodies) assert.ok(!b.includes(secret), `a response holds ${secret}: ${b}`);
  }
});
