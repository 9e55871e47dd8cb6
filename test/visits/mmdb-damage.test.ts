/**
 * A damaged or truncated `.mmdb` is refused at open with an `MmdbError` that says what is wrong —
 * never another exception, never a hang, and never a lookup that fails later: a file that opens
 * answers every address (docs/architecture.md, `src/visits/`). The decoder alone is bounded too:
 * a bad pointer, a cycle of pointers or a record that expands without end is an `MmdbError`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { DataSection, MAX_VALUES } from '../../src/visits/mmdb-data.ts';
import { MmdbError, openMmdb } from '../../src/visits/mmdb.ts';
import { prng } from '../support/crash-harness.ts';
import { encode, field, pointerBytes, raw, ref, u16, u32, writeMmdb, type DbSpec, type Value } from '../support/mmdb-writer.ts';

const MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');

/** A small database with nested maps, arrays and pointers, IPv4 and IPv6. */
const SMALL: DbSpec = {
  ipVersion: 6,
  recordSize: 24,
  cache: ['Germany', { en: 'France' }],
  networks: [
    ['1.2.3.0/24', { country: { iso_code: 'DE', names: { en: ref(0) } }, list: [u16(1), u32(70_000), true] }],
    ['1.2.3.128/25', { country_code: 'FR', names: ref(1) }],
    ['10.0.0.0/8', { country_code: 'JP' }],
    ['2001:db8::/32', { country: { iso_code: 'NL' } }],
  ],
  mapV4: true,
};
const PROBES = ['1.2.3.4', '1.2.3.200', '10.9.8.7', '11.0.0.1', '::ffff:1.2.3.4', '2001:db8::1', '2001:db9::', '::', 'ffff::1', '0.0.0.0', '255.255.255.255'];

function refused(bytes: Uint8Array, message: RegExp | undefined, context: string): void {
  assert.throws(
    () => openMmdb(bytes),
    (e: unknown) => {
      assert.ok(e instanceof MmdbError, `${context}: ${String(e)}`);
      if (message) assert.match(e.message, message, context);
      return true;
    },
  );
}

/** A file with one record, `bytes` at data offset 0, for 128.0.0.0/1. */
const oneRecord = (bytes: Uint8Array): Buffer => writeMmdb({ ipVersion: 4, recordSize: 24, networks: [['128.0.0.0/1', raw(bytes)]] });

test('the small database opens and answers (the cases below damage this one)', () => {
  const db = openMmdb(writeMmdb(SMALL));
  assert.deepEqual(
    PROBES.map((a) => db.countryOf(a)),
    ['DE', 'FR', 'JP', null, 'DE', 'NL', null, null, null, null, null],
  );
});

test('truncated at every byte: refused at open', () => {
  const file = writeMmdb(SMALL);
  for (let cut = 0; cut < file.length; cut++) refused(file.subarray(0, cut), undefined, `cut at ${cut} of ${file.length}`);
});

test('the public-domain database cut short, or with a piece taken out: refused at open', () => {
  const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
  const file = readFileSync(join(dir, 'geo-whois-asn-country-ipv4.mmdb'));
  const random = prng(7);
  const cuts = [0, 1, 100, 3_000_000, file.length - 200_000, file.length - 100, file.length - 1];
  for (let i = 0; i < 20; i++) cuts.push(Math.floor(random() * file.length));
  for (const cut of cuts) refused(file.subarray(0, cut), undefined, `cut at ${cut}`);
  refused(
    Buffer.concat([file.subarray(0, 1000), file.subarray(2000)]),
    /^the 16 bytes after the search tree \(at byte 3036900\) are not zeros$/,
    'a piece of the tree taken out',
  );
});

test('bad metadata: each refused with a message that names what is wrong', () => {
  const cases: [Record<string, Value | undefined>, RegExp][] = [
    [{ record_size: u16(20) }, /^record size 20 is not 24, 28 or 32$/],
    [{ record_size: u16(33) }, /^record size 33 is not 24, 28 or 32$/],
    [{ record_size: 'big' }, /record_size is not an unsigned integer/],
    [{ ip_version: u16(5) }, /^ip_version 5 is not 4 or 6$/],
    [{ binary_format_major_version: u16(3) }, /^binary format version 3\.0 is not 2\.x$/],
    [{ node_count: undefined }, /^the metadata has no node_count$/],
    [{ node_count: 'seven' }, /node_count is not an unsigned integer/],
    [{ node_count: u32(0) }, /^the search tree has no nodes$/],
    [{ node_count: u32(100_000) }, /^the search tree of 100000 nodes \(600000 bytes\) does not fit before the metadata/],
    [{ database_type: undefined }, /^the metadata has no database_type string$/],
    [{ description: 'x'.repeat(140 * 1024) }, /^no MaxMind DB metadata marker in the last 128 KiB/],
  ];
  for (const [metadata, message] of cases) refused(writeMmdb({ ...SMALL, metadata }), message, JSON.stringify(Object.keys(metadata)));

  const file = writeMmdb(SMALL);
  const at = file.lastIndexOf(MARKER);
  refused(file.subarray(0, at), /no MaxMind DB metadata marker/, 'no marker');
  refused(Buffer.concat([file.subarray(0, at + MARKER.length), encode('a string')]), /^the metadata is not a map$/, 'a string');
  refused(file.subarray(0, at + MARKER.length), /starts past the end/, 'nothing after the marker');
});

