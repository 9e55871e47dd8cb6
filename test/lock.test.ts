import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener } from '../src/app.ts';
import { createLogger } from '../src/log.ts';
import { LOCK_FILE, acquireLock } from '../src/store/lock.ts';
import { runCli, start, tempDir } from './helpers.ts';

const quiet = createLogger('silent');

/** A PID that certainly belongs to no running process: one that just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

test('the lock file holds our PID while open and is removed at close', async () => {
  const h = await start();
  const lock = join(h.dir, LOCK_FILE);
  try {
    assert.equal(readFileSync(lock, 'utf8').trim(), String(process.pid));
  } finally {
    await h.close(true);
  }
  assert.equal(existsSync(lock), false);
  rmSync(h.dir, { recursive: true, force: true });
});

test('a second store on the same dir in the same process is refused', async () => {
  const h = await start();
  try {
    assert.throws(() => createShortener({ dataDir: h.dir, fsync: 'off', logger: quiet }), /already open/);
    // The refused attempt did not take the lock away from the first.
    assert.equal(readFileSync(join(h.dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    await h.shorten('https://example.com/still-writable');
  } finally {
    await h.close();
  }
});

test('a second process on the same dir refuses to start with a message naming the PID', async () => {
  const h = await start();
  try {
    const { code, out } = await runCli(['--port', '0', '--data-dir', h.dir]);
    assert.equal(code, 1);
    const line = out.split('\n').find((l) => l.includes('"level":"error"'));
    assert.ok(line, `an error line in: ${out}`);
    const msg = (JSON.parse(line) as { msg: string }).msg;
    assert.match(msg, new RegExp(`in use by another process \\(PID ${process.pid}\\)`));
    assert.match(msg, /only one server/);
  } finally {
    await h.close();
  }
});

test('a stale lock from a dead process is taken over', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, LOCK_FILE), `${deadPid()}\n`);
  const h = await start({ dataDir: dir });
  try {
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    await h.shorten('https://example.com/after-stale-lock');
  } finally {
    await h.close();
  }
});

test('a lock naming our own PID but not held by us is stale (a container restarted as PID 1)', () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    const release = acquireLock(dir);
    assert.throws(() => acquireLock(dir), /already open in this process/);
    release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    // Garbage in the lock file is stale too.
    writeFileSync(join(dir, LOCK_FILE), 'not a pid');
    acquireLock(dir)();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed open (damaged log) releases the lock', () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, 'urls.log'), 'garbage\nmore garbage\n');
    assert.throws(() => createShortener({ dataDir: dir, fsync: 'off', logger: quiet }), /line 1/);
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
