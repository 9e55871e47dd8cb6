/**
 * The invariant of visit events under `kill -9` on PostgreSQL with several instances
 * (docs/analytics.md; docs/scale-out.md): three real server processes over one database behind the
 * round-robin proxy, the mix of `support/event-load.ts` on all three, and a kill at a seeded
 * random moment of each instance in turn (replaced by a fresh process). Afterwards, by SQL over
 * the database: for every link, its events (rows of `visits` naming its `seq`) +
 * `untracked_visits` = `visit_count`; no event without its link; every acknowledged 302 counted
 * (the database stayed up, so even the asynchronously committed visits of links without a limit);
 * no count above the GETs sent.
 *
 * Then the database itself is killed (every process, `kill -9`) under the same load, with the WAL
 * writer held back so that asynchronously committed visits are really lost: a count and its event
 * are lost together, and every acknowledged limited 302 (committed synchronously) survives.
 * A failure names its seed; `EVENTS_CRASH_SEED=<n>` replays the kill moments and the load's choices.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { prng } from '../support/crash-harness.ts';
import { EventLoad, LOAD_KEY, REFERRER_HOSTS, type LoadTotals } from '../support/event-load.ts';
import { request } from '../support/helpers.ts';
import { startInstances, type Instances } from '../support/instances.ts';
import { pgServer } from '../support/pg.ts';

const server = await pgServer(undefined, { own: true });
const skip = server === undefined ? 'PostgreSQL is not installed' : false;
const WORKERS = 8;
/** Requests answered before each kill, however slow the machine: the kill waits for the later of this and its moment. */
const LEAST_ANSWERED = 250;

interface LinkRow {
  code: string;
  url: string;
  max_visits: number | null;
  visit_count: number;
  untracked_visits: number;
  events: number;
  bot_events: number;
}

/** Every link with its counts and its events, in one snapshot; and what no link may have. */
async function readDatabase(
  sql: postgres.Sql,
): Promise<Map<string, { url: string; maxVisits: number | null; visits: number; untracked: number; events: number; botEvents: number }>> {
  const [rows, orphans, referrers, countries] = await sql.begin('ISOLATION LEVEL REPEATABLE READ', async (tx) => [
    await tx<LinkRow[]>`
      SELECT l.code, l.url, l.max_visits, l.visit_count::int AS visit_count, l.untracked_visits::int AS untracked_visits,
        count(v.link_seq)::int AS events, (count(v.link_seq) FILTER (WHERE v.bot))::int AS bot_events
      FROM links l LEFT JOIN visits v ON v.link_seq = l.seq GROUP BY l.code`,
    await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM visits v WHERE NOT EXISTS (SELECT 1 FROM links l WHERE l.seq = v.link_seq)`,
    await tx<{ referrer: string | null }[]>`SELECT DISTINCT referrer FROM visits`,
    await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM visits WHERE country IS NOT NULL`,
  ]);
  assert.equal(orphans[0]!.n, 0, 'a deleted link takes its events with it');
  const hosts = new Set<string | null>([null, ...REFERRER_HOSTS]);
  for (const { referrer } of referrers) assert.ok(hosts.has(referrer), `an event with referrer ${referrer}`);
  assert.equal(countries[0]!.n, 0, 'no country without a country database');
  return new Map(
    rows.map((r) => [
      r.code,
      { url: r.url, maxVisits: r.max_visits, visits: r.visit_count, untracked: r.untracked_visits, events: r.events, botEvents: r.bot_events },
    ]),
  );
}

/**
 * Settles the load's view with the database and checks every live link; `windowMs` as in
 * `EventLoad.check` (0: every acknowledged visit must be there). Then a checkpoint, so that what was
 * read is durable and later rounds may count on it.
 */
async function checkRound(t: TestContext, sql: postgres.Sql, load: EventLoad, round: number, windowMs: number, done: LoadTotals, what: string): Promise<void> {
  const stored = await readDatabase(sql);
  load.settle(round, stored);
  // Acknowledged visits of links without a limit that a crash of the database took (allowed: they commit asynchronously).
  let lost = 0;
  for (const link of load.present()) {
    const got = stored.get(link.code)!;
    const broken = load.check(link, got, performance.now(), windowMs);
    if (broken) throw load.fail(round, broken, what);
    lost += Math.max(0, link.floor + link.unlimitedAcks.length - got.visits);
    load.counted(link, got.visits);
  }
  await sql`CHECKPOINT`;
  const events = [...stored.values()].reduce((n, l) => n + l.events, 0);
  t.diagnostic(`round ${round}: ${what}; ${JSON.stringify(done)}; ${stored.size} links, ${events} events; ${lost} unlimited 302s not counted`);
}

