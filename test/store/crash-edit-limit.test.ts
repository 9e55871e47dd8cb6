/**
 * kill -9 right after an edit gives a link a visit limit (docs/storage.md, visit limits; docs/api.md,
 * edit): the visits counted before the edit are durable with it, so the restarted server counts
 * them against the new limit and grants exactly the visits left, on both stores.
 *
 * On the log store the visits of a link without a limit are counted in memory and written in a
 * count batch within a second: the edit's own write must carry them. On PostgreSQL they commit
 * asynchronously: the database is crashed too (kill -9 of every one of its processes, WAL writer
 * held back), so that only what the edit's synchronous commit flushed survives.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { request, serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { pgServer } from '../support/pg.ts';

const KEY = 'crash-admin-key';
const JSON_HEADERS = { 'content-type': 'application/json' };
const quietEnv = { API_KEYS: KEY };

async function visitCount(s: ServerProcess, code: string): Promise<number> {
  const r = await request(s.port, `/api/urls/${code}`);
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { visit_count: number }).visit_count;
}

/** SIGKILL, and the exit seen. */
async function kill9(s: ServerProcess): Promise<void> {
  s.child.kill('SIGKILL');
  assert.equal((await s.exited).signal, 'SIGKILL');
}

/**
 * The scenario of the issue: 8 visits of a link without a limit, `PATCH {"max_visits":10}` (which
 * reports the 8), `crash()` at once; after `restart()` the count is 8 and exactly 2 more visits
 * redirect.
 */
async function editThenCrash(t: TestContext, launch: () => Promise<ServerProcess>, crash: (s: ServerProcess) => Promise<void>): Promise<ServerProcess> {
  const start = async (): Promise<ServerProcess> => {
    const started = await launch();
    t.after(() => started.stop());
    return started;
  };
  let s = await start();
  const created = await request(s.port, '/api/shorten', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ url: 'https://example.com/edited-limit', code: 'edit08' }),
  });
  assert.equal(created.status, 201, created.body);
  for (let i = 0; i < 8; i++) assert.equal((await request(s.port, '/edit08')).status, 302);
  const edited = await request(s.port, '/api/urls/edit08', { method: 'PATCH', headers: { ...JSON_HEADERS, 'x-api-key': KEY }, body: '{"max_visits":10}' });
  assert.equal(edited.status, 200, edited.body);
  const record = JSON.parse(edited.body) as { visit_count: number; max_visits: number };
  assert.deepEqual([record.visit_count, record.max_visits], [8, 10]);
  await crash(s);

  s = await start();
  assert.equal(await visitCount(s, 'edit08'), 8, 'the visits before the edit survived it');
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await request(s.port, '/edit08')).status);
  assert.deepEqual(statuses, [302, 302, 410]);
  assert.equal(await visitCount(s, 'edit08'), 10);
  return s;
}

test('log store: kill -9 right after an edit sets max_visits; the restart counts the earlier visits', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  await editThenCrash(t, () => serverProcess({ DATA_DIR: dir, ...quietEnv }), kill9);
});

const pg = await pgServer(undefined, { own: true });

const gone = (pid: string): boolean => !existsSync(`/proc/${pid}`);

/**
 * SIGKILL to every process of the test server's cluster, postmaster first, as a crash of the
 * database's machine would end them; resolves once they are all gone.
 */
async function crashDatabase(clusterDir: string): Promise<void> {
  const postmaster = readFileSync(join(clusterDir, 'data', 'postmaster.pid'), 'utf8')
    .split('\n')[0]!
    .trim();
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', postmaster], { encoding: 'utf8' })
    .split('\n')
    .map((p) => p.trim())
    .filter(Boolean);
  const pids = [postmaster, ...children];
  execFileSync('kill', ['-9', ...pids]);
  // Until reaped, a dead postmaster still answers kill(pid, 0), and the new one would take its
  // lock files for a live server's.
  while (!pids.every(gone)) await delay(10);
}

test('PostgreSQL: kill -9 of the server and of the database right after an edit sets max_visits', { skip: !pg, timeout: 120_000 }, async (t) => {
  const server = pg!;
  // The WAL writer flushes an asynchronous commit only after 10 s: the unlimited visits stay
  // unflushed unless the edit's commit flushes them.
  await server.admin`ALTER SYSTEM SET wal_writer_delay = '10s'`;
  await server.admin`SELECT pg_reload_conf()`;
  t.after(async () => {
    await server.admin`ALTER SYSTEM RESET wal_writer_delay`;
    await server.admin`SELECT pg_reload_conf()`;
  });
  const url = await server.createDatabase();
  const restarted = await editThenCrash(
    t,
    () => serverProcess({ DATABASE_URL: url, DATA_DIR: '/nonexistent/never-used', ...quietEnv }),
    async (s) => {
      // Visits committed asynchronously after the edit: what the crash takes when nothing flushes them.
      await request(s.port, '/api/shorten', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ url: 'https://example.com/after', code: 'after1' }),
      });
      for (let i = 0; i < 3; i++) assert.equal((await request(s.port, '/after1')).status, 302);
      await crashDatabase(server.dir);
      await kill9(s);
      await server.start();
    },
  );
  t.diagnostic(`visits made after the edit that the crash kept: ${await visitCount(restarted, 'after1')} of 3`);
});
