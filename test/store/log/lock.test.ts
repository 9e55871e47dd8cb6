/**
 * The data-directory lock: what the file says and when it is stale (pure tables), the takeover
 * protocol under every interleaving a seeded scheduler finds (simulated processes stepping one
 * real directory), and the lock as the store and a second process meet it.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener } from '../../../src/app.ts';
import { createLogger } from '../../../src/log.ts';
import { currentPlace, encodeHolder, judge, LEASE_MS, parseLock, type Holder, type LockContent, type Place } from '../../../src/store/log/lease.ts';
import { acquireLock, LOCK_FILE, LockError, takeLock, type Contender, type Step, type Taken } from '../../../src/store/log/lock.ts';
import { deadPid, escapeRegExp, LogCapture, runCli, start, tempDir } from '../../support/helpers.ts';
import { prng } from '../../support/crash-harness.ts';

const quiet = createLogger('silent');
const here = currentPlace();

function holderOf(pid: number, place: Place = here, token = `t${pid}`): Holder {
  return { ...place, pid, token, since: '2026-01-01T00:00:00.000Z' };
}

/** Writes a lock file whose lease was last refreshed `ageMs` ago. */
function writeLock(dir: string, text: string, ageMs = 0): void {
  const path = join(dir, LOCK_FILE);
  writeFileSync(path, text);
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(path, at, at);
}

function lockJson(dir: string): { pid: number; host: string; token: string } {
  return JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number; host: string; token: string };
}

// ---- What the file says -------------------------------------------------------------------------

test('parseLock: a lease, a bare PID of an older version, and everything else unreadable', () => {
  const h = holderOf(42);
  const cases: [text: string, expected: LockContent][] = [
    [encodeHolder(h), { kind: 'lease', holder: h }],
    ['123\n', { kind: 'legacy', pid: 123 }],
    ['  77  ', { kind: 'legacy', pid: 77 }],
    ['', { kind: 'unreadable' }],
    ['0', { kind: 'unreadable' }],
    ['-5', { kind: 'unreadable' }],
    ['not a pid', { kind: 'unreadable' }],
    ['{"host":"a"', { kind: 'unreadable' }], // torn
    ['null', { kind: 'unreadable' }],
    ['{"host":"a","pid":1,"token":"x","boot":"b"}', { kind: 'unreadable' }], // no pidns
    ['{"host":"a","pid":1.5,"token":"x","boot":"b","pidns":"p"}', { kind: 'unreadable' }],
    ['{"host":"a","pid":1,"token":"../x","boot":"b","pidns":"p"}', { kind: 'unreadable' }],
    ['{"host":"a","pid":1,"token":"x","boot":"b","pidns":"p"}', { kind: 'lease', holder: { host: 'a', pid: 1, token: 'x', boot: 'b', pidns: 'p', since: '' } }],
  ];
  for (const [text, expected] of cases) assert.deepEqual(parseLock(text), expected, JSON.stringify(text));
});

test('judge: a lock is stale only when it names this place and a dead PID, or its lease ran out', () => {
  const L = 10_000;
  const me = 500;
  const live = new Set([me, 600]);
  const viewer = { place: here, pid: me, alive: (pid: number) => live.has(pid), leaseMs: L };
  const lease = (pid: number, place: Place = here, token?: string): LockContent => ({ kind: 'lease', holder: holderOf(pid, place, token) });
  const otherNs = { ...here, pidns: 'pid:[1]' };
  const otherHost = { ...here, host: 'elsewhere' };
  const otherBoot = { ...here, boot: 'another-boot' };
  const cases: [why: string, content: LockContent, ageMs: number, stale: boolean][] = [
    ['a live PID here, fresh', lease(600), 0, false],
    ['a dead PID here', lease(700), 0, true],
    ['a dead PID here, lease ran out too', lease(700), L, true],
    ['our own PID, another token (was it us? only the lease can tell)', lease(me, here, 'other'), 0, false],
    ['a PID of another PID namespace that is dead in ours', lease(700, otherNs), 0, false],
    ['our own PID in another PID namespace (both PID 1)', lease(me, otherNs, 'other'), 0, false],
    ['another PID namespace, lease just alive', lease(700, otherNs), L - 1, false],
    ['another PID namespace, lease ran out', lease(700, otherNs), L, true],
    ['another host, a PID dead here', lease(700, otherHost), 0, false],
    ['another host, lease ran out', lease(600, otherHost), L + 1, true],
    ['the same host name after a reboot or on another machine', lease(700, otherBoot), 0, false],
    ['a live PID, lease ran out (stopped)', lease(600), L, true],
    ['refreshed in our future (clock skew)', lease(700, otherHost), -60_000, false],
    ['an older version, live PID', { kind: 'legacy', pid: 600 }, 60_000, false],
    ['an older version, dead PID', { kind: 'legacy', pid: 700 }, 0, true],
    ['an older version, our PID (as that version judged it)', { kind: 'legacy', pid: me }, 0, true],
    ['unreadable, fresh', { kind: 'unreadable' }, 0, false],
    ['unreadable, lease ran out', { kind: 'unreadable' }, L, true],
  ];
  for (const [why, content, age, stale] of cases) assert.equal(judge(content, age, viewer).stale, stale, why);
});

