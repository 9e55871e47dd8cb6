/**
 * The country database of `geoip_db` (docs/analytics.md): opened at start-up (a damaged, truncated
 * or missing file is a `GeoipError`), looked at at most once a minute by the clock, and a changed
 * file taken when it opens; a bad new one keeps the old, with a warning. The clock is fake and the
 * timer never fires: each check is called by the test, and nothing waits.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { CHECK_INTERVAL_MS, GeoipError, openGeoip, type GeoipOptions } from '../../src/visits/geoip.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';
import { tempDir } from '../support/helpers.ts';

const JAPAN = writeMmdb({ ipVersion: 6, recordSize: 24, networks: [['10.0.0.0/8', { country_code: 'JP' }]] });
const GERMANY = writeMmdb({ ipVersion: 6, recordSize: 28, networks: [['10.0.0.0/8', { country: { iso_code: 'DE' } }]] });

/** A database file, a fake clock, a timer that never fires, and the warnings. */
function setup(t: TestContext, bytes: Uint8Array, extra: Partial<GeoipOptions> = {}) {
  const dir = tempDir(t);
  const path = join(dir, 'country.mmdb');
  writeFileSync(path, bytes);
  const clock = { ms: 1_000_000 };
  const warnings: { message: string; fields: Record<string, unknown> }[] = [];
  let timers = 0;
  let stopped = 0;
  const geoip = openGeoip({
    path,
    warn: (message, fields) => warnings.push({ message, fields }),
    now: () => clock.ms,
    every: (ms) => {
      assert.equal(ms, CHECK_INTERVAL_MS);
      timers++;
      return () => stopped++;
    },
    ...extra,
  });
  t.after(() => geoip.close());
  return { dir, path, clock, warnings, geoip, timers: () => timers, stopped: () => stopped };
}

/** Replaces the file the way an updater should: a new file renamed into place. */
function replace(dir: string, path: string, bytes: Uint8Array): void {
  const next = join(dir, 'next.mmdb');
  writeFileSync(next, bytes);
  renameSync(next, path);
}

test('the public-domain database opens and answers countries', (t) => {
  const pkg = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
  const { geoip } = setup(t, readFileSync(join(pkg, 'geo-whois-asn-country-ipv4.mmdb')));
  // Google's public resolver is registered in the US.
  assert.equal(geoip.countryOf('8.8.8.8'), 'US');
  assert.equal(geoip.countryOf('not an address'), null);
});

test('a changed file is read once a minute has passed, and not before', async (t) => {
  const { dir, path, clock, geoip, warnings, timers } = setup(t, JAPAN);
  assert.equal(timers(), 1);
  assert.equal(geoip.countryOf('10.1.2.3'), 'JP');
  replace(dir, path, GERMANY);
  clock.ms += CHECK_INTERVAL_MS - 1;
  assert.equal(await geoip.check(), 'skipped');
  assert.equal(geoip.countryOf('10.1.2.3'), 'JP');
  clock.ms += 1;
  assert.equal(await geoip.check(), 'reloaded');
  assert.equal(geoip.countryOf('10.1.2.3'), 'DE');
  // Looked at again a minute later: nothing changed, nothing read.
  clock.ms += CHECK_INTERVAL_MS;
  assert.equal(await geoip.check(), 'unchanged');
  assert.deepEqual(warnings, []);
});

test('a damaged new file keeps the old database, with one warning; a good one after it is taken', async (t) => {
  const { dir, path, clock, geoip, warnings } = setup(t, JAPAN);
  replace(dir, path, GERMANY.subarray(0, GERMANY.length - 20));
  clock.ms += CHECK_INTERVAL_MS;
  assert.equal(await geoip.check(), 'kept');
  assert.equal(geoip.countryOf('10.1.2.3'), 'JP');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /does not open; the one loaded stays in use/);
  assert.equal(warnings[0]!.fields['file'], path);
  // The same bad file is not read, nor warned of, again.
  clock.ms += CHECK_INTERVAL_MS;
  assert.equal(await geoip.check(), 'unchanged');
  assert.equal(warnings.length, 1);
  replace(dir, path, GERMANY);
  clock.ms += CHECK_INTERVAL_MS;
  assert.equal(await geoip.check(), 'reloaded');
  assert.equal(geoip.countryOf('10.1.2.3'), 'DE');
});

test('a removed file keeps the old database, with a warning', async (t) => {
  const { path, clock, geoip, warnings } = setup(t, JAPAN);
  rmSync(path);
  clock.ms += CHECK_INTERVAL_MS;
  assert.equal(await geoip.check(), 'kept');
  assert.equal(geoip.countryOf('10.1.2.3'), 'JP');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /cannot be read; the one loaded stays in use/);
  assert.equal(warnings[0]!.fields['error'], 'ENOENT');
});

test('checks asked together share one look at the file', async (t) => {
  let versions = 0;
  const { dir, path, clock, geoip } = setup(t, JAPAN, {
    files: {
      read: (p) => Promise.resolve(readFileSync(p)),
      version: async (p) => {
        versions++;
        const { statSync } = await import('node:fs');
        const s = statSync(p);
        return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
      },
    },
  });
  replace(dir, path, GERMANY);
  clock.ms += CHECK_INTERVAL_MS;
  const [a, b] = await Promise.all([geoip.check(), geoip.check()]);
  assert.equal(a, 'reloaded');
  assert.equal(b, 'reloaded');
  assert.equal(versions, 1);
});

test('close stops the timer, once', (t) => {
  const { geoip, stopped } = setup(t, JAPAN);
  geoip.close();
  geoip.close();
  assert.equal(stopped(), 1);
});

test('a damaged, truncated, empty or missing file at start-up is a GeoipError naming the file', (t) => {
  const dir = tempDir(t);
  const cases: readonly [string, Uint8Array | undefined, RegExp][] = [
    ['truncated.mmdb', JAPAN.subarray(0, JAPAN.length - 10), /truncated|metadata|MaxMind/i],
    ['empty.mmdb', new Uint8Array(0), /metadata marker/],
    ['text.mmdb', new TextEncoder().encode('not a database'), /metadata marker/],
    ['missing.mmdb', undefined, /ENOENT/],
  ];
  for (const [name, bytes, why] of cases) {
    const path = join(dir, name);
    if (bytes !== undefined) writeFileSync(path, bytes);
    assert.throws(
      () => openGeoip({ path, warn: () => undefined, every: () => () => undefined }),
      (err: unknown) => err instanceof GeoipError && err.message.includes(JSON.stringify(path)) && why.test(err.message),
      name,
    );
  }
});
