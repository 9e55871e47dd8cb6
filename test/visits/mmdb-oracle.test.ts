/**
 * Our `.mmdb` reader against the `maxmind` package, both reading the public-domain country
 * database of `@ip-location-db/geo-whois-asn-country-mmdb`: the same record (whole, not only its
 * country) for every one of more than 100,000 IPv4 and IPv6 addresses. The addresses are seeded
 * (a failure names its seed and address, so it reproduces): uniform ones, and for networks found
 * at random their first and last address and both neighbours, where an off-by-one in a tree walk
 * shows (docs/architecture.md, `src/visits/`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { Reader } from 'maxmind';
import { openMmdb, type MmdbReader } from '../../src/visits/mmdb.ts';
import { prng } from '../support/crash-harness.ts';

const SEED = 31;
const DIR = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
const read = (name: string): Buffer => readFileSync(join(DIR, name));

type Oracle = Reader<Record<string, unknown>>;
const random = prng(SEED);
const word = (): number => Math.floor(random() * 2 ** 32);

function v4Text(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** An IPv6 address in one of the spellings a header may carry: full, `::`-compressed, upper case. */
function v6Text(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  const style = random();
  if (style < 0.25) return groups.map((g) => g.padStart(4, '0')).join(':');
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
  }
  const text = best < 0 ? groups.join(':') : `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
  return style > 0.85 ? text.toUpperCase() : text;
}

/** The registries' big blocks (2001::/16 and four /12s), where most allocations lie. */
const BLOCKS: readonly [bigint, number][] = [
  [0x2001n, 16],
  [0x240n, 12],
  [0x260n, 12],
  [0x2a0n, 12],
  [0x2c0n, 12],
];

/** A random address: in 2000::/3 (global unicast), in one of `BLOCKS`, or (`anywhere`) anywhere. */
function v6Random(anywhere = false): bigint {
  let n = 0n;
  for (let i = 0; i < 4; i++) n = (n << 32n) | BigInt(word());
  if (anywhere) return n;
  if (random() < 0.5) return (n & ((1n << 125n) - 1n)) | (1n << 125n);
  const [top, bits] = BLOCKS[Math.floor(random() * BLOCKS.length)]!;
  return (n & ((1n << BigInt(128 - bits)) - 1n)) | (top << BigInt(128 - bits));
}

/** First, last and both neighbours of the network (of data or of none) that holds `address`. */
function v4Edges(oracle: Oracle, n: number): string[] {
  const [, prefix] = oracle.getWithPrefixLength(v4Text(n));
  const size = 2 ** (32 - prefix);
  const first = n - (n % size);
  const last = first + size - 1;
  return [first - 1, first, last, last + 1].filter((x) => x >= 0 && x < 2 ** 32).map(v4Text);
}

function v6Edges(oracle: Oracle, n: bigint): string[] {
  const [, prefix] = oracle.getWithPrefixLength(v6Text(n));
  const mask = (1n << BigInt(128 - prefix)) - 1n;
  const first = n & ~mask;
  const last = first | mask;
  return [first - 1n, first, last, last + 1n].filter((x) => x >= 0n && x < 1n << 128n).map(v6Text);
}

/** Compares record and country for every address; returns how many had a record. */
function agree(ours: MmdbReader, oracle: Oracle, addresses: readonly string[], as: (a: string) => string = (a) => a): number {
  let found = 0;
  for (const address of addresses) {
    const expected = oracle.get(as(address));
    const context = `seed ${SEED}, ${address}`;
    assert.deepStrictEqual(ours.lookup(address), expected, context);
    assert.equal(ours.countryOf(address), expected === null ? null : expected['country_code'], context);
    if (expected !== null) found++;
  }
  return found;
}

function v4Addresses(oracle: Oracle, uniform: number, networks: number): string[] {
  const out = Array.from({ length: uniform }, () => v4Text(word()));
  for (let i = 0; i < networks; i++) out.push(...v4Edges(oracle, word()));
  return out;
}

function v6Addresses(oracle: Oracle, uniform: number, networks: number): string[] {
  const out = Array.from({ length: uniform }, (_, i) => v6Text(v6Random(i % 8 === 0)));
  for (let i = 0; i < networks; i++) out.push(...v6Edges(oracle, v6Random()));
  return out;
}

test('the IPv4+IPv6 database: the same record as maxmind for 140,000+ addresses and 11,000 IPv4-mapped ones', () => {
  const file = read('geo-whois-asn-country.mmdb');
  const ours = openMmdb(file);
  const oracle: Oracle = new Reader(file);
  assert.equal(ours.metadata.nodeCount, oracle.metadata.nodeCount);
  assert.equal(ours.metadata.ipVersion, 6);

  const v4 = v4Addresses(oracle, 35_000, 10_000);
  const v6 = v6Addresses(oracle, 35_000, 10_000);
  assert.ok(v4.length + v6.length >= 140_000, `${v4.length + v6.length} addresses`);
  const found4 = agree(ours, oracle, v4);
  const found6 = agree(ours, oracle, v6);
  // Most of the IPv4 space is allocated, a small part of the IPv6 space (about a tenth of these).
  assert.ok(found4 > v4.length / 2, `${found4} of ${v4.length} IPv4 addresses found`);
  assert.ok(found6 > v6.length / 20, `${found6} of ${v6.length} IPv6 addresses found`);

  // IPv4-mapped (what a dual-stack socket reports) is the IPv4 address; this database does not map
  // ::ffff:0:0/96, so maxmind is asked the IPv4 spelling.
  const mapped = v4.slice(0, 10_000);
  agree(
    ours,
    oracle,
    mapped.map((a) => `::ffff:${a}`),
    (a) => a.slice(7),
  );
  agree(
    ours,
    oracle,
    mapped.slice(0, 1000).map((a) => `::FFFF:${a}`),
    (a) => a.slice(7),
  );
});

test('the IPv4-only database: the same record as maxmind for IPv4; IPv6 is no record there, except IPv4-mapped', () => {
  const file = read('geo-whois-asn-country-ipv4.mmdb');
  const ours = openMmdb(file);
  const oracle: Oracle = new Reader(file);
  assert.equal(ours.metadata.ipVersion, 4);
  const v4 = v4Addresses(oracle, 20_000, 5000);
  assert.ok(agree(ours, oracle, v4) > v4.length / 2);
  agree(
    ours,
    oracle,
    v4.slice(0, 5000).map((a) => `::ffff:${a}`),
    (a) => a.slice(7),
  );
  // maxmind walks an IPv6 address's first 32 bits through an IPv4 tree (2001:4860:: as 32.1.72.96);
  // an IPv6 client is not in an IPv4 database, so ours answers null.
  for (let i = 0; i < 2000; i++) {
    const address = v6Text(v6Random());
    assert.equal(ours.lookup(address), null, address);
    assert.equal(ours.countryOf(address), null, address);
  }
});

test('the IPv6-only database: the same record as maxmind for IPv6 and IPv4 addresses', () => {
  const file = read('geo-whois-asn-country-ipv6.mmdb');
  const ours = openMmdb(file);
  const oracle: Oracle = new Reader(file);
  const v6 = v6Addresses(oracle, 10_000, 5000);
  const found = agree(ours, oracle, v6);
  assert.ok(found > v6.length / 20, `${found} of ${v6.length}`);
  agree(ours, oracle, v4Addresses(oracle, 2000, 0));
});