// ---- The protocol, interleaved ------------------------------------------------------------------

/** A simulated process: the protocol's steps, run one at a time by a scheduler. */
interface Sim {
  pid: number;
  steps: Generator<Step, Taken, void>;
  /** The step it stopped after, while it runs. */
  at: Step | undefined;
  result: Taken | Error | undefined;
}

function contender(dir: string, pid: number, live: Set<number>, clockOffset = 0): Contender {
  return { dir, holder: holderOf(pid), alive: (p) => live.has(p), leaseMs: LEASE_MS, now: () => Date.now() + clockOffset };
}

function sim(c: Contender): Sim {
  return { pid: c.holder.pid, steps: takeLock(c), at: undefined, result: undefined };
}

/** Runs one step of `s`; true while it has more. */
function step(s: Sim): boolean {
  if (s.result !== undefined) return false;
  try {
    const next = s.steps.next();
    if (next.done) s.result = next.value;
    else s.at = next.value;
  } catch (err) {
    s.result = err as Error;
  }
  return s.result === undefined;
}

function runToEnd(s: Sim): void {
  while (step(s));
}

function runUntil(s: Sim, at: Step): void {
  while (step(s) && s.at !== at);
  assert.equal(s.at, at, `pid ${s.pid} reached ${at}`);
}

function winnerOf(sims: Sim[]): Sim {
  const winners = sims.filter((s) => s.result !== undefined && !(s.result instanceof Error));
  assert.equal(
    winners.length,
    1,
    `${winners.length} processes took the lock: ${sims.map((s) => `${s.pid}: ${s.result instanceof Error ? s.result.message : 'took it'}`).join('; ')}`,
  );
  return winners[0]!;
}

function closeWinner(s: Sim): void {
  closeSync((s.result as Taken).fd);
}

const DEAD = 999_999;
const STARTS: { name: string; prepare(dir: string): void }[] = [
  { name: 'no lock', prepare: () => undefined },
  { name: 'a lease of a dead PID on this host', prepare: (dir) => writeLock(dir, encodeHolder(holderOf(DEAD))) },
  {
    name: 'a lease of another host not refreshed for a minute',
    prepare: (dir) => writeLock(dir, encodeHolder(holderOf(1, { ...here, host: 'elsewhere' })), 60_000),
  },
  { name: 'a bare dead PID of an older version', prepare: (dir) => writeLock(dir, `${DEAD}\n`) },
  { name: 'an unreadable lock written a minute ago', prepare: (dir) => writeLock(dir, 'garbage', 60_000) },
];

/** `seeds` random schedules of 8 simulated processes from each start: exactly one takes the lock. */
function randomRaces(dir: string, seeds: number): void {
  for (const { name, prepare } of STARTS) {
    for (let seed = 1; seed <= seeds; seed++) {
      for (const f of readdirSync(dir)) rmSync(join(dir, f));
      prepare(dir);
      const random = prng(seed);
      const pids = [1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008];
      const live = new Set(pids);
      const sims = pids.map((pid) => sim(contender(dir, pid, live)));
      for (let running = sims; running.length > 0; running = running.filter((s) => s.result === undefined)) {
        step(running[Math.floor(random() * running.length)]!);
      }
      const context = `${name}, seed ${seed}`;
      const winner = winnerOf(sims);
      for (const s of sims) {
        if (s === winner) continue;
        assert.ok(s.result instanceof LockError, context);
        assert.match(s.result.message, new RegExp(`in use by another server \\(PID ${winner.pid} on host ${escapeRegExp(here.host)};`), context);
      }
      assert.equal(lockJson(dir).token, `t${winner.pid}`, context);
      assert.equal(statSync(join(dir, LOCK_FILE)).ino, statSync(`/proc/self/fd/${(winner.result as Taken).fd}`).ino, context);
      assert.deepEqual(readdirSync(dir), [LOCK_FILE], `${context}: no candidate or marker left`);
      closeWinner(winner);
    }
  }
}

