/**
 * The per-version data of ISO/IEC 18004 at error-correction levels M and L, as tables: how the
 * codewords split into Reed–Solomon blocks, and where the alignment patterns sit. Everything else
 * about a version (its size, its number of codewords) follows from these by arithmetic.
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
  [10, 1, 16, 0, 0],
  [16, 1, 28, 0, 0],
  [26, 1, 44, 0, 0],
  [18, 2, 32, 0, 0],
  [24, 2, 43, 0, 0],
  [16, 4, 27, 0, 0],
  [18, 4, 31, 0, 0],
  [22, 2, 38, 2, 39],
  [22, 3, 36, 2, 37],
  [26, 4, 43, 1, 44],
  [30, 1, 50, 4, 51],
  [22, 6, 36, 2, 37],
  [22, 8, 37, 1, 38],
  [24, 4, 40, 5, 41],
  [24, 5, 41, 5, 42],
  [28, 7, 45, 3, 46],
  [28, 10, 46, 1, 47],
  [26, 9, 43, 4, 44],
  [26, 3, 44, 11, 45],
  [26, 3, 41, 13, 42],
  [26, 17, 42, 0, 0],
  [28, 17, 46, 0, 0],
  [28, 4, 47, 14, 48],
  [28, 6, 45, 14, 46],
  [28, 8, 47, 13, 48],
  [28, 19, 46, 4, 47],
  [28, 22, 45, 3, 46],
  [28, 3, 45, 23, 46],
  [28, 21, 45, 7, 46],
  [28, 19, 47, 10, 48],
  [28, 2, 46, 29, 47],
  [28, 10, 46, 23, 47],
  [28, 14, 46, 21, 47],
  [28, 14, 46, 23, 47],
  [28, 12, 47, 26, 48],
  [28, 6, 47, 34, 48],
  [28, 29, 46, 14, 47],
  [28, 13, 46, 32, 47],
  [28, 40, 47, 7, 48],
  [28, 18, 47, 31, 48],
];

/**
 * Level L's block structure per version, in the same shape as `BLOCKS_M`: fewer EC codewords, so
 * about a fifth more data, for the texts that level M cannot hold.
 */
export const BLOCKS_L: readonly (readonly [number, number, number, number, number])[] = [
  [7, 1, 19, 0, 0],
  [10, 1, 34, 0, 0],
  [15, 1, 55, 0, 0],
  [20, 1, 80, 0, 0],
  [26, 1, 108, 0, 0],
  [18, 2, 68, 0, 0],
  [20, 2, 78, 0, 0],
  [24, 2, 97, 0, 0],
  [30, 2, 116, 0, 0],
  [18, 2, 68, 2, 69],
  [20, 4, 81, 0, 0],
  [24, 2, 92, 2, 93],
  [26, 4, 107, 0, 0],
  [30, 3, 115, 1, 116],
  [22, 5, 87, 1, 88],
  [24, 5, 98, 1, 99],
  [28, 1, 107, 5, 108],
  [30, 5, 120, 1, 121],
  [28, 3, 113, 4, 114],
  [28, 3, 107, 5, 108],
  [28, 4, 116, 4, 117],
  [28, 2, 111, 7, 112],
  [30, 4, 121, 5, 122],
  [30, 6, 117, 4, 118],
  [26, 8, 106, 4, 107],
  [28, 10, 114, 2, 115],
  [30, 8, 122, 4, 123],
  [30, 3, 117, 10, 118],
  [30, 7, 116, 7, 117],
  [30, 5, 115, 10, 116],
  [30, 13, 115, 3, 116],
  [30, 17, 115, 0, 0],
  [30, 17, 115, 1, 116],
  [30, 13, 115, 6, 116],
  [30, 12, 121, 7, 122],
  [30, 6, 121, 14, 122],
  [30, 17, 122, 4, 123],
  [30, 4, 122, 18, 123],
  [30, 20, 117, 4, 118],
  [30, 19, 118, 6, 119],
];

/** The error-correction levels this encoder writes: M (15 % of the symbol recoverable) and L (7 %). */
export type EcLevel = 'M' | 'L';

const BLOCKS: Record<EcLevel, typeof BLOCKS_M> = { M: BLOCKS_M, L: BLOCKS_L };

/**
 * The row/column coordinates of the alignment patterns' centres per version (index 0 = version 1,
 * which has none). A pattern sits at every pair of these, except the three pairs that would
 * overlap a finder pattern.
 */
export const ALIGNMENT_POSITIONS: readonly (readonly number[])[] = [
  [],
  [6, 18],
  [6, 22],
  [6, 26],
  [6, 30],
  [6, 34],
  [6, 22, 38],
  [6, 24, 42],
  [6, 26, 46],
  [6, 28, 50],
  [6, 30, 54],
  [6, 32, 58],
  [6, 34, 62],
  [6, 26, 46, 66],
  [6, 26, 48, 70],
  [6, 26, 50, 74],
  [6, 30, 54, 78],
  [6, 30, 56, 82],
  [6, 30, 58, 86],
  [6, 34, 62, 90],
  [6, 28, 50, 72, 94],
  [6, 26, 50, 74, 98],
  [6, 30, 54, 78, 102],
  [6, 28, 54, 80, 106],
  [6, 32, 58, 84, 110],
  [6, 30, 58, 86, 114],
  [6, 34, 62, 90, 118],
  [6, 26, 50, 74, 98, 122],
  [6, 30, 54, 78, 102, 126],
  [6, 26, 52, 78, 104, 130],
  [6, 30, 56, 82, 108, 134],
  [6, 34, 60, 86, 112, 138],
  [6, 30, 58, 86, 114, 142],
  [6, 34, 62, 90, 118, 146],
  [6, 30, 54, 78, 102, 126, 150],
  [6, 24, 50, 76, 102, 128, 154],
  [6, 28, 54, 80, 106, 132, 158],
  [6, 32, 58, 84, 110, 136, 162],
  [6, 26, 54, 82, 110, 138, 166],
  [6, 30, 58, 86, 114, 142, 170],
];

/** One version's codeword layout at one level. */
export interface BlockLayout {
  ecPerBlock: number;
  /** Data codewords of each block, in order (group 1's blocks, then group 2's). */
  dataPerBlock: number[];
  /** All data codewords of the symbol. */
  dataCodewords: number;
}

export function blockLayout(version: number, level: EcLevel = 'M'): BlockLayout {
  const row = BLOCKS[level][version - 1];
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
 * The most bytes a version holds at a level in byte mode: its data codewords minus the 4-bit mode
 * indicator and the character count, rounded down to whole bytes.
 */
export function byteCapacity(version: number, level: EcLevel = 'M'): number {
  return Math.floor((blockLayout(version, level).dataCodewords * 8 - 4 - countBits(version)) / 8);
}
