/**
 * Durability of the store through injected file operations: a 201 waits for its fsync, group commit,
 * failed writes (503, nothing visible, nothing left behind), and recovery of the log at start-up.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createShortener } from '../../../src/app.ts';
import { createLogger } from '../../../src/log.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { replay, type ReplayResult } from '../../../src/store/log/replay.ts';
import { nodeFs, type StoreFs } from '../../../src/store/log/fs.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { codeOf, listedCodes, dataDir, LogCapture, start, tempDir, type Harness, type Reply } from '../../support/helpers.ts';

const KEY = 'test-admin-key';
const ADMIN = { 'x-api-key': KEY };

function errno(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated failure, ${syscall}`), { code, syscall });
}

/**
 * `nodeFs` with switchable faults: `disk` makes writes land only half their bytes and then fail
 * with ENOSPC (truncate fails too, as on a full or read-only disk); `fsync` makes fsync fail with EIO
 * after the bytes were written. Counts fsync calls.
 */
function faultyFs() {
  const ctl = { disk: false, fsync: false, fsyncs: 0 };
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (!ctl.disk) return nodeFs.write(fd, data, position);
      await nodeFs.write(fd, data.subarray(0, Math.floor(data.length / 2)), position);
      throw errno('ENOSPC', 'write');
    },
    async truncate(fd, length) {
      if (ctl.disk) throw errno('ENOSPC', 'ftruncate');
      return nodeFs.truncate(fd, length);
    },
    async fsync(fd) {
      ctl.fsyncs++;
      if (ctl.fsync) throw errno('EIO', 'fsync');
      return nodeFs.fsync(fd);
    },
  };
  return { ctl, fs };
}

function post(h: Harness, url: string): Promise<Reply> {
  return h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
}

const listCodes = (h: Harness): Promise<string[]> => listedCodes(h.port, KEY);

function readLog(dir: string): { bytes: Buffer; result: ReplayResult } {
  const bytes = readFileSync(join(dir, LOG_FILE));
  return { bytes, result: replay(bytes) };
}

/** Asserts a 503 with a JSON `detail`. */
function assertUnwritable(r: Reply): void {
  assert.equal(r.status, 503, r.body);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const body = JSON.parse(r.body) as { detail?: unknown };
  assert.equal(typeof body.detail, 'string');
  assert.ok((body.detail as string).length > 0);
}

function assertClean(result: ReplayResult, codes: string[]): void {
  assert.equal(result.damage, undefined, 'no damage');
  assert.equal(result.tornTail, undefined, 'no torn bytes');
  assert.deepEqual([...result.records.keys()], codes);
}

/**
 * A file system whose fsyncs wait while held: `hold()` resolves once one waits; `release()` lets
 * it and the later ones through, and runs after the test before the harness closes (when the
 * harness is started after this call: after-hooks run in order).
 */
function heldFsync(t: TestContext): { fs: StoreFs; hold(): Promise<void>; release(): void } {
  let held: Promise<void> | undefined;
  let letGo = (): void => undefined;
  let entered = (): void => undefined;
  const fs: StoreFs = {
    ...nodeFs,
    async fsync(fd) {
      if (held) {
        entered();
        await held;
      }
      return nodeFs.fsync(fd);
    },
  };
  const release = (): void => {
    held = undefined;
    letGo();
  };
  t.after(release);
  return {
    fs,
    hold() {
      const waiting = new Promise<void>((resolve) => (entered = resolve));
      held = new Promise<void>((resolve) => (letGo = resolve));
      return waiting;
    },
    release,
  };
}

test('a 201 is not sent before its fsync completes, and the link is invisible meanwhile', { timeout: 15_000 }, async (t) => {
  const fsync = heldFsync(t);
  const fsyncEntered = fsync.hold();
  const h = await start(t, { fsync: 'always', fs: fsync.fs, apiKeys: [KEY] });
  let settled = false;
  const pending = post(h, 'https://example.com/held').finally(() => (settled = true));
  await fsyncEntered;
  await delay(150);
  assert.equal(settled, false, 'no response while the fsync is held');
  assert.deepEqual(await listCodes(h), [], 'not listed before it is durable');
  assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/held')}`)).status, 404);
  assert.equal(settled, false);

  fsync.release();
  const r = await pending;
  assert.equal(r.status, 201);
  const code = codeOf(r);
  const { result } = readLog(h.dir);
  assertClean(result, [code]);
  assert.equal(result.records.get(code)?.url, 'https://example.com/held');
  assert.deepEqual(await listCodes(h), [code]);
});

