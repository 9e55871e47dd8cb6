/**
 * Regression: a PID cannot tell lock holders apart across PID namespaces (containers sharing a
 * volume are both PID 1), and a lock naming our own PID counted as stale, so a second server in
 * its own PID namespace ran beside the first. Each server here runs in a PID namespace of its own
 * (`unshare --pid --fork --mount-proc`); the second must refuse.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { LOCK_FILE } from '../../../src/store/log/lock.ts';
import { escapeRegExp, request, spawnServer, tempDir, type SpawnedServer } from '../../support/helpers.ts';
import { missingTool } from '../../support/missing-tool.ts';

/**
 * The first of these that works here: as root, or as a user mapped to root in a user namespace.
 * `--kill-child`: when unshare is killed, the namespace's first process (and so all of it) dies.
 */
const WRAPPERS = [
  ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'],
  ['unshare', '--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child'],
];
const wrapper = WRAPPERS.find((w) => spawnSync(w[0]!, [...w.slice(1), 'true'], { stdio: 'ignore' }).status === 0);

function requireNamespaces(t: TestContext): string[] | undefined {
  if (wrapper !== undefined) return wrapper;
  t.skip(missingTool('PID-NAMESPACE LOCK TESTS', 'cannot create a PID namespace here (unshare --pid fails, as root and as a mapped user)'));
  return undefined;
}

async function startIn(t: TestContext, command: string[], dir: string): Promise<SpawnedServer> {
  const server = spawnServer({ DATA_DIR: dir, FSYNC: 'off', LOG_LEVEL: 'info' }, { wrapper: command });
  t.after(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await server.exited;
  });
  return server;
}

/** Starts the holder with `first`, then a server in a namespace of its own: it must refuse. */
async function secondRefuses(t: TestContext, unshare: string[], first: string[], expected: (pid: number) => boolean): Promise<void> {
  const dir = tempDir(t);
  const holder = await startIn(t, first, dir);
  assert.ok(await holder.listening, 'the first server runs');
  const lock = readFileSync(join(dir, LOCK_FILE), 'utf8');

  const second = await startIn(t, unshare, dir);
  assert.equal(await second.listening, false, 'a second server in another PID namespace must not run');
  assert.equal((await second.exited).code, 1);
  const holderPid = (JSON.parse(lock) as { pid: number }).pid;
  assert.ok(expected(holderPid), `the lock names the PID the holder has in its namespace: ${holderPid}`);
  const error = second.lines.find((l) => l['level'] === 'error');
  assert.match(
    String(error?.['msg']),
    new RegExp(`in use by another server \\(PID ${holderPid} on host ${escapeRegExp(hostname())} \\(another container or PID namespace\\);`),
  );
  // The first still holds the lock and still writes.
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), lock);
  const url = String(holder.lines.find((l) => l['msg'] === 'listening')?.['url']);
  const r = await request(Number(new URL(url).port), '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/still-the-writer' }),
  });
  assert.equal(r.status, 201);
}

test('two servers each in its own PID namespace, both PID 1: the second refuses', async (t) => {
  const unshare = requireNamespaces(t);
  if (unshare) await secondRefuses(t, unshare, unshare, (pid) => pid === 1);
});

test('a holder that has a high PID in its namespace is not "dead" to a server in another namespace, where that PID does not exist', async (t) => {
  const unshare = requireNamespaces(t);
  // Used up by 100 short processes first, so that the holder's PID is no thread of the second
  // server in its new namespace either (threads take numbers from the same space).
  const spend = 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done; "$@" & wait $!';
  if (unshare) await secondRefuses(t, unshare, [...unshare, 'sh', '-c', spend, 'sh'], (pid) => pid > 100);
});
