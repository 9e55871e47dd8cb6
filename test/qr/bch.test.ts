/**
 * Format information (BCH(15,5), masked with 0x5412) and version information (BCH(18,6)): the
 * values the standard tabulates, and the distances that let a reader correct misread bits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FORMAT_MASK, formatBits, LEVEL_BITS, versionBits, type Level } from '../../src/qr/bch.ts';

function distance(a: number, b: number): number {
  let x = a ^ b;
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

/** ISO/IEC 18004's table of the 32 format words, by level then mask 0–7. */
const FORMAT_TABLE: Record<Level, number[]> = {
  L: [0x77c4, 0x72f3, 0x7daa, 0x789d, 0x662f, 0x6318, 0x6c41, 0x6976],
  M: [0x5412, 0x5125, 0x5e7c, 0x5b4b, 0x45f9, 0x40ce, 0x4f97, 0x4aa0],
  Q: [0x355f, 0x3068, 0x3f31, 0x3a06, 0x24b4, 0x2183, 0x2eda, 0x2bed],
  H: [0x1689, 0x13be, 0x1ce7, 0x19d0, 0x0762, 0x0255, 0x0d0c, 0x083b],
};

test('format information for (M, mask 0) is 101010000010010', () => {
  assert.equal(formatBits('M', 0).toString(2).padStart(15, '0'), '101010000010010');
  assert.equal(formatBits('M', 5).toString(2).padStart(15, '0'), '100000011001110');
  assert.equal(FORMAT_MASK, 0b101010000010010);
});

test('format information matches the standard table for all 32 (level, mask) pairs', () => {
  for (const level of Object.keys(LEVEL_BITS) as Level[]) {
    for (let mask = 0; mask < 8; mask++) assert.equal(formatBits(level, mask), FORMAT_TABLE[level][mask], `${level}, mask ${mask}`);
  }
});

test('any two format words differ in at least 7 bits, and the top 5 bits carry level and mask', () => {
  const words: number[] = [];
  for (const level of Object.keys(LEVEL_BITS) as Level[]) {
    for (let mask = 0; mask < 8; mask++) {
      const word = formatBits(level, mask);
      assert.ok(word >= 0 && word < 1 << 15);
      assert.equal((word ^ FORMAT_MASK) >> 10, (LEVEL_BITS[level] << 3) | mask);
      words.push(word);
    }
  }
  assert.equal(new Set(words).size, 32);
  let min = Infinity;
  for (let i = 0; i < words.length; i++) for (let j = i + 1; j < words.length; j++) min = Math.min(min, distance(words[i]!, words[j]!));
  assert.equal(min, 7);
});

test('version information for version 7 is 000111110010010100', () => {
  assert.equal(versionBits(7).toString(2).padStart(18, '0'), '000111110010010100');
  // Spot checks from the standard's table of version words.
  assert.equal(versionBits(12), 0x0c762);
  assert.equal(versionBits(17), 0x1145d);
  assert.equal(versionBits(22), 0x168c9);
  assert.equal(versionBits(27), 0x1b08e);
  assert.equal(versionBits(32), 0x209d5);
  assert.equal(versionBits(40), 0x28c69);
});

test('the 34 version words (7–40) carry their version and differ in at least 8 bits', () => {
  const words: number[] = [];
  for (let v = 7; v <= 40; v++) {
    const word = versionBits(v);
    assert.ok(word < 1 << 18);
    assert.equal(word >> 12, v);
    words.push(word);
  }
  let min = Infinity;
  for (let i = 0; i < words.length; i++) for (let j = i + 1; j < words.length; j++) min = Math.min(min, distance(words[i]!, words[j]!));
  assert.equal(min, 8);
});
