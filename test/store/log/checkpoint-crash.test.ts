/**
 * A crash while the start-up checkpoint is written (docs/storage.md) loses nothing: at every step
 * (simulated: the step fails, a write lands half its bytes, and every later step fails too) and
 * under a real kill -9 of a process writing one, the next start has every record of the log.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { LOG_FILE, LogEngine, type LogEngineOptions } from '../../../src/store/log/log-engine.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { runUntilStopped } from '../../support/stopped-child.ts';

const T = 1_790_000_000;
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
const link = (i: number) => ({
  code: `k${i}`,
  url: `https://example.com/${i}/${'x'.repeat(i % 40)}`,
  createdAt: T + i,
  retentionDays: 0,
  visits: i % 3,
  untracked: i % 3,
  maxVisits: null,
});

function records(dir: string) {
  const k = replay(readFileSync(join(dir, LOG_FILE))).records;
  return [...k.slotsOldestFirst()].map((s) => k.record(s));
}

function open(dir: string, options: Partial<LogEngineOptions> = {}): LogEngine {
  return new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), checkpointMinBytes: 0, ...MANUAL, ...options });
}

/**
 * `nodeFs` that dies at step `dieAt` of writing a checkpoint, as kill -9 would: the step fails (a
 * write lands half its bytes first) and every later step fails too. Steps are the calls that write
 * a checkpoint: create, writeSync, fsyncSync, closeSync, rename, syncDir. Closing the log's
 * descriptor is let through, so the test can open the directory again in this process.
 */
function dyingFs(dieAt: number) {
  const ctl = { counting: false, dead: false, steps: [] as string[] };
  const step = (op: string): boolean => {
    if (ctl.dead) throw Object.assign(new Error(`${op} after the process died`), { code: 'EKILLED' });
    if (!ctl.counting) return false;
    ctl.steps.push(op);
    if (ctl.steps.length !== dieAt) return false;
    ctl.dead = true;
    return true;
  };
  const died = (op: string) => Object.assign(new Error(`${op}: the process died`), { code: 'EKILLED' });
  const fs: StoreFs = {
    ...nodeFs,
    create(path) {
      if (step('create')) throw died('create');
      return nodeFs.create(path);
    },
    writeSync(fd, data, position) {
      if (step('writeSync')) {
        nodeFs.writeSync(fd, data.subarray(0, data.length >> 1), position);
        throw died('writeSync');
      }
      nodeFs.writeSync(fd, data, position);
    },
    fsyncSync(fd) {
      if (step('fsyncSync')) throw died('fsyncSync');
      nodeFs.fsyncSync(fd);
    },
    closeSync(fd) {
      if (step('closeSync')) throw died('closeSync');
      nodeFs.closeSync(fd);
    },
    rename(from, to) {
      if (step('rename')) throw died('rename');
      nodeFs.rename(from, to);
    },
    syncDir(dir) {
      if (step('syncDir')) throw died('syncDir');
      nodeFs.syncDir(dir);
    },
    remove(path) {
      if (step('remove')) throw died('remove');
      nodeFs.remove(path);
    },
  };
  return { fs, ctl };
}

/** A log of 300 links with a checkpoint of all of it. */
async function base(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const dir = tempDir(t);
  const store = open(dir);
  for (let i = 0; i < 300; i++) await store.create(link(i));
  await store.close();
  return dir;
}

/**
 * Copies the base's files to a new directory, opens it with a dying fs (its checkpoint is used),
 * creates 100 more links, and closes it: the checkpoint written at close dies at step `dieAt`.
 */
async function closeDying(t: Parameters<typeof tempDir>[0], baseDir: string, dieAt: number) {
  const dir = tempDir(t);
  for (const name of readdirSync(baseDir)) copyFileSync(join(baseDir, name), join(dir, name));
  const dying = dyingFs(dieAt);
  const logs = new LogCapture();
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: 0, ...MANUAL, fs: dying.fs });
  for (let i = 300; i < 400; i++) await store.create(link(i));
  // (A copied log is another file: start-up took a checkpoint of its own, which is the old one now.)
  const before = readFileSync(checkpointPath(join(dir, LOG_FILE)));
  dying.ctl.counting = true;
  await store.close();
  return { dir, before, steps: dying.ctl.steps, failed: logs.find('could not write the start-up checkpoint; the next start replays more of the log') };
}

