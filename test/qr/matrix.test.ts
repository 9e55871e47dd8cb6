/**
 * The function patterns, the format and version areas, and the codeword placement, read back at
 * the module positions ISO/IEC 18004 draws them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBits, versionBits } from '../../src/qr/bch.ts';
import { drawFormat, functionPatterns, placeCodewords, type Grid, type Matrix } from '../../src/qr/matrix.ts';
import { blockLayout, MAX_VERSION } from '../../src/qr/tables.ts';

const at = (g: Grid, row: number, col: number): number => g.modules[row * g.size + col]!;
const reservedAt = (m: Matrix, row: number, col: number): number => m.reserved[row * m.size + col]!;

/** The modules at `cells` as a string of 0/1. */
const read = (g: Grid, cells: [number, number][]): string => cells.map(([r, c]) => at(g, r, c)).join('');

const FINDER = ['1111111', '1000001', '1011101', '1011101', '1011101', '1000001', '1111111'];

function square(g: Grid, row: number, col: number, side: number): string[] {
  return Array.from({ length: side }, (_, r) => Array.from({ length: side }, (_, c) => at(g, row + r, col + c)).join(''));
}

/** Data modules left after the codewords, per version: the standard's remainder bits. */
function remainderBits(v: number): number {
  if (v >= 2 && v <= 6) return 7;
  if ((v >= 14 && v <= 20) || (v >= 28 && v <= 34)) return 3;
  if (v >= 21 && v <= 27) return 4;
  return 0;
}

test('three finder patterns, each with a light separator', () => {
  for (const v of [1, 7, 40]) {
    const m = functionPatterns(v);
    const n = m.size;
    assert.deepEqual(square(m, 0, 0, 7), FINDER, `version ${v} top left`);
    assert.deepEqual(square(m, 0, n - 7, 7), FINDER, `version ${v} top right`);
    assert.deepEqual(square(m, n - 7, 0, 7), FINDER, `version ${v} bottom left`);
    for (let k = 0; k < 8; k++) {
      assert.equal(at(m, 7, k) + at(m, k, 7), 0);
      assert.equal(at(m, 7, n - 1 - k) + at(m, k, n - 8), 0);
      assert.equal(at(m, n - 8, k) + at(m, n - 1 - k, 7), 0);
    }
  }
});

test('timing patterns alternate along row 6 and column 6, dark module at (4v + 9, 8)', () => {
  for (const v of [1, 2, 10, 40]) {
    const m = functionPatterns(v);
    for (let k = 8; k < m.size - 8; k++) {
      assert.equal(at(m, 6, k), k % 2 === 0 ? 1 : 0, `version ${v} row 6 col ${k}`);
      assert.equal(at(m, k, 6), k % 2 === 0 ? 1 : 0, `version ${v} col 6 row ${k}`);
    }
    assert.equal(at(m, 4 * v + 9, 8), 1);
  }
});

test('alignment patterns: one in version 2 at (18, 18), six in version 7, none on the finders', () => {
  const pattern = ['11111', '10001', '10101', '10001', '11111'];
  assert.deepEqual(square(functionPatterns(2), 16, 16, 5), pattern);
  assert.ok(!functionPatterns(1).reserved.some((r, i) => r && Math.floor(i / 21) > 8 && i % 21 > 8), 'version 1 has none');
  const m = functionPatterns(7);
  for (const [r, c] of [
    [6, 22],
    [22, 6],
    [22, 22],
    [22, 38],
    [38, 22],
    [38, 38],
  ] as const)
    assert.deepEqual(square(m, r - 2, c - 2, 5), pattern, `(${r}, ${c})`);
  // (6, 6), (6, 38) and (38, 6) fall on the finders, which stay whole.
  assert.deepEqual(square(m, 0, 0, 7), FINDER);
  assert.deepEqual(square(m, 0, m.size - 7, 7), FINDER);
  assert.deepEqual(square(m, m.size - 7, 0, 7), FINDER);
});

test('every module that is no function pattern carries a codeword bit or a remainder bit', () => {
  for (let v = 1; v <= MAX_VERSION; v++) {
    const m = functionPatterns(v);
    const free = m.reserved.length - m.reserved.reduce((a, b) => a + b, 0);
    const { dataCodewords, ecPerBlock, dataPerBlock } = blockLayout(v);
    assert.equal(free, (dataCodewords + ecPerBlock * dataPerBlock.length) * 8 + remainderBits(v), `version ${v}`);
  }
});

