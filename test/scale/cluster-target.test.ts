/**
 * The cluster target of the HTTP tests (test/support/cluster.ts) does what it claims: three
 * instances over one database, each request to the next one, the test's clock on all of them, and
 * `h.shortener` reading the database the instances write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openCluster } from '../support/cluster.ts';
import { codeOf, request } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';
import { findPgBin } from '../support/pg.ts';

const skip = findPgBin()
  ? false
  : missingTool('THE CLUSTER TARGET TESTS', 'PostgreSQL not found (apt-get install postgresql, or set PG_BIN): the cluster target cannot run');
const KEY = 'cluster-key';
const DAY_MS = 86_400_000;

test('three instances behind the proxy: a link made on one is read, redirected and counted on the others', { skip }, async (t) => {
  let clock = Date.UTC(2026, 5, 1);
  const lines: string[] = [];
  const app = await openCluster('', { apiKeys: [KEY], now: () => clock }, {}, (line) => lines.push(line));
  t.after(() => app.close());
  assert.equal(app.proxy.backends.length, 3);
  assert.equal(new Set(app.proxy.backends).size, 3, 'three instances, three ports');

  const created = await request(app.port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/spread","retention_days":1}',
  });
  assert.equal(created.status, 201);
  const code = codeOf(created);
  assert.equal(app.shortener.count, 1, 'the count read after the answer includes the create');
  for (let i = 0; i < 3; i++) {
    const r = await request(app.port, `/${code}`);
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'https://example.com/spread');
  }
  assert.deepEqual([...app.proxy.forwarded.values()], [2, 1, 1], 'each request went to the next instance');
  const got = await app.shortener.service.get(code);
  assert.ok(got.ok);
  assert.equal(got.record.visit_count, 3, 'the in-process shortener reads what the instances counted');
  assert.ok(
    lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'request'),
    'the instances log lines reach the harness',
  );

  // The test's clock moves every instance's: two days later the link is gone everywhere.
  clock += 2 * DAY_MS;
  for (let i = 0; i < 3; i++) assert.equal((await request(app.port, `/api/urls/${code}`, { headers: { 'x-api-key': KEY } })).status, 404);
});

test('a random source that captures nothing reaches the instances; one that does is refused', { skip }, async (t) => {
  const app = await openCluster('', { minShortLength: 1, maxShortLength: 1, random: (b) => b.fill(0) }, {}, () => undefined);
  t.after(() => app.close());
  const first = await request(app.port, '/api/shorten?url=https%3A%2F%2Fexample.com%2Fa');
  const second = await request(app.port, '/api/shorten?url=https%3A%2F%2Fexample.com%2Fb');
  assert.equal(first.status, 201);
  assert.equal(codeOf(first).length, 1);
  // With the instances' own random sources the second create would get another code of length 1.
  assert.equal(second.status, 503, 'all zeros: the one code they can make is taken, on whichever instance asks');
  assert.equal(second.body, `{"detail":"no free short code up to 1 characters; raise MAX_SHORT_LENGTH"}`);

  const taken = new Uint8Array(1);
  await assert.rejects(
    openCluster('', { random: (b) => b.set(taken) }, {}, () => undefined),
    /cannot give the instances this random source/,
  );
});