test('a crash at every step of writing a checkpoint leaves a store that starts with every record', async (t) => {
  const baseDir = await base(t);
  const dry = await closeDying(t, baseDir, Infinity);
  const expected = records(dry.dir);
  assert.equal(expected.length, 400);
  t.diagnostic(`steps: ${dry.steps.join(', ')}`);
  assert.equal(dry.failed, undefined);
  assert.equal(dry.steps[0], 'create');
  assert.deepEqual(dry.steps.slice(-4), ['fsyncSync', 'closeSync', 'rename', 'syncDir']);
  assert.deepEqual(
    dry.steps.slice(1, -4),
    ['writeSync', 'writeSync', 'writeSync', 'writeSync', 'writeSync', 'writeSync', 'writeSync'],
    'the block of links, the four arrays of the hash chains, the footer, and last the preamble that points at it',
  );
  const renameStep = dry.steps.indexOf('rename') + 1;

  for (let dieAt = 1; dieAt <= dry.steps.length; dieAt++) {
    const label = `died at step ${dieAt} (${dry.steps[dieAt - 1]})`;
    const run = await closeDying(t, baseDir, dieAt);
    assert.deepEqual(run.steps, dry.steps.slice(0, dieAt), label);
    assert.ok(run.failed, `${label}: the failure is a warning, and close goes on`);
    // The new checkpoint is in place once renamed (its directory's fsync is the only step after).
    const now = readFileSync(checkpointPath(join(run.dir, LOG_FILE)));
    assert.equal(now.equals(run.before), dieAt <= renameStep, `${label}: the old checkpoint until the rename, the new one after`);

    const logs = new LogCapture();
    const store = new LogEngine({ dir: run.dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: Number.MAX_SAFE_INTEGER, ...MANUAL });
    try {
      assert.deepEqual(
        [...store.keydir.slotsOldestFirst()].map((s) => store.keydir.record(s)),
        expected,
        `${label}: every record`,
      );
      assert.ok(logs.find('log replayed from its start-up checkpoint'), `${label}: a checkpoint was used (the old one, or the new)`);
      assert.deepEqual(
        logs.lines.filter((l) => l['level'] === 'warn'),
        [],
        label,
      );
    } finally {
      await store.close();
    }
    assert.equal(existsSync(`${checkpointPath(join(run.dir, LOG_FILE))}.tmp`), false, `${label}: start-up removed the unfinished temp file`);
  }
});

/**
 * The child: opens `dir` with the real file system, except that one call of writing the start-up
 * checkpoint (`stopAt`: the nth writeSync, after half its bytes; or the directory's fsync after the
 * rename) says "stopped" and waits, for the parent's kill -9.
 */
const CHILD = `
const { LogEngine, nodeFs, createLogger } = await import(process.argv[1]);
const [dir, stopAt] = process.argv.slice(2);
const stop = () => { process.stdout.write('stopped\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000); };
let writes = 0;
const fs = {
  ...nodeFs,
  writeSync(fd, data, position) {
    if (String(++writes) !== stopAt) return nodeFs.writeSync(fd, data, position);
    nodeFs.writeSync(fd, data.subarray(0, data.length >> 1), position);
    stop();
  },
  syncDir(d) {
    if (stopAt === 'syncDir' && writes > 0) stop();
    nodeFs.syncDir(d);
  },
};
new LogEngine({ dir, fs, fsync: 'off', log: createLogger('silent'), checkpointMinBytes: 0, compactMinBytes: Number.MAX_SAFE_INTEGER });
process.stdout.write('opened\\n');
process.exit(0);
`;

/** Starts a process that opens `dir` (its start-up writes a checkpoint) and kills it with SIGKILL once it stops at `stopAt`. */
async function killWhileWriting(dir: string, stopAt: string): Promise<string> {
  return (await runUntilStopped(CHILD, [dir, stopAt])).how;
}

test('kill -9 while a start-up writes its checkpoint: the next start has every record', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const lines = [HEADER];
  for (let i = 0; i < 3000; i++) lines.push(encodeEntry({ op: 'C', ...link(i) }));
  writeFileSync(join(dir, LOG_FILE), Buffer.concat(lines));
  const expected = records(dir);
  const cp = checkpointPath(join(dir, LOG_FILE));
  // The block of links, the footer, the preamble; and after the rename, before the directory's fsync.
  for (const stopAt of ['1', '2', '3', 'syncDir']) {
    for (const name of readdirSync(dir)) if (name !== LOG_FILE) nodeFs.remove(join(dir, name));
    const how = await killWhileWriting(dir, stopAt);
    assert.equal(how, 'SIGKILL', `killed at ${stopAt}`);
    assert.equal(existsSync(`${cp}.tmp`), stopAt !== 'syncDir', `killed at ${stopAt}: an unfinished temp file, or none after the rename`);
    assert.equal(existsSync(cp), stopAt === 'syncDir', `killed at ${stopAt}: the checkpoint only once renamed`);
    const logs = new LogCapture();
    const store = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: Number.MAX_SAFE_INTEGER, ...MANUAL });
    try {
      assert.deepEqual(
        [...store.keydir.slotsOldestFirst()].map((s) => store.keydir.record(s)),
        expected,
        `killed at ${stopAt}: every record`,
      );
      assert.equal(
        logs.find('log replayed from its start-up checkpoint') !== undefined,
        stopAt === 'syncDir',
        `killed at ${stopAt}: the renamed checkpoint is whole and used`,
      );
    } finally {
      await store.close();
    }
    assert.equal(existsSync(`${cp}.tmp`), false, `killed at ${stopAt}: start-up removed the temp file`);
  }
});
