/**
 * The server on PostgreSQL (`DATABASE_URL`), as a process: the start-up line names the database but
 * never the password; create, redirect, an exact visit limit under 200 concurrent GETs, edit,
 * delete, and an export imported into a second instance on another database gives the same
 * records. A database that goes away is a 503 `{"detail":"database unavailable"}` and a not-ready
 * probe, until it is back. A missing driver stops start-up with exit 2 and the fix.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener, createShortenerAsync, openShortener, openShortenerAsync } from '../../../src/app.ts';
import { parseTransferCommand, runTransferCommand } from '../../../src/cli/transfer-commands.ts';
import { DriverMissingError } from '../../../src/store/postgres/connect.ts';
import { codeOf, request, serverProcess, spawnServer, tempDir, type ServerProcess } from '../../support/helpers.ts';
import { ownPgServer, pgServer } from '../../support/pg.ts';

const server = await pgServer();
const KEY = 'pg-admin-key';
const BASE = 'https://s.example';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** The database URL with a password the server must never log (trust authentication ignores it). */
const withPassword = (url: string): string => url.replace('postgres@', 'postgres:pw-s3cret@');

async function instance(t: { after: (fn: () => Promise<unknown>) => void }, url: string): Promise<ServerProcess> {
  const s = await serverProcess({ DATABASE_URL: withPassword(url), API_KEYS: KEY, BASE_URL: BASE, DATA_DIR: '/nonexistent/never-used' });
  t.after(() => s.stop());
  return s;
}

test('a server on PostgreSQL: create, redirect, exact limit, edit, delete, export and import into another instance', {
  skip: !server,
  timeout: 120_000,
}, async (t) => {
  const url = await server!.createDatabase();
  const s = await instance(t, url);
  const line = s.lines.find((l) => l['msg'] === 'listening')!;
  const { host, pathname } = new URL(url);
  assert.equal(line['database'], pathname.slice(1));
  assert.equal(line['database_host'], host);
  assert.equal(line['pool_size'], 10);
  assert.equal(line['data_file'], undefined, 'no data dir is used');
  assert.equal(line['records'], 0);

  const created = await request(s.port, `/api/shorten?url=${encodeURIComponent('https://example.com/pg')}`, { method: 'POST' });
  assert.equal(created.status, 201);
  const code = codeOf(created);
  const hop = await request(s.port, `/${code}`);
  assert.equal(hop.status, 302);
  assert.equal(hop.headers.location, 'https://example.com/pg');
  assert.equal((await request(s.port, `/${code}`, { method: 'HEAD' })).status, 302);
  const meta = JSON.parse((await request(s.port, `/api/urls/${code}`)).body) as Record<string, unknown>;
  assert.equal(meta['visit_count'], 1, 'the GET counted, the HEAD did not');
  assert.equal(meta['short_url'], `${BASE}/${code}`);

  // 200 concurrent GETs on max_visits 20: exactly 20 redirects.
  const limited = await request(s.port, '/api/shorten', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ url: 'https://example.com/limited', max_visits: 20, code: 'limit20' }),
  });
  assert.equal(limited.status, 201);
  const statuses = await Promise.all(Array.from({ length: 200 }, () => request(s.port, '/limit20').then((r) => r.status)));
  assert.equal(statuses.filter((x) => x === 302).length, 20);
  assert.equal(statuses.filter((x) => x === 410).length, 180);
  const used = JSON.parse((await request(s.port, '/api/urls/limit20')).body) as Record<string, unknown>;
  assert.equal(used['visit_count'], 20);
  assert.equal(used['max_visits'], 20);

  const taken = await request(s.port, '/api/shorten', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ url: 'https://example.com/again', code: 'limit20' }),
  });
  assert.equal(taken.status, 409);
  assert.equal(taken.body, '{"detail":"code already in use"}');

  const edited = await request(s.port, `/api/urls/${code}`, {
    method: 'PATCH',
    headers: { ...JSON_HEADERS, 'x-api-key': KEY },
    body: JSON.stringify({ url: 'https://example.com/edited', retention_days: 30 }),
  });
  assert.equal(edited.status, 200);
  const after = JSON.parse(edited.body) as Record<string, unknown>;
  assert.equal(after['original_url'], 'https://example.com/edited');
  assert.equal(after['retention_days'], 30);
  assert.equal(after['visit_count'], 1);
  assert.equal((await request(s.port, `/${code}`)).headers.location, 'https://example.com/edited');

  await request(s.port, '/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: 'https://example.com/gone', code: 'gone01' }) });
  const deletes = await Promise.all(
    Array.from({ length: 5 }, () => request(s.port, '/api/urls/gone01', { method: 'DELETE', headers: { 'x-api-key': KEY } }).then((r) => r.status)),
  );
  assert.deepEqual(deletes.sort(), [204, 404, 404, 404, 404]);
  assert.equal((await request(s.port, '/gone01')).status, 404);

  const list = await request(s.port, '/api/urls', { headers: { 'x-api-key': KEY } });
  assert.equal(list.status, 200);
  assert.equal(list.headers['x-total-count'], '2');
  assert.deepEqual(
    (JSON.parse(list.body) as { urls: { short_code: string }[] }).urls.map((u) => u.short_code),
    ['limit20', code],
  );

  // Export, then import into a second instance on another database: the same records.
  const exported = await request(s.port, '/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(exported.status, 200);
  assert.equal(exported.body.trim().split('\n').length, 2);
  const other = await instance(t, await server!.createDatabase());
  const imported = await request(other.port, '/api/import', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
    body: exported.body,
  });
  assert.equal(imported.status, 200);
  assert.deepEqual(JSON.parse(imported.body), { imported: 2, skipped: 0, errors: [] });
  // Then the visits, which turn the imported counts back into events (docs/analytics.md).
  const visits = await request(s.port, '/api/visits/export', { headers: { 'x-api-key': KEY } });
  assert.equal(visits.status, 200);
  const moved = await request(other.port, '/api/visits/import', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
    body: visits.body,
  });
  assert.equal(moved.status, 200, moved.body);
  assert.equal((await request(other.port, '/api/export', { headers: { 'x-api-key': KEY } })).body, exported.body);
  const usedUp = await request(other.port, '/limit20');
  assert.equal(usedUp.status, 410, 'the used-up limit came along');
  // Answered after the database's promise, on the fast path: the page still links home.
  assert.match(usedUp.body, /This link has reached its visit limit/);
  assert.match(usedUp.body, /<a href="\.\/">Go to the home page<\/a>/);

  // SIGTERM: a clean stop, the pool closed.
  assert.deepEqual(await s.stop(), { code: 0, signal: null });
  assert.equal(s.lines.at(-1)?.['msg'], 'stopped');
  for (const l of [...s.lines, ...other.lines]) assert.doesNotMatch(JSON.stringify(l), /s3cret/);
  assert.doesNotMatch(s.stderr() + other.stderr(), /s3cret/);
});

