/**
 * From text to symbol: the byte-mode bit stream, the version and level chosen, block interleaving,
 * the capacity limit and the mask chosen by the penalty rules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseVersion, dataCodewords, encodeQr, interleave, MAX_QR_BYTES } from '../../src/qr/encode.ts';
import { penalty } from '../../src/qr/mask.ts';
import { reedSolomon } from '../../src/qr/reed-solomon.ts';
import { byteCapacity, MAX_VERSION } from '../../src/qr/tables.ts';

/** A URL-like text of exactly `length` bytes. */
const textOf = (length: number): string => `https://example.com/${'Ab3dE6-_'.repeat(400)}`.slice(0, length);

test('byte mode: mode 0100, an 8-bit count, the bytes, the terminator, then 0xEC 0x11 pads', () => {
  // "Hi": 0100 00000010 01001000 01101001 0000 → 40 24 86 90, then 12 pad codewords.
  const words = dataCodewords(new TextEncoder().encode('Hi'), 1);
  assert.deepEqual([...words], [0x40, 0x24, 0x86, 0x90, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11]);
});

test('from version 10 the count has 16 bits', () => {
  const words = dataCodewords(new TextEncoder().encode('a'.repeat(200)), 10);
  assert.equal(words.length, 216);
  // 0100 0000000011001000 01100001 …: 40 0C 86 16 16 …
  assert.deepEqual([...words.subarray(0, 5)], [0x40, 0x0c, 0x86, 0x16, 0x16]);
  // 20 + 1600 bits, the 4-bit terminator: the last data codeword is the last 'a''s low nibble.
  assert.equal(words[202], 0x10);
  assert.deepEqual([...words.subarray(203, 207)], [0xec, 0x11, 0xec, 0x11]);
  assert.equal(words[215], 0xec);
});

test("a text of exactly a version's capacity leaves no room for terminator or pads", () => {
  const words = dataCodewords(new TextEncoder().encode('z'.repeat(14)), 1);
  // 12 header bits + 112 data bits = 124 of 128: the terminator takes the last 4 bits.
  assert.equal(words[15], ('z'.charCodeAt(0) & 0x0f) << 4);
  assert.ok(!words.includes(0xec));
});

test('the smallest version that holds the text, for every version', () => {
  for (let v = 1; v <= MAX_VERSION; v++) {
    const capacity = byteCapacity(v);
    assert.equal(chooseVersion(capacity), v, `${capacity} bytes`);
    assert.equal(encodeQr(textOf(capacity)).version, v, `${capacity} bytes`);
    assert.equal(encodeQr(textOf(capacity)).level, 'M', `${capacity} bytes`);
    if (v < MAX_VERSION) assert.equal(encodeQr(textOf(capacity + 1)).version, v + 1, `${capacity + 1} bytes`);
    const atL = byteCapacity(v, 'L');
    assert.equal(chooseVersion(atL, 'L'), v, `${atL} bytes at L`);
    assert.equal(encodeQr(textOf(atL), { level: 'L' }).version, v, `${atL} bytes at L`);
  }
  assert.equal(encodeQr('').version, 1);
  assert.equal(chooseVersion(2332), undefined);
});

test('the text is counted in UTF-8 bytes', () => {
  assert.equal(encodeQr('é'.repeat(7)).version, 1); // 14 bytes
  assert.equal(encodeQr('é'.repeat(8)).version, 2); // 16 bytes
  const words = dataCodewords(new TextEncoder().encode('é'), 1);
  // 0100 00000010 11000011 10101001 0000
  assert.deepEqual([...words.subarray(0, 4)], [0x40, 0x2c, 0x3a, 0x90]);
});

test("past version 40-M's 2331 bytes, level L in the smallest version that holds the text", () => {
  assert.deepEqual([encodeQr(textOf(2331)).version, encodeQr(textOf(2331)).level], [40, 'M']);
  // 36-L holds 2431 bytes, 35-L 2303.
  assert.deepEqual([encodeQr(textOf(2332)).version, encodeQr(textOf(2332)).level], [36, 'L']);
  assert.deepEqual([encodeQr(textOf(2953)).version, encodeQr(textOf(2953)).level], [40, 'L']);
  assert.deepEqual([encodeQr('é'.repeat(1166)).version, encodeQr('é'.repeat(1166)).level], [36, 'L']);
});

test("past version 40-L's 2953 bytes (MAX_QR_BYTES): a RangeError", () => {
  assert.equal(MAX_QR_BYTES, 2953);
  assert.throws(
    () => encodeQr(textOf(2954)),
    (e: unknown) => e instanceof RangeError && e.message === '2954 bytes do not fit in a QR code (version 40-L holds at most 2953 bytes)',
  );
  assert.throws(
    () => encodeQr(textOf(2332), { level: 'M' }),
    (e: unknown) => e instanceof RangeError && e.message === '2332 bytes do not fit in a QR code (version 40-M holds at most 2331 bytes)',
  );
  assert.throws(() => encodeQr('é'.repeat(1477)), RangeError);
  assert.throws(() => encodeQr('x', { mask: 8 }), RangeError);
});

test('interleaving: first codewords of every block, then the seconds, …, then the EC codewords', () => {
  // Version 8-M: two blocks of 38 data codewords, then two of 39; 22 EC codewords each.
  const data = Uint8Array.from({ length: 154 }, (_, i) => i);
  const out = interleave(data, 8);
  assert.equal(out.length, 242);
  assert.deepEqual([...out.subarray(0, 8)], [0, 38, 76, 115, 1, 39, 77, 116]);
  // Only the group-2 blocks have a 39th codeword.
  assert.deepEqual([...out.subarray(148, 154)], [37, 75, 113, 152, 114, 153]);
  const starts = [0, 38, 76, 115];
  const ec = starts.map((s, b) => reedSolomon(data.subarray(s, b < 2 ? s + 38 : s + 39), 22));
  for (let i = 0; i < 22; i++) for (let b = 0; b < 4; b++) assert.equal(out[154 + i * 4 + b], ec[b]![i], `EC ${i} of block ${b}`);
  // One block: the data, then its EC codewords.
  const one = Uint8Array.from({ length: 16 }, (_, i) => i * 3);
  assert.deepEqual([...interleave(one, 1)], [...one, ...reedSolomon(one, 10)]);
});

test('the mask chosen scores the lowest penalty of the eight (the lowest number on a tie)', () => {
  const chosen = new Set<number>();
  for (const text of ['http://localhost:3000/Ab3dE6', 'https://sho.rt/x', textOf(100), textOf(300), textOf(700), 'HELLO WORLD', '']) {
    const scores = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => penalty(encodeQr(text, { mask })));
    const best = scores.indexOf(Math.min(...scores));
    const symbol = encodeQr(text);
    assert.equal(symbol.mask, best, `${text.length} bytes: penalties ${scores.join(', ')}`);
    assert.deepEqual(symbol.modules, encodeQr(text, { mask: best }).modules);
    chosen.add(best);
  }
  // The choice depends on the data: these texts do not all end up with the same mask.
  assert.ok(chosen.size > 1, [...chosen].join());
});

test('the same text always gives the same symbol', () => {
  const a = encodeQr('http://localhost:3000/Ab3dE6');
  const b = encodeQr('http://localhost:3000/Ab3dE6');
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.modules, encodeQr('http://localhost:3000/Ab3dE7').modules);
});
