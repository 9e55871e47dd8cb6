/**
 * The PostgreSQL server the test files of a pass share (`withSharedPgServer` in pg.ts): started
 * without fsync, handed to the pass through `SHARED_PG`, a database per ask, refused to a file that
 * would stop it, and removed when the pass ends, whatever its outcome.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { migrate, MIGRATIONS } from '../../../src/store/postgres/schema.ts';
import { findPgBin, NO_POSTGRES, pgServer, SHARED_PG, withSharedPgServer } from '../../support/pg.ts';
import { missingTool } from '../../support/missing-tool.ts';

const skip = findPgBin() ? false : missingTool('POSTGRESQL TESTS', NO_POSTGRES);

const query = async (url: string, text: string): Promise<string> => {
  const sql = postgres(url, { max: 1, onnotice: () => undefined, connect_timeout: 2 });
  try {
    const [row] = await sql.unsafe<Record<string, string>[]>(text);
    return Object.values(row ?? {})[0] ?? '';
  } finally {
    await sql.end({ timeout: 1 });
  }
};

test('a pass shares one server without fsync; files make databases on it and cannot stop it; it is gone after the pass', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const teardown: (() => Promise<void>)[] = [];
  let sharedUrl = '';
  const code = await withSharedPgServer(async (env) => {
    sharedUrl = env[SHARED_PG] ?? '';
    assert.match(sharedUrl, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    assert.equal(await query(sharedUrl, 'SHOW fsync'), 'off');

    const [a, b] = await Promise.all([1, 2].map(() => pgServer(t, { shared: sharedUrl, after: (fn) => void teardown.push(fn) })));
    assert.equal(a!.url, sharedUrl);
    const [dbA, dbB] = await Promise.all([a!.createDatabase(), b!.createDatabase()]);
    assert.notEqual(dbA, dbB);
    assert.equal(new URL(dbA).port, new URL(sharedUrl).port);
    assert.equal(await query(dbA, 'SELECT current_database()'), new URL(dbA).pathname.slice(1));

    for (const step of [() => a!.stop(), () => a!.start(), () => a!.restart()]) {
      await assert.rejects(step(), /shares the pass's PostgreSQL server; ask pgServer\(t, \{ own: true \}\)/);
    }
    assert.throws(() => a!.dir, /dir: this file shares the pass's PostgreSQL server/);
    // A file's end closes its connection and leaves the server up for the others.
    for (const step of teardown.splice(0)) await step();
    assert.equal(await query(dbB, 'SELECT 1::text'), '1');
    return 3;
  });
  assert.equal(code, 3, "the pass's outcome is passed on");
  await assert.rejects(query(sharedUrl, 'SELECT 1'), 'the server is removed once the pass ends');
});

test('a file that asks for its own server gets one with fsync on, even in a pass that shares one', { skip, timeout: 60_000 }, async (t) => {
  await withSharedPgServer(async (env) => {
    const own = await pgServer(t, { own: true, shared: env[SHARED_PG] ?? '', after: (fn) => t.after(fn) });
    assert.notEqual(new URL(own!.url).port, new URL(env[SHARED_PG]!).port);
    assert.equal(await query(own!.url, 'SHOW fsync'), 'on');
    await own!.restart();
    assert.equal(await query(own!.url, 'SELECT 1::text'), '1');
    return 0;
  });
});

test('a migrated database is a copy of one this process migrated once; each copy is its own', { skip, timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const versions = MIGRATIONS.map((m) => m.version).join(',');
  const templates = () => query(pg.url, `SELECT count(*)::text FROM pg_database WHERE datname LIKE 't${process.pid}\\_%\\_migrated'`);
  const x = await pg.createDatabase({ migrated: true });
  const made = await templates();
  assert.notEqual(made, '0', 'a template was made');
  const y = await pg.createDatabase({ migrated: true });
  assert.equal(await templates(), made, 'the second copy is of the same template');
  for (const db of [x, y]) assert.equal(await query(db, "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations"), versions);
  // The store finds nothing left to apply; a plain database is still empty.
  const sql = postgres(x, { max: 1, onnotice: () => undefined });
  try {
    assert.deepEqual(await migrate(sql), []);
    await sql`CREATE TABLE only_here (a int)`;
  } finally {
    await sql.end({ timeout: 1 });
  }
  assert.equal(await query(y, "SELECT coalesce(to_regclass('only_here')::text, 'none')"), 'none');
  assert.equal(await query(await pg.createDatabase(), "SELECT coalesce(to_regclass('schema_migrations')::text, 'none')"), 'none');
});
