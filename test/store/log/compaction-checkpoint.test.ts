/**
 * The start-up checkpoint a compaction writes (docs/storage.md): it and the new log after the bytes
 * it covers give exactly what the whole new log replays to, also when links are created, edited,
 * deleted, visited and reset while the compaction runs; a failure to write it costs the compaction
 * nothing; and a kill -9 at every step of a compaction that writes one leaves a store that starts
 * with every record.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, linkSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createLogger } from '../../../src/log.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { LOG_FILE, LogEngine, type LogEngineOptions } from '../../../src/store/log/log-engine.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { fromCheckpoint, fullReplay, state } from '../../support/log-state.ts';
import { runUntilStopped } from '../../support/stopped-child.ts';

const T = 1_790_000_000;
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
/** More links than a compaction writes in one turn (4,096 records), so that writes land between its slices. */
const LINKS = 25_000;

const event = (time: number, referrer: string | null): VisitEvent => ({
  time,
  referrer,
  country: 'DE',
  browser: 'Firefox',
  os: 'Linux',
  device: 'desktop',
  bot: false,
  visitor: time % 11,
});

/** A log of `LINKS` links, every tenth with a title, written straight to `dir`; deletes and edits make it worth compacting. */
function writeLog(dir: string): void {
  const lines = [HEADER];
  for (let i = 0; i < LINKS; i++) {
    lines.push(
      encodeEntry({
        op: 'C',
        code: `k${i}`,
        url: `https://example.com/${i}/${'p'.repeat(i % 50)}`,
        createdAt: T + i,
        retentionDays: 0,
        visits: i % 4,
        maxVisits: i % 7 === 0 ? 1000 : null,
        ...(i % 10 === 0 && { title: `Link ${i}`, tags: ['t'] }),
      }),
    );
  }
  for (let i = 0; i < LINKS; i += 3) lines.push(encodeEntry({ op: 'D', code: `k${i}` }));
  for (let i = 1; i < LINKS; i += 3) lines.push(encodeEntry({ op: 'E', code: `k${i}`, url: `https://example.org/${i}`, retentionDays: 3650, maxVisits: null }));
  writeFileSync(join(dir, LOG_FILE), Buffer.concat(lines));
}

function open(dir: string, logs = new LogCapture(), options: Partial<LogEngineOptions> = {}): LogEngine {
  return new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: 0, ...MANUAL, ...options });
}

test('writes during a compaction are replayed after its checkpoint: the two give exactly the new log', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  writeLog(dir);
  const logs = new LogCapture();
  const store = open(dir, logs);
  // Events before the compaction, some not yet written when it starts.
  for (let i = 2; i < 3000; i += 3)
    store.resolve(
      `k${i}`,
      () => T * 1000,
      true,
      undefined,
      undefined,
      () => event(T + i, i % 2 ? 'a.example' : null),
    );
  await store.flushVisits();
  for (let i = 2; i < 600; i += 3)
    store.resolve(
      `k${i}`,
      () => T * 1000,
      true,
      undefined,
      undefined,
      () => event(T + 5000 + i, 'b.example'),
    );

  const compaction = store.compact();
  let turns = 0;
  let done = false;
  void compaction.finally(() => (done = true));
  // Every kind of change, a few each turn, until the compaction is installed.
  while (!done) {
    const n = turns++;
    // A code deleted and created anew: the compaction's first slice has written it already, and
    // writes it again (its new slot) in a later one; a replay keeps the later only.
    const again = `k${(n * 3 + 1) % LINKS}`;
    const writes: Promise<unknown>[] = [
      store.create({
        code: `new${n}`,
        url: `https://example.net/${n}`,
        createdAt: T + 90_000 + n,
        retentionDays: 0,
        visits: 0,
        untracked: 0,
        maxVisits: null,
        title: `During ${n}`,
      }),
      store.delete(again).then(() =>
        store.create({
          code: again,
          url: `https://example.net/again/${n}`,
          createdAt: T + 95_000 + n,
          retentionDays: 0,
          visits: 0,
          untracked: 0,
          maxVisits: null,
        }),
      ),
      store.resetVisits(`k${(n * 3 + 2) % 3000}`),
    ];
    const edited = store.get(`k${(n * 3 + 4) % LINKS}`);
    if (edited) writes.push(store.edit({ ...edited, url: `https://example.edu/${n}`, tags: ['during'] }));
    for (let v = 0; v < 5; v++) {
      const code = `k${(n * 3 + 2 + v * 3) % LINKS}`;
      const visit = store.resolve(code, () => (T + 9000 + n) * 1000, true, undefined, undefined, v % 2 ? () => event(T + 9000 + n, 'c.example') : undefined);
      if (visit instanceof Promise) writes.push(visit);
    }
    await Promise.all(writes);
    await turn();
  }
  const report = await compaction;
  await store.flushVisits();
  t.diagnostic(`${turns} turns of writes during a compaction of ${report.entriesBefore} entries to ${report.entriesAfter}`);
  assert.ok(turns >= 3, 'writes landed between the compaction slices');

  const written = logs.lines.find((l) => l['msg'] === 'start-up checkpoint written' && l['by'] === 'compaction');
  assert.ok(written, 'the compaction wrote a checkpoint');
  const now = fromCheckpoint(dir);
  assert.ok(now, 'the checkpoint is beside the new log, and usable');
  assert.equal(now.covered, written['covered_bytes']);
  const expected = fullReplay(dir);
  assert.deepEqual(now.state, expected, 'checkpoint + the log after it = the whole log');
  assert.deepEqual(state(store.keydir), expected, '= memory');
  assert.ok(
    expected.links.some((l) => l.record.code === 'new0'),
    'a link created meanwhile is there',
  );
  assert.equal(expected.links.filter((l) => l.record.code === 'k1').length, 1, 'a code created anew meanwhile is there once');
  assert.equal(expected.links.find((l) => l.record.code === 'k1')?.record.url, 'https://example.net/again/0');
  await store.close();

  // And a start uses it, replaying only what came after.
  const again = open(dir, logs, { checkpointMinBytes: Number.MAX_SAFE_INTEGER });
  try {
    assert.deepEqual(state(again.keydir), expected);
  } finally {
    await again.close();
  }
  const used = logs.find('log replayed from its start-up checkpoint');
  assert.equal(used?.['covered_bytes'], now.covered);
  assert.ok(Number(used?.['replayed_bytes']) > 0, 'the writes made during the compaction were replayed after it');
});