test('the library: createShortenerAsync on a database; the synchronous entry points refuse one', { skip: !server, timeout: 60_000 }, async (t) => {
  const url = await server!.createDatabase();
  assert.throws(() => createShortener({ databaseUrl: url, logLevel: 'silent' }), {
    name: 'TypeError',
    message: /use openShortenerAsync\(\) or createShortenerAsync\(\)/,
  });
  assert.throws(() => openShortener({ databaseUrl: url, logLevel: 'silent' }), TypeError);
  await assert.rejects(openShortenerAsync({ databaseUrl: url, logLevel: 'silent', driverModule: 'postgres-not-installed-here' }), DriverMissingError);
  const shortener = await createShortenerAsync({ databaseUrl: url, logLevel: 'silent', baseUrl: BASE, apiKeys: [KEY] });
  t.after(() => shortener.close());
  assert.deepEqual(shortener.database, { host: new URL(url).host, database: new URL(url).pathname.slice(1) });
  assert.equal(shortener.dataFile, '');
  await assert.rejects(shortener.compact(), /compaction is for the log store/);
  const http = createServer(shortener.handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => http.close(() => resolve())));
  const port = (http.address() as AddressInfo).port;
  const created = await request(port, '/api/shorten', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ url: 'https://example.com/lib', code: 'libr01' }),
  });
  assert.equal(created.status, 201);
  assert.equal(created.body, `${BASE}/libr01`);
  assert.equal((await request(port, '/libr01')).headers.location, 'https://example.com/lib');
  assert.equal(shortener.count, 1);
  // Without databaseUrl the asynchronous entry opens the log store.
  const dir = tempDir(t);
  const opened = await openShortenerAsync({ dataDir: dir, fsync: 'off', logLevel: 'silent' });
  assert.equal(opened.dataFile, join(dir, 'urls.log'));
  assert.equal(opened.database, undefined);
  await opened.close();
});