/** In memory where there is a tmpfs: thousands of candidate files are fsynced, which takes seconds on a disk. */
function simDir(): string {
  return existsSync('/dev/shm') ? mkdtempSync('/dev/shm/shortener-lock-') : tempDir();
}

test('8 simulated processes, every step interleaved at random (300 schedules per start): exactly one takes the lock', (t) => {
  const dir = simDir();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  randomRaces(dir, 300);
});

test('on a file system without hard links (link fails with EPERM) an exclusive create takes their place', (t) => {
  // The CommonJS object is the one whose changes syncBuiltinESMExports copies to `node:fs` imports.
  const fs = createRequire(import.meta.url)('node:fs') as Record<string, unknown>;
  const linkSync = fs['linkSync'];
  let links = 0;
  fs['linkSync'] = (): never => {
    links++;
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  };
  syncBuiltinESMExports();
  const dir = simDir();
  t.after(() => {
    fs['linkSync'] = linkSync;
    syncBuiltinESMExports();
    rmSync(dir, { recursive: true, force: true });
  });
  randomRaces(dir, 50);
  rmSync(join(dir, LOCK_FILE));
  const lock = acquireLock(dir);
  assert.equal(lockJson(dir).pid, process.pid);
  assert.deepEqual(readdirSync(dir), [LOCK_FILE]);
  lock.release();
  assert.deepEqual(readdirSync(dir), []);
  assert.ok(links > 400, `link was tried (${links} times) and failed each time`);
});

test("X judged a lock stale, then Y took it over: X never replaces Y's fresh lock", (t) => {
  for (const xStopsAt of ['judged', 'marked'] as const) {
    const dir = tempDir(t);
    writeLock(dir, encodeHolder(holderOf(DEAD)));
    const live = new Set([1, 2]);
    const x = sim(contender(dir, 1, live));
    const y = sim(contender(dir, 2, live));
    runUntil(x, 'judged');
    if (xStopsAt === 'marked') {
      // X holds the takeover marker: Y waits for it, X finishes, Y then finds X's lock.
      runUntil(x, 'marked');
      runUntil(y, 'wait');
      runToEnd(x);
      runToEnd(y);
      assert.equal(winnerOf([x, y]), x);
      assert.match(String(y.result), /PID 1 on host/);
      closeWinner(x);
    } else {
      // Y does all of it while X sleeps between judging and acting.
      runToEnd(y);
      assert.equal(lockJson(dir).token, 't2');
      runToEnd(x);
      assert.equal(winnerOf([x, y]), y);
      assert.match(String(x.result), /PID 2 on host/);
      assert.equal(lockJson(dir).token, 't2');
      closeWinner(y);
    }
    assert.deepEqual(readdirSync(dir), [LOCK_FILE]);
  }
});

test("X judged lock K stale; Y took K over and died; Z is replacing Y's lock: X does not replace it as well", (t) => {
  const dir = tempDir(t);
  writeLock(dir, encodeHolder(holderOf(DEAD)));
  const live = new Set([1, 2, 3]);
  const x = sim(contender(dir, 1, live));
  const y = sim(contender(dir, 2, live));
  const z = sim(contender(dir, 3, live));
  runUntil(x, 'judged');
  runToEnd(y);
  closeWinner(y);
  live.delete(2); // Y's lock is stale now too, but it is not the lock X judged
  runUntil(z, 'confirmed');
  runUntil(x, 'wait'); // with K's marker, X finds another inode at the path: a new round, Z's marker
  runToEnd(z);
  runToEnd(x);
  assert.equal(winnerOf([x, z]), z);
  assert.match(String(x.result), /PID 3 on host/);
  assert.equal(lockJson(dir).token, 't3');
  closeWinner(z);
});

test('a process that died mid-takeover holds the directory for one lease at most, not for ever', (t) => {
  const dir = tempDir(t);
  writeLock(dir, encodeHolder(holderOf(DEAD)));
  const live = new Set([2, 3]);
  const crashed = sim(contender(dir, 1, live));
  runUntil(crashed, 'confirmed'); // dies here, about to rename: its marker and candidate stay
  live.delete(1);

  const early = sim(contender(dir, 2, live));
  runToEnd(early);
  assert.ok(early.result instanceof LockError);
  assert.match(early.result.message, /another process is taking over its stale lock/);

  const later = sim(contender(dir, 3, live, LEASE_MS + 1000)); // a lease later: its marker is stale
  runToEnd(later);
  assert.equal(winnerOf([crashed, early, later]), later);
  assert.equal(lockJson(dir).token, 't3');
  closeWinner(later);
});

// ---- The lock as the store and other processes meet it ----------------------------------------

