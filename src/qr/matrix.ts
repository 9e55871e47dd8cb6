/**
 * The module grid of a QR symbol: the function patterns a reader locates the symbol by (finders,
 * separators, timing, alignment, the dark module), the areas reserved for format and version
 * information, and the zig-zag placement of the codewords in what is left. Coordinates are
 * (row, column) from the top-left corner; a module is 1 when dark.
 */
import { formatBits, versionBits, type Level } from './bch.ts';
import { ALIGNMENT_POSITIONS, symbolSize } from './tables.ts';

/** A square grid of modules, row-major, 1 = dark. */
export interface Grid {
  size: number;
  modules: Uint8Array;
}

/** A grid under construction: which modules belong to function patterns, and so take no data. */
export interface Matrix extends Grid {
  version: number;
  reserved: Uint8Array;
}

function set(m: Matrix, row: number, col: number, dark: boolean): void {
  const i = row * m.size + col;
  m.modules[i] = dark ? 1 : 0;
  m.reserved[i] = 1;
}

/** A 7×7 finder pattern with its top-left corner at (row, col), and its light separator ring. */
function drawFinder(m: Matrix, row: number, col: number): void {
  for (let r = -1; r <= 7; r++) {
    for (let c = -1; c <= 7; c++) {
      const y = row + r;
      const x = col + c;
      if (y < 0 || y >= m.size || x < 0 || x >= m.size) continue;
      // Distance from the centre in the Chebyshev sense: 0–1 the 3×3 core, 3 the outer ring.
      const d = Math.max(Math.abs(r - 3), Math.abs(c - 3));
      set(m, y, x, d !== 2 && d !== 4);
    }
  }
}

/** A 5×5 alignment pattern centred on (row, col). */
function drawAlignment(m: Matrix, row: number, col: number): void {
  for (let r = -2; r <= 2; r++) {
    for (let c = -2; c <= 2; c++) set(m, row + r, col + c, Math.max(Math.abs(r), Math.abs(c)) !== 1);
  }
}

/**
 * Every function pattern of `version`, version information included. The format area holds the
 * word for mask 0 until the mask is chosen: it only has to be reserved before the data goes in.
 */
export function functionPatterns(version: number): Matrix {
  const size = symbolSize(version);
  const m: Matrix = { version, size, modules: new Uint8Array(size * size), reserved: new Uint8Array(size * size) };
  drawFinder(m, 0, 0);
  drawFinder(m, 0, size - 7);
  drawFinder(m, size - 7, 0);
  for (let i = 8; i < size - 8; i++) {
    set(m, 6, i, i % 2 === 0);
    set(m, i, 6, i % 2 === 0);
  }
  const centres = ALIGNMENT_POSITIONS[version - 1] ?? [];
  const last = centres.length - 1;
  for (let a = 0; a <= last; a++) {
    for (let b = 0; b <= last; b++) {
      // The three corners that hold finder patterns get no alignment pattern.
      if ((a === 0 && b === 0) || (a === 0 && b === last) || (a === last && b === 0)) continue;
      drawAlignment(m, centres[a]!, centres[b]!);
    }
  }
  drawFormat(m, 'M', 0);
  if (version >= 7) drawVersion(m);
  return m;
}

/**
 * Writes the format word for (level, mask) in both of its places, and the dark module beside the
 * lower copy. Bit 14 (the most significant) sits at row 8, column 0.
 */
export function drawFormat(m: Matrix, level: Level, mask: number): void {
  const bits = formatBits(level, mask);
  const bit = (i: number): boolean => ((bits >> i) & 1) === 1;
  const n = m.size;
  // Around the top-left finder: down column 8, then leftwards along row 8.
  for (let i = 0; i <= 5; i++) set(m, i, 8, bit(i));
  set(m, 7, 8, bit(6));
  set(m, 8, 8, bit(7));
  set(m, 8, 7, bit(8));
  for (let i = 9; i < 15; i++) set(m, 8, 14 - i, bit(i));
  // The second copy: along row 8 under the top-right finder, then down column 8 beside the
  // bottom-left one.
  for (let i = 0; i < 8; i++) set(m, 8, n - 1 - i, bit(i));
  for (let i = 8; i < 15; i++) set(m, n - 15 + i, 8, bit(i));
  set(m, n - 8, 8, true);
}

/** The version word in its two 6×3 blocks, next to the top-right and bottom-left finders. */
function drawVersion(m: Matrix): void {
  const bits = versionBits(m.version);
  for (let i = 0; i < 18; i++) {
    const dark = ((bits >> i) & 1) === 1;
    const a = m.size - 11 + (i % 3);
    const b = Math.floor(i / 3);
    set(m, b, a, dark);
    set(m, a, b, dark);
  }
}

/**
 * Places the codewords, most significant bit first, in two-module-wide columns from the right
 * edge, upwards then downwards in turn, skipping the vertical timing column and every reserved
 * module. Modules left over once the codewords run out (the remainder bits) stay light.
 */
export function placeCodewords(m: Matrix, codewords: Uint8Array): void {
  const n = m.size;
  const total = codewords.length * 8;
  let index = 0;
  for (let right = n - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    const upward = ((n - 1 - right) >> 1) % 2 === 0;
    for (let step = 0; step < n; step++) {
      const row = upward ? n - 1 - step : step;
      for (let c = 0; c < 2; c++) {
        const i = row * n + right - c;
        if (m.reserved[i]) continue;
        if (index < total) m.modules[i] = (codewords[index >> 3]! >> (7 - (index & 7))) & 1;
        index++;
      }
    }
  }
}