function seedOf(): number {
  const fixed = process.env['EVENTS_CRASH_SEED'];
  return fixed === undefined ? randomInt(0, 2 ** 31 - 1) : Number(fixed);
}

const gone = (pid: string): boolean => !existsSync(`/proc/${pid}`);

/** SIGKILL to every process of the test server's cluster, postmaster first; resolves once they are all gone. */
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
  // Until reaped, a dead postmaster still answers kill(pid, 0), and the new one would take its lock files for a live server's.
  while (!pids.every(gone)) await delay(10);
}

/** Until every instance is ready again (the readiness probe of each, through the proxy's turns), at most 20 s. */
async function serviceBack(d: Instances): Promise<void> {
  const until = Date.now() + 20_000;
  let ready = 0;
  while (ready < d.servers.length) {
    if (Date.now() > until) throw new Error('the instances were not ready within 20 s of the database');
    const r = await request(d.proxy.port, '/healthz?ready');
    ready = r.status === 200 ? ready + 1 : 0;
    if (r.status !== 200) await delay(100);
  }
}

test('three instances on PostgreSQL: kill -9 of each in turn, then of the database, under load: events + untracked = visit_count for every link', {
  skip,
  timeout: 150_000,
}, async (t) => {
  const seed = seedOf();
  const databaseUrl = await server!.createDatabase();
  const d = await startInstances({ after }, { databaseUrl, count: 3, env: { API_KEYS: LOAD_KEY, TRUST_PROXY: '1' } });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
  t.after(() => sql.end({ timeout: 1 }));
  const load = new EventLoad(seed);
  const rand = prng(seed);
  const totals = { visits: 0, limited302: 0, cut: 0 };
  const add = (done: LoadTotals): void => {
    totals.visits += done.visits;
    totals.limited302 += done.limited302;
    totals.cut += done.cut;
  };
  try {
    for (let i = 0; i < d.servers.length; i++) {
      const killAfter = 400 + Math.floor(rand() * 1200);
      // The kill, a while of the load on the two left (the proxy answers 502 in the dead one's turn), the replacement.
      const stop = (async () => {
        await Promise.all([delay(killAfter), load.answered(LEAST_ANSWERED)]);
        await d.kill(i);
        await delay(300);
        await d.replace(i);
        await delay(300);
      })();
      const done = await load.run(d.proxy.port, { seed, round: i + 1, workers: WORKERS, unanswered: [502] }, stop, () => true);
      add(done);
      await checkRound(t, sql, load, i + 1, 0, done, `instance ${i} killed after ${killAfter} ms`);
    }

    // The database crashes: unflushed asynchronous commits (visits of links without a limit) are lost.
    await server!.admin`ALTER SYSTEM SET wal_writer_delay = '10s'`;
    await server!.admin`SELECT pg_reload_conf()`;
    t.after(async () => {
      await server!.admin`ALTER SYSTEM RESET wal_writer_delay`;
      await server!.admin`SELECT pg_reload_conf()`;
    });
    const killAfter = 400 + Math.floor(rand() * 1200);
    const stop = (async () => {
      await Promise.all([delay(killAfter), load.answered(LEAST_ANSWERED)]);
      await crashDatabase(server!.dir);
      await server!.start();
      await serviceBack(d);
      await delay(300);
    })();
    // Answers while the database is away are 503 (an unknown outcome for a limited visit: counted or not).
    const done = await load.run(d.proxy.port, { seed, round: 4, workers: WORKERS, unanswered: [502, 503] }, stop, () => true);
    add(done);
    await checkRound(t, sql, load, 4, Number.MAX_SAFE_INTEGER, done, `database killed after ${killAfter} ms`);
  } catch (err) {
    t.diagnostic(`seed ${seed} (EVENTS_CRASH_SEED=${seed} replays it)`);
    throw err;
  }
  t.diagnostic(`seed ${seed}: ${JSON.stringify(totals)}`);
  assert.ok(totals.visits > 300 && totals.limited302 > 20 && totals.cut > 0, `a real load, cut by the kills: ${JSON.stringify(totals)}`);
  for (const s of d.servers) assert.equal(s.child.exitCode ?? s.child.signalCode, null, `an instance exited: ${s.stderr()}`);
});
