/**
 * Stored API keys on PostgreSQL (docs/postgres.md, stored keys): add, list, touch and revoke round
 * trips; a change on one of three instances reaching the other two within a second, by its
 * notification (the clocks stopped), by the read once a second when a notification is lost, and by
 * the read that follows a listening connection made again; never a stale copy while the database
 * is away. A link's author and the migration from the schema before both are in `authors.test.ts`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { StoreUnavailableError } from '../../../src/store/link-store.ts';
import { openPostgresStore, type PostgresOpenOptions } from '../../../src/store/postgres/connect.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import { pgServer } from '../../support/pg.ts';

const quiet = createLogger('silent');
const server = await pgServer(undefined, { own: true });
const T = 1_790_000_000;
/** No background work: only what a test asks happens. */
const QUIET_JOBS = { readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 } as const;

const key = (id: string, changes: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  name: `key ${id}`,
  role: 'creator',
  domain: null,
  digest: createHash('sha256').update(`us_${id}`).digest('hex'),
  createdAt: T,
  expiresAt: null,
  lastUsedAt: null,
  ...changes,
});

const ids = (keys: readonly KeyRecord[]): string[] => keys.map((k) => k.id);

type Cleanup = { after: (fn: () => Promise<void>) => void };

/** A fresh database, and a pool of the test's own on it (superuser: it may bypass the trigger). */
async function database(t: Cleanup): Promise<{ url: string; db: postgres.Sql }> {
  const url = await server!.createDatabase();
  const db = postgres(url, { max: 2, onnotice: () => undefined });
  t.after(async () => {
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  return { url, db };
}

async function open(t: Cleanup, url: string, options: Partial<PostgresOpenOptions> = {}): Promise<PostgresStore> {
  const store = await openPostgresStore({ url, poolSize: 3, log: quiet, ...QUIET_JOBS, ...options });
  t.after(() => store.close());
  return store;
}

/** Polls `check` until it holds, failing past `ms`; resolves with the time it took. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    assert.ok(performance.now() - started < ms, `${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Deletes a key by hand without firing the trigger: a change whose notification was lost. */
async function silentlyDelete(db: postgres.Sql, id: string): Promise<void> {
  await db.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    await tx`DELETE FROM api_keys WHERE id = ${id}`;
  });
}

test('stored keys: added, listed oldest first, touched never backwards, revoked once; another store reads the same', { skip: !server }, async (t) => {
  const { url, db } = await database(t);
  const store = await open(t, url);
  const keys = store.accessKeys;
  assert.deepEqual(await keys.keys(), []);
  const a = key('AAAAAAAA', { createdAt: T + 5 });
  const b = key('BBBBBBBB', { name: 'ShareX', expiresAt: T + 100 });
  const c = key('CCCCCCCC', { role: 'admin', domain: 'links.example' });
  for (const k of [a, b, c]) await keys.addKey(k);
  assert.deepEqual(await keys.keys(), [b, c, a], 'oldest first; the same second in the order added');
  const cached = keys.keys();
  assert.ok(Array.isArray(cached), 'read from memory once read');
  assert.equal(keys.keys(), cached, 'the same copy until something changes');

  await keys.touchKey(a.id, T + 60);
  assert.equal((await keys.keys()).find((k) => k.id === a.id)?.lastUsedAt, T + 60, 'this process sees a touch at once');
  await keys.touchKey(a.id, T + 30);
  await keys.touchKey('ZZZZZZZZ', T + 60);
  const [row] = await db<{ last_used_at: string }[]>`SELECT last_used_at FROM api_keys WHERE id = ${a.id}`;
  assert.equal(row?.last_used_at, String(T + 60), 'an instance whose clock is behind does not move it back');

  assert.equal(await keys.revokeKey(a.id), true);
  assert.equal(await keys.revokeKey(a.id), false, 'a key is revoked once');
  assert.equal(await keys.revokeKey('ZZZZZZZZ'), false);
  assert.deepEqual(ids(await keys.keys()), [b.id, c.id], 'this process sees a revoke at once');
  await keys.touchKey(a.id, T + 90);
  assert.equal((await db`SELECT id FROM api_keys WHERE id = ${a.id}`).length, 0, 'a touch does not bring a revoked key back');

  const other = await open(t, url);
  assert.deepEqual(await other.accessKeys.keys(), [b, c]);
  await assert.rejects(keys.addKey(key(b.id, { digest: 'f'.repeat(64) })), { code: '23505' }, 'ids are unique');
  await assert.rejects(keys.addKey(key('DDDDDDDD', { digest: b.digest })), { code: '23505' }, 'digests are unique');
  await assert.rejects(keys.addKey({ ...key('EEEEEEEE'), role: 'owner' as KeyRecord['role'] }), { code: '23514' }, 'the four roles only');
  assert.deepEqual(await keys.keys(), [b, c], 'a refused key is not listed');
});

