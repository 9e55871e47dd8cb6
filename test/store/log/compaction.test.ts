/**
 * Compaction (docs/storage.md, compaction): the log is rewritten to one create per live record,
 * expired records are purged, writes made meanwhile are kept, a crash at any step of the rewrite
 * leaves the old or the new log whole, a failed rewrite leaves the old log untouched, it runs by
 * itself once dead entries outweigh live ones, and `--compact` does it offline.
 */
import assert from 'node:assert/strict';
import { closeSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger, type Logger } from '../../../src/log.ts';
import { encodeEntry, HEADER, recordEntry } from '../../../src/store/log/format.ts';
import type { StoredRecord } from '../../../src/store/log/keydir.ts';
import { replay, type ReplayResult } from '../../../src/store/log/replay.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { COMPACT_SUFFIX, LOG_FILE, LogEngine, type LogEngineOptions } from '../../../src/store/log/log-engine.ts';
import { LogCapture, runCli, tempDir } from '../../support/helpers.ts';
import { bareOrphan } from '../../support/records.ts';
import { logEntries } from '../../support/log-entries.ts';

const TEMP_FILE = LOG_FILE + COMPACT_SUFFIX;
const T0 = 1_700_000_000;
const DAY = 86_400;
/** Keeps the automatic compaction (and the visit timer) out of tests that compact by hand. */
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const silent: Logger = createLogger('silent');

type Row = StoredRecord;

const link = (code: string, i = 0, retentionDays = 0): Row => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T0 + i,
  retentionDays,
  visits: 0,
  untracked: 0,
  maxVisits: null,
});

/** Records in creation order, as the store holds them. */
const live = async (store: LogEngine): Promise<Row[]> => {
  const all = await store.snapshot(() => true);
  const rows = all.slice(0, all.length).reverse();
  all.release();
  return rows;
};

/** Records in creation order, as a replay of the log gives them. */
const replayed = (result: ReplayResult): Row[] => [...result.records.keys()].map((code) => result.records.get(code)!);

function open(dir: string, options: Partial<LogEngineOptions> = {}): LogEngine {
  return new LogEngine({ dir, fsync: 'off', log: silent, ...MANUAL, ...options });
}

function logBytes(dir: string): Buffer {
  return readFileSync(join(dir, LOG_FILE));
}

function readLog(dir: string): ReplayResult {
  return replay(logBytes(dir));
}

function assertWhole(result: ReplayResult): void {
  assert.equal(result.damage, undefined, 'no damage');
  assert.equal(result.tornTail, undefined, 'no torn tail');
}

function visit(store: LogEngine, code: string, times: number): void {
  assert.ok(store.get(code), `${code} exists`);
  for (let i = 0; i < times; i++) store.visit(code);
}

/** A fresh dir for stores; after the test `t` the store opened last is closed, then the dir removed (also when closing fails). */
function storeDir(t: TestContext): { dir: string; open(options?: Partial<LogEngineOptions>): LogEngine } {
  const dir = tempDir('compaction-test-');
  let last: LogEngine | undefined;
  t.after(() => Promise.resolve(last?.close()).finally(() => rmSync(dir, { recursive: true, force: true })));
  return { dir, open: (options) => (last = open(dir, options)) };
}