test('a 204 for a delete is not sent before its fsync completes', { timeout: 15_000 }, async (t) => {
  const fsync = heldFsync(t);
  const h = await start(t, { fsync: 'always', fs: fsync.fs, apiKeys: [KEY] });
  const code = await h.shorten('https://example.com/to-delete');
  const fsyncEntered = fsync.hold();
  let settled = false;
  const pending = h.req(`/api/urls/${code}`, { method: 'DELETE', headers: ADMIN }).finally(() => (settled = true));
  await fsyncEntered;
  await delay(100);
  assert.equal(settled, false, 'no 204 while the fsync is held');
  fsync.release();
  const r = await pending;
  assert.equal(r.status, 204);
  assertClean(readLog(h.dir).result, []);
});

/** A file system whose fsyncs take 20 ms each; `fsyncs()` counts them. */
function slowFsync(): { fs: StoreFs; fsyncs(): number } {
  let fsyncs = 0;
  const fs: StoreFs = {
    ...nodeFs,
    async fsync(fd) {
      fsyncs++;
      await delay(20);
      return nodeFs.fsync(fd);
    },
  };
  return { fs, fsyncs: () => fsyncs };
}

test('group commit: 50 concurrent creates share far fewer than 50 fsyncs, and all are on disk', async (t) => {
  const { fs, fsyncs } = slowFsync();
  const h = await start(t, { fsync: 'always', fs, apiKeys: [KEY] });
  const codes = await Promise.all(Array.from({ length: 50 }, (_, i) => h.shorten(`https://example.com/group/${i}`)));
  const used = fsyncs();
  assert.ok(used >= 1, 'fsync is called with fsync=always');
  assert.ok(used <= 25, `50 creates took ${used} fsyncs`);
  assert.equal(new Set(codes).size, 50);
  const { result } = readLog(h.dir);
  assert.equal(result.damage, undefined);
  assert.equal(result.tornTail, undefined);
  assert.equal(result.records.size, 50);
  for (const code of codes) assert.ok(result.records.has(code), code);
});

test('group commit in the LogEngine: concurrent creates queued behind one fsync share the next', async (t) => {
  const dir = tempDir();
  const { fs, fsyncs } = slowFsync();
  const store = new LogEngine({ dir, fsync: 'always', log: createLogger('silent'), fs });
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const recs = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      store.create({ code: `code${i}`, url: `https://example.com/${i}`, createdAt: 1_700_000_000, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null }),
    ),
  );
  assert.equal(recs.length, 50);
  assert.ok(fsyncs() <= 3, `50 queued creates took ${fsyncs()} fsyncs`);
  assert.equal(store.count, 50);
  const { result } = readLog(dir);
  assertClean(
    result,
    Array.from({ length: 50 }, (_, i) => `code${i}`),
  );
});

test('fsync=off never calls fsync on a create', async (t) => {
  const { ctl, fs } = faultyFs();
  const h = await start(t, { fsync: 'off', fs });
  await h.shorten('https://example.com/nosync');
  assert.equal(ctl.fsyncs, 0);
});

/** Longer than the entry written after recovery, so leftovers of it could not hide under that entry. */
const FAILED_URL = `https://example.com/failed/${'x'.repeat(300)}`;

const failures = [
  { name: 'a write that fails (ENOSPC, half the bytes written)', fault: 'disk' },
  { name: 'an fsync that fails (EIO)', fault: 'fsync' },
] as const;

