/**
 * The reader over small databases written here (test/support/mmdb-writer.ts): every data type and
 * size form of the format, every pointer size, a data cache container and an end marker, record
 * sizes 24, 28 (with records past 2^24, so the shared middle byte matters) and 32, an IPv4 tree and
 * an IPv6 tree — each address answered exactly as the `maxmind` package answers it from the same
 * bytes (docs/architecture.md, `src/visits/`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Reader } from 'maxmind';
import { openMmdb, type MmdbValue } from '../../src/visits/mmdb.ts';
import { bytes, f32, f64, i32, ref, u128, u16, u32, u64, writeMmdb, type DbSpec, type Value } from '../support/mmdb-writer.ts';

const CACHE: Value[] = [
  'near: a pointer of size 0',
  bytes(new Uint8Array(3000)), // unreferenced, to move what follows past 2,048
  'mid: a pointer of size 1',
  bytes(new Uint8Array(530_000)), // past 526,336
  'far: a pointer of size 2',
  { nested: 'a map reached by a pointer', n: u16(7) },
  ['an array reached by a pointer', u32(1)],
  'a map key reached by a pointer',
];

/** One record holding every type, every size form and every pointer size. */
const EVERYTHING: Value = {
  country: { iso_code: 'DE', names: { en: 'Germany', 'zh-CN': '德国' } },
  str0: '',
  str28: 'a'.repeat(28),
  str29: 'b'.repeat(29),
  str284: 'c'.repeat(284),
  str285: 'd'.repeat(285),
  str65820: 'e'.repeat(65_820),
  str65821: 'f'.repeat(65_821),
  str70000: 'é'.repeat(35_000),
  unicode: 'Zürich – 東京 😀',
  double: f64(-1234.5678),
  double0: f64(0),
  float: f32(1.5),
  floatNeg: f32(-0.25),
  bytes0: bytes(new Uint8Array(0)),
  bytes4: bytes(Uint8Array.from([0, 1, 2, 255])),
  u16_0: u16(0),
  u16_1: u16(255),
  u16_2: u16(65_535),
  u32_3: u32(0x123456),
  u32_4: u32(0xffffffff),
  i32_neg: i32(-1),
  i32_min: i32(-2_147_483_648),
  i32_max: i32(0x7fffffff),
  i32_small: i32(300),
  i32_zero: i32(0),
  u64_0: u64(0n),
  u64_small: u64(5n),
  u64_max: u64(2n ** 64n - 1n),
  u128_mid: u128(2n ** 100n + 7n),
  u128_max: u128(2n ** 128n - 1n),
  yes: true,
  no: false,
  arr0: [],
  arr: [[u16(1)], {}, 'x', [[[true]]]],
  map0: {},
  p0: ref(0),
  p1: ref(2),
  p2: ref(4),
  p3: ref(0, 3),
  pmap: ref(5),
  parr: ref(6),
  '*ref7': 'a value under a key reached by a pointer',
};

function networks(ipVersion: 4 | 6): DbSpec['networks'] {
  const v4: DbSpec['networks'] = [
    ['1.2.3.0/24', EVERYTHING],
    ['1.2.3.128/25', { country_code: 'FR' }],
    ['10.0.0.0/8', { country: { iso_code: 'jp' } }],
    ['200.0.0.0/5', 'a record that is a string'],
    ['255.255.255.255/32', { country_code: 'ZZZ' }],
  ];
  if (ipVersion === 4) return v4;
  return [...v4, ['2001:db8::/32', { country_code: 'NL' }], ['2a00::/12', { country: { iso_code: 'SE' } }], ['ffff::/16', [u16(1), 'x']]];
}

/** First, last, middle and both neighbours of every network, and the corners of the space. */
const V4_PROBES = [
  '0.0.0.0',
  '1.2.2.255',
  '1.2.3.0',
  '1.2.3.77',
  '1.2.3.127',
  '1.2.3.128',
  '1.2.3.255',
  '1.2.4.0',
  '9.255.255.255',
  '10.0.0.0',
  '10.128.7.1',
  '10.255.255.255',
  '11.0.0.0',
  '199.255.255.255',
  '200.0.0.0',
  '203.0.113.9',
  '207.255.255.255',
  '208.0.0.0',
  '255.255.255.254',
  '255.255.255.255',
];
const V6_PROBES = [
  '::',
  '::1',
  '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:db8::',
  '2001:db8::1',
  '2001:DB8:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF',
  '2001:db9::',
  '29ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '2a00::',
  '2a0f:ffff::1',
  '2a10::',
  'ffff::',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '::1.2.3.4',
  '64:ff9b::1.2.3.4',
  '2002:102:304::',
];

/** The `maxmind` package's answer in our shapes: bytes as a plain `Uint8Array`. */
function normalize(v: unknown): MmdbValue | null {
  if (v === null) return null;
  if (Buffer.isBuffer(v)) return new Uint8Array(v);
  if (Array.isArray(v)) return v.map(normalize) as MmdbValue[];
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, normalize(x)])) as MmdbValue;
  return v as MmdbValue;
}

const SHAPES: { ipVersion: 4 | 6; recordSize: 24 | 28 | 32; pad?: number }[] = [
  { ipVersion: 4, recordSize: 24 },
  { ipVersion: 4, recordSize: 28, pad: 17_000_000 },
  { ipVersion: 4, recordSize: 32 },
  { ipVersion: 6, recordSize: 24 },
  { ipVersion: 6, recordSize: 28, pad: 17_000_000 },
  { ipVersion: 6, recordSize: 32, pad: 17_000_000 },
];