function errno(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated failure, ${syscall}`), { code, syscall });
}

/** A promise with its resolve function, for holding a file operation until the test lets it go. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire = (): void => undefined;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

test('compact() leaves one create per live record, with current visit counts, in creation order', async (t) => {
  const stores = storeDir(t);
  const dir = stores.dir;
  let store = stores.open();
  for (let i = 0; i < 8; i++) await store.create(link(`k${i}`, i));
  visit(store, 'k1', 2);
  await store.flushVisits();
  visit(store, 'k1', 3); // supersedes the first batch
  visit(store, 'k2', 1);
  await store.flushVisits();
  await store.delete('k0');
  await store.delete('k5');
  await store.delete('k6');
  // A re-created code is the newest link.
  await store.create({ ...link('k6', 100), url: 'https://example.com/k6-again' });
  visit(store, 'k3', 4); // not flushed when compaction starts
  const expected = await live(store);
  assert.deepEqual(
    expected.map((r) => [r.code, r.visits]),
    [
      ['k1', 5],
      ['k2', 1],
      ['k3', 4],
      ['k4', 0],
      ['k7', 0],
      ['k6', 0],
    ],
  );
  const before = logBytes(dir);
  // 9 creates, 2 visit batches, 3 deletes.
  assert.equal(logEntries(before).length, 14);

  const report = await store.compact();

  const after = logBytes(dir);
  assert.deepEqual(logEntries(after), expected.map(recordEntry), 'exactly one create per live record, in creation order, carrying the in-memory visit counts');
  assert.ok(after.length < before.length, 'the file shrinks');
  assert.deepEqual(
    {
      bytesBefore: report.bytesBefore,
      bytesAfter: report.bytesAfter,
      entriesBefore: report.entriesBefore,
      entriesAfter: report.entriesAfter,
      purged: report.purged,
    },
    { bytesBefore: before.length, bytesAfter: after.length, entriesBefore: 14, entriesAfter: 6, purged: 0 },
  );
  assert.equal(typeof report.ms, 'number');
  assert.deepEqual(await live(store), expected, 'memory is unchanged by compaction');
  assert.equal(existsSync(join(dir, TEMP_FILE)), false, 'no temp file left');

  // The store goes on appending to the new log.
  await store.create(link('k8', 8));
  expected.push(link('k8', 8));
  assertWhole(readLog(dir));
  assert.deepEqual(replayed(readLog(dir)), expected);

  await store.close();
  store = stores.open();
  assert.deepEqual(await live(store), expected, 'reopened: same records, same order, same visit counts');
  assert.deepEqual(
    [...store.withUrl('https://example.com/k6-again')].map((r) => r.code),
    ['k6'],
  );
  assert.deepEqual([...store.withUrl('https://example.com/k6')], []);
});

test('compact() purges records expired by the `now` clock, from the file and from memory', async (t) => {
  let clock = T0 * 1000;
  const stores = storeDir(t);
  const dir = stores.dir;
  let store = stores.open({ now: () => clock });
  await store.create(link('forever', 0, 0));
  await store.create(link('oneday', 0, 1));
  await store.create(link('month', 0, 30));
  await store.create(link('twodays', 0, 2));
  await store.create(link('edge', 10, 1)); // expires exactly when the clock stops below
  visit(store, 'oneday', 3);
  await store.flushVisits();

  const early = await store.compact();
  assert.equal(early.purged, 0, 'nothing has expired yet');
  assert.equal(early.entriesAfter, 5);

  clock = (T0 + 10 + DAY) * 1000;
  const report = await store.compact();
  assert.equal(report.purged, 2);
  assert.equal(report.entriesBefore, 5);
  assert.equal(report.entriesAfter, 3);
  for (const code of ['oneday', 'edge']) {
    assert.equal(store.get(code), undefined, `${code} is gone from memory`);
    assert.deepEqual([...store.withUrl(`https://example.com/${code}`)], [], `${code} is gone from the URL index`);
  }
  const expected = [link('forever', 0, 0), link('month', 0, 30), link('twodays', 0, 2)];
  assert.deepEqual(await live(store), expected);
  assert.equal(store.count, 3);
  assert.deepEqual(logEntries(logBytes(dir)), expected.map(recordEntry), 'purged from the file');

  await store.close();
  store = stores.open(); // replay applies no clock: only compaction purges, so what it dropped stays dropped
  assert.deepEqual(await live(store), expected);
});

/** `nodeFs` whose first write to the compaction temp file waits for `release`. */
function holdingFs() {
  const entered = signal();
  const released = signal();
  let tempFd = -1;
  let held = false;
  const fs: StoreFs = {
    ...nodeFs,
    create(path) {
      const fd = nodeFs.create(path);
      if (path.endsWith(COMPACT_SUFFIX)) tempFd = fd;
      return fd;
    },
    async write(fd, data, position) {
      if (fd === tempFd && !held) {
        held = true;
        entered.fire();
        await released.promise;
      }
      return nodeFs.write(fd, data, position);
    },
  };
  return { fs, entered: entered.promise, release: released.fire };
}