test('format information in both copies, most significant bit first', () => {
  for (const v of [1, 8]) {
    const m = functionPatterns(v);
    const n = m.size;
    // Copy 1: along row 8 (skipping the timing column), then up column 8.
    const first: [number, number][] = [
      [8, 0],
      [8, 1],
      [8, 2],
      [8, 3],
      [8, 4],
      [8, 5],
      [8, 7],
      [8, 8],
      [7, 8],
      [5, 8],
      [4, 8],
      [3, 8],
      [2, 8],
      [1, 8],
      [0, 8],
    ];
    // Copy 2: up column 8 from the bottom edge, then along row 8 to the right edge.
    const second: [number, number][] = [
      ...Array.from({ length: 7 }, (_, k): [number, number] => [n - 1 - k, 8]),
      ...Array.from({ length: 8 }, (_, k): [number, number] => [8, n - 8 + k]),
    ];
    for (let mask = 0; mask < 8; mask++) {
      drawFormat(m, 'M', mask);
      const expected = formatBits('M', mask).toString(2).padStart(15, '0');
      assert.equal(read(m, first), expected, `version ${v} mask ${mask}: copy 1`);
      assert.equal(read(m, second), expected, `version ${v} mask ${mask}: copy 2`);
      assert.equal(at(m, n - 8, 8), 1, 'the dark module survives');
    }
    for (const [r, c] of [...first, ...second]) assert.equal(reservedAt(m, r, c), 1);
  }
});

test('version information from version 7: two 6×3 blocks, bit 0 nearest the corner of the symbol', () => {
  for (const v of [7, 21, 40]) {
    const m = functionPatterns(v);
    const n = m.size;
    const word = versionBits(v);
    for (let i = 0; i < 18; i++) {
      const bit = (word >> i) & 1;
      // Bottom left: three rows above the finder, bit i at row n − 11 + i mod 3, column ⌊i/3⌋.
      assert.equal(at(m, n - 11 + (i % 3), Math.floor(i / 3)), bit, `version ${v} bottom-left bit ${i}`);
      // Top right: the transpose.
      assert.equal(at(m, Math.floor(i / 3), n - 11 + (i % 3)), bit, `version ${v} top-right bit ${i}`);
    }
  }
  // Version 6 has no version blocks: those modules are free for data.
  const m6 = functionPatterns(6);
  assert.equal(reservedAt(m6, m6.size - 11, 0), 0);
});

test('codeword bits go up from the bottom-right corner in two-module columns, then down the next', () => {
  const bitAt = (index: number): [number, number] => {
    const m = functionPatterns(1);
    const codewords = new Uint8Array(26);
    codewords[index >> 3] = 0x80 >> (index & 7);
    placeCodewords(m, codewords);
    const dark: [number, number][] = [];
    for (let i = 0; i < m.modules.length; i++) if (m.modules[i] && !m.reserved[i]) dark.push([Math.floor(i / 21), i % 21]);
    assert.equal(dark.length, 1);
    return dark[0]!;
  };
  // The first codeword's most significant bit at the corner, the rest right-left, upwards.
  assert.deepEqual(bitAt(0), [20, 20]);
  assert.deepEqual(bitAt(1), [20, 19]);
  assert.deepEqual(bitAt(2), [19, 20]);
  assert.deepEqual(bitAt(23), [9, 19]);
  // Row 8 is format information: the fourth codeword turns at row 9 and goes down columns 17–18.
  assert.deepEqual(bitAt(24), [9, 18]);
  assert.deepEqual(bitAt(26), [10, 18]);
  // Exactly 26 × 8 data modules: filling every codeword darkens every one of them.
  const m = functionPatterns(1);
  placeCodewords(m, new Uint8Array(26).fill(0xff));
  assert.equal(
    m.modules.reduce((a, b, i) => a + (m.reserved[i] ? 0 : b), 0),
    26 * 8,
  );
  // Columns 0–1 are the tenth pair, walked downwards between the format row and the bottom-left
  // separator: version 1 has no remainder bits, so the very last bit is at the end of that walk.
  assert.deepEqual(bitAt(26 * 8 - 1), [12, 0]);
});
