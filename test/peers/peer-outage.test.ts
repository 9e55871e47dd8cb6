/**
 * Regression (issue 43): with the database down, every route of Shlink's surface that reaches the
 * links answers Shlink's plain problem (`503`, `application/problem+json`, `about:blank`), and
 * every YOURLS action that reaches them YOURLS' own error shape (`503`; a `shorturl` is `error:db`,
 * as a link that could not be stored), in the format asked for. Reads answered the REST door's
 * `{"detail":"database unavailable"}`, which neither surface's clients can read. The domains
 * (their redirects are in the store, docs/api.md, domains) are such a route too: listed or changed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { onOneProcess } from '../support/cluster.ts';
import { LogCapture } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { pgServer } from '../support/pg.ts';
import { assertAnswer, FORMATS, inFormat, type Expected } from '../support/yourls.ts';

const KEY = 'k1';
const GO = 'go.example';
const DOWN = 'database unavailable';

const SHLINK_DOWN = JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', detail: DOWN, status: 503 });

/** Every Shlink route that reads or writes the links (or the domains' redirects), with its body. */
const SHLINK_ROUTES: readonly [method: string, path: string, body?: unknown][] = [
  ['GET', '/rest/v3/short-urls'],
  ['GET', '/rest/v3/short-urls?orderBy=visits-ASC&tags[]=a&tags[]=b'],
  ['POST', '/rest/v3/short-urls', { longUrl: 'https://example.com/new' }],
  ['POST', '/rest/v3/short-urls', { longUrl: 'https://example.com/kept', findIfExists: true }],
  ['POST', '/rest/v3/short-urls', { longUrl: 'https://example.com/new', customSlug: 'new001' }],
  ['GET', '/rest/v3/short-urls/kept01'],
  ['PATCH', '/rest/v3/short-urls/kept01', { title: 'edited' }],
  ['DELETE', '/rest/v3/short-urls/kept01'],
  ['GET', '/rest/v3/short-urls/kept01/visits'],
  ['DELETE', '/rest/v3/short-urls/kept01/visits'],
  ['GET', '/rest/v3/visits/orphan'],
  ['GET', '/rest/v3/short-urls/kept01/redirect-rules'],
  ['POST', '/rest/v3/short-urls/kept01/redirect-rules', { redirectRules: [] }],
  ['GET', '/rest/v3/visits'],
  ['GET', '/rest/v3/tags'],
  ['GET', '/rest/v3/tags/stats'],
  ['GET', '/rest/v3/domains'],
  ['PATCH', '/rest/v3/domains/redirects', { domain: GO, baseUrlRedirect: 'https://home.example/' }],
];

const YOURLS_DOWN: Expected = { status: 503, fields: { errorCode: '503', message: DOWN }, simple: DOWN };

/** Every YOURLS action that reads or writes the links, and its answer. */
const YOURLS_ACTIONS: readonly [params: Record<string, string>, expected: Expected][] = [
  [
    { action: 'shorturl', url: 'https://example.com/new' },
    { status: 503, fields: { status: 'fail', code: 'error:db', message: DOWN, errorCode: '503', statusCode: '503' }, simple: '' },
  ],
  [
    { action: 'shorturl', url: 'https://example.com/new', keyword: 'new002', title: 'T' },
    { status: 503, fields: { status: 'fail', code: 'error:db', message: DOWN, errorCode: '503', statusCode: '503' }, simple: '' },
  ],
  [{ action: 'expand', shorturl: 'kept01' }, YOURLS_DOWN],
  [{ action: 'url-stats', shorturl: 'kept01' }, YOURLS_DOWN],
  [{ action: 'stats', filter: 'top', limit: '5' }, YOURLS_DOWN],
  [{ action: 'db-stats' }, YOURLS_DOWN],
];

test('the database down: Shlink answers its 503 problem on every route that reaches the links or the domains, YOURLS its 503 in every format', {
  ...onOneProcess('it stops a database of its own'),
  timeout: 120_000,
}, async (t) => {
  const pg = await pgServer(t, { own: true });
  if (!pg) return;
  const logs = new LogCapture();
  const app = await openOnDatabase(
    { shlinkApi: true, yourlsApi: true, apiKeys: [KEY], domains: [GO], logger: createLogger('warn', logs) },
    await pg.createDatabase(),
  );
  t.after(() => app.close());
  const created = await app.req('/rest/v3/short-urls', {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: JSON.stringify({ longUrl: 'https://example.com/kept', customSlug: 'kept01', tags: ['a'] }),
  });
  assert.equal(created.status, 200, created.body);
  const listed = await app.req('/rest/v3/domains', { headers: { 'x-api-key': KEY } });
  assert.equal(listed.status, 200, 'the domains answer while the database is up');
  assert.deepEqual(
    JSON.parse(listed.body).domains.data.map((d: { domain: string }) => d.domain),
    [`127.0.0.1:${app.port}`, GO],
  );

  await pg.stop();
  try {
    for (const [method, path, body] of SHLINK_ROUTES) {
      const r = await app.req(path, { method, headers: { 'x-api-key': KEY }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const what = `${method} ${path} ${JSON.stringify(body ?? '')}`;
      assert.equal(r.status, 503, `${what}: ${r.body}`);
      assert.equal(r.headers['content-type'], 'application/problem+json', what);
      assert.equal(r.body, SHLINK_DOWN, what);
    }
    for (const [params, expected] of YOURLS_ACTIONS) {
      for (const format of FORMATS) {
        const r = await app.req(`/yourls-api.php?${new URLSearchParams({ ...inFormat(params, format), signature: KEY })}`);
        assertAnswer(r, format, expected);
      }
    }
    // What needs no link still answers.
    const version = await app.req(`/yourls-api.php?${new URLSearchParams({ action: 'version', format: 'json', signature: KEY })}`);
    assert.equal(version.status, 200, version.body);
  } finally {
    await pg.start();
  }
  assert.deepEqual(
    logs.lines.filter((l) => l['level'] === 'error'),
    [],
    'no 500, nothing unexpected logged',
  );
});