test('creates, deletes and visits made while compaction runs are in memory and in the new log', { timeout: 10_000 }, async (t) => {
  const hold = holdingFs();
  // Registered before the stores, so it runs before the store closes (after-hooks run in order).
  t.after(() => hold.release());
  const stores = storeDir(t);
  const dir = stores.dir;
  let store = stores.open({ fs: hold.fs, fsync: 'always' });
  for (let i = 0; i < 6; i++) await store.create(link(`a${i}`, i));
  await store.delete('a5');
  visit(store, 'a1', 2);
  await store.flushVisits();

  let settled = false;
  const compaction = store.compact().finally(() => (settled = true));
  await hold.entered;

  // The snapshot's write is held: the store goes on meanwhile.
  await store.create({ ...link('n1', 50), url: 'https://example.com/new/1' });
  await store.create({ ...link('n2', 51), url: 'https://example.com/new/2' });
  assert.equal(await store.delete('a2'), true);
  await store.create(link('n3', 52));
  assert.equal(await store.delete('n3'), true);
  visit(store, 'a1', 3);
  visit(store, 'n1', 2);
  await store.flushVisits();
  assert.equal(settled, false, 'compaction is still held');

  hold.release();
  const report = await compaction;
  assert.equal(report.purged, 0);

  const expected: Row[] = [
    link('a0', 0),
    { ...link('a1', 1), visits: 5, untracked: 5 },
    link('a3', 3),
    link('a4', 4),
    { ...link('n1', 50), url: 'https://example.com/new/1', visits: 2, untracked: 2 },
    { ...link('n2', 51), url: 'https://example.com/new/2' },
  ];
  assert.deepEqual(await live(store), expected, 'memory after compaction');
  assert.equal(store.get('a2'), undefined);
  assert.equal(store.get('n3'), undefined);
  assert.deepEqual(
    [...store.withUrl('https://example.com/new/1')].map((r) => r.code),
    ['n1'],
  );

  const result = readLog(dir);
  assertWhole(result);
  assert.deepEqual(replayed(result), expected, 'the new log holds the changes made meanwhile');
  assert.equal(report.entriesAfter, result.entries);
  assert.equal(existsSync(join(dir, TEMP_FILE)), false);

  // A second compaction folds them in: one create per live record.
  await store.compact();
  assert.deepEqual(logEntries(logBytes(dir)), expected.map(recordEntry));

  await store.close();
  store = stores.open();
  assert.deepEqual(await live(store), expected, 'reopened');
});

/**
 * `nodeFs` that dies at compaction step `dieAt` (1-based) as a process killed with kill -9 would:
 * that call fails (a write to the temp file lands half its bytes first) and every later call of any
 * kind fails too, so nothing the store does afterwards reaches the disk. Steps are the calls a
 * compaction makes: creating the temp file, writing and fsyncing it, the rename, closing the old
 * log, fsyncing the directory; appends to the live log are not steps (but die too). The first write
 * to the temp file is held until `release`, so the test can write to the store meanwhile.
 */
function dyingFs(dieAt: number) {
  const entered = signal();
  const released = signal();
  const ctl = { counting: false, dead: false, steps: [] as string[], tempFd: -1, open: new Set<number>(), held: false };
  const died = (op: string): Error => errno('EKILLED', `${op} after the process died`);
  /** Throws if the process is dead; counts the step, and dies if it is the one. True when this call dies. */
  const step = (op: string, counted: boolean): boolean => {
    if (ctl.dead) throw died(op);
    if (!ctl.counting || !counted) return false;
    ctl.steps.push(op);
    if (ctl.steps.length !== dieAt) return false;
    ctl.dead = true;
    return true;
  };
  const fs: StoreFs = {
    ...nodeFs,
    open(path) {
      step('open', false);
      const opened = nodeFs.open(path);
      ctl.open.add(opened.fd);
      return opened;
    },
    read(fd, buffer, position) {
      step('read', false);
      return nodeFs.read(fd, buffer, position);
    },
    create(path) {
      if (step('create', true)) throw died('create');
      const fd = nodeFs.create(path);
      ctl.open.add(fd);
      if (path.endsWith(COMPACT_SUFFIX)) ctl.tempFd = fd;
      return fd;
    },
    async write(fd, data, position) {
      const temp = fd === ctl.tempFd;
      if (step('write', temp)) {
        await nodeFs.write(fd, data.subarray(0, Math.floor(data.length / 2)), position);
        throw died('write');
      }
      if (temp && !ctl.held) {
        ctl.held = true;
        entered.fire();
        await released.promise;
        if (ctl.dead) throw died('write');
      }
      return nodeFs.write(fd, data, position);
    },
    async fsync(fd) {
      if (step('fsync', fd === ctl.tempFd)) throw died('fsync');
      return nodeFs.fsync(fd);
    },
    async truncate(fd, length) {
      step('truncate', false);
      return nodeFs.truncate(fd, length);
    },
    async close(fd) {
      if (step('close', true)) throw died('close');
      await nodeFs.close(fd);
      ctl.open.delete(fd);
    },
    rename(from, to) {
      if (step('rename', true)) throw died('rename');
      nodeFs.rename(from, to);
    },
    syncDir(dir) {
      if (step('syncDir', true)) throw died('syncDir');
      nodeFs.syncDir(dir);
    },
    remove(path) {
      if (step('remove', true)) throw died('remove');
      nodeFs.remove(path);
    },
  };
  return { fs, ctl, entered: entered.promise, release: released.fire };
}