test('a checkpoint that cannot be written is a warning: the compaction goes on, and its log is whole', async (t) => {
  const dir = tempDir(t);
  writeLog(dir);
  const expected = fullReplay(dir);
  // A disk that refuses the checkpoint's blocks (not the log's).
  const ckFds = new Set<number>();
  const fs: StoreFs = {
    ...nodeFs,
    create(path) {
      const fd = nodeFs.create(path);
      if (path.startsWith(checkpointPath(join(dir, LOG_FILE)))) ckFds.add(fd);
      return fd;
    },
    write(fd, data, position) {
      if (ckFds.has(fd)) return Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
      return nodeFs.write(fd, data, position);
    },
    // A descriptor number is reused once closed.
    closeSync(fd) {
      ckFds.delete(fd);
      nodeFs.closeSync(fd);
    },
  };
  const logs = new LogCapture();
  // (Start-up writes its checkpoint in one synchronous step, which this disk lets through.)
  const store = open(dir, logs, { fs });
  const report = await store.compact();
  assert.ok(report.entriesAfter < report.entriesBefore);
  const warning = logs.find('could not write the start-up checkpoint of the compacted log; the next start replays more of the log');
  assert.match(String(warning?.['error']), /ENOSPC/);
  assert.equal(existsSync(checkpointPath(join(dir, LOG_FILE))), false, 'no checkpoint');
  assert.equal(existsSync(`${checkpointPath(join(dir, LOG_FILE))}.tmp`), false, 'its temp file was removed');
  assert.deepEqual(fullReplay(dir), expected, 'the compacted log holds every record');
  assert.deepEqual(state(store.keydir), expected);
  await store.close();
});

