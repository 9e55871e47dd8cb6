/**
 * What the PostgreSQL store does beyond the contract's suite: migrations (idempotent, and safe when
 * instances start together), 8 KB URLs in the URL index, long pages and exports read in chunks from
 * one snapshot, expired rows deleted in the background by one instance at a time, exactness across
 * instances, and faults: a database that refuses or stops answering gives `StoreUnavailableError`
 * within 5 s, readiness says so, and the store recovers by itself.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type LinkRecord, type LinkStore } from '../../../src/store/link-store.ts';
import {
  DatabaseOpenError,
  describeDatabase,
  DriverMissingError,
  loadDriver,
  openPostgresStore,
  type PostgresOpenOptions,
} from '../../../src/store/postgres/connect.ts';
import { MIGRATIONS, migrate } from '../../../src/store/postgres/schema.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import { freezableProxy, ownPgServer, type PgServer, pgServer } from '../../support/pg.ts';

const quiet = createLogger('silent');
const server = await pgServer();
const T = 1_790_000_000;
const DAY = 86400;

const rec = (code: string, url = `https://example.com/${code}`, createdAt = T, retentionDays = 0, maxVisits: number | null = null): LinkRecord => ({
  code,
  url,
  createdAt,
  retentionDays,
  visits: 0,
  untracked: 0,
  maxVisits,
});

/** A store on a fresh database, closed after the test. */
async function freshStore(
  t: { after: (fn: () => Promise<void>) => void },
  options: Partial<PostgresOpenOptions> = {},
  on: PgServer = server!,
): Promise<{ store: PostgresStore; url: string }> {
  const url = await on.createDatabase();
  const store = await openPostgresStore({ url, poolSize: 10, log: quiet, ...options });
  t.after(async () => {
    await store.close();
    await on.dropDatabase(url);
  });
  return { store, url };
}

async function codesOf(store: LinkStore, query: { limit?: number; offset?: number; now?: number; q?: string } = {}): Promise<string[]> {
  const page = await store.list({ offset: 0, now: T, ...query });
  try {
    return (await page.slice(0, page.count)).map((r) => r.code);
  } finally {
    page.release();
  }
}

/**
 * The bound of a call in the fault tests: not the default 4 s, which leaves 1 s of the 5 s the
 * answer may take (docs/postgres.md, "Faults") to a loaded machine, but 1 s, which leaves 4.
 */
const FAULT_TIMEOUT_MS = 1_000;

/** Awaits `p`, which must reject with the store's `StoreUnavailableError` within 5 s. */
async function unavailableWithin5s(label: string, p: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  await assert.rejects(p(), (err: unknown) => {
    assert.ok(err instanceof StoreUnavailableError, `${label}: ${String(err)}`);
    assert.equal(err.message, 'database unavailable', label);
    return true;
  });
  assert.ok(Date.now() - started < 5000, `${label}: answered within 5 s`);
}

async function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`never: ${what}`);
}

test('migrations are recorded and run once; five pools migrating one database at once apply each exactly once', { skip: !server }, async (t) => {
  const url = await server!.createDatabase();
  const pools = Array.from({ length: 5 }, () => postgres(url, { max: 1, onnotice: () => undefined }));
  t.after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await server!.dropDatabase(url);
  });
  const applied = await Promise.all(pools.map((p) => migrate(p)));
  const versions = MIGRATIONS.map((m) => m.version);
  assert.deepEqual(applied.flat().sort(), versions, 'every migration applied once, by whichever pool came first');
  assert.equal(applied.filter((a) => a.length > 0).length, 1);
  assert.deepEqual(await migrate(pools[0]!), [], 'a second run finds nothing to do');
  const recorded = await pools[0]!`SELECT version, name FROM schema_migrations ORDER BY version`;
  assert.deepEqual(
    recorded.map((r) => [r['version'], r['name']]),
    MIGRATIONS.map((m) => [m.version, m.name]),
  );
  // A store opens on the migrated database and works.
  const store = await openPostgresStore({ url, poolSize: 2, log: quiet });
  t.after(() => store.close());
  assert.equal(await store.insert(rec('mig001'), T), true);
  assert.equal((await store.get('mig001', T))?.url, 'https://example.com/mig001');
});