test('without the driver the server exits 2 and says how to install it', { skip: !server, timeout: 60_000 }, async () => {
  // A resolve hook that makes `postgres` missing.
  const hook =
    'export async function resolve(s, c, next) { if (s === "postgres") { const e = new Error("Cannot find package \'postgres\'"); e.code = "ERR_MODULE_NOT_FOUND"; throw e; } return next(s, c); }';
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const s = spawnServer(
    { DATABASE_URL: 'postgres://u:s3cret@127.0.0.1:1/x' },
    { nodeArgs: ['--import', `data:text/javascript,${encodeURIComponent(register)}`] },
  );
  const exit = await s.exited;
  assert.equal(exit.code, 2);
  assert.equal(s.stderr(), 'url-shortener: DATABASE_URL is set but the PostgreSQL driver is not installed: run `npm install postgres`\n');
  assert.deepEqual(s.lines, []);
  // The export and import commands alike.
  let err = '';
  const io = {
    env: {},
    readFile: () => '',
    stdout: process.stdout,
    stderr: { write: (c: string) => ((err += c), true) } as unknown as NodeJS.WritableStream,
    now: Date.now,
    driverModule: 'postgres-not-installed-here',
  };
  const code = await runTransferCommand(parseTransferCommand(['export', '--database-url', 'postgres://u:s3cret@127.0.0.1:1/x'])!, io);
  assert.equal(code, 2);
  assert.equal(err, 'url-shortener export: DATABASE_URL is set but the PostgreSQL driver is not installed: run `npm install postgres-not-installed-here`\n');
});

test('an unreachable database at start-up: exit 1, naming host and database, never the password', { skip: !server, timeout: 60_000 }, async () => {
  const s = spawnServer({ DATABASE_URL: 'postgres://u:s3cret@127.0.0.1:1/links' });
  assert.equal(await s.listening, false);
  assert.equal((await s.exited).code, 1);
  assert.equal(s.lines.at(-1)?.['msg'], 'cannot reach the database links on 127.0.0.1:1: database unavailable (ECONNREFUSED)');
  assert.doesNotMatch(JSON.stringify(s.lines) + s.stderr(), /s3cret/);
});

test('the database goes away: 503 database unavailable within 5 s, readiness 503, then service resumes by itself', {
  skip: !server,
  timeout: 120_000,
}, async (t) => {
  const { server: own, after } = await ownPgServer(t);
  const s = await instance({ after }, await own.createDatabase());
  const created = await request(s.port, '/api/shorten', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ url: 'https://example.com/survives', code: 'surviv' }),
  });
  assert.equal(created.status, 201);
  assert.equal((await request(s.port, '/healthz?ready')).body, '{"status":"ok"}');
  await own.stop();
  for (const [path, options] of [
    ['/surviv', {}],
    ['/api/urls/surviv', {}],
    ['/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ url: 'https://example.com/down' }) }],
    ['/api/urls', { headers: { 'x-api-key': KEY } }],
  ] as const) {
    const started = Date.now();
    const r = await request(s.port, path, options);
    assert.equal(r.status, 503, path);
    assert.equal(r.body, '{"detail":"database unavailable"}', path);
    assert.equal(r.headers['content-type'], 'application/json', path);
    assert.ok(Date.now() - started < 5000, `${path}: within 5 s`);
  }
  const probe = await request(s.port, '/healthz?ready');
  assert.equal(probe.status, 503);
  assert.equal(probe.body, '{"status":"not ready","detail":"database unavailable"}');
  assert.equal((await request(s.port, '/healthz')).status, 200, 'liveness stays up');
  await own.start();
  for (let i = 0; ; i++) {
    if ((await request(s.port, '/healthz?ready')).status === 200) break;
    assert.ok(i < 200, 'ready again');
    await new Promise((r) => setTimeout(r, 50));
  }
  const hop = await request(s.port, '/surviv');
  assert.equal(hop.status, 302);
  assert.equal(hop.headers.location, 'https://example.com/survives');
  assert.equal(s.lines.filter((l) => l['level'] === 'error').length, 0, 'no 500, no error logged');
});
