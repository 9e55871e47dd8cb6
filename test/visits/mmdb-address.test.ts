/**
 * Address text to bits, for the `.mmdb` reader: what is an address and what is not decided as
 * Node's own `net.isIP` decides it, over a table of edge cases and 20,000 seeded near-misses; the
 * bits checked for the spellings of one address; junk is `null`, never a throw
 * (docs/architecture.md, `src/visits/`).
 */
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import { parseAddress } from '../../src/visits/mmdb-address.ts';
import { prng } from '../support/crash-harness.ts';

const VALID: [string, 4 | 6][] = [
  ['0.0.0.0', 4],
  ['1.2.3.4', 4],
  ['255.255.255.255', 4],
  ['::', 6],
  ['::1', 6],
  ['1::', 6],
  ['fe80::1%eth0', 6],
  ['::ffff:1.2.3.4', 4],
  ['::FFFF:1.2.3.4', 4],
  ['::ffff:102:304', 4],
  ['0:0:0:0:0:ffff:1.2.3.4', 4],
  ['::1.2.3.4', 6],
  ['64:ff9b::1.2.3.4', 6],
  ['1:2:3:4:5:6:1.2.3.4', 6],
  ['1:2:3:4:5:6:7::', 6],
  ['::2:3:4:5:6:7:8', 6],
  ['2001:DB8:0:0:0:0:0:1', 6],
  ['2001:db8::0001', 6],
  ['00::1', 6],
];
const INVALID = [
  '',
  ' 1.2.3.4',
  '1.2.3.4 ',
  '1.2.3',
  '1.2.3.4.5',
  '256.1.1.1',
  '01.2.3.4',
  '1.2.3.04',
  '1.2.3.4:80',
  '1.2.3.-1',
  '1.2..4',
  '١.٢.٣.٤',
  '[::1]',
  ':::1',
  ':1::',
  '1::2::3',
  '00000::1',
  'g::1',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:8::',
  '::1:2:3:4:5:6:7:8',
  '::1.2.3',
  '1.2.3.4::',
  '1.2.3.4::1',
  '::1.2.3.4:1',
  'fe80::1%',
  'example.com',
  'unknown',
  'x'.repeat(10_000),
];

test('addresses: what Node calls an address, and of which family', () => {
  for (const [text, family] of VALID) {
    assert.notEqual(isIP(text), 0, `Node: ${text}`);
    const a = parseAddress(text);
    assert.ok(a !== null, text);
    assert.equal(a.v4 ? 4 : 6, family, text);
  }
  for (const text of INVALID) {
    if (text.length < 100) assert.equal(isIP(text), 0, `Node: ${text}`);
    assert.equal(parseAddress(text), null, text);
  }
});

test('the spellings of one address give the same bits', () => {
  const v4 = ['192.0.2.33', '::ffff:192.0.2.33', '::ffff:c000:221', '0:0:0:0:0:FFFF:C000:0221'];
  for (const text of v4) assert.deepEqual(parseAddress(text), { v4: true, word: 0xc0000221 }, text);
  const bytes = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x21]);
  for (const text of ['2001:db8::221', '2001:0db8:0000:0000:0000:0000:0000:0221', '2001:DB8:0:0::0:221', '2001:db8::0.0.2.33', '2001:db8::221%1']) {
    assert.deepEqual(parseAddress(text), { v4: false, bytes }, text);
  }
});

test('20,000 near-misses: an address exactly when Node says so, and never a throw', () => {
  const random = prng(3);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const seeds = VALID.map(([t]) => t).filter((t) => !t.includes('%'));
  const chars = '0123456789abcdefABCDEF:.:.:.g ';
  let valid = 0;
  for (let i = 0; i < 20_000; i++) {
    let text = pick(seeds);
    for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
      const at = Math.floor(random() * (text.length + 1));
      const kind = random();
      if (kind < 0.4) text = text.slice(0, at) + pick([...chars]) + text.slice(at);
      else if (kind < 0.7) text = text.slice(0, at) + text.slice(at + 1);
      else text = text.slice(0, at) + pick([...chars]) + text.slice(at + 1);
    }
    const ours = parseAddress(text);
    assert.equal(ours !== null, isIP(text) !== 0, JSON.stringify(text));
    if (ours !== null) valid++;
  }
  assert.ok(valid > 2000 && valid < 18_000, `${valid} valid`);
});