for (const { name, fault } of failures) {
  test(`create: ${name} answers 503, leaves no visible link, and the log replays cleanly after recovery`, async (t) => {
    const { ctl, fs } = faultyFs();
    // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
    t.after(() => (ctl[fault] = false));
    const data = dataDir(t);
    const dir = data.dir;
    let h = await data.start({ fsync: 'always', fs, apiKeys: [KEY] });
    const a = await h.shorten('https://example.com/acknowledged');

    ctl[fault] = true;
    assertUnwritable(await post(h, FAILED_URL));
    // A second failure takes the path that first cuts the suspect tail (and fails again).
    assertUnwritable(await post(h, FAILED_URL));
    assert.ok(
      h.logs.lines.some((l) => l['level'] === 'error'),
      'the failure is logged',
    );

    assert.deepEqual(await listCodes(h), [a]);
    assert.equal(h.shortener.count, 1);
    assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent(FAILED_URL)}`)).status, 404);
    const meta = await h.req(`/api/urls/${a}`);
    assert.equal(meta.status, 200);
    assert.equal((JSON.parse(meta.body) as { original_url: string }).original_url, 'https://example.com/acknowledged');

    ctl[fault] = false;
    const c = await h.shorten('https://example.com/c');
    assert.deepEqual(await listCodes(h), [c, a]);
    assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent(FAILED_URL)}`)).status, 404);

    // The failed entry's bytes were cut before the next write: the file is exactly A then C.
    const { bytes, result } = readLog(dir);
    assertClean(result, [a, c]);
    assert.equal(bytes.includes('xxxxxxxxxx'), false, 'no bytes of the failed entry remain');

    await h.close(true);
    h = await data.start({ fsync: 'always', apiKeys: [KEY] });
    assert.deepEqual(await listCodes(h), [c, a]);
    assert.equal(
      h.logs.lines.some((l) => l['level'] === 'warn' && /torn/.test(String(l['msg']))),
      false,
    );
  });

  test(`delete: ${name} answers 503 and the link still exists, also after a restart`, async (t) => {
    const { ctl, fs } = faultyFs();
    // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
    t.after(() => (ctl[fault] = false));
    const data = dataDir(t);
    const dir = data.dir;
    let h = await data.start({ fsync: 'always', fs, apiKeys: [KEY] });
    const a = await h.shorten('https://example.com/keep-me');
    ctl[fault] = true;
    assertUnwritable(await h.req(`/api/urls/${a}`, { method: 'DELETE', headers: ADMIN }));
    assert.equal((await h.req(`/api/urls/${a}`)).status, 200);
    assert.deepEqual(await listCodes(h), [a]);
    const redirect = await h.req(`/${a}`);
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.location, 'https://example.com/keep-me');

    ctl[fault] = false;
    const b = await h.shorten('https://example.com/second');
    assertClean(readLog(dir).result, [a, b]);

    await h.close(true);
    h = await data.start({ fsync: 'always', apiKeys: [KEY] });
    assert.deepEqual(await listCodes(h), [b, a]);
    // Once the disk is back, the delete works.
    assert.equal((await h.req(`/api/urls/${a}`, { method: 'DELETE', headers: ADMIN })).status, 204);
    assert.equal((await h.req(`/api/urls/${a}`)).status, 404);
  });
}

// A 503 leaves no trace (docs/storage.md, how it is kept: memory follows the disk). A failed fsync
// leaves the whole entry in the file; if the next thing the store does is a clean shutdown (no
// further write cuts the suspect tail), the unacknowledged change must still not come back at the
// next start.
test('regression: a create answered 503 after a failed fsync does not reappear after a graceful restart', async (t) => {
  const { ctl, fs } = faultyFs();
  // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
  t.after(() => (ctl.fsync = false));
  const data = dataDir(t);
  let h = await data.start({ fsync: 'always', fs, apiKeys: [KEY] });
  const a = await h.shorten('https://example.com/acknowledged');
  ctl.fsync = true;
  assertUnwritable(await post(h, 'https://example.com/answered-503'));
  ctl.fsync = false;
  assert.deepEqual(await listCodes(h), [a]);

  await h.close(true);
  h = await data.start({ fsync: 'always', apiKeys: [KEY] });
  assert.deepEqual(await listCodes(h), [a], 'the link answered 503 must not exist after a restart');
  assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/answered-503')}`)).status, 404);
});

