/**
 * The level-M and level-L tables against the figures ISO/IEC 18004 publishes per version: byte capacity,
 * total codewords, number of blocks, EC codewords per block, and the alignment pattern rule.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALIGNMENT_POSITIONS, BLOCKS_L, BLOCKS_M, blockLayout, byteCapacity, countBits, MAX_VERSION, symbolSize } from '../../src/qr/tables.ts';

const versions = Array.from({ length: MAX_VERSION }, (_, i) => i + 1);

/** Byte-mode capacity at level M, versions 1–40 (two published sources agree on every entry). */
const BYTE_CAPACITY_M = [
  14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666, 711, 779, 857, 911, 997, 1059, 1125, 1190, 1264, 1370, 1452,
  1538, 1628, 1722, 1809, 1911, 1989, 2099, 2213, 2331,
];
/** Byte-mode capacity at level L, versions 1–40. */
const BYTE_CAPACITY_L = [
  17, 32, 53, 78, 106, 134, 154, 192, 230, 271, 321, 367, 425, 458, 520, 586, 644, 718, 792, 858, 929, 1003, 1091, 1171, 1273, 1367, 1465, 1528, 1628, 1732,
  1840, 1952, 2068, 2188, 2303, 2431, 2563, 2699, 2809, 2953,
];
/** Total codewords (data + EC), versions 1–40, the same for every level. */
const TOTAL_CODEWORDS = [
  26, 44, 70, 100, 134, 172, 196, 242, 292, 346, 404, 466, 532, 581, 655, 733, 815, 901, 991, 1085, 1156, 1258, 1364, 1474, 1588, 1706, 1828, 1921, 2051, 2185,
  2323, 2465, 2611, 2761, 2876, 3034, 3196, 3362, 3532, 3706,
];
/** Error-correction blocks at level M, versions 1–40. */
const BLOCK_COUNT_M = [
  1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
];
/** EC codewords per block at level M, versions 1–40. */
const EC_PER_BLOCK_M = [
  10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  28,
];

/** Error-correction blocks at level L, versions 1–40. */
const BLOCK_COUNT_L = [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25];
/** EC codewords per block at level L, versions 1–40. */
const EC_PER_BLOCK_L = [
  7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
];

test('spot checks: version 1-M holds 14 bytes, 10-M 213, 40-M 2331', () => {
  assert.equal(byteCapacity(1), 14);
  assert.equal(byteCapacity(10), 213);
  assert.equal(byteCapacity(40), 2331);
});

test('byte capacity of every version matches the published table', () => {
  assert.deepEqual(
    versions.map((v) => byteCapacity(v)),
    BYTE_CAPACITY_M,
  );
});

test('level L: 17 bytes in version 1, 2953 in version 40, and every version as published', () => {
  assert.equal(byteCapacity(1, 'L'), 17);
  assert.equal(byteCapacity(40, 'L'), 2953);
  assert.deepEqual(
    versions.map((v) => byteCapacity(v, 'L')),
    BYTE_CAPACITY_L,
  );
});

const LEVELS = [
  ['M', BLOCKS_M, BLOCK_COUNT_M, EC_PER_BLOCK_M],
  ['L', BLOCKS_L, BLOCK_COUNT_L, EC_PER_BLOCK_L],
] as const;

for (const [level, table, blockCount, ecPerBlockOf] of LEVELS) {
  test(`block structure of every version at level ${level}: block count, EC per block, totals, even split`, () => {
    assert.equal(table.length, 40);
    for (const v of versions) {
      const { ecPerBlock, dataPerBlock, dataCodewords } = blockLayout(v, level);
      const blocks = dataPerBlock.length;
      assert.equal(blocks, blockCount[v - 1], `version ${v}: blocks`);
      assert.equal(ecPerBlock, ecPerBlockOf[v - 1], `version ${v}: EC per block`);
      assert.equal(dataCodewords + ecPerBlock * blocks, TOTAL_CODEWORDS[v - 1], `version ${v}: total codewords`);
      // Group 1 first with the shorter blocks; group 2's blocks hold exactly one more codeword.
      const short = Math.floor(dataCodewords / blocks);
      const long = blocks - (dataCodewords % blocks);
      assert.deepEqual(dataPerBlock, [...Array<number>(long).fill(short), ...Array<number>(blocks - long).fill(short + 1)], `version ${v}: split`);
    }
  });
}

test('unknown versions are refused', () => {
  assert.throws(() => blockLayout(0), RangeError);
  assert.throws(() => blockLayout(41), RangeError);
});

test('sizes and character count lengths', () => {
  assert.equal(symbolSize(1), 21);
  assert.equal(symbolSize(40), 177);
  assert.deepEqual(
    versions.map(countBits),
    versions.map((v) => (v < 10 ? 8 : 16)),
  );
});

test('alignment positions follow the standard rule for every version', () => {
  assert.deepEqual(ALIGNMENT_POSITIONS[0], []);
  for (const v of versions.slice(1)) {
    const p = ALIGNMENT_POSITIONS[v - 1]!;
    // floor(v/7) + 2 coordinates from 6 to the centre of the last row's pattern, size − 7.
    assert.equal(p.length, Math.floor(v / 7) + 2, `version ${v}: count`);
    assert.equal(p[0], 6);
    assert.equal(p.at(-1), symbolSize(v) - 7);
    // Evenly spaced by an even step from the far end; the first gap takes what is left over,
    // which is shorter, except in version 32, the standard's one irregular row (28, then 26s).
    const gaps = p.slice(1).map((x, i) => x - p[i]!);
    const step = gaps.at(-1)!;
    assert.equal(step % 2, 0, `version ${v}: even step`);
    assert.ok(
      gaps.slice(1).every((g) => g === step),
      `version ${v}: equal steps ${gaps.join(',')}`,
    );
    if (v === 32) assert.deepEqual(gaps, [28, 26, 26, 26, 26]);
    else assert.ok(gaps[0]! <= step && gaps[0]! > 0, `version ${v}: first gap ${gaps.join(',')}`);
  }
  // A few rows as printed in the standard.
  assert.deepEqual(ALIGNMENT_POSITIONS[6], [6, 22, 38]);
  assert.deepEqual(ALIGNMENT_POSITIONS[31], [6, 34, 60, 86, 112, 138]);
  assert.deepEqual(ALIGNMENT_POSITIONS[39], [6, 30, 58, 86, 114, 142, 170]);
});