test('the lock file names this process (host, PID, token) while open, and is removed at close', async (t) => {
  const h = await start(t);
  const lock = join(h.dir, LOCK_FILE);
  const content = lockJson(h.dir);
  assert.equal(content.pid, process.pid);
  assert.equal(content.host, hostname());
  assert.match(content.token, /^[0-9a-f]{24}$/);
  assert.deepEqual(readdirSync(h.dir).sort(), [LOCK_FILE, 'urls.log']);
  await h.close(true);
  assert.equal(existsSync(lock), false);
  rmSync(h.dir, { recursive: true, force: true });
});

test('a second store on the same dir in the same process is refused', async (t) => {
  const h = await start(t);
  const before = readFileSync(join(h.dir, LOCK_FILE), 'utf8');
  assert.throws(() => createShortener({ dataDir: h.dir, fsync: 'off', logger: quiet }), /already open/);
  // The refused attempt did not take the lock away from the first.
  assert.equal(readFileSync(join(h.dir, LOCK_FILE), 'utf8'), before);
  await h.shorten('https://example.com/still-writable');
});

test('a second process on the same dir refuses to start with a message naming the holder and what to do', async (t) => {
  const h = await start(t);
  const { code, out } = await runCli(['--port', '0', '--data-dir', h.dir]);
  assert.equal(code, 1);
  const line = out.split('\n').find((l) => l.includes('"level":"error"'));
  assert.ok(line, `an error line in: ${out}`);
  const msg = (JSON.parse(line) as { msg: string }).msg;
  assert.match(msg, new RegExp(`in use by another server \\(PID ${process.pid} on host ${escapeRegExp(hostname())}; its lease was refreshed \\d+ s ago\\)`));
  assert.match(msg, /only one server may write a data directory\. Stop that server first\. If it is gone, its lock is stale 10 s after its last refresh/);
  assert.deepEqual(readdirSync(h.dir).sort(), [LOCK_FILE, 'urls.log'], 'the refused process left nothing behind');
});

test('a stale lock of a dead process on this host is taken over, and the takeover is logged', async (t) => {
  for (const text of [encodeHolder(holderOf(deadPid())), `${deadPid()}\n`]) {
    const dir = tempDir();
    writeLock(dir, text);
    const logs = new LogCapture();
    const h = await start(t, { dataDir: dir, logger: createLogger('info', logs) });
    assert.equal(lockJson(dir).pid, process.pid);
    assert.match(String(logs.find('took over a stale lock')?.['why']), /no longer runs/);
    await h.shorten('https://example.com/after-stale-lock');
    await h.close();
  }
});

test('a bare-PID lock of an older version naming our own PID is stale, as that version judged it', (t) => {
  const dir = tempDir(t);
  writeLock(dir, `${process.pid}\n`);
  const lock = acquireLock(dir);
  assert.throws(() => acquireLock(dir), /already open in this process/);
  lock.release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);
});

test('a lease naming our own PID with another token is held until it runs out (PID 1 in another container)', (t) => {
  const dir = tempDir(t);
  const text = encodeHolder(holderOf(process.pid, { ...here, pidns: 'pid:[4026530000]' }, 'another'));
  writeLock(dir, text, 1000);
  assert.throws(() => acquireLock(dir), new RegExp(`PID ${process.pid} on host ${escapeRegExp(here.host)} \\(another container or PID namespace\\)`));
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), text);
  writeLock(dir, text, LEASE_MS + 1000);
  acquireLock(dir).release();
});

test('an unreadable lock is held while recent and stale once a lease old', (t) => {
  const dir = tempDir(t);
  writeLock(dir, 'garbage', 1000);
  assert.throws(() => acquireLock(dir), /an unreadable lock file/);
  writeLock(dir, 'garbage', LEASE_MS);
  acquireLock(dir).release();
});

test('candidates and markers left by processes that died taking the lock are removed once a lease old', (t) => {
  const dir = tempDir(t);
  const old = (Date.now() - LEASE_MS - 1000) / 1000;
  for (const name of [`${LOCK_FILE}.new-dead`, `${LOCK_FILE}.takeover-123-0`, `${LOCK_FILE}.new-fresh`]) {
    writeFileSync(join(dir, name), '');
    if (!name.endsWith('fresh')) utimesSync(join(dir, name), old, old);
  }
  const lock = acquireLock(dir);
  assert.deepEqual(readdirSync(dir).sort(), [LOCK_FILE, `${LOCK_FILE}.new-fresh`]);
  lock.release();
});

test('a failed open (damaged log) releases the lock', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'urls.log'), 'garbage\nmore garbage\n');
  assert.throws(() => createShortener({ dataDir: dir, fsync: 'off', logger: quiet }), /line 1/);
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);
});
