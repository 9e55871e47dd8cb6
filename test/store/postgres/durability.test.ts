/**
 * Commit modes of the PostgreSQL store (docs/postgres.md, durability), seen in the write-ahead log:
 * a create and the counted visit of a link with a visit limit are flushed before they are answered;
 * the counted visit of a link without one commits asynchronously (the WAL writer flushes it later),
 * and the relaxed setting ends with that statement. A visit with its event commits the same way.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { pgServer } from '../../support/pg.ts';

const server = await pgServer(undefined, { own: true });
const T = 1_790_000_000;
const rec = (code: string, maxVisits: number | null): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits,
});

test('creates and limited visits are flushed before the answer; unlimited visits commit asynchronously', { skip: !server, timeout: 60_000 }, async (t) => {
  const admin = server!.admin;
  // The WAL writer then flushes an asynchronous commit only after 10 s: long enough to see it pending.
  await admin`ALTER SYSTEM SET wal_writer_delay = '10s'`;
  await admin`SELECT pg_reload_conf()`;
  const url = await server!.createDatabase();
  const store = await openPostgresStore({ url, poolSize: 1, log: createLogger('silent') });
  t.after(() => store.close());
  /** Flushes everything written so far (a synchronous commit of its own), then the WAL's end. */
  const settled = async (): Promise<bigint> => {
    await admin`SELECT txid_current()`;
    const [row] = await admin<{ lsn: string }[]>`SELECT (pg_current_wal_insert_lsn() - '0/0')::text AS lsn`;
    return BigInt(row!.lsn);
  };
  const flushed = async (): Promise<bigint> => {
    const [row] = await admin<{ lsn: string }[]>`SELECT (pg_current_wal_flush_lsn() - '0/0')::text AS lsn`;
    return BigInt(row!.lsn);
  };

  let before = await settled();
  assert.equal(await store.insert(rec('limit1', 100), T), true);
  assert.ok((await flushed()) > before, 'a create is flushed before it is acknowledged');
  await store.insert(rec('plain1', null), T);

  before = await settled();
  assert.equal((await store.countVisit('limit1', () => T, true)).kind, 'found');
  assert.ok((await flushed()) > before, 'a limited visit is flushed before the redirect');

  // An unlimited visit leaves its commit record unflushed for now (a few tries: any other
  // synchronous commit in the cluster would flush it along).
  let pending = false;
  for (let i = 0; i < 5 && !pending; i++) {
    before = await settled();
    assert.equal((await store.countVisit('plain1', () => T, true)).kind, 'found');
    pending = (await flushed()) <= before;
  }
  assert.ok(pending, 'an unlimited visit commits asynchronously');
  assert.ok(((await store.get('plain1', T))?.visits ?? 0) >= 1, 'and it is counted');

  // The same with an event, inserted by the counting statement itself.
  const event = () => ({ time: T, referrer: null, country: null, browser: null, os: null, device: null, bot: false, visitor: 1 });
  before = await settled();
  assert.equal((await store.countVisit('limit1', () => T, true, event)).kind, 'found');
  assert.ok((await flushed()) > before, 'a limited visit and its event are flushed before the redirect');
  pending = false;
  for (let i = 0; i < 5 && !pending; i++) {
    before = await settled();
    assert.equal((await store.countVisit('plain1', () => T, true, event)).kind, 'found');
    pending = (await flushed()) <= before;
  }
  assert.ok(pending, 'an unlimited visit and its event commit asynchronously');

  // The relaxed setting lasted one statement: the same connection (a pool of one) commits the next create synchronously.
  before = await settled();
  assert.equal(await store.insert(rec('after1', null), T), true);
  assert.ok((await flushed()) > before, 'the connection is back to synchronous commits');
});
