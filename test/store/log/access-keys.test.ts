/**
 * Stored API keys on the log store (`KeyStore`, docs/storage.md): kept in memory, oldest first,
 * answered at once; every write durable before it resolves, a failed one leaving memory as it was;
 * and the keys, their last use and their revokes surviving everything that reads or rewrites the
 * log: a reopen (replay), a compaction and the reopen after it (from its start-up checkpoint, and
 * without one), the writes kept aside while a compaction runs, the rewrite of a removed log from
 * memory.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { StoreUnavailableError } from '../../../src/store/link-store.ts';
import { checkpointPath, MAGIC } from '../../../src/store/log/checkpoint.ts';
import { crc32 } from '../../../src/store/log/crc32.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { COMPACT_SUFFIX, LOG_FILE, LogEngine, type LogEngineOptions } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { fillableDisk } from '../../support/disk-full.ts';
import { heldWrites } from '../../support/held-writes.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { logEntries } from '../../support/log-entries.ts';

const T = 1_790_000_000;
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const key = (id: string, extra: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  name: `key ${id}`,
  role: 'creator',
  domain: null,
  digest: id.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a'),
  createdAt: T,
  expiresAt: null,
  lastUsedAt: null,
  ...extra,
});

/** The engine, its `LinkStore`, and what it logs. */
function open(dir: string, options: Partial<LogEngineOptions> = {}, logs = new LogCapture()) {
  const engine = new LogEngine({ dir, fsync: 'always', log: createLogger('info', logs), ...MANUAL, ...options });
  return { engine, store: new LogLinkStore(engine), logs };
}

/** A store in a fresh dir; the one opened last is closed after the test, then the dir removed. */
function stores(t: TestContext) {
  const dir = tempDir();
  let last: LogEngine | undefined;
  t.after(() => Promise.resolve(last?.close()).finally(() => rmSync(dir, { recursive: true, force: true })));
  return {
    dir,
    open(options: Partial<LogEngineOptions> = {}) {
      const opened = open(dir, options);
      last = opened.engine;
      return opened;
    },
  };
}

/** A store whose log writes can be held (`heldWrites`), holding the key `k1`; closed and removed after the test. */
async function heldStore(t: TestContext) {
  const dir = tempDir();
  const held = heldWrites();
  const { store, engine } = open(dir, { fs: held.fs });
  t.after(() => engine.close().finally(() => rmSync(dir, { recursive: true, force: true })));
  const keys = store.accessKeys;
  await keys.addKey(key('k1'));
  return { dir, held, keys };
}

/** The keys a replay of the whole log of `dir` gives. */
const replayedKeys = (dir: string): readonly KeyRecord[] => replay(readFileSync(join(dir, LOG_FILE))).records.accessKeys.list();
const logBytes = (dir: string): Buffer => readFileSync(join(dir, LOG_FILE));

test('keys are answered at once from memory, oldest first, revoked ones left out; a revoke of an unknown key is false and writes nothing', async (t) => {
  const s = stores(t);
  const { store } = s.open();
  const keys = store.accessKeys;
  assert.deepEqual(keys.keys(), []);
  await keys.addKey(key('k1', { role: 'admin', name: 'initial' }));
  await keys.addKey(key('k2', { role: 'viewer', expiresAt: T + 3600 }));
  await keys.addKey(key('k3', { role: 'editor', domain: 's.example' }));
  const listed = keys.keys();
  assert.ok(!(listed instanceof Promise), 'answered at once');
  assert.deepEqual(listed, [
    key('k1', { role: 'admin', name: 'initial' }),
    key('k2', { role: 'viewer', expiresAt: T + 3600 }),
    key('k3', { role: 'editor', domain: 's.example' }),
  ]);

  assert.equal(await keys.revokeKey('k2'), true);
  assert.deepEqual(
    (keys.keys() as KeyRecord[]).map((k) => k.id),
    ['k1', 'k3'],
  );
  const before = logBytes(s.dir);
  assert.equal(await keys.revokeKey('k2'), false, 'revoked already');
  assert.equal(await keys.revokeKey('nokey'), false, 'never added');
  await keys.touchKey('k2', T + 10);
  assert.deepEqual(logBytes(s.dir), before, 'nothing written for a key not there');
  assert.deepEqual(
    (keys.keys() as KeyRecord[]).map((k) => k.id),
    ['k1', 'k3'],
    'a use does not bring a revoked key back',
  );

  await keys.touchKey('k3', T + 120);
  assert.equal((keys.keys() as KeyRecord[])[1]!.lastUsedAt, T + 120);
  await assert.rejects(keys.addKey(key('k1')), /exists already/, 'an id is unique');
  assert.deepEqual(
    logEntries(s.dir).map((e) => e.op),
    ['A', 'A', 'A', 'W', 'U'],
  );
});