test('garbage after the marker: refused at open, 500 seeded tries', () => {
  const file = writeMmdb(SMALL);
  const head = file.subarray(0, file.lastIndexOf(MARKER) + MARKER.length);
  const random = prng(11);
  for (let i = 0; i < 500; i++) {
    const garbage = Buffer.from(Array.from({ length: Math.floor(random() * 300) }, () => Math.floor(random() * 256)));
    refused(Buffer.concat([head, garbage]), undefined, `try ${i}`);
  }
});

test('a damaged search tree: refused at open', () => {
  const spec: DbSpec = {
    ipVersion: 4,
    recordSize: 24,
    networks: [
      ['0.0.0.0/2', { country_code: 'AA' }],
      ['128.0.0.0/1', { country_code: 'BB' }],
    ],
  };
  const good = writeMmdb(spec);
  assert.equal(openMmdb(good).countryOf('200.1.1.1'), 'BB');
  const nodeCount = openMmdb(good).metadata.nodeCount;
  const withRecord = (offset: number, value: number): Buffer => {
    const b = Buffer.from(good);
    b.writeUIntBE(value, offset, 3);
    return b;
  };
  refused(withRecord(0, 0), /^the search tree goes on past the 32 bits of an address/, 'the root points back to itself');
  refused(withRecord(3, nodeCount + 16 + 10_000), /^node 0 points outside the data section/, 'past the data section');
  refused(withRecord(3, nodeCount + 5), /^node 0 points outside the data section/, 'into the separator');
  // Two /32 chains; the last node of the first gets the last node of the second as its right
  // child: a walk through it would need a 33rd bit.
  const chains = writeMmdb({
    ipVersion: 4,
    recordSize: 24,
    networks: [
      ['1.2.3.4/32', { country_code: 'AA' }],
      ['128.0.0.1/32', { country_code: 'BB' }],
    ],
  });
  const n = openMmdb(chains).metadata.nodeCount;
  assert.equal(openMmdb(chains).countryOf('1.2.3.5'), null);
  const deep = Buffer.from(chains);
  deep.writeUIntBE(n - 1, (n - 2) * 6 + 3, 3);
  refused(deep, new RegExp(`^the search tree goes on past the 32 bits of an address \\(node ${n - 1}\\)$`), 'a node at depth 32');
  const dirty = Buffer.from(good);
  dirty[nodeCount * 6 + 7] = 1;
  refused(dirty, /^the 16 bytes after the search tree \(at byte 12\) are not zeros$/, 'separator');
});

/** Damaged values, each with what the error says: checked at open, and by the decoder alone. */
const BAD_VALUES: [string, Buffer, RegExp][] = [
  ['a pointer past the end', pointerBytes(100_000, 3), /points past the end of its section/],
  ['a map whose value is a pointer past the end', Buffer.concat([field(7, 1), encode('a'), pointerBytes(5000)]), /points past the end of its section/],
  ['a pointer to a pointer', Buffer.concat([pointerBytes(2), pointerBytes(0)]), /points to another pointer/],
  ['a map that holds a pointer to itself', Buffer.concat([field(7, 1), encode('self'), pointerBytes(0)]), /nest deeper than 512|more than 65536 values/],
  ['an array that holds a pointer to itself', Buffer.concat([field(11, 2), encode('x'), pointerBytes(0)]), /nest deeper than 512|more than 65536 values/],
  ['extended type 7 (0 + 7)', Buffer.from([0x01, 0x00]), /unknown extended type 7/],
  ['extended type 16', Buffer.from([0x01, 0x09]), /unknown extended type 16/],
  ['a uint16 of 3 bytes', field(5, 3, Buffer.from([1, 2, 3])), /type 5 .* has 3 bytes, more than 2/],
  ['a uint32 of 5 bytes', field(6, 5, Buffer.alloc(5)), /more than 4/],
  ['an int32 of 5 bytes', field(8, 5, Buffer.alloc(5)), /more than 4/],
  ['a uint64 of 9 bytes', field(9, 9, Buffer.alloc(9)), /more than 8/],
  ['a uint128 of 17 bytes', field(10, 17, Buffer.alloc(17)), /more than 16/],
  ['a boolean of size 2', field(14, 2), /more than 1/],
  ['a double of 4 bytes', field(3, 4, Buffer.alloc(4)), /a double .* has 4 bytes/],
  ['a float of 8 bytes', field(15, 8, Buffer.alloc(8)), /a float .* has 8 bytes/],
  ['a data cache container as a value', field(12, 1, Buffer.from([0x40])), /a data cache container .* where a value was expected/],
  ['an end marker as a value', field(13, 0), /an end marker .* where a value was expected/],
  ['a map key that is a number', Buffer.concat([field(7, 1), encode(u16(1)), encode('v')]), /a map key .* is of type 5, not a string/],
  ['a string longer than the section', field(2, 1000, Buffer.from('short')), /runs past the end of its section/],
  [
    'a map of more pairs than the section holds',
    Buffer.concat([field(7, 1000), encode('a'), encode('b')]),
    /starts past the end of its section|is of type 13, not a string/,
  ], // the file's end marker is next
  ['a size byte cut off', Buffer.from([0x5d]), /runs past the end of its section/],
];

