/**
 * The masks and the four penalty rules, on small matrices built by hand, whose scores are counted
 * here module by module.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMask, MASK_COUNT, maskCondition, penalty, penaltyBalance, penaltyBlocks, penaltyFinderLike, penaltyRuns } from '../../src/qr/mask.ts';
import type { Grid } from '../../src/qr/matrix.ts';
import { functionPatterns } from '../../src/qr/matrix.ts';

/** A grid from rows of '1' (dark) and '0' (light). */
function grid(...rows: string[]): Grid {
  const size = rows.length;
  for (const row of rows) assert.equal(row.length, size, 'square');
  return { size, modules: Uint8Array.from(rows.join(''), (c) => (c === '1' ? 1 : 0)) };
}

/** An n×n checkerboard: no runs, no 2×2 blocks, no finder look-alikes. */
function checkerboard(n: number): string[] {
  return Array.from({ length: n }, (_, r) => Array.from({ length: n }, (_, c) => ((r + c) % 2 ? '1' : '0')).join(''));
}

test('a checkerboard scores nothing on rules 1–3', () => {
  const g = grid(...checkerboard(11));
  assert.equal(penaltyRuns(g), 0);
  assert.equal(penaltyBlocks(g), 0);
  assert.equal(penaltyFinderLike(g), 0);
});

test('rule 1: a run of five scores 3, each module more one more, in rows and columns', () => {
  const rows = checkerboard(11);
  rows[0] = '11111100000'; // a run of 6 (4) and a run of 5 (3)
  assert.equal(penaltyRuns(grid(...rows)), 7);
  // The same as columns.
  const columns = checkerboard(11).map((row, r) => (r < 6 ? '1' : '0') + row.slice(1));
  assert.equal(penaltyRuns(grid(...columns)), 7);
  // Four in a row is fine.
  const four = checkerboard(11);
  four[1] = '01111010101';
  assert.equal(penaltyRuns(grid(...four)), 0);
  // An all-light 5×5: five runs of 5 in rows and five in columns.
  assert.equal(penaltyRuns(grid('00000', '00000', '00000', '00000', '00000')), 30);
});

test('rule 2: 3 for every 2×2 block of one colour, overlapping blocks counted each', () => {
  assert.equal(penaltyBlocks(grid('1100', '1100', '0011', '0011')), 12); // four separate blocks
  assert.equal(penaltyBlocks(grid('1110', '1110', '1110', '0001')), 12); // a 3×3 holds four
  assert.equal(penaltyBlocks(grid('10', '01')), 0);
  assert.equal(penaltyBlocks(grid('00', '00')), 3);
});

test('rule 3: 40 for a 1:1:3:1:1 run with four light modules on one side, the edge counting as light', () => {
  const blank = '00000000000';
  const g = (...lines: string[]): Grid => grid(...lines, ...Array<string>(11 - lines.length).fill(blank));
  // Light on both sides counts once.
  assert.equal(penaltyFinderLike(g('00001011101')), 40);
  assert.equal(penaltyFinderLike(g('10111010000')), 40);
  // Against the edge: the quiet zone beyond is light.
  assert.equal(penaltyFinderLike(g('01011101011')), 40);
  // Dark on both sides within four modules: no penalty.
  assert.equal(penaltyFinderLike(g('11011101011')), 0);
  assert.equal(penaltyFinderLike(g('10101110110', blank, '10010111011')), 0);
  // Not the 1:1:3:1:1 shape.
  assert.equal(penaltyFinderLike(g('00001001101')), 0);
  // Two rows, and the same in a column.
  assert.equal(penaltyFinderLike(g('00001011101', blank, '10111010000')), 80);
  const column = ['1', '0', '1', '1', '1', '0', '1', '0', '0', '0', '0'].map((c) => `${c}0000000000`);
  assert.equal(penaltyFinderLike(grid(...column)), 40);
});

test('rule 4: 10 for every whole 5 % away from half dark', () => {
  const share = (dark: number, total: number): Grid => {
    const size = Math.sqrt(total);
    const modules = new Uint8Array(total);
    modules.fill(1, 0, dark);
    return { size, modules };
  };
  assert.equal(penaltyBalance(share(50, 100)), 0);
  assert.equal(penaltyBalance(share(54, 100)), 0);
  assert.equal(penaltyBalance(share(46, 100)), 0);
  assert.equal(penaltyBalance(share(55, 100)), 10);
  assert.equal(penaltyBalance(share(44, 100)), 10);
  assert.equal(penaltyBalance(share(60, 100)), 20);
  assert.equal(penaltyBalance(share(12, 25)), 0);
  assert.equal(penaltyBalance(share(15, 25)), 20);
  assert.equal(penaltyBalance(share(0, 25)), 100);
  assert.equal(penaltyBalance(share(100, 100)), 100);
});

test('the total is the sum of the four rules', () => {
  // All light, 5×5: runs 30, blocks 16 × 3, no finder, 0 % dark.
  const g = grid('00000', '00000', '00000', '00000', '00000');
  assert.equal(penalty(g), 30 + 48 + 0 + 100);
});

test('masks flip only data modules, and a mask applied twice is undone', () => {
  for (let mask = 0; mask < MASK_COUNT; mask++) {
    const m = functionPatterns(7);
    const before = Uint8Array.from(m.modules);
    applyMask(m, mask);
    let flipped = 0;
    for (let i = 0; i < before.length; i++) {
      if (before[i] !== m.modules[i]) {
        assert.equal(m.reserved[i], 0, `mask ${mask} flipped a function module`);
        flipped++;
        // The flipped module is exactly where the condition holds.
        assert.ok(maskCondition(mask, Math.floor(i / m.size), i % m.size));
      }
    }
    assert.ok(flipped > 0);
    applyMask(m, mask);
    assert.deepEqual(m.modules, before);
  }
});

test('the mask conditions at the top-left corner (row i, column j)', () => {
  // The first rows of each mask as the standard draws them; 1 = module flipped.
  const corner = (mask: number): string[] => [0, 1, 2, 3, 4, 5].map((i) => [0, 1, 2, 3, 4, 5].map((j) => (maskCondition(mask, i, j) ? '1' : '0')).join(''));
  assert.deepEqual(corner(0), ['101010', '010101', '101010', '010101', '101010', '010101']);
  assert.deepEqual(corner(1), ['111111', '000000', '111111', '000000', '111111', '000000']);
  assert.deepEqual(corner(2), ['100100', '100100', '100100', '100100', '100100', '100100']);
  assert.deepEqual(corner(3), ['100100', '001001', '010010', '100100', '001001', '010010']);
  assert.deepEqual(corner(4), ['111000', '111000', '000111', '000111', '111000', '111000']);
  assert.deepEqual(corner(5), ['111111', '100000', '100100', '101010', '100100', '100000']);
  assert.deepEqual(corner(6), ['111111', '111000', '110110', '101010', '101101', '100011']);
  assert.deepEqual(corner(7), ['101010', '000111', '100011', '010101', '111000', '011100']);
  assert.throws(() => maskCondition(8, 0, 0), RangeError);
});