/** Base log for the crash runs: more creates than one compaction slice, plus dead weight. */
const CRASH_RECORDS = 10_050;

function crashBaseLog(): { bytes: Buffer; expected: Map<string, Row> } {
  const lines: Buffer[] = [HEADER];
  const expected = new Map<string, Row>();
  for (let i = 0; i < CRASH_RECORDS; i++) {
    const r = link(`c${i}`, i);
    lines.push(encodeEntry({ op: 'C', ...r }));
    expected.set(r.code, r);
  }
  lines.push(
    encodeEntry({
      op: 'V',
      counts: [
        ['c1', 3],
        ['c5', 1],
      ],
    }),
  );
  lines.push(encodeEntry({ op: 'V', counts: [['c1', 7]] }));
  lines.push(encodeEntry({ op: 'D', code: 'c2' }));
  lines.push(encodeEntry({ op: 'D', code: 'c3' }));
  // Counted without events: every visit is untracked.
  Object.assign(expected.get('c1')!, { visits: 7, untracked: 7 });
  Object.assign(expected.get('c5')!, { visits: 1, untracked: 1 });
  expected.delete('c2');
  expected.delete('c3');
  return { bytes: Buffer.concat(lines), expected };
}

interface CrashRun {
  steps: string[];
  /** Which of the writes made during the compaction were acknowledged. */
  acked: { create: boolean; delete: boolean; visits: boolean };
  compaction: PromiseSettledResult<unknown>;
}

/** Runs one compaction on a fresh copy of the base log in `dir`, dying at step `dieAt`. */
async function crashRun(dir: string, base: Buffer, dieAt: number): Promise<CrashRun> {
  writeFileSync(join(dir, LOG_FILE), base);
  const dying = dyingFs(dieAt);
  const store = open(dir, { fs: dying.fs });
  const acked = { create: false, delete: false, visits: false };
  let compaction: PromiseSettledResult<unknown>;
  try {
    dying.ctl.counting = true;
    const running = store.compact();
    const settledEarly = running.then(
      () => true,
      () => true,
    );
    await Promise.race([dying.entered, settledEarly]);
    // Writes made while the snapshot is being written: they must survive too, once acknowledged.
    await store.create({ ...link('new1', 20_000), url: 'https://example.com/new/1' }).then(
      () => (acked.create = true),
      () => undefined,
    );
    await store.delete('c4').then(
      (done) => (acked.delete = done),
      () => undefined,
    );
    store.visit('c5');
    store.visit('c5');
    await store.flushVisits().then(
      () => (acked.visits = true),
      () => undefined,
    );
    dying.release();
    [compaction] = await Promise.allSettled([running]);
    dying.ctl.counting = false;
  } finally {
    dying.release();
    // The "dead" store cannot close its files through its fs: stop its timer, then close what it left open.
    await store.close().catch(() => undefined);
    for (const fd of dying.ctl.open) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
  }
  return { steps: dying.ctl.steps, acked, compaction };
}

