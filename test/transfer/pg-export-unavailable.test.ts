/**
 * `GET /api/export` with the PostgreSQL server stopped (docs/postgres.md, faults): `503`
 * `{"detail":"database unavailable"}` like the list, in both formats, never a 200 head followed by
 * a cut connection; MCP's tools answer an `isError` result, never an internal error; and the
 * export works again once the database is back.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createShortenerAsync } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { LogCapture, request } from '../support/helpers.ts';
import { pgServer } from '../support/pg.ts';

const KEY = 'export-key';

test('export and MCP tools with the database stopped: 503 / isError database unavailable, then the export once it is back', { timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t, { own: true });
  if (!pg) return;
  const db = await pg.createDatabase();
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const logs = new LogCapture();
  const shortener = await createShortenerAsync({ databaseUrl: db, baseUrl: `http://127.0.0.1:${port}`, apiKeys: [KEY], logger: createLogger('warn', logs) });
  http.on('request', shortener.handler);
  t.after(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await shortener.close();
  });

  const created = await request(port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/exported","code":"export1"}',
  });
  assert.equal(created.status, 201, created.body);

  await pg.stop();
  for (const path of ['/api/export', '/api/export?format=csv']) {
    const r = await request(port, path, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 503, `${path}: ${r.body}`);
    assert.equal(r.body, '{"detail":"database unavailable"}', path);
    assert.equal(r.headers['content-type'], 'application/json', path);
    assert.equal(r.headers['content-disposition'], undefined, `${path}: no attachment was started`);
  }
  // The list answers the same, as it already did.
  assert.equal((await request(port, '/api/urls', { headers: { 'x-api-key': KEY } })).body, '{"detail":"database unavailable"}');
  // MCP's tools tell the model, as an isError result, never an internal error (docs/mcp.md).
  const calls: [string, Record<string, unknown>][] = [
    ['get_url', { code: 'export1' }],
    ['lookup_url', { url: 'https://example.com/exported' }],
    ['list_urls', { api_key: KEY }],
    ['shorten_url', { url: 'https://example.com/new' }],
    ['update_url', { code: 'export1', api_key: KEY, max_visits: 3 }],
    ['delete_url', { code: 'export1', api_key: KEY }],
  ];
  for (const [name, args] of calls) {
    const r = await request(port, '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    assert.equal(r.status, 200, `${name}: ${r.body}`);
    assert.deepEqual(JSON.parse(r.body), { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'database unavailable' }], isError: true } }, name);
  }

  await pg.start();
  let exported;
  for (let i = 0; ; i++) {
    exported = await request(port, '/api/export', { headers: { 'x-api-key': KEY } });
    if (exported.status === 200) break;
    assert.equal(exported.status, 503, exported.body);
    assert.ok(i < 100, 'the export works again once the database is back');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(exported.headers['content-type'], 'application/x-ndjson');
  const records = exported.body
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    records.map((r) => [r['short_code'], r['original_url']]),
    [['export1', 'https://example.com/exported']],
  );
  assert.deepEqual(
    logs.lines.filter((l) => l['level'] === 'error'),
    [],
    'no error logged',
  );
});
