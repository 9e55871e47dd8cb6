/**
 * kill -9 while a link with a visit limit is visited from many concurrent loops (docs/storage.md,
 * visit limits): every visit granted (its promise resolved) is in the count after the restart, and
 * over all the cycles no more visits are granted than the limit allows.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../../src/log.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { ROOT, tempDir } from '../../support/helpers.ts';
import { bundled } from '../../support/server-entry.ts';

const LIMIT = 5000;
const CONCURRENCY = 16;
const CODE = 'limit1';
const quiet = createLogger('silent');

/**
 * Runs the child until it is killed (after `killAfterMs` once ready) or reaches the limit; the
 * visits it was granted, and how it ended (for a failure's message). Its lines are read from the
 * start, or only after `readAfterMs`, as a parent too busy to read would; `stillRunning`: whether
 * it had not ended by then.
 */
async function cycle(
  dir: string,
  killAfterMs: number | undefined,
  readAfterMs = 0,
): Promise<{ granted: number; done: boolean; end: string; stillRunning: boolean }> {
  const child = spawn(process.execPath, [bundled('test/support/limited-visits-child.ts', 'mjs'), dir, CODE, String(CONCURRENCY)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close', not 'exit': the lines a killed child wrote are still being read after it exited.
  const exited = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(`exit ${code ?? signal}: ${stderr}`)));
  let granted = 0;
  let done = false;
  // Read by a reader from the start, paused while the parent is busy: a child that ended before
  // anyone read its lines would have them thrown away by node.
  const lines = createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line === 'found') granted++;
    else if (line === 'done') done = true;
    else if (line === 'ready' && killAfterMs !== undefined) void delay(killAfterMs).then(() => child.kill('SIGKILL'));
  });
  let stillRunning = true;
  if (readAfterMs > 0) {
    lines.pause();
    await delay(readAfterMs);
    stillRunning = child.exitCode === null && child.signalCode === null;
    lines.resume();
  }
  const end = await exited;
  return { granted, done, end, stillRunning };
}

/** The count on disk, read by opening the store; closed (its lock freed) before the next child opens it. */
async function visitsOnDisk(dir: string): Promise<number> {
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet }));
  const visits = store.get(CODE, Math.floor(Date.now() / 1000))?.visits ?? -1;
  await store.close();
  return visits;
}

/** A data dir holding the limited link, `limit` visits to grant. */
async function limitedLink(t: TestContext, limit: number): Promise<string> {
  const dir = tempDir(t);
  const setup = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet }));
  const now = Math.floor(Date.now() / 1000);
  await setup.insert({ code: CODE, url: 'https://example.com/limited', createdAt: now, retentionDays: 0, visits: 0, untracked: 0, maxVisits: limit }, now);
  await setup.close();
  return dir;
}

// The child's lines go into a socket (node 20) or a pipe (node 24) the parent reads; a busy parent
// lets it fill (about 1,900 of these short lines in the socket, about 11,000 in the pipe's 64 KB).
// The child once turned its end non-blocking (its logger opened process.stdout), so a full one
// failed its next line with EAGAIN, and the child died mid-run. Two seconds unread is a parent's
// delay, not a wait for an event: the child is still running then, its end full, with more to say.
const SLOW_READ_LIMIT = 20_000;
test('the child waits for a parent slow to read its lines, and reaches the limit', { timeout: 60_000 }, async (t) => {
  const dir = await limitedLink(t, SLOW_READ_LIMIT);
  const run = await cycle(dir, undefined, 2000);
  assert.equal(run.stillRunning, true, `the child was waiting on the parent (${run.end})`);
  assert.equal(run.done, true, `the run ends at the limit (${run.granted} granted; ${run.end})`);
  assert.equal(run.granted, SLOW_READ_LIMIT);
});

test('kill -9 during limited visits: every granted visit stays counted, and never more than the limit are granted', { timeout: 120_000 }, async (t) => {
  const dir = await limitedLink(t, LIMIT);

  let granted = 0;
  let kills = 0;
  for (let i = 0; i < 8 && granted < LIMIT; i++) {
    const run = await cycle(dir, randomInt(10, 200));
    if (!run.done) kills++;
    t.diagnostic(`cycle ${i}: granted ${run.granted}${run.done ? ', reached the limit' : ', killed'}`);
    granted += run.granted;
    const visits = await visitsOnDisk(dir);
    assert.ok(visits >= granted, `cycle ${i}: ${granted} visits granted, but the restarted count is ${visits}`);
    assert.ok(visits <= LIMIT, `cycle ${i}: the count ${visits} passed the limit`);
    assert.ok(granted <= LIMIT, `cycle ${i}: ${granted} visits granted, limit ${LIMIT}`);
  }
  // The last run goes to the end: the limit answers, and the total granted is exactly what was counted.
  const last = await cycle(dir, undefined);
  assert.equal(last.done, true, `the last run ends at the limit (${last.granted} granted; ${last.end})`);
  granted += last.granted;
  assert.ok(kills > 0, 'some runs were killed mid-way');
  const visits = await visitsOnDisk(dir);
  assert.equal(visits, LIMIT, 'used up');
  assert.ok(granted <= LIMIT, `${granted} visits granted, limit ${LIMIT}`);
  // A kill can cost visits that were counted but not yet answered (never granted), no more than one per loop.
  assert.ok(granted >= LIMIT - kills * CONCURRENCY, `${granted} granted of ${LIMIT}`);
  t.diagnostic(JSON.stringify({ kills, granted, visits }));
});
