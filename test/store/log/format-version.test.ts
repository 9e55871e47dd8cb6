/**
 * The log's version line (docs/storage.md): a version 1 log (no version line) replays and is
 * rewritten with one before anything is appended; a log of a newer format stops start-up and
 * `--repair` with a message that says so, and is left untouched; `--repair` never drops an intact
 * line it cannot read.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger, type Logger } from '../../../src/log.ts';
import { encodeEntry, FORMAT_VERSION, HEADER } from '../../../src/store/log/format.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { StoreUnavailableError } from '../../../src/store/link-store.ts';
import { RepairRefusedError, repairLog } from '../../../src/store/log/repair.ts';
import { LOG_FILE, LogEngine, StoreOpenError } from '../../../src/store/log/log-engine.ts';
import { LogCapture, runCli, tempDir } from '../../support/helpers.ts';
import { checksummedLine, logEntries, logVersion } from '../../support/log-entries.ts';

const T = 1_790_000_000;
const quiet: Logger = createLogger('silent');
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const create = (code: string, visits = 0) => encodeEntry({ op: 'C', code, url: `https://example.com/${code}`, createdAt: T, retentionDays: 0, visits });

/** A log as the first format wrote it: six-field creates, deletes and count batches, no version line. */
const v1Log = (): Buffer =>
  Buffer.concat([create('aaa'), create('bbb'), create('ccc'), encodeEntry({ op: 'V', counts: [['bbb', 4]] }), encodeEntry({ op: 'D', code: 'aaa' })]);

const newerHeader = encodeEntry({ op: 'F', name: 'url-shortener-log', version: FORMAT_VERSION + 1 });

/** A checksummed line of a shape this build does not know (what a newer build might write). */
const futureLine = (text = 'Z\tccc\tsomething new'): Buffer => checksummedLine(text);

test('a version 1 log (no version line) replays, and is rewritten with the version line at open, logged once', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, LOG_FILE), v1Log());
  const logs = new LogCapture();
  const store = new LogEngine({ dir, fsync: 'always', log: createLogger('info', logs), ...MANUAL });
  t.after(() => store.close());
  assert.deepEqual(store.get('bbb'), { code: 'bbb', url: 'https://example.com/bbb', createdAt: T, retentionDays: 0, visits: 4, untracked: 4, maxVisits: null });
  assert.equal(store.get('aaa'), undefined);
  assert.equal(store.count, 2);
  // The rewrite is queued ahead of every write: the first write waits for it.
  await store.create({ code: 'ddd', url: 'https://example.com/ddd', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: 5 });
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(logEntries(dir), [
    { op: 'C', code: 'bbb', url: 'https://example.com/bbb', createdAt: T, retentionDays: 0, visits: 4, maxVisits: null },
    { op: 'C', code: 'ccc', url: 'https://example.com/ccc', createdAt: T, retentionDays: 0, visits: 0, maxVisits: null },
    { op: 'C', code: 'ddd', url: 'https://example.com/ddd', createdAt: T, retentionDays: 0, visits: 0, maxVisits: 5 },
  ]);
  const said = logs.lines.filter((l) => /format version line/.test(String(l['msg'])));
  assert.equal(said.length, 1, 'logged once');
  assert.equal(said[0]!['format'], FORMAT_VERSION);
  await store.close();
  const again = new LogEngine({ dir, fsync: 'always', log: createLogger('info', logs), ...MANUAL });
  await again.close();
  assert.equal(logs.lines.filter((l) => /format version line/.test(String(l['msg']))).length, 1, 'not again once it has one');
});

test('a version 1 log whose rewrite fails gets nothing appended: writes are refused until the rewrite succeeds', async (t) => {
  const dir = tempDir(t);
  const original = v1Log();
  writeFileSync(join(dir, LOG_FILE), original);
  let full = true;
  const fs: StoreFs = {
    ...nodeFs,
    create(path) {
      if (full) throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
      return nodeFs.create(path);
    },
  };
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs, ...MANUAL }));
  t.after(() => store.close());
  await assert.rejects(
    Promise.resolve(store.insert({ code: 'new1', url: 'https://example.com/new1', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: 3 }, T)),
    StoreUnavailableError,
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original, 'the old log is as it was');
  assert.equal(store.get('new1', T), undefined);
  full = false;
  assert.equal(
    await store.insert({ code: 'new1', url: 'https://example.com/new1', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: 3 }, T),
    true,
  );
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['bbb', 'ccc', 'new1'],
  );
});