test('the schema: a hash index on url, visit_count in no index, newest first by an identity sequence', { skip: !server }, async (t) => {
  const { url } = await freshStore(t);
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(() => sql.end());
  const indexes = await sql<{ indexname: string; indexdef: string }[]>`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'links' ORDER BY indexname`;
  const defs = new Map(indexes.map((i) => [i.indexname, i.indexdef]));
  assert.match(defs.get('links_url') ?? '', /USING hash \(url\)/);
  assert.match(defs.get('links_seq') ?? '', /UNIQUE INDEX .* USING btree \(seq\)/);
  assert.match(defs.get('links_pkey') ?? '', /USING btree \(code\)/);
  for (const def of defs.values()) assert.doesNotMatch(def, /visit_count/, 'a visit is a HOT update: no index holds the count');
  const [seq] = await sql`SELECT is_identity, identity_generation FROM information_schema.columns WHERE table_name = 'links' AND column_name = 'seq'`;
  assert.deepEqual({ ...seq }, { is_identity: 'YES', identity_generation: 'ALWAYS' });
});

test('a URL of 8,192 characters is stored, indexed and found by newestByUrl', { skip: !server }, async (t) => {
  const { store } = await freshStore(t);
  // Random text does not compress: a btree on url would refuse this row (an entry must fit a third of a page).
  const long = `https://example.com/${randomBytes(6200).toString('base64url')}`.slice(0, 8192);
  assert.equal(long.length, 8192);
  assert.equal(await store.insert(rec('long01', long), T), true);
  assert.equal(await store.insert(rec('long02', long), T), true);
  assert.equal((await store.newestByUrl(long, T))?.code, 'long02');
  assert.equal(await store.newestByUrl(long.slice(0, -1), T), undefined);
  assert.deepEqual(await store.countVisit('long01', () => T, true), { kind: 'found', url: long, limited: false });
});

test('a long page is one snapshot read in chunks: in order, out of order, and whatever is written meanwhile', { skip: !server }, async (t) => {
  const { store } = await freshStore(t, { chunk: 5 });
  const codes = Array.from({ length: 23 }, (_, i) => `chunk${String(i).padStart(2, '0')}`);
  for (const code of codes) assert.equal(await store.insert(rec(code), T), true);
  const newest = [...codes].reverse();
  const page = await store.list({ offset: 2, now: T });
  try {
    assert.deepEqual({ total: page.total, count: page.count }, { total: 23, count: 21 });
    // Writes after the page was taken change nothing in it.
    assert.equal(await store.delete('chunk10', T), true);
    assert.equal(await store.insert(rec('chunk99'), T), true);
    await store.update('chunk05', { url: 'https://example.com/changed' }, T);
    const read: string[] = [];
    for (let from = 0; from < page.count; from += 3) read.push(...(await page.slice(from, from + 3)).map((r) => r.code));
    assert.deepEqual(read, newest.slice(2));
    // Backwards, and a slice past a chunk's end.
    assert.deepEqual(
      (await page.slice(1, 4)).map((r) => r.code),
      newest.slice(3, 6),
    );
    assert.deepEqual(
      (await page.slice(12, 20)).map((r) => r.code),
      newest.slice(14, 22),
    );
    assert.equal((await page.slice(0, 21)).find((r) => r.code === 'chunk05')?.url, 'https://example.com/chunk05');
    assert.deepEqual(await page.slice(21, 30), []);
  } finally {
    page.release();
    page.release();
  }
  const after = await codesOf(store);
  assert.equal(after[0], 'chunk99');
  assert.ok(!after.includes('chunk10'));
  // A filtered long page, and the export, in chunks as well.
  assert.deepEqual(await codesOf(store, { q: 'CHUNK1' }), ['chunk19', 'chunk18', 'chunk17', 'chunk16', 'chunk15', 'chunk14', 'chunk13', 'chunk12', 'chunk11']);
  const exported: string[] = [];
  for await (const r of store.exportAll(T)) exported.push(r.code);
  assert.deepEqual(exported, [...codes.filter((c) => c !== 'chunk10'), 'chunk99']);
});

