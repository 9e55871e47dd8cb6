/**
 * The eight data masks and the four penalty rules that choose between them. A mask flips data
 * modules by a fixed pattern so that the symbol avoids what confuses a reader: long runs, solid
 * blocks, look-alikes of the finder pattern, and a lopsided dark/light balance.
 */
import type { Grid, Matrix } from './matrix.ts';

/** The number of data masks. */
export const MASK_COUNT = 8;

/**
 * The mask conditions of ISO/IEC 18004: true where mask `mask` flips the data module at
 * (row i, column j). One function with a switch rather than a table of eight closures: the mask
 * choice asks it twice per module for each of the eight candidates, and a single call target
 * keeps that fast.
 */
export function maskCondition(mask: number, i: number, j: number): boolean {
  switch (mask) {
    case 0:
      return (i + j) % 2 === 0;
    case 1:
      return i % 2 === 0;
    case 2:
      return j % 3 === 0;
    case 3:
      return (i + j) % 3 === 0;
    case 4:
      return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5:
      return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6:
      return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    case 7:
      return (((i + j) % 2) + ((i * j) % 3)) % 2 === 0;
    default:
      throw new RangeError(`no QR mask ${mask}`);
  }
}

/** XORs mask `mask` into every non-reserved module (applying it twice undoes it). */
export function applyMask(m: Matrix, mask: number): void {
  for (let row = 0, i = 0; row < m.size; row++) {
    for (let col = 0; col < m.size; col++, i++) {
      if (!m.reserved[i] && maskCondition(mask, row, col)) m.modules[i]! ^= 1;
    }
  }
}

/**
 * The rows and then the columns of `g`, each as the index of its first module and the step to the
 * next. The rules read modules in place: the mask choice scores eight whole symbols, and a
 * version-40 symbol has 31,329 modules.
 */
function lines(g: Grid): [start: number, step: number][] {
  const out: [number, number][] = [];
  for (let k = 0; k < g.size; k++) out.push([k * g.size, 1]);
  for (let k = 0; k < g.size; k++) out.push([k, g.size]);
  return out;
}

/** Rule 1: each run of five or more same-coloured modules in a row or column, 3 + (length − 5). */
export function penaltyRuns(g: Grid): number {
  let score = 0;
  const m = g.modules;
  for (const [start, step] of lines(g)) {
    let run = 1;
    for (let k = 1, i = start + step; k <= g.size; k++, i += step) {
      if (k < g.size && m[i] === m[i - step]) {
        run++;
        continue;
      }
      if (run >= 5) score += run - 2;
      run = 1;
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

/**
 * Rule 3: 40 for every dark-light-dark-dark-dark-light-dark run (1:1:3:1:1) in a row or column
 * with four light modules before or after it. Outside the symbol counts as light: the quiet zone
 * is light, and a reader sees a finder look-alike at the edge just as well.
 */
export function penaltyFinderLike(g: Grid): number {
  let score = 0;
  const m = g.modules;
  const n = g.size;
  for (const [start, step] of lines(g)) {
    const at = (k: number): number => (k < 0 || k >= n ? 0 : m[start + k * step]!);
    const light = (from: number): boolean => at(from) === 0 && at(from + 1) === 0 && at(from + 2) === 0 && at(from + 3) === 0;
    for (let k = 0; k + 7 <= n; k++) {
      const i = start + k * step;
      // 1 0 1 1 1 0 1, tested cheapest-first: most positions fail on the first modules.
      if (m[i] !== 1 || m[i + step] !== 0 || m[i + 2 * step] !== 1 || m[i + 3 * step] !== 1) continue;
      if (m[i + 4 * step] !== 1 || m[i + 5 * step] !== 0 || m[i + 6 * step] !== 1) continue;
      if (light(k - 4) || light(k + 7)) score += 40;
    }
  }
  return score;
}

/** Rule 4: 10 for every full 5 % the dark share strays from 50 %. */
export function penaltyBalance(g: Grid): number {
  let dark = 0;
  const total = g.modules.length;
  for (let i = 0; i < total; i++) dark += g.modules[i]!;
  // |dark/total − 1/2| in steps of 5 %, in integers: |20·dark − 10·total| / total.
  return 10 * Math.floor(Math.abs(20 * dark - 10 * total) / total);
}

/** The total penalty of a finished symbol (format information drawn). */
export function penalty(g: Grid): number {
  return penaltyRuns(g) + penaltyBlocks(g) + penaltyFinderLike(g) + penaltyBalance(g);
}