/**
 * A string, then `levels` arrays of two pointers to the one before, laid out from data offset
 * `base`: a few hundred bytes whose `last` array expands to 2^levels values.
 */
function expansion(levels: number, base: number): { bytes: Buffer; last: number } {
  const parts = [encode('leaf')];
  let last = base;
  let length = parts[0]!.length;
  for (let i = 0; i < levels; i++) {
    parts.push(Buffer.concat([field(11, 2), pointerBytes(last, 3), pointerBytes(last, 3)]));
    last = base + length;
    length += parts[parts.length - 1]!.length;
  }
  return { bytes: Buffer.concat(parts), last };
}

test('damaged values: refused at open with what is wrong', () => {
  for (const [name, bytes, message] of BAD_VALUES) refused(oneRecord(bytes), message, name);
});

test('damaged values: the decoder alone throws MmdbError, never another exception', () => {
  for (const [name, bytes, message] of BAD_VALUES) {
    assert.throws(
      () => new DataSection(Buffer.from(bytes), 0, bytes.length).decode(0),
      (e: unknown) => {
        assert.ok(e instanceof MmdbError, `${name}: ${String(e)}`);
        assert.match(e.message, message, name);
        return true;
      },
    );
  }
});

test('a record that would expand to 2^40 values is refused at once, at open and by the decoder', () => {
  const message = new RegExp(`a record expands to more than ${MAX_VALUES} values$`);
  const alone = expansion(40, 0);
  const data = new DataSection(alone.bytes, 0, alone.bytes.length);
  assert.throws(() => data.decode(alone.last), message);
  assert.throws(() => data.check(alone.last), message);
  // In a file: the record at data offset 0 is a pointer (5 bytes) to the last array.
  const inFile = expansion(40, 5);
  refused(oneRecord(Buffer.concat([pointerBytes(inFile.last, 3), inFile.bytes])), message, '2^40');
});

test('random damage: an MmdbError at open, or a file that answers every address; 3,000 seeded tries', () => {
  const file = writeMmdb(SMALL);
  const random = prng(5);
  let opened = 0;
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.from(file);
    const flips = 1 + Math.floor(random() * 4);
    for (let f = 0; f < flips; f++) b[Math.floor(random() * b.length)] = Math.floor(random() * 256);
    let db;
    try {
      db = openMmdb(b);
    } catch (e) {
      assert.ok(e instanceof MmdbError, `try ${i}: ${String(e)}`);
      continue;
    }
    opened++;
    for (const address of PROBES) {
      db.lookup(address);
      db.countryOf(address);
    }
  }
  // Most flips land in values or the tree and leave a valid file: those must answer.
  assert.ok(opened > 300 && opened < 2900, `${opened} of 3000 opened`);
});

test('random damage to the public-domain database: an MmdbError at open, or answers for every address', () => {
  const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
  const file = readFileSync(join(dir, 'geo-whois-asn-country-ipv4.mmdb'));
  const random = prng(9);
  for (let i = 0; i < 12; i++) {
    const b = Buffer.from(file);
    // Half the tries in the search tree, half in the data section and metadata.
    const tree = i % 2 === 0;
    for (let f = 0; f < 8; f++)
      b[tree ? Math.floor(random() * 3_036_900) : 3_036_916 + Math.floor(random() * (b.length - 3_036_916))] = Math.floor(random() * 256);
    let db;
    try {
      db = openMmdb(b);
    } catch (e) {
      assert.ok(e instanceof MmdbError, `try ${i}: ${String(e)}`);
      continue;
    }
    for (let a = 0; a < 2000; a++) db.countryOf(`${a % 256}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${a >> 8}`);
  }
});
