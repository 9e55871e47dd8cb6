/**
 * Regression: two servers starting together could both take the lock of one data directory (each
 * read a dead PID, removed the lock and made its own), and links acknowledged by one were gone
 * after a restart. Here 8 real server processes race for one directory at the same instant (a
 * preload holds each at its first lock operation until all are there), several rounds per case:
 * exactly one runs, the others exit non-zero naming it, and nothing is left behind.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { currentPlace, encodeHolder } from '../../../src/store/log/lease.ts';
import { LOCK_FILE } from '../../../src/store/log/lock.ts';
import { deadPid, escapeRegExp, spawnServer, tempDir, type SpawnedServer } from '../../support/helpers.ts';

const N = 8;
const ROUNDS = 4;

/** Starts N servers on one directory prepared by `prepare`, all at once; checks the outcome. */
async function race(t: TestContext, prepare: (dir: string) => void): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    const dir = tempDir();
    const barrier = tempDir('lock-barrier-');
    prepare(dir);
    // An admin key of its own: the winner makes no first admin key (`initial-admin-key`, written
    // after it listens), so what is left in the directory is the lock's doing only.
    const env = { DATA_DIR: dir, FSYNC: 'off', LOG_LEVEL: 'info', API_KEYS: 'race-admin-key', LOCK_BARRIER_DIR: barrier, LOCK_BARRIER_N: String(N) };
    const servers: SpawnedServer[] = [];
    t.after(async () => {
      for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.exited));
      rmSync(dir, { recursive: true, force: true });
      rmSync(barrier, { recursive: true, force: true });
    });
    for (let i = 0; i < N; i++) servers.push(spawnServer(env, { nodeArgs: ['--require', './test/support/lock-barrier.cjs'] }));

    const listening = await Promise.all(servers.map((s) => s.listening));
    const winners = servers.filter((_, i) => listening[i]);
    assert.equal(winners.length, 1, `round ${round}: ${winners.length} of ${N} servers run on one data directory`);
    const winner = winners[0]!;
    const pid = winner.child.pid!;
    assert.equal((JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid, pid, 'the lock names the server that runs');
    for (const s of servers) {
      if (s === winner) continue;
      const exit = await s.exited;
      assert.equal(exit.code, 1, `round ${round}: a refused server exits 1; stderr: ${s.stderr()}`);
      const error = s.lines.find((l) => l['level'] === 'error');
      assert.match(String(error?.['msg']), new RegExp(`in use by another server \\(PID ${pid} on host ${escapeRegExp(hostname())};`), `round ${round}`);
    }
    winner.child.kill('SIGTERM');
    assert.equal((await winner.exited).code, 0);
    // No candidate or takeover marker left, and the lock went with its holder.
    assert.deepEqual(readdirSync(dir), ['urls.log'], `round ${round}`);
  }
}

test('8 servers started at once on a new data directory: exactly one runs', { timeout: 60_000 }, (t) => race(t, () => undefined));

test('8 servers started at once on a lock of a dead PID on this host: exactly one runs', { timeout: 60_000 }, (t) =>
  race(t, (dir) => {
    const holder = { ...currentPlace(), pid: deadPid(), token: 'dead0000', since: new Date().toISOString() };
    writeFileSync(join(dir, LOCK_FILE), encodeHolder(holder));
  }),
);

test('8 servers started at once on a lease of another host not refreshed for a minute: exactly one runs', { timeout: 60_000 }, (t) =>
  race(t, (dir) => {
    const holder = { host: 'elsewhere', boot: 'another-boot', pidns: 'pid:[1]', pid: 1, token: 'gone0000', since: '2020-01-01T00:00:00.000Z' };
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, encodeHolder(holder));
    const minuteAgo = (Date.now() - 60_000) / 1000;
    utimesSync(path, minuteAgo, minuteAgo);
  }),
);