test('of concurrent revokes of one key exactly one is true; a key is listed only once its write is durable', async (t) => {
  const { dir, held, keys } = await heldStore(t);
  const revokes = await Promise.all([keys.revokeKey('k1'), keys.revokeKey('k1'), keys.revokeKey('k1')]);
  assert.deepEqual(revokes.filter(Boolean).length, 1);
  assert.equal(logEntries(dir).filter((e) => e.op === 'W').length, 1, 'one revoke written');

  held.ctl.hold = true;
  const adding = keys.addKey(key('k2'));
  await held.held();
  assert.deepEqual(keys.keys(), [], 'not listed while its write is on its way');
  held.release();
  await adding;
  assert.deepEqual(keys.keys(), [key('k2')]);
});

test('a use while a revoke of the key is on its way is written after it: acknowledged, it is never lost, even if the revoke is', async (t) => {
  const { dir, held, keys } = await heldStore(t);
  held.ctl.hold = true;
  const revoking = keys.revokeKey('k1');
  await held.held();
  // Said done at once, with nothing written, a use was lost whenever the revoke then was (a crash).
  let touched = false;
  const touching = keys.touchKey('k1', T + 5).then(() => (touched = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(touched, false, 'not acknowledged before anything is durable');
  held.release();
  held.ctl.hold = false;
  assert.equal(await revoking, true);
  await touching;
  assert.deepEqual(
    logEntries(dir)
      .filter((e) => e.op === 'W' || e.op === 'U')
      .map((e) => e.op),
    ['W', 'U'],
    'the use written after the revoke',
  );
  assert.deepEqual(keys.keys(), [], 'and the revoked key stays revoked');
  assert.deepEqual(replayedKeys(dir), []);
});

test('a key write that fails is StoreUnavailableError, leaves memory as it was, and is not there after a restart', async (t) => {
  const dir = tempDir();
  const { fs, disk } = fillableDisk();
  let { store, engine } = open(dir, { fs });
  t.after(() => engine.close().finally(() => rmSync(dir, { recursive: true, force: true })));
  const keys = store.accessKeys;
  await keys.addKey(key('k1'));
  await keys.touchKey('k1', T + 60);
  const before = keys.keys();

  disk.full = true;
  await assert.rejects(keys.addKey(key('k2')), StoreUnavailableError);
  await assert.rejects(keys.revokeKey('k1'), StoreUnavailableError);
  await assert.rejects(keys.touchKey('k1', T + 999), StoreUnavailableError);
  assert.deepEqual(keys.keys(), before, 'memory as it was');
  assert.deepEqual(keys.keys(), [key('k1', { lastUsedAt: T + 60 })]);

  disk.full = false;
  // The revoke's id is free to be revoked again: the failed one left no trace.
  assert.equal(await keys.revokeKey('k1'), true);
  await keys.addKey(key('k3'));
  await engine.close();
  ({ store, engine } = open(dir));
  assert.deepEqual(store.accessKeys.keys(), [key('k3')]);
  assert.deepEqual(
    logEntries(dir).map((e) => e.op),
    ['A', 'U', 'W', 'A'],
    'no line of a refused write',
  );
});

/** Writes keys, uses and a revoke, and one link beside them. */
async function history(store: LogLinkStore): Promise<KeyRecord[]> {
  const keys = store.accessKeys;
  await keys.addKey(key('k1', { role: 'admin' }));
  await keys.addKey(key('k2'));
  await store.insert(
    { code: 'link01', url: 'https://example.com/1', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null, author: 'k2' },
    T,
  );
  await keys.addKey(key('k3', { role: 'editor', expiresAt: T + 86400 }));
  await keys.touchKey('k1', T + 60);
  await keys.touchKey('k3', T + 61);
  await keys.touchKey('k1', T + 200);
  assert.equal(await keys.revokeKey('k2'), true);
  return [key('k1', { role: 'admin', lastUsedAt: T + 200 }), key('k3', { role: 'editor', expiresAt: T + 86400, lastUsedAt: T + 61 })];
}

test('keys, their last use and revokes survive a reopen, a compaction, and the reopen after it from its checkpoint and without one', async (t) => {
  const s = stores(t);
  let { store, engine } = s.open({ checkpointMinBytes: 0 });
  const expected = await history(store);
  assert.deepEqual(store.accessKeys.keys(), expected);
  await engine.close();
  assert.deepEqual(replayedKeys(s.dir), expected, 'a replay of the log');
  rmSync(checkpointPath(join(s.dir, LOG_FILE)), { force: true });

  ({ store, engine } = s.open({ checkpointMinBytes: 0 }));
  assert.deepEqual(store.accessKeys.keys(), expected, 'reopened: replayed');
  await engine.compact();
  assert.deepEqual(store.accessKeys.keys(), expected, 'compacted, in memory');
  assert.deepEqual(
    logEntries(s.dir).map((e) => (e.op === 'A' ? e.key : e.op)),
    [...expected, 'C'],
    'the compacted log: one added-line per key, as it is now, then the link',
  );
  await engine.close();

  const reopened = s.open({ checkpointMinBytes: 0 });
  ({ store, engine } = reopened);
  assert.ok(reopened.logs.find('log replayed from its start-up checkpoint'), 'started from the compaction’s checkpoint');
  assert.deepEqual(store.accessKeys.keys(), expected, 'reopened from the checkpoint');
  await engine.close();
  rmSync(checkpointPath(join(s.dir, LOG_FILE)));
  ({ store, engine } = s.open());
  assert.deepEqual(store.accessKeys.keys(), expected, 'reopened without a checkpoint');
  assert.equal(store.get('link01', T)?.author, 'k2', 'the link of a revoked key keeps its author');
});

test('a start-up checkpoint carries the keys, and one whose footer has none is not used: the whole log is replayed', async (t) => {
  const s = stores(t);
  let { store, engine } = s.open({ checkpointMinBytes: 0 });
  const expected = await history(store);
  await engine.close();
  const path = checkpointPath(join(s.dir, LOG_FILE));
  const footer = readFooter(path);
  assert.deepEqual(footer['keys'], expected, 'the footer holds the keys as they are');

  // The log's key lines are what the checkpoint covers: start-up reads the keys from it alone.
  let logs: LogCapture;
  ({ store, engine, logs } = s.open({ checkpointMinBytes: 0 }));
  assert.ok(logs.find('log replayed from its start-up checkpoint'));
  assert.deepEqual(store.accessKeys.keys(), expected);
  await engine.close();

  delete footer['keys'];
  writeFooter(path, footer);
  ({ store, engine, logs } = s.open());
  const warned = logs.lines.find((l) => /start-up checkpoint is not used/.test(String(l['msg'])));
  assert.match(String(warned?.['msg']), /no stored API keys/);
  assert.deepEqual(store.accessKeys.keys(), expected, 'from the whole log');
});

/** The JSON footer of a checkpoint (`checkpoint.ts`: the preamble names its length, CRC-32 and offset). */
function readFooter(path: string): Record<string, unknown> {
  const file = readFileSync(path);
  const length = file.readUInt32LE(MAGIC.length + 4);
  const at = file.readDoubleLE(MAGIC.length + 16);
  return JSON.parse(file.toString('utf8', at, at + length)) as Record<string, unknown>;
}

/** Puts `footer` in place of the checkpoint's, its length and CRC-32 in the preamble: a checkpoint otherwise whole. */
function writeFooter(path: string, footer: Record<string, unknown>): void {
  const file = readFileSync(path);
  const at = file.readDoubleLE(MAGIC.length + 16);
  const json = Buffer.from(JSON.stringify(footer), 'utf8');
  const out = Buffer.concat([file.subarray(0, at), json]);
  out.writeUInt32LE(json.length, MAGIC.length + 4);
  out.writeUInt32LE(crc32(json), MAGIC.length + 8);
  writeFileSync(path, out);
}

/** `nodeFs` whose first write to a compaction's temp file waits until `release`. */
function holdingCompaction() {
  let tempFd = -1;
  let entered = (): void => undefined;
  let release = (): void => undefined;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
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
        entered();
        await released;
      }
      return nodeFs.write(fd, data, position);
    },
  };
  return { fs, started, release: () => release() };
}