test('regression: a delete answered 503 after a failed fsync is not applied after a graceful restart', async (t) => {
  const { ctl, fs } = faultyFs();
  // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
  t.after(() => (ctl.fsync = false));
  const data = dataDir(t);
  let h = await data.start({ fsync: 'always', fs, apiKeys: [KEY] });
  const a = await h.shorten('https://example.com/still-here');
  ctl.fsync = true;
  assertUnwritable(await h.req(`/api/urls/${a}`, { method: 'DELETE', headers: ADMIN }));
  ctl.fsync = false;
  assert.equal((await h.req(`/api/urls/${a}`)).status, 200);

  await h.close(true);
  h = await data.start({ fsync: 'always', apiKeys: [KEY] });
  assert.equal((await h.req(`/api/urls/${a}`)).status, 200, 'the link whose delete answered 503 must still exist');
});

test('visit counts that could not be written are written once the disk recovers', async (t) => {
  const { ctl, fs } = faultyFs();
  // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
  t.after(() => (ctl.disk = false));
  const data = dataDir(t);
  const dir = data.dir;
  let h = await data.start({ fsync: 'always', fs, apiKeys: [KEY], visitFlushMs: 20 });
  const a = await h.shorten('https://example.com/visited');
  ctl.disk = true;
  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/${a}`)).status, 302);
  const flushFailed = () => h.logs.lines.some((l) => l['level'] === 'warn' && /visit/.test(String(l['msg'])));
  for (let waited = 0; !flushFailed() && waited < 10_000; waited += 20) await delay(20);
  assert.ok(flushFailed(), 'the failed flush is logged');
  ctl.disk = false;
  // The next flush writes them: wait for it (a loaded machine may take a while), not for a fixed time.
  let result = readLog(dir).result;
  for (let waited = 0; result.records.get(a)?.visits !== 3 && waited < 10_000; waited += 20) {
    await delay(20);
    result = readLog(dir).result;
  }
  assertClean(result, [a]);
  assert.equal(result.records.get(a)?.visits, 3);

  await h.close(true);
  h = await data.start({ apiKeys: [KEY] });
  assert.equal((JSON.parse((await h.req(`/api/urls/${a}`)).body) as { visit_count: number }).visit_count, 3);
});

// Both tails are longer than the entry appended after them, so bytes that were not cut would show.
// A torn tail is a last line without its newline: what a crash during an append leaves.
const tails = [
  { name: 'garbage without a newline', tail: `deadbeef C\tgarbage-tail${'-'.repeat(300)}` },
  {
    name: 'a whole entry missing only its newline',
    tail: encodeEntry({
      op: 'C',
      code: 'garbage1',
      url: `https://example.com/garbage-tail/${'y'.repeat(300)}`,
      createdAt: 1_700_000_000,
      retentionDays: 0,
      visits: 0,
    })
      .toString('utf8')
      .slice(0, -1),
  },
] as const;

/** The clock of the restarts below: the torn copy is named by its Unix seconds. */
const CUT_AT_MS = 1_800_000_000_500;
const tornCopy = (dir: string, suffix = ''): string => join(dir, `${LOG_FILE}.torn-1800000000${suffix}`);

