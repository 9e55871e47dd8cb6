/**
 * The IPv4 side of what the recorder remembers (ipv4-facts.ts): an address is read as a number only
 * in the spelling `canonicalAddress` keeps as it is, and its row keeps its facts through
 * the two generations, like `BoundedCache`.
 */
import assert from 'node:assert/strict';
import { isIPv4 } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalAddress } from '../../src/visits/client-address.ts';
import { Ipv4Facts, parseIPv4 } from '../../src/visits/ipv4-facts.ts';
import { countryNumber } from '../../src/visits/packed.ts';

const quad = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

test('every address in its one spelling parses to its number', () => {
  for (const text of ['0.0.0.0', '255.255.255.255', '192.0.2.1', '10.20.30.40', '1.2.3.4']) {
    assert.equal(quad(parseIPv4(text)), text);
  }
  fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => parseIPv4(quad(n)) === n));
});

test('anything else is -1, to go the way of canonicalAddress', () => {
  for (const text of [
    '01.2.3.4',
    '1.2.3.04',
    '256.1.1.1',
    '1.2.3',
    '1.2.3.4.5',
    '1..2.3',
    '.1.2.3',
    '1.2.3.',
    '1.2.3.4:80',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '::ffff:1.2.3.4',
    '１.2.3.4',
    '1.2.3.4%eth0',
    '0x7f.0.0.1',
    '1000.1.1.1',
    '',
  ]) {
    assert.equal(parseIPv4(text), -1, text);
  }
});

test('it reads as a number exactly what canonicalAddress keeps as it is, as IPv4', () => {
  const part = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom('00', '01', '007', '', 'a', ' 1', '1:2'));
  const entry = fc.oneof(
    fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.')),
    fc.string({ maxLength: 16 }),
  );
  fc.assert(
    fc.property(entry, (text) => {
      const n = parseIPv4(text);
      const keptAsIs = isIPv4(text) && canonicalAddress(text) === text;
      assert.equal(n !== -1, keptAsIs, text);
      if (n !== -1) assert.equal(quad(n), text);
    }),
    { numRuns: 5000 },
  );
});

test('a row keeps its country and hash; a new one has no hash until it is set', () => {
  const facts = new Ipv4Facts(8);
  const a = parseIPv4('198.51.100.7');
  assert.equal(facts.find(a), -1);
  const at = facts.add(a, countryNumber('DE'));
  assert.equal(facts.country(at), 'DE');
  assert.equal(facts.hash(at), undefined);
  facts.setHash(at, -123456789);
  const again = facts.find(a);
  assert.deepEqual([facts.country(again), facts.hash(again)], ['DE', -123456789]);
  // 0.0.0.0 is an address like any other (the row's state, not its number, says it is taken).
  const zero = facts.add(0, 0);
  assert.equal(facts.country(zero), null);
  assert.equal(facts.hash(facts.find(0)), undefined);
  assert.notEqual(facts.find(a), -1);
});

test('bounded: two generations of at most max; an old row used again moves back with its facts', () => {
  const facts = new Ipv4Facts(4);
  const first = parseIPv4('192.0.2.1');
  facts.setHash(facts.add(first, countryNumber('FR')), 42);
  for (let i = 2; i <= 4; i++) facts.add(parseIPv4(`192.0.2.${i}`), 0);
  // The young generation is full: the fifth starts a new one, the first four are the old one.
  facts.add(parseIPv4('192.0.2.5'), 0);
  assert.equal(facts.size, 5);
  const moved = facts.find(first);
  assert.deepEqual([facts.country(moved), facts.hash(moved)], ['FR', 42]);
  // Four more fill the young one again (the first among them): the next drops the oldest.
  for (let i = 6; i <= 8; i++) facts.add(parseIPv4(`192.0.2.${i}`), 0);
  facts.add(parseIPv4('192.0.2.9'), 0);
  assert.ok(facts.size <= 8, `at most twice the bound: ${facts.size}`);
  assert.equal(facts.find(parseIPv4('192.0.2.2')), -1, 'an address not used since two generations ago is forgotten');
  assert.notEqual(facts.find(first), -1, 'the one used again is kept');
  facts.clear();
  assert.equal(facts.size, 0);
  assert.equal(facts.find(first), -1);
});