test('keys added, used and revoked while a compaction runs are in memory and in the new log', async (t) => {
  const hold = holdingCompaction();
  t.after(() => hold.release());
  const s = stores(t);
  let { store, engine } = s.open({ fs: hold.fs });
  const keys = store.accessKeys;
  await keys.addKey(key('k1'));
  await keys.addKey(key('k2'));
  const compaction = engine.compact();
  await hold.started;
  // The new log's key lines are written (held): these come after them, kept aside.
  await keys.addKey(key('k3', { role: 'viewer' }));
  await keys.touchKey('k2', T + 30);
  assert.equal(await keys.revokeKey('k1'), true);
  hold.release();
  await compaction;
  const expected = [key('k2', { lastUsedAt: T + 30 }), key('k3', { role: 'viewer' })];
  assert.deepEqual(keys.keys(), expected, 'in memory');
  assert.deepEqual(
    logEntries(s.dir).map((e) => (e.op === 'A' ? `A ${e.key.id}` : e.op)),
    ['A k1', 'A k2', 'A k3', 'U', 'W'],
    "the snapshot's keys, then the writes kept aside",
  );
  assert.deepEqual(replayedKeys(s.dir), expected);
  await engine.close();
  ({ store, engine } = s.open());
  assert.deepEqual(store.accessKeys.keys(), expected, 'reopened');
});