for (const { name, tail } of tails) {
  test(`torn tail at start-up (${name}) is copied aside byte for byte, then cut with a warning, and the next append is clean`, async (t) => {
    const data = dataDir(t);
    const dir = data.dir;
    let h = await data.start({ apiKeys: [KEY] });
    const a = await h.shorten('https://example.com/before-crash');
    await h.close(true);
    appendFileSync(join(dir, LOG_FILE), tail);

    h = await data.start({ fsync: 'always', apiKeys: [KEY], now: () => CUT_AT_MS });
    const warning = h.logs.lines.find((l) => l['level'] === 'warn' && /torn/.test(String(l['msg'])));
    assert.ok(warning, 'a warning about the torn tail');
    assert.equal(warning['line'], 3, 'the version line is line 1');
    assert.equal(warning['copy'], tornCopy(dir));
    assert.equal(warning['bytes'], Buffer.byteLength(tail));
    assert.deepEqual(readFileSync(tornCopy(dir)), Buffer.from(tail), 'the copy holds exactly the bytes cut');
    assert.deepEqual(await listCodes(h), [a]);

    const b = await h.shorten('https://example.com/b');
    const { bytes, result } = readLog(dir);
    assertClean(result, [a, b]);
    assert.equal(bytes.includes('garbage'), false, 'the torn bytes were cut, not appended after');

    await h.close(true);
    h = await data.start({ apiKeys: [KEY] });
    assert.equal(
      h.logs.lines.some((l) => l['level'] === 'warn' && /torn/.test(String(l['msg']))),
      false,
    );
    assert.deepEqual(await listCodes(h), [b, a]);

    // A second cut within the same second gets a copy of its own; the first is left as it was.
    await h.close(true);
    appendFileSync(join(dir, LOG_FILE), 'second torn tail');
    h = await data.start({ apiKeys: [KEY], now: () => CUT_AT_MS });
    assert.deepEqual(readFileSync(tornCopy(dir, '.2')), Buffer.from('second torn tail'));
    assert.deepEqual(readFileSync(tornCopy(dir)), Buffer.from(tail));
  });
}

test('a torn tail that cannot be copied aside is not cut: start-up stops and the log is left as it was', async (t) => {
  const data = dataDir(t);
  const dir = data.dir;
  const h = await data.start();
  await h.shorten('https://example.com/kept');
  await h.close(true);
  appendFileSync(join(dir, LOG_FILE), 'torn bytes');
  const before = readFileSync(join(dir, LOG_FILE));
  const fs: StoreFs = {
    ...nodeFs,
    writeNew() {
      throw errno('ENOSPC', 'write');
    },
  };
  assert.throws(
    () => createShortener({ dataDir: dir, fsync: 'off', fs, logger: createLogger('silent') }),
    (err: unknown) => err instanceof Error && /torn/.test(err.message) && /ENOSPC/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), before);
  // The refused start released the lock: a start with a working disk cuts and copies.
  const again = await data.start();
  assert.equal(again.shortener.count, 1);
  await again.close(true);
});

test('regression: a complete last line with a bad checksum stops start-up as damage and is not cut', async (t) => {
  const data = dataDir(t);
  const dir = data.dir;
  const h = await data.start();
  await h.shorten('https://example.com/before');
  await h.close(true);
  appendFileSync(join(dir, LOG_FILE), `00000000 C\tgarbage1\t1700000000\t0\t0\thttps://example.com/complete-but-bad\n`);
  const before = readFileSync(join(dir, LOG_FILE));
  assert.throws(
    () => createShortener({ dataDir: dir, fsync: 'off', logger: createLogger('silent') }),
    (err: unknown) => err instanceof Error && /\bline 3 \(bad checksum\)/.test(err.message) && /--repair/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), before, 'nothing is cut');
});

test('damage in the middle of the log stops start-up with a message naming the line, and the file is left as it was', (t) => {
  const dir = tempDir(t);
  const original = Buffer.concat([
    encodeEntry({ op: 'C', code: 'aaa111', url: 'https://example.com/a', createdAt: 1_700_000_000, retentionDays: 0, visits: 0 }),
    encodeEntry({ op: 'C', code: 'bbb222', url: 'https://example.com/b', createdAt: 1_700_000_001, retentionDays: 0, visits: 0 }),
    Buffer.from('0badf00d this line is damaged\n'),
    encodeEntry({ op: 'C', code: 'ccc333', url: 'https://example.com/c', createdAt: 1_700_000_002, retentionDays: 0, visits: 0 }),
  ]);
  writeFileSync(join(dir, LOG_FILE), original);
  const logs = new LogCapture();
  assert.throws(
    () => createShortener({ dataDir: dir, fsync: 'off', logger: createLogger('debug', logs) }),
    (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /\bline 3\b/);
      return true;
    },
  );
  assert.deepEqual(readFileSync(join(dir, LOG_FILE)), original, 'nothing is dropped or rewritten');
});