test('a new log starts with the version line; an empty one gets it with its first entry', async (t) => {
  const dir = tempDir(t);
  const store = new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL });
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), Buffer.alloc(0), 'nothing written before the first change');
  await store.create({ code: 'one', url: 'https://example.com/1', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  await store.close();
  const bytes = readFileSync(join(dir, LOG_FILE));
  assert.deepEqual(bytes.subarray(0, HEADER.length), HEADER);
  assert.equal(replay(bytes).entries, 1);
  assert.equal(replay(bytes).header, true);
});

test('start-up refuses a log of a newer format with a message saying so (not damage), and leaves it untouched', (t) => {
  const dir = tempDir(t);
  const original = Buffer.concat([newerHeader, create('aaa'), futureLine()]);
  writeFileSync(join(dir, LOG_FILE), original);
  assert.throws(
    () => new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }),
    (err: unknown) =>
      err instanceof StoreOpenError &&
      err.message.includes(`written by a newer version of url-shortener (format ${FORMAT_VERSION + 1}, this build reads up to ${FORMAT_VERSION}); upgrade`) &&
      !/is damaged at line/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith(LOG_FILE) && f !== LOG_FILE),
    [],
    'nothing copied or cut',
  );
});

test('--repair refuses a log of a newer format with the same message and changes nothing', async (t) => {
  const dir = tempDir(t);
  // Even with a line that would be damage to this build.
  const original = Buffer.concat([newerHeader, create('aaa'), Buffer.from('not a line of ours\n')]);
  writeFileSync(join(dir, LOG_FILE), original);
  assert.throws(
    () => repairLog(dir),
    (err: unknown) =>
      err instanceof RepairRefusedError && err.message.includes(`(format ${FORMAT_VERSION + 1}, this build reads up to ${FORMAT_VERSION}); upgrade`),
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original);
  const cli = await runCli(['--repair', '--data-dir', dir]);
  assert.equal(cli.code, 1);
  assert.match(cli.out, /written by a newer version of url-shortener/);
  const started = await runCli(['--port', '0', '--data-dir', dir]);
  assert.equal(started.code, 1);
  assert.match(started.out, /written by a newer version of url-shortener \(format \d+, this build reads up to \d+\); upgrade/);
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith(LOG_FILE) && f !== LOG_FILE),
    [],
  );
});

test('an intact line of an unknown shape stops start-up as such, and --repair will not drop it', (t) => {
  const dir = tempDir(t);
  const bad = Buffer.from(create('bad'));
  bad[20] = bad[20]! ^ 0x01;
  const original = Buffer.concat([HEADER, create('aaa'), futureLine(), bad, create('ccc')]);
  writeFileSync(join(dir, LOG_FILE), original);
  assert.throws(
    () => new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }),
    (err: unknown) => err instanceof StoreOpenError && /at line 3 an intact entry/.test(err.message) && /newer version/.test(err.message),
  );
  assert.throws(
    () => repairLog(dir),
    (err: unknown) => err instanceof RepairRefusedError && /at line 3:/.test(err.message) && /changed nothing/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original, 'the unknown line and the damaged one are both still there');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith(LOG_FILE) && f !== LOG_FILE),
    [],
  );
});

test('--repair keeps the version line of a damaged log', (t) => {
  const dir = tempDir(t);
  const bad = Buffer.from(create('bad'));
  bad[20] = bad[20]! ^ 0x01;
  writeFileSync(join(dir, LOG_FILE), Buffer.concat([HEADER, create('aaa'), bad, create('ccc')]));
  const report = repairLog(dir, new Date('2026-01-02T03:04:05Z'));
  assert.deepEqual(
    report.lost.map((l) => [l.line, l.reason]),
    [[3, 'bad checksum']],
  );
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.deepEqual(
    logEntries(dir).map((e) => (e.op === 'C' ? e.code : e.op)),
    ['aaa', 'ccc'],
  );
});