test('a crash (kill -9) at every step of a compaction leaves a whole log with every acknowledged change', { timeout: 60_000 }, async (t) => {
  const { bytes: base, expected: baseRecords } = crashBaseLog();
  const baseEntries = replay(base).entries;

  // A run that does not die names the steps.
  const dryDir = tempDir(t, 'compaction-test-');
  let steps: string[];
  const dry = await crashRun(dryDir, base, Infinity);
  assert.equal(dry.compaction.status, 'fulfilled');
  assert.deepEqual(dry.acked, { create: true, delete: true, visits: true });
  steps = dry.steps;
  t.diagnostic(`steps: ${steps.join(', ')}`);
  assert.equal(steps[0], 'create');
  assert.deepEqual(steps.slice(-4), ['fsync', 'rename', 'close', 'syncDir']);
  const writes = steps.slice(1, -4);
  assert.ok(writes.every((s) => s === 'write'));
  // At least two snapshot slices (the base log is bigger than one) and the three writes made meanwhile.
  assert.ok(writes.length >= 5, `${writes.length} writes to the temp file`);
  const renameStep = steps.indexOf('rename') + 1;

  for (let dieAt = 1; dieAt <= steps.length; dieAt++) {
    const dir = tempDir(t, 'compaction-test-');
    const fresh = tempDir(t, 'compaction-test-');
    const label = `died at step ${dieAt} (${steps[dieAt - 1]})`;
    const run = await crashRun(dir, base, dieAt);
    // Up to the rename a death fails the compaction; after it the new log is in place and the
    // compaction reports success (a failed directory fsync is logged as an error).
    assert.equal(run.compaction.status, dieAt <= renameStep ? 'rejected' : 'fulfilled', label);
    assert.deepEqual(run.steps, steps.slice(0, dieAt), label);
    // Writes made while the first temp write was held are acknowledged unless the process died first.
    const alive = dieAt > 2;
    assert.deepEqual(run.acked, { create: alive, delete: alive, visits: alive }, label);

    const expected = new Map(baseRecords);
    for (const [code, r] of expected) expected.set(code, { ...r });
    if (run.acked.create) expected.set('new1', { ...link('new1', 20_000), url: 'https://example.com/new/1' });
    if (run.acked.delete) expected.delete('c4');
    if (run.acked.visits) Object.assign(expected.get('c5')!, { visits: 3, untracked: 3 });
    const rows = [...expected.values()];

    // Only what is on disk counts.
    const result = readLog(dir);
    assertWhole(result);
    assert.deepEqual(replayed(result), rows, `${label}: the log holds exactly the acknowledged records`);
    const tempExists = existsSync(join(dir, TEMP_FILE));
    if (dieAt <= renameStep) {
      assert.equal(result.entries, baseEntries + (alive ? 3 : 0), `${label}: the old log`);
      assert.equal(tempExists, dieAt > 1, `${label}: an unfinished temp file is left by the crash`);
    } else {
      assert.ok(result.entries < baseEntries, `${label}: the new log`);
      assert.equal(tempExists, false, label);
    }

    // The next start (a new process: a fresh dir holding the same files) removes the temp file and ignores it.
    for (const name of readdirSync(dir)) if (name.startsWith(LOG_FILE)) copyFileSync(join(dir, name), join(fresh, name));
    const store = open(fresh);
    t.after(() => store.close());
    assert.equal(existsSync(join(fresh, TEMP_FILE)), false, `${label}: temp file removed at start`);
    assert.deepEqual(await live(store), rows, `${label}: reopened`);
    await store.create(link('after', 30_000));
    await store.close();
    const reopened = readLog(fresh);
    assertWhole(reopened);
    assert.deepEqual(replayed(reopened), [...rows, link('after', 30_000)], `${label}: appends after restart replay`);
  }
});