test('expired links are deleted in the background, by one instance at a time; count follows', { skip: !server }, async (t) => {
  const { store, url } = await freshStore(t);
  const other = await openPostgresStore({ url, poolSize: 2, log: quiet });
  t.after(() => other.close());
  for (let i = 0; i < 30; i++) await store.insert(rec(`old${String(i).padStart(3, '0')}`, undefined, T - 2 * DAY, 1), T - 2 * DAY);
  await store.insert(rec('keep01', undefined, T - 2 * DAY, 3), T);
  await store.insert(rec('ever01', undefined, T - 2 * DAY, 0), T);
  assert.equal(store.count, 32, 'expired links are held until deleted');
  // Both instances at once, in batches of 7: every expired link deleted exactly once.
  const [a, b] = await Promise.all([store.reapExpired(T, 7), other.reapExpired(T, 7)]);
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(() => sql.end());
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM links`) as unknown as [{ n: number }];
  assert.equal(n, 2);
  assert.equal(a + b, 30, 'one instance reaps, the other skips, or they share the work: none twice');
  assert.equal(store.count + other.count, 2, 'each instance subtracts what it deleted');
  assert.deepEqual(await codesOf(store), ['ever01', 'keep01']);
  // An expired link whose code was taken again is not the new link.
  assert.deepEqual(await store.countVisit('old000', () => T, true), { kind: 'missing' }, 'once deleted, an expired code is unknown');
});

test('an expired link gives its code to exactly one of many concurrent inserts', { skip: !server }, async (t) => {
  const { store } = await freshStore(t);
  assert.equal(await store.insert(rec('taken1', 'https://example.com/old', T - 2 * DAY, 1), T - 2 * DAY), true);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.insert(rec('taken1', `https://example.com/${i}`), T)));
  assert.equal(results.filter(Boolean).length, 1);
  assert.equal((await store.get('taken1', T))?.url, `https://example.com/${results.indexOf(true)}`);
  assert.equal(store.count, 1, 'the expired row was replaced, not added to');
});

test('inserts asked together are stored in the order asked (an import keeps file order), a repeated code losing', { skip: !server }, async (t) => {
  const { store } = await freshStore(t);
  const codes = Array.from({ length: 1200 }, (_, i) => `ord${String(i).padStart(4, '0')}`);
  const results = await Promise.all([...codes.map((code) => store.insert(rec(code), T)), store.insert(rec('ord0007', 'https://example.com/dup'), T)]);
  assert.equal(results.filter(Boolean).length, 1200);
  assert.equal(results.at(-1), false, 'the code was taken by the earlier insert');
  assert.deepEqual(await codesOf(store), [...codes].reverse());
  assert.equal((await store.get('ord0007', T))?.url, 'https://example.com/ord0007');
  assert.equal(store.count, 1200);
});

test('two instances over one database: a visit limit and deletes stay exact across them', { skip: !server }, async (t) => {
  const { store, url } = await freshStore(t);
  const other = await openPostgresStore({ url, poolSize: 10, log: quiet });
  t.after(() => other.close());
  await store.insert(rec('shared', 'https://example.com/shared', T, 0, 20), T);
  const visits = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? store : other).countVisit('shared', () => T, true)));
  assert.equal(visits.filter((d) => d.kind === 'found').length, 20);
  assert.equal((await other.get('shared', T))?.visits, 20, 'what one instance wrote, the other reads at once');
  const deletes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? store : other).delete('shared', T)));
  assert.equal(deletes.filter(Boolean).length, 1);
});

test('opening: a missing driver names the fix; an unreachable database is a DatabaseOpenError without the password', { skip: !server }, async () => {
  await assert.rejects(loadDriver('postgres-not-installed-here'), (err: unknown) => {
    assert.ok(err instanceof DriverMissingError);
    assert.equal(err.message, 'DATABASE_URL is set but the PostgreSQL driver is not installed: run `npm install postgres-not-installed-here`');
    return true;
  });
  await assert.rejects(openPostgresStore({ url: 'postgres://u:secret@127.0.0.1:1/links', poolSize: 1, log: quiet }), (err: unknown) => {
    assert.ok(err instanceof DatabaseOpenError);
    assert.equal(err.message, 'cannot reach the database links on 127.0.0.1:1: database unavailable (ECONNREFUSED)');
    return true;
  });
  assert.deepEqual(describeDatabase('postgres://app:pw@db.example:5433/links?sslmode=require'), { host: 'db.example:5433', database: 'links' });
  assert.deepEqual(describeDatabase('postgresql:///links?host=/run/postgresql'), { host: '/run/postgresql', database: 'links' });
});