test('three instances: a key added on one is read by the others, and a revoke on one is gone from the other two within a second, by its notification', {
  skip: !server,
}, async (t) => {
  const { url } = await database(t);
  // Stopped clocks: the copy never ages, so only the notification can tell the others.
  const stores = [await open(t, url, { now: () => T * 1000 }), await open(t, url, { now: () => T * 1000 }), await open(t, url, { now: () => T * 1000 })];
  const [one, two, three] = stores as [PostgresStore, PostgresStore, PostgresStore];
  for (const s of stores) assert.deepEqual(await s.accessKeys.keys(), []);
  const k = key('KKKKKKKK', { role: 'editor' });
  const other = key('OOOOOOOO');
  await one.accessKeys.addKey(k);
  await two.accessKeys.addKey(other);
  for (const s of stores) {
    await within(1000, 'the added keys are read', async () => ids(await s.accessKeys.keys()).join() === `${k.id},${other.id}`);
  }

  assert.equal(await two.accessKeys.revokeKey(k.id), true);
  const revoked = performance.now();
  for (const s of [one, three]) {
    await within(1000 - (performance.now() - revoked), 'the revoke is seen', async () => !ids(await s.accessKeys.keys()).includes(k.id));
  }
  assert.ok(performance.now() - revoked < 1000, 'both within a second of the revoke');
  for (const s of stores) assert.deepEqual(await s.accessKeys.keys(), [other]);
});

test('a notification lost: the keys are read again once the copy is a second old, and not before', { skip: !server }, async (t) => {
  const { url, db } = await database(t);
  let clock = T * 1000;
  const store = await open(t, url, { now: () => clock });
  const k = key('LLLLLLLL');
  await store.accessKeys.addKey(k);
  assert.deepEqual(await store.accessKeys.keys(), [k]);
  await silentlyDelete(db, k.id);
  clock += 999;
  assert.deepEqual(store.accessKeys.keys(), [k], '999 ms old: from memory');
  clock += 1;
  const read = store.accessKeys.keys();
  assert.ok(read instanceof Promise, 'a second old: read again');
  assert.equal(store.accessKeys.keys(), read, 'one read for every caller meanwhile');
  clock += 1000;
  const slow = store.accessKeys.keys();
  assert.notEqual(slow, read, 'but not for a caller a second after it began');
  assert.deepEqual(await read, []);
  assert.deepEqual(await slow, []);
  assert.deepEqual(store.accessKeys.keys(), [], 'and kept');
  clock -= 60_000;
  assert.ok(store.accessKeys.keys() instanceof Promise, 'a clock set back reads again rather than trust the copy');
});

test('the listening connection lost: once it listens again the keys are read again, and notifications come again', { skip: !server }, async (t) => {
  const { url, db } = await database(t);
  const store = await open(t, url, { now: () => T * 1000 });
  const k = key('MMMMMMMM');
  await store.accessKeys.addKey(k);
  assert.deepEqual(await store.accessKeys.keys(), [k]);
  await silentlyDelete(db, k.id);
  assert.deepEqual(store.accessKeys.keys(), [k], 'nothing told it yet');
  const cut = await db`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen %'`;
  assert.equal(cut.length, 1, "the store's one listening connection");
  await within(5000, 'read again once listening again', async () => (await store.accessKeys.keys()).length === 0);
  const later = key('NNNNNNNN');
  await db`INSERT INTO api_keys (id, name, role, domain, digest, created_at) VALUES (${later.id}, ${later.name}, 'creator', NULL, ${later.digest}, ${T})`;
  await within(1000, 'a change made by hand is notified', async () => ids(await store.accessKeys.keys()).includes(later.id));
});

test('the database away: a copy under a second old still answers, an older one is never served', { skip: !server }, async (t) => {
  const { url } = await database(t);
  let clock = T * 1000;
  const store = await open(t, url, { now: () => clock, timeoutMs: 1000 });
  const k = key('PPPPPPPP');
  await store.accessKeys.addKey(k);
  assert.deepEqual(await store.accessKeys.keys(), [k]);
  await server!.stop();
  try {
    assert.deepEqual(store.accessKeys.keys(), [k], 'a fresh copy needs no database');
    clock += 1000;
    await assert.rejects(async () => store.accessKeys.keys(), StoreUnavailableError);
    await assert.rejects(store.accessKeys.revokeKey(k.id), StoreUnavailableError);
  } finally {
    await server!.start();
  }
  await within(5000, 'read again once the database is back', async () => {
    try {
      return ids(await store.accessKeys.keys()).join() === k.id;
    } catch {
      return false;
    }
  });
});