test('a link that expires while a compaction runs, its code then taken anew: the checkpoint has the new link only', async (t) => {
  const dir = tempDir(t);
  // The link to expire first, so that the compaction's first slice copies it; then enough links
  // for the compaction to take several turns.
  const lines = [HEADER, encodeEntry({ op: 'C', code: 'soon', url: 'https://example.com/soon', createdAt: T, retentionDays: 1, visits: 3 })];
  for (let i = 0; i < LINKS; i++)
    lines.push(encodeEntry({ op: 'C', code: `k${i}`, url: `https://example.com/${i}/${'p'.repeat(i % 50)}`, createdAt: T + i, retentionDays: 0, visits: 0 }));
  writeFileSync(join(dir, LOG_FILE), Buffer.concat(lines));
  let clock = T + 100;
  const store = open(dir, new LogCapture(), { now: () => clock * 1000 });
  let done = false;
  const compaction = store.compact().finally(() => (done = true));
  // Expired now, after the compaction copied it: its code is free again (`LogLinkStore.insert`), and
  // a create replaces it, with no delete before it in the log.
  clock = T + 86_400 + 1;
  await store.create({ code: 'soon', url: 'https://example.net/new', createdAt: clock, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  assert.equal(done, false, 'the create landed while the compaction ran');
  await compaction;
  const now = fromCheckpoint(dir);
  assert.ok(now);
  const expected = fullReplay(dir);
  assert.deepEqual(now.state, expected);
  assert.deepEqual(
    expected.links.filter((l) => l.record.code === 'soon').map((l) => l.record.url),
    ['https://example.net/new'],
  );
  await store.close();
});

/**
 * The child: opens `dir` from the old log's start-up checkpoint beside it and compacts it, writing
 * the compaction's checkpoint. Each file operation of the compaction is a step; at step `stopAt` (a
 * write lands half its bytes first) it says "stopped" and waits for the parent's kill -9. Run to
 * the end, it prints the steps.
 */
const CHILD = `
const { LogEngine, nodeFs, createLogger } = await import(process.argv[1]);
const { basename } = await import('node:path');
const [dir, stopAt] = process.argv.slice(2);
const steps = [];
let counting = false;
const names = new Map();
const stop = () => { process.stdout.write('stopped\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000); };
const step = (what) => counting && steps.push(what) === Number(stopAt);
const fs = {
  ...nodeFs,
  create(path) {
    if (step('create ' + basename(path))) stop();
    const fd = nodeFs.create(path);
    names.set(fd, basename(path));
    return fd;
  },
  async write(fd, data, position) {
    if (step('write ' + (names.get(fd) ?? 'log'))) {
      await nodeFs.write(fd, data.subarray(0, data.length >> 1), position);
      stop();
    }
    return nodeFs.write(fd, data, position);
  },
  async fsync(fd) {
    if (step('fsync ' + (names.get(fd) ?? 'log'))) stop();
    return nodeFs.fsync(fd);
  },
  rename(from, to) {
    if (step('rename ' + basename(from))) stop();
    nodeFs.rename(from, to);
  },
  syncDir(d) {
    if (step('syncDir')) stop();
    nodeFs.syncDir(d);
  },
};
const store = new LogEngine({ dir, fs, fsync: 'off', log: createLogger('silent'), checkpointMinBytes: 0, compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 });
counting = true;
await store.compact();
counting = false;
process.stdout.write(JSON.stringify(steps) + '\\n');
process.exit(0);
`;

/** Runs the child on `dir`; resolves with how it ended and what it printed. */
function compactInChild(dir: string, stopAt: number): Promise<{ how: string; out: string }> {
  return runUntilStopped(CHILD, [dir, String(stopAt)]);
}

test('kill -9 at every step of a compaction that writes a checkpoint: the next start has every record', { timeout: 120_000 }, async (t) => {
  const source = tempDir(t);
  writeLog(source);
  const expected = fullReplay(source);
  // The old log's start-up checkpoint, written here once: each child starts from it, as from the
  // one its own start would write (the same files when the compaction begins), instead of
  // replaying the whole log cold first, which took most of each of the ~20 runs. A checkpoint
  // names its log's inode, so each data dir holds a hard link to the one log: the compaction
  // never writes into it (it renames its new log over the name), which the end checks.
  await open(source).close();
  const log = join(source, LOG_FILE);
  const checkpoint = checkpointPath(log);
  assert.deepEqual(readdirSync(source).sort(), [LOG_FILE, basename(checkpoint)].sort());
  const logBytes = readFileSync(log);
  const fresh = () => {
    const dir = tempDir(t);
    linkSync(log, join(dir, LOG_FILE));
    copyFileSync(checkpoint, checkpointPath(join(dir, LOG_FILE)));
    return dir;
  };

  const dry = await compactInChild(fresh(), Number.MAX_SAFE_INTEGER);
  assert.equal(dry.how, 'exit 0');
  const steps = JSON.parse(dry.out) as string[];
  t.diagnostic(`steps: ${steps.join(', ')}`);
  const ckRename = steps.indexOf('rename urls.log.checkpoint.tmp') + 1;
  const logRename = steps.indexOf('rename urls.log.compact') + 1;
  assert.ok(steps.filter((s) => s === 'write urls.log.checkpoint.tmp').length >= 4, 'its blocks, footer and preamble');
  assert.ok(logRename > 0 && ckRename === logRename + 1, 'the checkpoint is renamed into place right after the new log');

  for (let stopAt = 1; stopAt <= steps.length; stopAt++) {
    const label = `killed at step ${stopAt} (${steps[stopAt - 1]})`;
    const dir = fresh();
    const { how } = await compactInChild(dir, stopAt);
    assert.equal(how, 'SIGKILL', label);
    const logs = new LogCapture();
    const store = open(dir, logs, { checkpointMinBytes: Number.MAX_SAFE_INTEGER });
    try {
      assert.deepEqual(state(store.keydir), expected, `${label}: every record`);
    } finally {
      await store.close();
    }
    const used = logs.find('log replayed from its start-up checkpoint');
    // The old log's checkpoint until it is retired, none from then until the new one's rename, the
    // new one after.
    if (stopAt > ckRename) assert.equal(used?.['replayed_bytes'], 0, `${label}: the compaction's checkpoint is used`);
    assert.deepEqual(
      logs.lines.filter((l) => l['level'] === 'warn' && String(l['msg']).includes('not used')),
      [],
      `${label}: no checkpoint there is one of another log`,
    );
    for (const name of readdirSync(dir)) assert.ok(!name.endsWith('.tmp') && !name.endsWith('.compact'), `${label}: start-up removed ${name}`);
  }
  assert.ok(readFileSync(log).equals(logBytes), 'the old log shared by every run is as it was written');
});
