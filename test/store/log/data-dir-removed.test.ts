/**
 * The file under the process (docs/storage.md): when `urls.log` or the data directory is removed or
 * replaced while the server runs, the next write notices before anything is acknowledged: 503, one
 * error line however many writes fail, never a 201 for data that would be lost. Once the directory
 * is there again, the log is rewritten from memory and writes go on; every acknowledged link
 * survives a restart.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { LOG_FILE } from '../../../src/store/log/log-engine.ts';
import { codeOf, listedCodes, dataDir, request, runCli, serverProcess, tempDir, type DataDir, type Harness, type Reply } from '../../support/helpers.ts';

const KEY = 'test-admin-key';
const JSON_BODY = { 'content-type': 'application/json' };

function shorten(port: number, url: string): Promise<Reply> {
  return request(port, '/api/shorten', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ url }) });
}

/** A 503 whose whole body is `{"detail":…}` saying the data file was removed. */
function assertRemoved(r: Reply): void {
  assert.equal(r.status, 503, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['detail']);
  assert.match(String(body['detail']), /data file was removed or replaced/);
}

async function visitCount(port: number, code: string): Promise<number> {
  const r = await request(port, `/api/urls/${code}`);
  assert.equal(r.status, 200, `${code}: ${r.status}`);
  return (JSON.parse(r.body) as { visit_count: number }).visit_count;
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !condition(); ) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await delay(20);
  }
}

