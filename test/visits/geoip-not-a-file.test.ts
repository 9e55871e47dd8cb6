/**
 * Regression: a `GEOIP_DB` that is not a regular file, or is larger than `MAX_DATABASE_BYTES`, is
 * refused without being read (docs/analytics.md). A FIFO used to hang start-up (its open waits for
 * a writer), `/dev/zero` was read forever, and a FIFO renamed in at run time wedged every later
 * reload while it held a thread of the pool. Now start-up throws a `GeoipError` saying what the
 * file is, and a reload keeps the old database with a warning, and still takes a good file after.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { CHECK_INTERVAL_MS, GeoipError, MAX_DATABASE_BYTES, openGeoip } from '../../src/visits/geoip.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';
import { tempDir } from '../support/helpers.ts';

const JAPAN = writeMmdb({ ipVersion: 6, recordSize: 24, networks: [['10.0.0.0/8', { country_code: 'JP' }]] });
const GERMANY = writeMmdb({ ipVersion: 6, recordSize: 24, networks: [['10.0.0.0/8', { country_code: 'DE' }]] });
const TOO_LARGE = MAX_DATABASE_BYTES + 1;

/** Each kind of path that must not be read, made at `path`, with the reason given for it. */
const KINDS: readonly { name: string; make: (path: string) => void; reason: string }[] = [
  { name: 'a FIFO', make: (path) => execFileSync('mkfifo', [path]), reason: 'not a regular file (a FIFO)' },
  { name: '/dev/zero', make: (path) => symlinkSync('/dev/zero', path), reason: 'not a regular file (a character device)' },
  { name: 'a directory', make: (path) => mkdirSync(path), reason: 'not a regular file (a directory)' },
  {
    name: 'a sparse file past the limit',
    // Sparse: no disk is used, and nothing is read if the size is judged first.
    make: (path) => {
      writeFileSync(path, '');
      truncateSync(path, TOO_LARGE);
    },
    reason: `${TOO_LARGE} bytes, more than the 256 MiB a database may have`,
  },
];

test('the limit is 256 MiB', () => {
  assert.equal(MAX_DATABASE_BYTES, 268_435_456);
});

for (const kind of KINDS) {
  test(`${kind.name} at start-up is a GeoipError saying what it is`, { timeout: 10_000 }, (t) => {
    const path = join(tempDir(t), 'country.mmdb');
    kind.make(path);
    assert.throws(
      () => openGeoip({ path, warn: () => undefined, every: () => () => undefined }),
      (err: unknown) => {
        assert.ok(err instanceof GeoipError);
        assert.equal(err.message, `cannot read the country database ${JSON.stringify(path)}: ${kind.reason}`);
        return true;
      },
    );
  });

  test(`${kind.name} renamed in at run time keeps the old database with a warning; a good file after it is taken`, {
    timeout: 10_000,
  }, async (t: TestContext) => {
    const dir = tempDir(t);
    const path = join(dir, 'country.mmdb');
    writeFileSync(path, JAPAN);
    const clock = { ms: 1_000_000 };
    const warnings: { message: string; fields: Record<string, unknown> }[] = [];
    const geoip = openGeoip({ path, warn: (message, fields) => warnings.push({ message, fields }), now: () => clock.ms, every: () => () => undefined });
    t.after(() => geoip.close());

    const next = join(dir, 'next');
    /** Puts `next` in place (a directory is not renamed over a file, nor a file over a directory). */
    const swap = () => {
      rmSync(path, { recursive: true });
      renameSync(next, path);
    };
    kind.make(next);
    swap();
    clock.ms += CHECK_INTERVAL_MS;
    assert.equal(await geoip.check(), 'kept');
    assert.equal(geoip.countryOf('10.1.2.3'), 'JP');
    assert.deepEqual(warnings, [
      { message: 'the country database changed but does not open; the one loaded stays in use', fields: { file: path, error: kind.reason } },
    ]);

    // Nothing was left waiting on the refused file: the next check looks again and takes a good one.
    writeFileSync(next, GERMANY);
    swap();
    clock.ms += CHECK_INTERVAL_MS;
    assert.equal(await geoip.check(), 'reloaded');
    assert.equal(geoip.countryOf('10.1.2.3'), 'DE');
  });
}