test('a leftover temp file with whole-looking entries is removed at start and never read', async (t) => {
  const stores = storeDir(t);
  const dir = stores.dir;
  writeFileSync(
    join(dir, LOG_FILE),
    Buffer.concat([HEADER, encodeEntry({ op: 'C', ...link('old') }), encodeEntry({ op: 'D', code: 'old' }), encodeEntry({ op: 'C', ...link('kept') })]),
  );
  // A compaction cut short before its rename: whole lines, but not the log.
  writeFileSync(join(dir, TEMP_FILE), Buffer.concat([encodeEntry({ op: 'C', ...link('ghost') }), encodeEntry({ op: 'C', ...link('old') })]));
  const store = stores.open();
  assert.equal(existsSync(join(dir, TEMP_FILE)), false);
  assert.deepEqual(await live(store), [link('kept')]);
  const report = await store.compact();
  assert.equal(report.entriesAfter, 1);
  assert.deepEqual(logEntries(logBytes(dir)), [recordEntry(link('kept'))]);
});

/** `nodeFs` where one kind of compaction call fails while `ctl.fail` is set; logs removes of the temp file. */
function failingFs(op: 'create' | 'write' | 'fsync' | 'rename', code: string) {
  const ctl = { fail: true, tempFd: -1, removed: 0 };
  const fs: StoreFs = {
    ...nodeFs,
    create(path) {
      if (ctl.fail && op === 'create' && path.endsWith(COMPACT_SUFFIX)) throw errno(code, 'open');
      const fd = nodeFs.create(path);
      if (path.endsWith(COMPACT_SUFFIX)) ctl.tempFd = fd;
      return fd;
    },
    async write(fd, data, position) {
      if (ctl.fail && op === 'write' && fd === ctl.tempFd) {
        await nodeFs.write(fd, data.subarray(0, 10), position);
        throw errno(code, 'write');
      }
      return nodeFs.write(fd, data, position);
    },
    async fsync(fd) {
      if (ctl.fail && op === 'fsync' && fd === ctl.tempFd) throw errno(code, 'fsync');
      return nodeFs.fsync(fd);
    },
    rename(from, to) {
      if (ctl.fail && op === 'rename') throw errno(code, 'rename');
      nodeFs.rename(from, to);
    },
    remove(path) {
      if (path.endsWith(COMPACT_SUFFIX)) ctl.removed++;
      nodeFs.remove(path);
    },
  };
  return { fs, ctl };
}

const FAILURES = [
  { op: 'create', code: 'EMFILE' },
  { op: 'write', code: 'ENOSPC' },
  { op: 'fsync', code: 'EIO' },
  { op: 'rename', code: 'EACCES' },
] as const;

for (const { op, code } of FAILURES) {
  test(`a compaction whose ${op} fails (${code}) rejects, leaves the log unchanged and working, and removes its temp file`, async (t) => {
    const failing = failingFs(op, code);
    const stores = storeDir(t);
    const dir = stores.dir;
    let store = stores.open({ fs: failing.fs, fsync: 'always' });
    for (let i = 0; i < 5; i++) await store.create(link(`f${i}`, i));
    await store.delete('f1');
    await store.delete('f3');
    visit(store, 'f2', 2);
    await store.flushVisits();
    const expected = await live(store);
    const before = logBytes(dir);
    const removedAtStart = failing.ctl.removed;

    await assert.rejects(store.compact(), (err: NodeJS.ErrnoException) => err.code === code);

    assert.deepEqual(logBytes(dir), before, 'the log is byte-for-byte unchanged');
    assert.equal(existsSync(join(dir, TEMP_FILE)), false, 'the temp file is removed');
    if (op !== 'create') assert.equal(failing.ctl.removed, removedAtStart + 1);
    assert.deepEqual(await live(store), expected, 'memory is unchanged');

    // The old log still takes writes.
    await store.create(link('f9', 9));
    expected.push(link('f9', 9));
    const result = readLog(dir);
    assertWhole(result);
    assert.deepEqual(replayed(result), expected);

    // And a later compaction succeeds.
    failing.ctl.fail = false;
    const report = await store.compact();
    assert.equal(report.entriesAfter, expected.length);
    assert.deepEqual(logEntries(logBytes(dir)), expected.map(recordEntry));
    await store.create(link('f10', 10));
    expected.push(link('f10', 10));

    await store.close();
    store = stores.open();
    assert.deepEqual(await live(store), expected, 'reopened');
  });
}

/** Polls until `done()` or `ms` pass; returns whether it became true. */
async function waitFor(done: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (done()) return true;
    await delay(10);
  }
  return done();
}