test('a database that stops answering: every call fails as unavailable within 5 s, readiness says so, and it recovers by itself', {
  skip: !server,
}, async (t) => {
  const url = await server!.createDatabase();
  t.after(() => server!.dropDatabase(url));
  const proxy = await freezableProxy(url);
  const store = await openPostgresStore({ url: proxy.url, poolSize: 4, log: quiet, readyCheckMs: 100, timeoutMs: FAULT_TIMEOUT_MS });
  t.after(() => store.close());
  await store.insert(rec('frozen'), T);
  proxy.freeze();
  await Promise.all([
    unavailableWithin5s('get', () => store.get('frozen', T)),
    unavailableWithin5s('insert', () => store.insert(rec('never1'), T)),
    unavailableWithin5s('visit', () => store.countVisit('frozen', () => T, true)),
    unavailableWithin5s('list', () => store.list({ offset: 0, now: T })),
  ]);
  assert.equal(store.ready(), 'database unavailable');
  proxy.thaw();
  await eventually('ready again', () => store.ready() === undefined);
  assert.equal((await store.get('frozen', T))?.code, 'frozen');
  assert.equal(await store.insert(rec('after1'), T), true);
  assert.equal((await store.get('after1', T))?.url, 'https://example.com/after1');
});

test('a statement past its timeout while new connections fail: unavailable, and no promise left unhandled', { skip: !server }, async (t) => {
  const url = await server!.createDatabase();
  t.after(() => server!.dropDatabase(url));
  const proxy = await freezableProxy(url);
  const store = await openPostgresStore({ url: proxy.url, poolSize: 1, log: quiet, timeoutMs: 300 });
  t.after(() => store.close());
  await store.insert(rec('sent1'), T);
  const unhandled: unknown[] = [];
  const seen = (err: unknown): void => void unhandled.push(err);
  process.on('unhandledRejection', seen);
  t.after(() => void process.off('unhandledRejection', seen));
  // The statement goes out on the one connection and hangs there; a cancel would need a new
  // connection, and that is refused: an unhandled rejection would end a server process.
  proxy.freeze();
  proxy.refuseNew();
  await assert.rejects(store.get('sent1', T), (err: unknown) => err instanceof StoreUnavailableError && err.message === 'database unavailable');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(unhandled, []);
});

test('a stopped database: every operation is StoreUnavailableError within 5 s, ready() says why, and the pool reconnects once it is back', {
  skip: !server,
}, async (t) => {
  const { server: own, after } = await ownPgServer(t);
  const { store } = await freshStore({ after }, { readyCheckMs: 100, timeoutMs: FAULT_TIMEOUT_MS }, own);
  await store.insert(rec('before'), T);
  assert.equal(store.ready(), undefined);
  await own.stop();
  await unavailableWithin5s('insert', () => store.insert(rec('during'), T));
  await unavailableWithin5s('get', () => store.get('before', T));
  await unavailableWithin5s('newestByUrl', () => store.newestByUrl('https://example.com/before', T));
  await unavailableWithin5s('GET visit', () => store.countVisit('before', () => T, true));
  await unavailableWithin5s('HEAD visit', () => store.countVisit('before', () => T, false));
  await unavailableWithin5s('delete', () => store.delete('before', T));
  await unavailableWithin5s('update', () => store.update('before', { url: 'https://example.com/x' }, T));
  await unavailableWithin5s('page', () => store.list({ offset: 0, limit: 10, now: T }));
  await unavailableWithin5s('whole list', () => store.list({ offset: 0, now: T }));
  await unavailableWithin5s('export', async () => {
    for await (const r of store.exportAll(T)) void r;
  });
  await eventually('not ready', () => store.ready() === 'database unavailable');
  await own.start();
  await eventually('ready again by itself', () => store.ready() === undefined);
  assert.deepEqual(await store.get('before', T), rec('before'));
  assert.equal(await store.get('during', T), undefined, 'the failed insert wrote nothing');
  assert.equal(await store.insert(rec('after1'), T), true);
  assert.deepEqual(await codesOf(store), ['after1', 'before']);
});
