/**
 * The per-version data of ISO/IEC 18004 at error-correction level M, as tables: how the codewords
 * split into Reed–Solomon blocks, and where the alignment patterns sit. Everything else about a
 * version (its size, its number of codewords) follows from these by arithmetic.
 */

/** The smallest and largest QR code versions (21×21 and 177×177 modules). */
export const MIN_VERSION = 1;
export const MAX_VERSION = 40;

/**
 * Level M's block structure per version (index 0 = version 1):
 * [EC codewords per block, blocks in group 1, data codewords per group-1 block,
 *  blocks in group 2, data codewords per group-2 block]. Group-2 blocks hold one more data
 * codeword than group-1 blocks; every block of a version has the same number of EC codewords.
 */
export const BLOCKS_M: readonly (readonly [number, number, number, number, number])[] = [
  [10, 1, 16, 0, 0], [16, 1, 28, 0, 0], [26, 1, 44, 0, 0], [18, 2, 32, 0, 0], [24, 2, 43, 0, 0],
  [16, 4, 27, 0, 0], [18, 4, 31, 0, 0], [22, 2, 38, 2, 39], [22, 3, 36, 2, 37], [26, 4, 43, 1, 44],
  [30, 1, 50, 4, 51], [22, 6, 36, 2, 37], [22, 8, 37, 1, 38], [24, 4, 40, 5, 41], [24, 5, 41, 5, 42],
  [28, 7, 45, 3, 46], [28, 10, 46, 1, 47], [26, 9, 43, 4, 44], [26, 3, 44, 11, 45], [26, 3, 41, 13, 42],
  [26, 17, 42, 0, 0], [28, 17, 46, 0, 0], [28, 4, 47, 14, 48], [28, 6, 45, 14, 46], [28, 8, 47, 13, 48],
  [28, 19, 46, 4, 47], [28, 22, 45, 3, 46], [28, 3, 45, 23, 46], [28, 21, 45, 7, 46], [28, 19, 47, 10, 48],
  [28, 2, 46, 29, 47], [28, 10, 46, 23, 47], [28, 14, 46, 21, 47], [28, 14, 46, 23, 47], [28, 12, 47, 26, 48],
  [28, 6, 47, 34, 48], [28, 29, 46, 14, 47], [28, 13, 46, 32, 47], [28, 40, 47, 7, 48], [28, 18, 47, 31, 48],
];

/**
 * The row/column coordinates of the alignment patterns' centres per version (index 0 = version 1,
 * which has none). A pattern sits at every pair of these, except the three pairs that would
 * overlap a finder pattern.
 */
export const ALIGNMENT_POSITIONS: readonly (readonly number[])[] = [
  [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
  [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62],
  [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82], [6, 30, 58, 86], [6, 34, 62, 90],
  [6, 28, 50, 72, 94], [6, 26, 50, 74, 98], [6, 30, 54, 78, 102], [6, 28, 54, 80, 106], [6, 32, 58, 84, 110],
  [6, 30, 58, 86, 114], [6, 34, 62, 90, 118],
  [6, 26, 50, 74, 98, 122], [6, 30, 54, 78, 102, 126], [6, 26, 52, 78, 104, 130], [6, 30, 56, 82, 108, 134],
  [6, 34, 60, 86, 112, 138], [6, 30, 58, 86, 114, 142], [6, 34, 62, 90, 118, 146],
  [6, 30, 54, 78, 102, 126, 150], [6, 24, 50, 76, 102, 128, 154], [6, 28, 54, 80, 106, 132, 158],
  [6, 32, 58, 84, 110, 136, 162], [6, 26, 54, 82, 110, 138, 166], [6, 30, 58, 86, 114, 142, 170],
];

/** One version's codeword layout at level M. */
export interface BlockLayout {
  ecPerBlock: number;
  /** Data codewords of each block, in order (group 1's blocks, then group 2's). */
  dataPerBlock: number[];
  /** All data codewords of the symbol. */
  dataCodewords: number;
}

export function blockLayout(version: number): BlockLayout {
  const row = BLOCKS_M[version - 1];
  if (!row) throw new RangeError(`no QR code version ${version}`);
  const [ecPerBlock, blocks1, data1, blocks2, data2] = row;
  const dataPerBlock = [...Array<number>(blocks1).fill(data1), ...Array<number>(blocks2).fill(data2)];
  return { ecPerBlock, dataPerBlock, dataCodewords: blocks1 * data1 + blocks2 * data2 };
}

/** The side of a version's symbol in modules. */
export function symbolSize(version: number): number {
  return 17 + 4 * version;
}

/** Bits of the byte mode's character count indicator: 8 up to version 9, 16 from version 10. */
export function countBits(version: number): number {
  return version <= 9 ? 8 : 16;
}

/**
 * The most bytes a version holds at level M in byte mode: its data codewords minus the 4-bit mode
 * indicator and the character count, rounded down to whole bytes.
 */
export function byteCapacity(version: number): number {
  return Math.floor((blockLayout(version).dataCodewords * 8 - 4 - countBits(version)) / 8);
}
