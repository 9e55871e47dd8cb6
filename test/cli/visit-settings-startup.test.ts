/**
 * The visit settings at start-up (README, configuration): a `GEOIP_DB` that is damaged, missing,
 * not a regular file (a FIFO, `/dev/zero`) or larger than 256 MiB stops the server with one line naming the setting and exit code 2, like a bad value; a good one
 * starts it; `GEOIP_HEADER` without `TRUST_PROXY` is ignored with a warning (a header is trusted
 * only behind a proxy that sets it), and with `VISIT_TRACKING=counts` nothing reads either. Real
 * processes; the library's options give the same answers.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener } from '../../src/app.ts';
import { ConfigError } from '../../src/errors.ts';
import { LogCapture, ROOT, serverProcessOn, tempDir } from '../support/helpers.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';
import { createLogger } from '../../src/log.ts';
import { serverBundle } from '../support/server-entry.ts';

const GOOD = writeMmdb({ ipVersion: 6, recordSize: 24, networks: [['10.0.0.0/8', { country_code: 'JP' }]] });
const HEADER_WARNING = /^GEOIP_HEADER is ignored: a country header is trusted only behind a proxy/;

/** `src/server.ts` with only `env` for settings, run to its exit (killed after 20 s: a start-up that hangs fails, and leaves nothing running). */
function runServer(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [serverBundle()], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', FSYNC: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

test('a damaged or missing GEOIP_DB: exit 2 with one line naming GEOIP_DB and the file', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const damaged = join(dir, 'damaged.mmdb');
  writeFileSync(damaged, GOOD.subarray(0, GOOD.length - 12));
  for (const file of [damaged, join(dir, 'missing.mmdb')]) {
    const { code, err } = await runServer({ DATA_DIR: join(dir, 'data'), GEOIP_DB: file });
    assert.equal(code, 2, err);
    assert.equal(err.trim().split('\n').length, 1, err);
    assert.match(err, /invalid GEOIP_DB: cannot read the country database/);
    assert.ok(err.includes(JSON.stringify(file)), err);
  }
});

test('a GEOIP_DB that is a FIFO, /dev/zero or past 256 MiB: exit 2 with one line saying what it is', { timeout: 90_000 }, async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'fifo.mmdb');
  execFileSync('mkfifo', [fifo]);
  const large = join(dir, 'large.mmdb');
  writeFileSync(large, '');
  truncateSync(large, 256 * 1024 * 1024 + 1);
  const cases: readonly [string, string][] = [
    [fifo, 'not a regular file (a FIFO)'],
    ['/dev/zero', 'not a regular file (a character device)'],
    [large, '268435457 bytes, more than the 256 MiB a database may have'],
  ];
  for (const [file, reason] of cases) {
    const { code, err } = await runServer({ DATA_DIR: join(dir, 'data'), GEOIP_DB: file });
    assert.equal(code, 2, err);
    assert.equal(err.trim().split('\n').length, 1, err);
    assert.ok(err.includes(`invalid GEOIP_DB: cannot read the country database ${JSON.stringify(file)}: ${reason}`), err);
  }
});

test('a good GEOIP_DB starts; GEOIP_HEADER without TRUST_PROXY warns once, naming the header', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'country.mmdb');
  writeFileSync(file, GOOD);
  const server = await serverProcessOn(t, { FSYNC: 'off', API_KEYS: 'k', GEOIP_DB: file, GEOIP_HEADER: 'CF-IPCountry' });
  const warnings = server.lines.filter((l) => l['level'] === 'warn');
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(String(warnings[0]!['msg']), HEADER_WARNING);
  assert.equal(warnings[0]!['header'], 'cf-ipcountry');
});

test('library: the same ConfigError, the header warning only without TRUST_PROXY, and nothing read with counts', (t) => {
  const dir = tempDir(t);
  const damaged = join(dir, 'damaged.mmdb');
  writeFileSync(damaged, 'not a database');
  assert.throws(
    () => createShortener({ dataDir: join(dir, 'a'), fsync: 'off', logLevel: 'silent', geoipDb: damaged }),
    (err: unknown) => err instanceof ConfigError && err.message.startsWith('invalid GEOIP_DB: '),
  );
  const logs = new LogCapture();
  const behindProxy = createShortener({
    dataDir: join(dir, 'b'),
    fsync: 'off',
    logger: createLogger('info', logs),
    geoipHeader: 'CF-IPCountry',
    trustProxy: 1,
  });
  t.after(() => behindProxy.close());
  assert.equal(logs.lines.filter((l) => l['level'] === 'warn').length, 0);
  // With counts no event is made, so neither the file nor the header is looked at.
  const counts = createShortener({
    dataDir: join(dir, 'c'),
    fsync: 'off',
    logger: createLogger('info', logs),
    visitTracking: 'counts',
    geoipDb: damaged,
    geoipHeader: 'CF-IPCountry',
  });
  t.after(() => counts.close());
  assert.equal(logs.lines.filter((l) => l['level'] === 'warn').length, 0);
});
