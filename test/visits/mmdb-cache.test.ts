/**
 * The `.mmdb` reader's caches: a returning address is answered from memory, the memory is bounded
 * whatever the number of distinct addresses, and an entry forgotten is looked up again, never
 * answered wrongly (docs/architecture.md, `src/visits/`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADDRESS_CACHE, BoundedCache, openMmdb } from '../../src/visits/mmdb.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';

test('BoundedCache holds at most twice its half, keeps what is used, forgets what is not', () => {
  const cache = new BoundedCache<number, string>(100);
  for (let i = 0; i < 10_000; i++) {
    cache.set(i, `v${i}`);
    assert.equal(cache.get(0), 'v0', `the entry used all along, after ${i} others`);
    assert.ok(cache.size <= 200, `${cache.size} entries`);
  }
  assert.equal(cache.get(9_999), 'v9999');
  assert.equal(cache.get(5_000), undefined);
});

test('more distinct addresses than the cache holds: every answer still right, twice over', () => {
  const db = openMmdb(
    writeMmdb({
      ipVersion: 6,
      recordSize: 24,
      networks: [
        ['10.0.0.0/8', { country_code: 'JP' }],
        ['1.2.3.0/25', { country_code: 'DE' }],
        ['2001:db8::/32', { country: { iso_code: 'NL' } }],
      ],
    }),
  );
  const distinct = 3 * ADDRESS_CACHE;
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < distinct; i++) {
      assert.equal(db.countryOf(`10.${(i >> 8) & 255}.${i & 255}.${round}`), 'JP');
      assert.equal(db.countryOf(`2001:db8::${i.toString(16)}`), 'NL');
      assert.equal(db.countryOf(`1.2.3.${i & 255}`), (i & 255) < 128 ? 'DE' : null);
    }
  }
});