test('compaction runs by itself once dead entries outweigh live ones, and not before', { timeout: 10_000 }, async (t) => {
  const logs = new LogCapture();
  const stores = storeDir(t);
  const dir = stores.dir;
  let store = stores.open({ log: createLogger('info', logs), compactMinBytes: 1, visitFlushMs: 20 });
  for (let i = 0; i < 9; i++) await store.create(link(`s${i}`, i));
  for (const c of ['s0', 's1', 's2']) await store.delete(c);
  // 12 entries for 6 live records: 6 dead, not more than the live ones.
  await delay(300);
  assert.equal(readLog(dir).entries, 12, 'not compacted while dead entries do not outweigh live ones');
  assert.equal(logs.find('log compacted'), undefined);

  await store.delete('s3'); // 13 entries, 5 live: 8 dead
  const compacted = await waitFor(() => readLog(dir).entries === 5, 3_000);
  assert.ok(compacted, `compacted by itself; entries now ${readLog(dir).entries}`);
  assert.ok(await waitFor(() => logs.find('log compacted') !== undefined, 1_000), 'and logged');
  const line = logs.find('log compacted')!;
  assert.equal(line['entriesBefore'], 13);
  assert.equal(line['entriesAfter'], 5);
  const expected = ['s4', 's5', 's6', 's7', 's8'].map((c, i) => link(c, i + 4));
  assert.deepEqual(await live(store), expected);
  assert.deepEqual(logEntries(logBytes(dir)), expected.map(recordEntry));

  await store.close();
  store = stores.open();
  assert.deepEqual(await live(store), expected);
});

test('orphan visits and domain redirects count as live: a log of them alone is not compacted again and again', { timeout: 10_000 }, async (t) => {
  const logs = new LogCapture();
  const stores = storeDir(t);
  const store = stores.open({ log: createLogger('info', logs), compactMinBytes: 1, visitFlushMs: 20 });
  await store.create(link('s0', 0));
  await Promise.all(Array.from({ length: 50 }, (_, i) => store.orphans.recordOrphan(bareOrphan(1_700_000_000 + i))));
  await store.domains.setDomainRedirects('', { baseUrl: null, notFound: 'https://x.example/', expired: null });
  await delay(300);
  assert.equal(logs.find('log compacted'), undefined, 'no entry is dead');
  assert.equal(readLog(stores.dir).entries, 52);
});

test('automatic compaction waits for the size floor (default 1 MiB) even when dead entries outweigh live ones', async (t) => {
  const dir = tempDir('compaction-test-');
  const logs = new LogCapture();
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), visitFlushMs: 20 });
  t.after(() => store.close().finally(() => rmSync(dir, { recursive: true, force: true })));
  for (let i = 0; i < 4; i++) await store.create(link(`m${i}`, i));
  for (const c of ['m0', 'm1', 'm2']) await store.delete(c);
  const size = statSync(join(dir, LOG_FILE)).size;
  await delay(200);
  assert.equal(statSync(join(dir, LOG_FILE)).size, size);
  assert.equal(readLog(dir).entries, 7);
  assert.equal(logs.find('log compacted'), undefined);
});

test('CLI: --compact rewrites a stopped server’s log, logs the report, exits 0', { timeout: 15_000 }, async (t) => {
  const dir = tempDir(t, 'compaction-test-');
  const store = open(dir);
  t.after(() => store.close());
  for (let i = 0; i < 6; i++) await store.create(link(`x${i}`, i));
  await store.delete('x0');
  await store.delete('x4');
  visit(store, 'x2', 1);
  await store.flushVisits();
  visit(store, 'x2', 2);
  const expected = await live(store);
  await store.close();
  const before = readLog(dir);
  assert.deepEqual(replayed(before), expected);
  assert.equal(before.entries, 10);

  const r = await runCli(['--compact', '--data-dir', dir]);
  assert.equal(r.code, 0, r.out + r.err);
  const lines = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const report = lines.find((l) => l['msg'] === 'log compacted');
  assert.ok(report, r.out);
  assert.equal(report['level'], 'info');
  assert.equal(report['entriesBefore'], 10);
  assert.equal(report['entriesAfter'], 4);
  assert.equal(report['records'], 4);
  assert.equal(report['purged'], 0);
  assert.equal(report['bytesAfter'], logBytes(dir).length);

  const after = readLog(dir);
  assertWhole(after);
  assert.deepEqual(replayed(after), expected, 'same records, same order, same visit counts');
  assert.deepEqual(logEntries(logBytes(dir)), expected.map(recordEntry));
  assert.deepEqual(readdirSync(dir).sort(), [LOG_FILE], 'no temp file, no lock left');
});

