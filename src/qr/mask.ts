/**
 * The eight data masks and the four penalty rules that choose between them. A mask flips data
 * modules by a fixed pattern so that the symbol avoids what confuses a reader: long runs, solid
 * blocks, look-alikes of the finder pattern, and a lopsided dark/light balance.
 */
import type { Grid, Matrix } from './matrix.ts';

/** The mask conditions of ISO/IEC 18004, by mask number: true where a data module is flipped. */
export const MASKS: readonly ((row: number, col: number) => boolean)[] = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (_i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i + j) % 2) + ((i * j) % 3)) % 2 === 0,
];

/** XORs mask `mask` into every non-reserved module (applying it twice undoes it). */
export function applyMask(m: Matrix, mask: number): void {
  const condition = MASKS[mask]!;
  for (let row = 0; row < m.size; row++) {
    for (let col = 0; col < m.size; col++) {
      const i = row * m.size + col;
      if (!m.reserved[i] && condition(row, col)) m.modules[i]! ^= 1;
    }
  }
}

/** The modules of row `index` (or of column `index`), left to right or top to bottom. */
function line(g: Grid, index: number, column: boolean): Uint8Array {
  const out = new Uint8Array(g.size);
  for (let k = 0; k < g.size; k++) out[k] = g.modules[column ? k * g.size + index : index * g.size + k]!;
  return out;
}

/** Rule 1: each run of five or more same-coloured modules in a row or column, 3 + (length − 5). */
export function penaltyRuns(g: Grid): number {
  let score = 0;
  for (const column of [false, true]) {
    for (let index = 0; index < g.size; index++) {
      const modules = line(g, index, column);
      let run = 1;
      for (let k = 1; k <= g.size; k++) {
        if (k < g.size && modules[k] === modules[k - 1]) {
          run++;
          continue;
        }
        if (run >= 5) score += run - 2;
        run = 1;
      }
    }
  }
  return score;
}

/** Rule 2: 3 for every 2×2 block of one colour (overlapping blocks each count). */
export function penaltyBlocks(g: Grid): number {
  let score = 0;
  const n = g.size;
  for (let row = 0; row + 1 < n; row++) {
    for (let col = 0; col + 1 < n; col++) {
      const v = g.modules[row * n + col];
      if (v === g.modules[row * n + col + 1] && v === g.modules[(row + 1) * n + col] && v === g.modules[(row + 1) * n + col + 1]) score += 3;
    }
  }
  return score;
}

const FINDER_CORE = [1, 0, 1, 1, 1, 0, 1];

/**
 * Rule 3: 40 for every dark-light-dark-dark-dark-light-dark run (1:1:3:1:1) in a row or column
 * with four light modules before or after it. Outside the symbol counts as light: the quiet zone
 * is light, and a reader sees a finder look-alike at the edge just as well.
 */
export function penaltyFinderLike(g: Grid): number {
  let score = 0;
  const at = (modules: Uint8Array, k: number): number => (k < 0 || k >= g.size ? 0 : modules[k]!);
  const light = (modules: Uint8Array, from: number): boolean => [0, 1, 2, 3].every((d) => at(modules, from + d) === 0);
  for (const column of [false, true]) {
    for (let index = 0; index < g.size; index++) {
      const modules = line(g, index, column);
      for (let k = 0; k + 7 <= g.size; k++) {
        if (!FINDER_CORE.every((v, d) => modules[k + d] === v)) continue;
        if (light(modules, k - 4) || light(modules, k + 7)) score += 40;
      }
    }
  }
  return score;
}

/** Rule 4: 10 for every full 5 % the dark share strays from 50 %. */
export function penaltyBalance(g: Grid): number {
  let dark = 0;
  for (const v of g.modules) dark += v;
  const total = g.modules.length;
  // |dark/total − 1/2| in steps of 5 %, in integers: |20·dark − 10·total| / total.
  return 10 * Math.floor(Math.abs(20 * dark - 10 * total) / total);
}

/** The total penalty of a finished symbol (format information drawn). */
export function penalty(g: Grid): number {
  return penaltyRuns(g) + penaltyBlocks(g) + penaltyFinderLike(g) + penaltyBalance(g);
}
