/**
 * The invariant of visit events under `kill -9` on the log store (docs/analytics.md, exact and
 * durable like the counts; docs/storage.md, format 3): a real server process under a mix of
 * redirects with every kind of header, creates with and without limits, deletes, codes taken
 * again, edits giving a limit (`support/event-load.ts`), killed at a seeded random moment (and no
 * sooner than a least number of requests is answered), then its data dir opened offline. For every
 * link: events + untracked_visits = visit_count (with `events` tracking and nothing imported,
 * untracked_visits is 0), no count above the GETs sent, no acknowledged limited 302 lost (nor an
 * unlimited one older than the count flush), no acknowledged create or delete undone, and the
 * events are the ones sent (referrer hosts, no country, bot events no more than bots sent). Then a restart, and the next round on the same data dir.
 *
 * The second test runs the same rounds on a child that compacts its log every few tens of
 * milliseconds, so kills land during compactions too (K/J lines, the lines copied after them).
 * A failure names its seed; `EVENTS_CRASH_SEED=<n>` replays the kill moments and every choice of
 * the load (the interleaving of requests still depends on timing).
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../src/log.ts';
import { LogLinkStore } from '../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import { prng } from '../support/crash-harness.ts';
import { EventLoad, LOAD_KEY, REFERRER_HOSTS } from '../support/event-load.ts';
import { request, serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { bundled, FAST_CLOCKS, fastClocksServer } from '../support/server-entry.ts';

const quiet = createLogger('silent');
/**
 * Unlimited visits answered this long before a kill must be counted: the flush of the servers
 * below, on the crash tests' faster clocks (`server-entry.ts`), and some slack.
 */
const FLUSH_WINDOW_MS = FAST_CLOCKS.visitFlushMs + 500;
const WORKERS = 8;
/** Requests answered in a round before its kill, however slow the machine (at full speed a round answers thousands). */
const LEAST_ANSWERED = 250;

function seedOf(): number {
  const fixed = process.env['EVENTS_CRASH_SEED'];
  return fixed === undefined ? randomInt(0, 2 ** 31 - 1) : Number(fixed);
}

interface StoredLink {
  url: string;
  maxVisits: number | null;
  visits: number;
  untracked: number;
  events: number;
  botEvents: number;
}

/**
 * Every live link of the data dir `dir`, read by the store itself (the process that wrote it is
 * dead, so its lock is stale): the record, and its events counted with `listVisits` over all time,
 * bots included. Every event is also checked against what the load sends.
 */
async function readOffline(dir: string, began: number): Promise<Map<string, StoredLink>> {
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet }));
  const now = Math.floor(Date.now() / 1000);
  const allTime = { from: 0, to: now + 86_400 };
  const hosts = new Set<string | null>([null, ...REFERRER_HOSTS]);
  const links = new Map<string, StoredLink>();
  try {
    for await (const record of store.exportAll(now)) {
      const all = store.listVisits(record.code, { ...allTime, bots: 'include' }, 1000, 0, now)!;
      const bots = store.listVisits(record.code, { ...allTime, bots: 'only' }, 1, 0, now)!;
      for (const e of all.events) {
        assert.ok(hosts.has(e.referrer), `${record.code}: an event with referrer ${e.referrer}`);
        assert.equal(e.country, null, `${record.code}: a country without a country database`);
        assert.ok(e.time >= began - 1 && e.time <= now + 1, `${record.code}: an event at ${e.time}, outside the run`);
      }
      links.set(record.code, {
        url: record.url,
        maxVisits: record.maxVisits,
        visits: record.visits,
        untracked: record.untracked,
        events: all.total,
        botEvents: bots.total,
      });
    }
  } finally {
    await store.close();
  }
  return links;
}

interface Rounds {
  rounds: number;
  /** Starts the process on the data dir. */
  launch(dir: string): Promise<ServerProcess>;
  /** Kill moments after the load starts, ms: [shortest, longest), or later, once `LEAST_ANSWERED` requests are. */
  killWithin: [number, number];
}