for (const shape of SHAPES) {
  for (const mapV4 of shape.ipVersion === 6 ? [false, true] : [false]) {
    test(`an IPv${shape.ipVersion} tree with ${shape.recordSize}-bit records${mapV4 ? ' and ::ffff:0:0/96 mapped' : ''} is read as maxmind reads it`, () => {
      const file = writeMmdb({ ...shape, networks: networks(shape.ipVersion), cache: CACHE, mapV4 });
      if (shape.pad) assert.ok(file.length > 2 ** 24 + 1000, 'the records lie past 2^24');
      const ours = openMmdb(file);
      const theirs = new Reader(file);
      assert.deepEqual(ours.metadata, {
        databaseType: 'Test-Country',
        ipVersion: shape.ipVersion,
        recordSize: shape.recordSize,
        nodeCount: theirs.metadata.nodeCount,
        binaryFormat: '2.0',
        buildEpoch: 1_700_000_000,
      });
      const probes = shape.ipVersion === 6 ? [...V4_PROBES, ...V6_PROBES] : V4_PROBES;
      let found = 0;
      for (const address of probes) {
        const expected = normalize(theirs.get(address));
        assert.deepStrictEqual(ours.lookup(address), expected, address);
        if (expected !== null) found++;
      }
      assert.ok(found >= 10, `${found} probes found a record`);
      // An IPv4-mapped address is its IPv4 address, mapped in the tree or not.
      for (const address of V4_PROBES) assert.deepStrictEqual(ours.lookup(`::ffff:${address}`), normalize(theirs.get(address)), `::ffff:${address}`);
      assert.deepStrictEqual(ours.lookup('::FFFF:0102:0304'), normalize(theirs.get('1.2.3.4')));
      if (mapV4) for (const address of V4_PROBES) assert.deepStrictEqual(normalize(theirs.get(`::ffff:${address}`)), normalize(theirs.get(address)));
    });
  }
}

test('every value of the record of every type decodes to its JS value', () => {
  const ours = openMmdb(writeMmdb({ ipVersion: 6, recordSize: 24, networks: networks(6), cache: CACHE }));
  const r = ours.lookup('1.2.3.4') as Record<string, MmdbValue>;
  assert.equal(r['str65821'], 'f'.repeat(65_821));
  assert.equal(r['str70000'], 'é'.repeat(35_000));
  assert.equal(r['unicode'], 'Zürich – 東京 😀');
  assert.equal(r['double'], -1234.5678);
  assert.equal(r['float'], 1.5);
  assert.equal(r['floatNeg'], -0.25);
  assert.deepStrictEqual(r['bytes4'], Uint8Array.from([0, 1, 2, 255]));
  assert.equal(r['u32_4'], 0xffffffff);
  assert.equal(r['i32_neg'], -1);
  assert.equal(r['i32_min'], -2_147_483_648);
  assert.equal(r['i32_small'], 300);
  assert.equal(r['u64_0'], 0n);
  assert.equal(r['u64_max'], 2n ** 64n - 1n);
  assert.equal(r['u128_max'], 2n ** 128n - 1n);
  assert.equal(r['yes'], true);
  assert.equal(r['no'], false);
  assert.deepStrictEqual(r['arr'], [[1], {}, 'x', [[[true]]]]);
  assert.equal(r['p0'], 'near: a pointer of size 0');
  assert.equal(r['p1'], 'mid: a pointer of size 1');
  assert.equal(r['p2'], 'far: a pointer of size 2');
  assert.equal(r['p3'], 'near: a pointer of size 0');
  assert.deepStrictEqual(r['pmap'], { nested: 'a map reached by a pointer', n: 7 });
  assert.deepStrictEqual(r['parr'], ['an array reached by a pointer', 1]);
  assert.equal(r['a map key reached by a pointer'], 'a value under a key reached by a pointer');
});

test('countryOf: country.iso_code, else country_code; two letters, upper case; null for any other record', () => {
  const ours = openMmdb(writeMmdb({ ipVersion: 6, recordSize: 28, networks: networks(6), cache: CACHE }));
  const cases: [string, string | null][] = [
    ['1.2.3.4', 'DE'],
    ['::ffff:1.2.3.4', 'DE'],
    ['1.2.3.200', 'FR'],
    ['10.1.2.3', 'JP'],
    ['203.0.113.9', null], // a string record
    ['255.255.255.255', null], // three letters
    ['2001:db8::42', 'NL'],
    ['2a01::1', 'SE'],
    ['ffff::1', null], // an array record
    ['192.0.2.1', null], // no record
    ['::1', null],
    ['not an address', null],
    ['', null],
  ];
  // Twice: the second round is answered from the caches, and must say the same.
  for (let round = 0; round < 2; round++) for (const [address, country] of cases) assert.equal(ours.countryOf(address), country, address);
});

test('a map key __proto__ is data, not the prototype of the record', () => {
  const ours = openMmdb(
    writeMmdb({ ipVersion: 4, recordSize: 24, networks: [['1.0.0.0/8', JSON.parse('{"__proto__": "x", "country_code": "IT"}') as Value]] }),
  );
  const r = ours.lookup('1.1.1.1') as Record<string, MmdbValue>;
  assert.equal(Object.getPrototypeOf(r), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(r, '__proto__')?.value, 'x');
  assert.equal(ours.countryOf('1.1.1.1'), 'IT');
});
