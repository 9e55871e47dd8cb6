/**
 * Visit events on PostgreSQL: the store passes the events conformance suite (a fresh database per
 * test), and what only this store does: the months of `visits` as partitions, the count and its
 * event in one statement, retention moving what it removes to `untracked_visits`, the migration of
 * a database from before events, and the daily key shared by instances.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type LinkRecord } from '../../../src/store/link-store.ts';
import { openPostgresStore, type PostgresOpenOptions } from '../../../src/store/postgres/connect.ts';
import { monthsAhead, partitionName } from '../../../src/store/postgres/partitions.ts';
import { MIGRATIONS, migrate } from '../../../src/store/postgres/schema.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { runEventConformance } from '../../support/event-conformance.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';
import { bareOrphan } from '../../support/records.ts';

const quiet = createLogger('silent');
const server = await pgServer();

runEventConformance(
  'PostgreSQL store',
  async () => {
    const url = await server!.createDatabase();
    return {
      // A small chunk: the export's chunks are read on from one another.
      open: () => openPostgresStore({ url, poolSize: 10, log: quiet, chunk: 100 }),
      destroy: () => server!.dropDatabase(url),
    };
  },
  server ? {} : { skip: NO_POSTGRES },
);

const T = 1_790_000_000; // 2026-09-21
const DAY = 86400;

const rec = (code: string, over: Partial<LinkRecord> = {}): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T - 400 * DAY,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits: null,
  ...over,
});

const ev = (time: number, over: Partial<VisitEvent> = {}): VisitEvent => ({
  time,
  referrer: null,
  country: null,
  browser: null,
  os: null,
  device: null,
  bot: false,
  visitor: null,
  ...over,
});

/** A store on a fresh database whose clock reads `T` (no background rounds), and a direct connection to it. */
async function setup(t: TestContext, options: Partial<PostgresOpenOptions> = {}): Promise<{ store: PostgresStore; db: postgres.Sql; url: string }> {
  const url = await server!.createDatabase();
  const store = await openPostgresStore({
    url,
    poolSize: 4,
    log: quiet,
    now: () => T * 1000,
    readyCheckMs: 0,
    reapIntervalMs: 0,
    countRefreshMs: 0,
    visitJobsMs: 0,
    ...options,
  });
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(async () => {
    await store.close();
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  return { store, db, url };
}

async function partitionsOf(db: postgres.Sql): Promise<[string, string][]> {
  const rows = await db<{ name: string; bound: string }[]>`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'visits'::regclass ORDER BY c.relname`;
  return rows.map((r) => [r.name, r.bound]);
}

async function counted(store: PostgresStore, code: string, event: VisitEvent): Promise<void> {
  assert.equal(
    (
      await store.countVisit(
        code,
        () => T,
        true,
        () => event,
      )
    ).kind,
    'found',
  );
}

async function eventsIn(db: postgres.Sql): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM visits`;
  return row!.n;
}

test('the months of visits: this one and three ahead at start-up, the DEFAULT partition, more as time goes, every index on each', {
  skip: !server,
}, async (t) => {
  const { store, db } = await setup(t);
  const month = (m: string, from: number, to: number): [string, string] => [`visits_y${m}`, `FOR VALUES FROM ('${from}') TO ('${to}')`];
  const utc = (y: number, m: number): number => Date.UTC(y, m - 1, 1) / 1000;
  assert.deepEqual(await partitionsOf(db), [
    ['visits_default', 'DEFAULT'],
    month('2026m09', utc(2026, 9), utc(2026, 10)),
    month('2026m10', utc(2026, 10), utc(2026, 11)),
    month('2026m11', utc(2026, 11), utc(2026, 12)),
    month('2026m12', utc(2026, 12), utc(2027, 1)),
  ]);
  // The job, two months on: the new months only, across the year's end; a second round finds nothing to do.
  assert.deepEqual(await store.ensurePartitions(T + 61 * DAY), ['visits_y2027m01', 'visits_y2027m02']);
  assert.deepEqual(await store.ensurePartitions(T + 61 * DAY), []);
  assert.deepEqual(monthsAhead(utc(2026, 12) - 1).map(partitionName), ['visits_y2026m11', 'visits_y2026m12', 'visits_y2027m01', 'visits_y2027m02']);
  // An event goes to its month, one from before every month to the DEFAULT partition.
  await store.insert(rec('part01'), T);
  await counted(store, 'part01', ev(T));
  await counted(store, 'part01', ev(utc(2027, 2) + 5));
  await counted(store, 'part01', ev(utc(2020, 1)));
  const placed = await db<{ part: string }[]>`SELECT tableoid::regclass::text AS part FROM visits ORDER BY time`;
  assert.deepEqual(
    placed.map((r) => r.part),
    ['visits_default', 'visits_y2026m09', 'visits_y2027m02'],
  );
  const indexes = await db<
    { t: string; def: string }[]
  >`SELECT tablename AS t, indexdef AS def FROM pg_indexes WHERE tablename = 'visits_y2027m02' ORDER BY indexname`;
  assert.deepEqual(
    indexes.map((i) => i.def.replace(/^.* USING /, '')),
    ['btree (link_seq, "time")', 'btree ("time")'],
  );
  // A month whose events already sit in the DEFAULT partition cannot be made: they stay there, found by every read.
  await counted(store, 'part01', ev(utc(2027, 3) + 1));
  assert.deepEqual(await store.ensurePartitions(T + 92 * DAY), []);
  assert.equal((await store.listVisits('part01', { from: 0, to: 2 ** 32, bots: 'include' }, 10, 0, T))?.total, 4);
});

test('the count and its event are one statement: an insert that fails leaves no count, and a visit without an event is untracked', {
  skip: !server,
}, async (t) => {
  const { store, db } = await setup(t);
  await store.insert(rec('atom01'), T);
  await store.insert(rec('atom02', { maxVisits: 1 }), T);
  await db.unsafe(`
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
    CREATE TRIGGER disk_full BEFORE INSERT ON visits FOR EACH ROW EXECUTE FUNCTION refuse();`);
  await assert.rejects(
    store.countVisit(
      'atom01',
      () => T,
      true,
      () => ev(T),
    ),
    StoreUnavailableError,
  );
  await assert.rejects(
    store.countVisit(
      'atom02',
      () => T,
      true,
      () => ev(T),
    ),
    StoreUnavailableError,
  );
  const row = async (code: string): Promise<[number, number]> => {
    const [r] = await db<{ v: string; u: string }[]>`SELECT visit_count AS v, untracked_visits AS u FROM links WHERE code = ${code}`;
    return [Number(r!.v), Number(r!.u)];
  };
  assert.deepEqual(await row('atom01'), [0, 0], 'no count without its event');
  assert.deepEqual(await row('atom02'), [0, 0], 'the limited visit given back');
  // Without an event the insert is not reached: counted, and untracked.
  assert.equal((await store.countVisit('atom01', () => T, true)).kind, 'found');
  assert.deepEqual(await row('atom01'), [1, 1]);
  await db`DROP TRIGGER disk_full ON visits`;
  await counted(store, 'atom02', ev(T));
  assert.deepEqual(await row('atom02'), [1, 0]);
  assert.equal(await eventsIn(db), 1);
});

test('a deleted, reaped or replaced link takes its events with it', { skip: !server }, async (t) => {
  const { store, db } = await setup(t);
  await store.insert(rec('gone01'), T);
  await store.insert(rec('gone02', { createdAt: T - 2 * DAY, retentionDays: 3 }), T);
  await store.insert(rec('gone03', { createdAt: T - 2 * DAY, retentionDays: 3 }), T);
  await store.insert(rec('kept01'), T);
  for (const code of ['gone01', 'gone02', 'gone03', 'kept01']) for (let i = 0; i < 3; i++) await counted(store, code, ev(T - i));
  assert.equal(await eventsIn(db), 12);
  assert.equal(await store.delete('gone01', T), true);
  assert.equal(await eventsIn(db), 9);
  // gone02 expired and taken by a new link; gone03 expired and reaped.
  assert.equal(await store.insert(rec('gone02', { createdAt: T + DAY }), T + DAY), true);
  assert.equal(await eventsIn(db), 6);
  assert.equal(await store.reapExpired(T + DAY), 1);
  assert.equal(await eventsIn(db), 3);
  assert.equal((await store.listVisits('kept01', { from: 0, to: 2 ** 32, bots: 'include' }, 10, 0, T))?.total, 3);
});

test('retention drops the months past it and deletes the rest of the boundary, adding what it removed to each link’s untracked visits', {
  skip: !server,
}, async (t) => {
  const { store, db } = await setup(t, { visitRetentionDays: 30 });
  // Months from June on, as if the store had run since then.
  await store.ensurePartitions(T - 100 * DAY);
  const utc = (y: number, m: number, d = 1): number => Date.UTC(y, m - 1, d) / 1000;
  await store.insert(rec('keep01', { visits: 2, untracked: 2 }), T);
  await store.insert(rec('keep02'), T);
  const times = [utc(2020, 1), utc(2026, 6, 10), utc(2026, 7, 3), utc(2026, 7, 30), utc(2026, 8, 5), utc(2026, 8, 28), utc(2026, 9, 20)];
  for (const time of times) await counted(store, 'keep01', ev(time));
  for (const time of [utc(2026, 7, 3), utc(2026, 9, 1)]) await counted(store, 'keep02', ev(time));
  const before = (await partitionsOf(db)).map(([name]) => name);
  assert.ok(before.includes('visits_y2026m06') && before.includes('visits_y2026m07'));
  // The cutoff is T − 30 days, 2026-08-22: June and July go whole, August in part, the DEFAULT partition's old event too.
  assert.equal(await store.applyRetention(T), 6);
  assert.deepEqual(
    (await partitionsOf(db)).map(([name]) => name),
    before.filter((name) => name !== 'visits_y2026m06' && name !== 'visits_y2026m07'),
  );
  const kept = async (code: string): Promise<number[]> =>
    ((await store.listVisits(code, { from: 0, to: 2 ** 32, bots: 'include' }, 10, 0, T))?.events ?? []).map((e) => e.time);
  assert.deepEqual(await kept('keep01'), [utc(2026, 9, 20), utc(2026, 8, 28)]);
  assert.deepEqual(await kept('keep02'), [utc(2026, 9, 1)]);
  assert.deepEqual([(await store.get('keep01', T))?.visits, (await store.get('keep01', T))?.untracked], [9, 7], 'events + untracked = visits');
  assert.deepEqual([(await store.get('keep02', T))?.visits, (await store.get('keep02', T))?.untracked], [2, 1]);
  assert.equal(await store.applyRetention(T), 0, 'nothing left to remove');
  // Orphan visits past the retention go too (they count in no link's figures).
  await Promise.all([utc(2026, 7, 3), utc(2026, 9, 1)].map((time) => store.orphans!.recordOrphan(bareOrphan(time))));
  await store.applyRetention(T);
  assert.deepEqual(
    (await store.orphans!.listOrphans(0, 2 ** 32, 'include', 10, 0)).visits.map((v) => v.time),
    [utc(2026, 9, 1)],
  );
  // Without a retention nothing is removed.
  const { store: forever } = await setup(t);
  await forever.insert(rec('old001'), T);
  await counted(forever, 'old001', ev(utc(2020, 1)));
  assert.equal(await forever.applyRetention(T + 1000 * DAY), 0);
});

test('a database from before events: its visits become untracked, and new visits record events', { skip: !server }, async (t) => {
  const url = await server!.createDatabase();
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(async () => {
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  assert.deepEqual(await migrate(db, MIGRATIONS.slice(0, 1)), [1]);
  await db`INSERT INTO links (code, url, created_at, retention_days, visit_count, max_visits) VALUES
    ('oldv01', 'https://example.com/a', ${T}, 0, 42, NULL), ('oldv02', 'https://example.com/b', ${T}, 0, 0, 3)`;
  const store = await openPostgresStore({ url, poolSize: 2, log: quiet, readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 });
  t.after(() => store.close());
  assert.deepEqual(
    [await store.get('oldv01', T), await store.get('oldv02', T)].map((r) => [r?.visits, r?.untracked]),
    [
      [42, 42],
      [0, 0],
    ],
  );
  await counted(store, 'oldv01', ev(T));
  const s = await store.visitStats('oldv01', { from: T - DAY, to: T + DAY, bots: 'exclude', edges: [T - DAY, T + DAY] }, T);
  assert.deepEqual([s?.visitCount, s?.untracked, s?.visits], [43, 42, 1]);
  assert.deepEqual(await migrate(db), [], 'the migrations are done once');
});

test('the daily key: one per day for every instance on the database, kept by each process, earlier days deleted; the table is unlogged', {
  skip: !server,
}, async (t) => {
  const { store, db, url } = await setup(t);
  const other = await openPostgresStore({ url, poolSize: 4, log: quiet, readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 });
  t.after(() => other.close());
  const day = Math.floor(T / DAY);
  const keys = await Promise.all([store.dailyKey(day), other.dailyKey(day), store.dailyKey(day), other.dailyKey(day)]);
  assert.equal(keys[0]!.length, 32);
  for (const key of keys) assert.deepEqual(key, keys[0]);
  // Asked once per process: a key removed from the table is still the process's key that day.
  await db`DELETE FROM visit_keys`;
  assert.deepEqual(await store.dailyKey(day), keys[0]);
  const next = await other.dailyKey(day + 1);
  assert.notDeepEqual(next, keys[0]);
  assert.deepEqual(await store.dailyKey(day + 1), next, 'the next day: one key for both');
  await db`INSERT INTO visit_keys (day, key) VALUES (${day - 5}, '\\x00')`;
  await store.dailyKey(day + 2);
  assert.deepEqual(
    (await db<{ day: number }[]>`SELECT day FROM visit_keys ORDER BY day`).map((r) => r.day),
    [day + 2],
  );
  const [table] = await db<{ p: string }[]>`SELECT relpersistence AS p FROM pg_class WHERE relname = 'visit_keys'`;
  assert.equal(table?.p, 'u');
});
