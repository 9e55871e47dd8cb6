/**
 * A counted visit of a link with a visit limit that PostgreSQL does not confirm (docs/postgres.md,
 * visit limits) is refused as unavailable (a 503) either way. A statement that failed (the database
 * refused it: a full disk; or it never reached the database) changed nothing: the visit is given
 * back. A lost commit acknowledgement (the connection dropped after the database committed) keeps
 * it used: the database has counted it, and so does every instance after.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type LinkRecord, type VisitDecision } from '../../../src/store/link-store.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import { cutProxy, type CutProxy } from '../../support/pg-cut-proxy.ts';
import { pgServer } from '../../support/pg.ts';

const server = await pgServer();
const T = 1_790_000_000;
const quiet = createLogger('silent');
const rec = (code: string): LinkRecord => ({ code, url: `https://example.com/${code}`, createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: 1 });

/** A store on a fresh database through a `cutProxy` (one connection, no background statements), and a direct connection for the test. */
async function setup(t: TestContext): Promise<{ store: PostgresStore; proxy: CutProxy; db: postgres.Sql }> {
  const url = await server!.createDatabase();
  const proxy = await cutProxy(url);
  const store = await openPostgresStore({ url: proxy.url, poolSize: 1, log: quiet, readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0 });
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(async () => {
    await store.close();
    await db.end({ timeout: 1 });
  });
  assert.equal(await store.insert(rec('once01'), T), true);
  return { store, proxy, db };
}

const visit = (store: PostgresStore): Promise<VisitDecision> => store.countVisit('once01', () => T, true);

async function stored(db: postgres.Sql): Promise<number> {
  const [row] = await db<{ visit_count: string }[]>`SELECT visit_count FROM links WHERE code = 'once01'`;
  return Number(row!.visit_count);
}

test('the database refuses the counting statement (disk full): 503, and the visit is given back', { skip: !server, timeout: 30_000 }, async (t) => {
  const { store, db } = await setup(t);
  await db.unsafe(`
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
    CREATE TRIGGER disk_full BEFORE UPDATE ON links FOR EACH ROW EXECUTE FUNCTION refuse();`);
  await assert.rejects(visit(store), StoreUnavailableError);
  assert.equal(await stored(db), 0);
  await db`DROP TRIGGER disk_full ON links`;
  assert.deepEqual(await visit(store), { kind: 'found', url: 'https://example.com/once01', limited: true });
  assert.deepEqual(await visit(store), { kind: 'limit_reached' });
  assert.equal(await stored(db), 1);
});

test('the connection drops before the statement reaches the database: 503, and the visit is given back', { skip: !server, timeout: 30_000 }, async (t) => {
  const { store, proxy, db } = await setup(t);
  proxy.cutRequest();
  await assert.rejects(visit(store), StoreUnavailableError);
  await proxy.cut();
  assert.equal(await stored(db), 0);
  assert.deepEqual(await visit(store), { kind: 'found', url: 'https://example.com/once01', limited: true });
  assert.deepEqual(await visit(store), { kind: 'limit_reached' });
});

test('the commit acknowledgement is lost (the connection drops after the commit): 503, and the visit stays used', {
  skip: !server,
  timeout: 30_000,
}, async (t) => {
  const { store, proxy, db } = await setup(t);
  proxy.cutReply();
  await assert.rejects(visit(store), StoreUnavailableError);
  await proxy.cut();
  assert.equal(await stored(db), 1, 'the database committed the visit');
  assert.deepEqual(await visit(store), { kind: 'limit_reached' });
  assert.equal(await stored(db), 1);
});
