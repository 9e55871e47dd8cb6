/**
 * The lock is a lease: kept alive by its holder's refreshes, taken over once they stop (a holder
 * stopped, or a container gone with the volume still mounted elsewhere) even though its PID may
 * still run; and a holder that finds its lock taken refuses writes instead of writing on.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../../src/log.ts';
import { currentPlace, encodeHolder } from '../../../src/store/log/lease.ts';
import { acquireLock, LOCK_FILE, LockLostError } from '../../../src/store/log/lock.ts';
import { escapeRegExp, LogCapture, ROOT, start, tempDir } from '../../support/helpers.ts';
import { bundled } from '../../support/server-entry.ts';

/**
 * The lease of these tests. The holder refreshes every third of it, so a refresh may come up to
 * two thirds of a lease late (2 s, on a loaded machine) before the lock is wrongly stale; the
 * waits below follow the lock file's mtime, the lease itself, rather than fixed sleeps.
 */
const LEASE = 3000;

function lockPid(dir: string): number {
  return (JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid;
}

async function until(done: () => boolean, what: string, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !done(); await delay(10)) if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
}

test('a holder that stops refreshing (SIGSTOP) loses its lease after the lease time, though its PID lives; resumed, it knows', async (t) => {
  const dir = tempDir();
  const child = spawn(process.execPath, [bundled('test/support/lock-holder.ts', 'mjs'), dir, String(LEASE)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  await until(() => out.includes('"msg":"locked"'), 'the child to lock');
  const pid = child.pid!;

  // Running, it refreshes: the lease (the lock file's mtime) moves on, and the lock stays its.
  const lease = (): number => statSync(join(dir, LOCK_FILE)).mtimeMs;
  const taken = lease();
  await until(() => lease() > taken, 'a refresh', LEASE * 2);
  const refused = new RegExp(`in use by another server \\(PID ${pid} on host ${escapeRegExp(hostname())}; its lease was refreshed \\d+ s ago\\)`);
  assert.throws(() => acquireLock(dir, { leaseMs: LEASE }), refused);

  child.kill('SIGSTOP');
  assert.throws(() => acquireLock(dir, { leaseMs: LEASE }), refused, 'stopped for less than a lease: still held');
  // A lease after its last refresh, and not before, the lock is stale.
  await delay(lease() + LEASE + 100 - Date.now());
  const logs = new LogCapture();
  const lock = acquireLock(dir, { leaseMs: LEASE, log: createLogger('info', logs) });
  t.after(() => lock.release());
  assert.equal(lockPid(dir), process.pid);
  assert.match(String(logs.find('took over a stale lock')?.['why']), /its lease was not refreshed for \d+ s/);

  child.kill('SIGCONT');
  assert.equal(await exited, 3, 'the resumed holder found its lock lost');
  const lost = out.split('\n').filter((l) => l.includes('lost the lock of the data directory'));
  assert.equal(lost.length, 1, out);
  assert.match(lost[0]!, new RegExp(`replaced by PID ${process.pid} on host`));
  // And it did not take the lock back, or remove it.
  assert.equal(lockPid(dir), process.pid);
  assert.equal(lock.lost(), undefined);
});

test("a lock replaced or removed under its holder: one error line, every later lost() says so, release leaves the other's lock", (t) => {
  for (const how of ['replaced', 'removed'] as const) {
    const dir = tempDir(t);
    const logs = new LogCapture();
    const lock = acquireLock(dir, { leaseMs: LEASE, log: createLogger('info', logs) });
    assert.equal(lock.lost(), undefined);
    const other = encodeHolder({ ...currentPlace(), pid: 1, token: 'other', since: '' });
    if (how === 'replaced') {
      writeFileSync(join(dir, 'other'), other);
      renameSync(join(dir, 'other'), join(dir, LOCK_FILE));
    } else {
      rmSync(join(dir, LOCK_FILE));
    }
    lock.refresh();
    lock.refresh();
    const err = lock.lost();
    assert.ok(err instanceof LockLostError);
    assert.equal(err.code, 'ELOCKLOST');
    assert.match(err.message, how === 'replaced' ? /replaced by PID 1 on host/ : /\(removed\)/);
    assert.equal(lock.lost(), err);
    assert.equal(logs.lines.filter((l) => l['level'] === 'error').length, 1);
    lock.release();
    if (how === 'replaced') assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), other);
  }
});

test('a store whose lock was taken away refuses writes with 503 and keeps answering reads', { timeout: 15_000 }, async (t) => {
  const h = await start(t, { apiKeys: ['k'] });
  t.after(() => rmSync(h.dir, { recursive: true, force: true }));
  const code = await h.shorten('https://example.com/before');
  const logBefore = readFileSync(join(h.dir, 'urls.log'));
  const other = encodeHolder({ ...currentPlace(), pid: 1, token: 'other', since: '' });
  writeFileSync(join(h.dir, 'other'), other);
  renameSync(join(h.dir, 'other'), join(h.dir, LOCK_FILE));
  // The next refresh (a third of the 10 s lease) finds out.
  await until(() => h.logs.find('lost the lock of the data directory; refusing writes') !== undefined, 'the lost lock to be noticed', 5000);
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/after' }),
  });
  assert.equal(r.status, 503);
  assert.match(r.body, /ELOCKLOST/);
  const del = await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: { 'x-api-key': 'k' } });
  assert.equal(del.status, 503);
  assert.equal((await h.req(`/${code}`)).status, 302);
  assert.deepEqual(readFileSync(join(h.dir, 'urls.log')), logBefore, 'nothing written since');
  await h.close(true);
  // Closing did not remove the other's lock.
  assert.equal(lockPid(h.dir), 1);
});