test('regression: a code deleted and re-created while compaction purges its expired record is kept (memory and log agree)', { timeout: 10_000 }, async (t) => {
  const hold = holdingFs();
  // Registered before the stores, so it runs before the store closes (after-hooks run in order).
  t.after(() => hold.release());
  const stores = storeDir(t);
  const dir = stores.dir;
  const store = stores.open({ fs: hold.fs, now: () => (T0 + 2 * DAY) * 1000 });
  await store.create(link('keep', 0, 0));
  await store.create(link('x', 0, 1)); // expired by the clock
  const compaction = store.compact();
  await hold.entered;
  // The snapshot has left out the expired `x`; meanwhile the code is freed and used again.
  assert.equal(await store.delete('x'), true);
  const again: Row = { ...link('x', 2 * DAY, 0), url: 'https://example.com/x-again' };
  await store.create(again);
  hold.release();
  const report = await compaction;
  assert.equal(report.purged, 1);

  const expected = [link('keep', 0, 0), again];
  const disk = readLog(dir);
  assertWhole(disk);
  assert.deepEqual(replayed(disk), expected, 'the log keeps the new x');
  assert.deepEqual(store.get('x'), again, 'memory keeps the new x (acknowledged create)');
  assert.deepEqual(await live(store), expected);
});

test('regression: compact() called while close() runs neither replaces the log after the lock is released nor leaks a file', { timeout: 10_000 }, async (t) => {
  const dir = tempDir('compaction-test-');
  const problems: string[] = [];
  const openFds = new Set<number>();
  let logFd = -1;
  let tempFd = -1;
  // The snapshot's write waits until close() closes the log (or 200 ms pass, should close() wait for
  // the compaction): the order in which a slow disk would run them.
  const logClosing = signal();
  const fs: StoreFs = {
    ...nodeFs,
    open(path) {
      const opened = nodeFs.open(path);
      openFds.add(opened.fd);
      logFd = opened.fd;
      return opened;
    },
    create(path) {
      const fd = nodeFs.create(path);
      openFds.add(fd);
      if (path.endsWith(COMPACT_SUFFIX)) tempFd = fd;
      return fd;
    },
    async write(fd, data, position) {
      if (fd === tempFd) await Promise.race([logClosing.promise, delay(200)]);
      return nodeFs.write(fd, data, position);
    },
    async close(fd) {
      if (fd === logFd) logClosing.fire();
      if (!openFds.delete(fd)) {
        // Not passed on: the number may already name another file of this process.
        problems.push(`close of fd ${fd}, which the store had already closed`);
        throw errno('EBADF', 'close');
      }
      return nodeFs.close(fd);
    },
    rename(from, to) {
      if (!existsSync(join(dir, 'urls.lock'))) problems.push('log replaced after the lock was released');
      nodeFs.rename(from, to);
    },
  };
  const store = new LogEngine({ dir, fsync: 'off', log: silent, fs, ...MANUAL });
  t.after(async () => {
    await store.close().catch(() => undefined);
    for (const fd of openFds) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 5; i++) await store.create(link(`z${i}`, i));
  await store.delete('z0');
  const closing = store.close();
  const compaction = store.compact();
  const [closed] = await Promise.allSettled([closing, compaction]);
  assert.equal(closed.status, 'fulfilled');
  for (const fd of openFds) problems.push(`fd ${fd} still open after close() resolved`);
  assert.deepEqual(problems, []);
  assert.equal(existsSync(join(dir, 'urls.lock')), false);
  const disk = readLog(dir);
  assertWhole(disk);
  assert.deepEqual(
    replayed(disk),
    ['z1', 'z2', 'z3', 'z4'].map((c, i) => link(c, i + 1)),
  );
});