async function crashRounds(t: TestContext, { rounds, launch, killWithin }: Rounds): Promise<void> {
  const seed = seedOf();
  const dir = tempDir(t);
  const load = new EventLoad(seed);
  const began = Math.floor(Date.now() / 1000);
  let server: ServerProcess | undefined;
  t.after(() => server?.stop());
  const totals = { creates: 0, deletes: 0, edits: 0, visits: 0, limited302: 0, cut: 0, compactions: 0, links: 0, events: 0 };
  let counted = new Map<string, number>();
  try {
    for (let round = 1; round <= rounds; round++) {
      server = await launch(dir);
      // The restarted server replays the log as the offline read did.
      for (const [code, visits] of counted) {
        const r = await request(server.port, `/api/urls/${code}`);
        assert.equal(r.status, 200, `round ${round}: ${code}: ${r.body}`);
        assert.equal(
          (JSON.parse(r.body) as { visit_count: number }).visit_count,
          visits,
          `round ${round}: ${code}: the server counts what the offline read counted`,
        );
      }
      const live = server;
      const rand = prng((seed ^ Math.imul(round, 0x27d4eb2d)) >>> 0);
      const killAfter = killWithin[0] + Math.floor(rand() * (killWithin[1] - killWithin[0]));
      let killed = false;
      let killedAt = 0;
      const started = performance.now();
      const stop = Promise.all([delay(killAfter), load.answered(LEAST_ANSWERED)]).then(() => {
        killed = true;
        killedAt = performance.now();
        live.child.kill('SIGKILL');
      });
      const done = await load.run(live.port, { seed, round, workers: WORKERS }, stop, () => killed);
      await stop;
      assert.equal((await live.exited).signal, 'SIGKILL', `round ${round}: the server was killed, not ended: ${live.stderr()}`);
      totals.compactions += live.lines.filter((l) => l['msg'] === 'log compacted').length;
      for (const k of ['creates', 'deletes', 'edits', 'visits', 'limited302', 'cut'] as const) totals[k] += done[k];

      const stored = await readOffline(dir, began);
      load.settle(round, stored);
      counted = new Map();
      for (const link of load.present()) {
        const got = stored.get(link.code)!;
        const broken = load.check(link, got, killedAt, FLUSH_WINDOW_MS);
        if (broken) throw load.fail(round, broken, `killed after ${Math.round(killedAt - started)} ms (seeded ${killAfter})`);
        load.counted(link, got.visits);
        counted.set(link.code, got.visits);
      }
      totals.links = stored.size;
      totals.events = [...stored.values()].reduce((n, l) => n + l.events, 0);
      t.diagnostic(
        `round ${round}: killed after ${Math.round(killedAt - started)} ms (seeded ${killAfter}); ${JSON.stringify(done)}; ${stored.size} links, ${totals.events} events`,
      );
    }
  } catch (err) {
    t.diagnostic(`seed ${seed} (EVENTS_CRASH_SEED=${seed} replays it)`);
    throw err;
  }
  t.diagnostic(`seed ${seed}: ${JSON.stringify(totals)}`);
  // The load was a real one: links of every kind, visits counted under limits, kills cutting requests off.
  assert.ok(totals.visits > 300 && totals.limited302 > 20 && totals.deletes > 5 && totals.edits > 5, JSON.stringify(totals));
  // Fewer events than visits survive: a deleted link takes its events along.
  assert.ok(totals.events > 300, `events survived: ${totals.events}`);
}

const env = (dir: string): Record<string, string> => ({ DATA_DIR: dir, API_KEYS: LOAD_KEY, TRUST_PROXY: '1', FSYNC: 'always' });

test('log store: kill -9 of the server at random moments keeps events + untracked = visit_count for every link', { timeout: 90_000 }, async (t) => {
  const fast = fastClocksServer();
  await crashRounds(t, { rounds: 6, launch: (dir) => serverProcess({ ...env(dir), ...fast.env }, [fast.entry]), killWithin: [300, 1500] });
});

test('log store: kill -9 during compactions forced mid-run keeps the invariant too', { timeout: 90_000 }, async (t) => {
  let compactions = 0;
  await crashRounds(t, {
    rounds: 5,
    launch: async (dir) => {
      const clocks = { COMPACT_EVERY_MS: '40', FAST_VISIT_FLUSH_MS: String(FAST_CLOCKS.visitFlushMs) };
      const s = await serverProcess({ ...env(dir), ...clocks }, [bundled('test/support/compacting-server.ts', 'mjs')]);
      void s.exited.then(() => (compactions += s.lines.filter((l) => l['msg'] === 'log compacted').length));
      return s;
    },
    killWithin: [300, 1200],
  });
  assert.ok(compactions >= 5, `the log was compacted during the load: ${compactions} times`);
});