test('regression: rm -rf of the data dir under a running server: 503s and one error line, writes resume once the dir is back, and every acknowledged link survives a restart', {
  timeout: 60_000,
}, async (t) => {
  const root = tempDir();
  const dir = join(root, 'data');
  const env = { DATA_DIR: dir, FSYNC: 'always', API_KEYS: KEY };
  let server = await serverProcess(env);
  t.after(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const before = await shorten(server.port, 'https://example.com/before');
  assert.equal(before.status, 201);
  const a = codeOf(before);

  rmSync(dir, { recursive: true, force: true });
  // Reads go on from memory, and visits are counted there.
  for (let i = 0; i < 3; i++) assert.equal((await request(server.port, `/${a}`)).status, 302);
  for (let i = 0; i < 5; i++) assertRemoved(await shorten(server.port, `https://example.com/refused/${i}`));
  // A visit flush (once a second) fails meanwhile; the counts must stay pending, not be dropped.
  await until(() => server.lines.some((l) => /visit counts/.test(String(l['msg']))), 'a failed visit flush');
  assertRemoved(await shorten(server.port, 'https://example.com/refused/after-flush'));
  const errors = server.lines.filter((l) => l['level'] === 'error');
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.match(String(errors[0]!['msg']), /removed or replaced/);
  assert.equal(existsSync(dir), false, 'the removed directory is not recreated behind the operator');

  mkdirSync(dir);
  const after = await shorten(server.port, 'https://example.com/after');
  assert.equal(after.status, 201, after.body);
  const b = codeOf(after);
  const back = server.lines.find((l) => l['msg'] === 'storage writable again');
  assert.ok(back, 'one info line when writes work again');
  assert.equal(back['level'], 'info');
  assert.ok(Number(back['failures']) >= 6, `failures: ${back['failures']}`);
  assert.equal(server.lines.filter((l) => l['level'] === 'error').length, 1);

  // The lock was taken again in the new directory: a second server is refused.
  const second = await runCli(['--port', '0', '--data-dir', dir]);
  assert.equal(second.code, 1, second.out + second.err);

  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  server = await serverProcess(env);
  assert.equal(await visitCount(server.port, a), 3, 'the visits counted while detached were kept');
  assert.equal(await visitCount(server.port, b), 0);
  assert.deepEqual(await listedCodes(server.port, KEY), [b, a]);
});

/** A harness on a fresh data dir (removed after the test) with fsync on, plus one acknowledged link. */
async function withLink(t: TestContext, options: { visitFlushMs?: number } = {}): Promise<{ h: Harness; dir: string; a: string; data: DataDir }> {
  const data = dataDir(t);
  const h = await data.start({ fsync: 'always', apiKeys: [KEY], ...options });
  return { h, dir: data.dir, a: await h.shorten('https://example.com/acknowledged'), data };
}

async function restarted(h: Harness, data: DataDir): Promise<Harness> {
  await h.close(true);
  return data.start({ apiKeys: [KEY] });
}

const codes = (h: Harness): Promise<string[]> => listedCodes(h.port, KEY);

test('regression: urls.log alone removed: the next write is 503, then the log is rewritten from memory and writes go on', async (t) => {
  let { h, dir, a, data } = await withLink(t);
  rmSync(join(dir, LOG_FILE));
  assertRemoved(await shorten(h.port, 'https://example.com/refused'));
  const c = codeOf(await shorten(h.port, 'https://example.com/after'));
  assert.deepEqual(await codes(h), [c, a]);
  const disk = replay(readFileSync(join(dir, LOG_FILE)));
  assert.equal(disk.damage, undefined);
  assert.deepEqual([...disk.records.keys()], [a, c]);

  h = await restarted(h, data);
  assert.deepEqual(await codes(h), [c, a]);
  assert.equal((await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/refused')}`)).status, 404);
});

test('regression: urls.log replaced by another file: 503, then the log is rewritten from memory and the other file is kept beside it', async (t) => {
  let { h, dir, a, data } = await withLink(t);
  const foreign = encodeEntry({ op: 'C', code: 'foreign1', url: 'https://example.com/foreign', createdAt: 1_700_000_000, retentionDays: 0, visits: 0 });
  writeFileSync(join(dir, 'other.log'), foreign);
  renameSync(join(dir, 'other.log'), join(dir, LOG_FILE));

  assertRemoved(await shorten(h.port, 'https://example.com/refused'));
  const c = codeOf(await shorten(h.port, 'https://example.com/after'));
  const kept = readdirSync(dir).filter((f) => f.startsWith(`${LOG_FILE}.replaced-`));
  assert.equal(kept.length, 1, readdirSync(dir).join(', '));
  assert.deepEqual(readFileSync(join(dir, kept[0]!)), foreign, 'the file that replaced the log is kept, byte for byte');
  assert.ok(h.logs.lines.some((l) => l['level'] === 'warn' && l['kept'] === join(dir, kept[0]!)));

  h = await restarted(h, data);
  assert.deepEqual(await codes(h), [c, a], 'memory won: every acknowledged link, and not the other file');
});

test('regression: a removed data dir that comes back while idle gets its log from the timer, visit counts included', async (t) => {
  let { h, dir, a, data } = await withLink(t, { visitFlushMs: 20 });
  rmSync(dir, { recursive: true, force: true });
  assertRemoved(await shorten(h.port, 'https://example.com/refused'));
  for (let i = 0; i < 2; i++) assert.equal((await h.req(`/${a}`)).status, 302);
  await delay(100);
  assert.equal(existsSync(dir), false);

  mkdirSync(dir);
  const log = join(dir, LOG_FILE);
  await until(() => existsSync(log) && replay(readFileSync(log)).records.get(a)?.visits === 2, 'the log rewritten with the visits');
  h = await restarted(h, data);
  assert.deepEqual(await codes(h), [a]);
  assert.equal(await visitCount(h.port, a), 2);
});

test('a data dir still gone at shutdown is not recreated, and the loss is logged as an error', async (t) => {
  const { h, dir } = await withLink(t);
  rmSync(dir, { recursive: true, force: true });
  assertRemoved(await shorten(h.port, 'https://example.com/refused'));
  await h.close(true);
  assert.equal(existsSync(dir), false);
  const lost = h.logs.lines.find((l) => /lost at exit/.test(String(l['msg'])));
  assert.ok(lost);
  assert.equal(lost['level'], 'error');
  assert.equal(lost['records'], 1);
});