test('a removed data dir: a key write is refused, and once the dir is back the log rewritten from memory holds every key', async (t) => {
  const root = tempDir();
  const dir = join(root, 'data');
  let { store, engine } = open(dir);
  t.after(() => engine.close().finally(() => rmSync(root, { recursive: true, force: true })));
  const keys = store.accessKeys;
  await keys.addKey(key('k1'));
  await keys.addKey(key('k2'));
  await keys.touchKey('k1', T + 5);
  rmSync(dir, { recursive: true, force: true });
  await assert.rejects(keys.addKey(key('k3')), StoreUnavailableError);
  await assert.rejects(keys.revokeKey('k2'), StoreUnavailableError);
  assert.deepEqual(keys.keys(), [key('k1', { lastUsedAt: T + 5 }), key('k2')], 'memory as it was');

  mkdirSync(dir);
  assert.equal(await keys.revokeKey('k2'), true);
  await keys.addKey(key('k4'));
  const expected = [key('k1', { lastUsedAt: T + 5 }), key('k4')];
  assert.deepEqual(keys.keys(), expected);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'A' ? `A ${e.key.id}` : e.op)),
    ['A k1', 'A k2', 'W', 'A k4'],
    'rewritten from memory, then the writes after it',
  );
  await engine.close();
  ({ store, engine } = open(dir));
  assert.deepEqual(store.accessKeys.keys(), expected, 'reopened');
});
