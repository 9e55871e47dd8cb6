/**
 * Text to QR symbol (ISO/IEC 18004): byte mode over the text's UTF-8 bytes, error-correction level
 * M (level L when no version at M holds the text), the smallest version that holds it, and the
 * mask with the lowest penalty.
 */
import { reedSolomon } from './reed-solomon.ts';
import { applyMask, MASK_COUNT, penalty } from './mask.ts';
import { drawFormat, functionPatterns, placeCodewords, type Matrix } from './matrix.ts';
import { blockLayout, byteCapacity, countBits, MAX_VERSION, MIN_VERSION, type EcLevel } from './tables.ts';

/** A finished symbol: `modules` row-major, `size` × `size`, 1 = dark; no quiet zone. */
export interface QrSymbol {
  version: number;
  level: EcLevel;
  mask: number;
  size: number;
  modules: Uint8Array;
}

/** The pad codewords that fill the data capacity after the terminator, alternately. */
const PAD = [0xec, 0x11];
const BYTE_MODE = 0b0100;

/**
 * The levels in the order they are tried: M survives more damage (a scuffed sticker, a glare), so
 * it is kept wherever it fits; L holds about a fifth more, for a short URL under a long base path.
 */
const LEVELS: readonly EcLevel[] = ['M', 'L'];

/** The most bytes a symbol can hold: version 40 at level L. */
export const MAX_QR_BYTES = byteCapacity(MAX_VERSION, 'L');

/** The smallest version whose byte capacity at `level` holds `length` bytes; undefined if none does. */
export function chooseVersion(length: number, level: EcLevel = 'M'): number | undefined {
  for (let v = MIN_VERSION; v <= MAX_VERSION; v++) if (byteCapacity(v, level) >= length) return v;
  return undefined;
}

/** The first level of `levels` that holds `length` bytes, with its smallest version, or a RangeError. */
function chooseFit(length: number, levels: readonly EcLevel[]): { level: EcLevel; version: number } {
  for (const level of levels) {
    const version = chooseVersion(length, level);
    if (version !== undefined) return { level, version };
  }
  const last = levels.at(-1) ?? 'L';
  throw new RangeError(`${length} bytes do not fit in a QR code (version 40-${last} holds at most ${byteCapacity(MAX_VERSION, last)} bytes)`);
}

/**
 * The data codewords: mode indicator, character count, the bytes, a terminator of up to four zero
 * bits, zero bits to the byte boundary, then pad codewords to the version's capacity.
 */
export function dataCodewords(bytes: Uint8Array, version: number, level: EcLevel = 'M'): Uint8Array {
  const capacity = blockLayout(version, level).dataCodewords;
  const out = new Uint8Array(capacity);
  let bitLength = 0;
  const push = (value: number, bits: number): void => {
    for (let b = bits - 1; b >= 0; b--, bitLength++) if ((value >> b) & 1) out[bitLength >> 3]! |= 0x80 >> (bitLength & 7);
  };
  push(BYTE_MODE, 4);
  push(bytes.length, countBits(version));
  for (const byte of bytes) push(byte, 8);
  // The terminator and the padding to a byte boundary are zero bits, already there.
  bitLength = Math.min(capacity * 8, bitLength + 4);
  for (let i = Math.ceil(bitLength / 8), k = 0; i < capacity; i++, k++) out[i] = PAD[k % 2]!;
  return out;
}

/**
 * Splits the data codewords into the version's blocks, adds each block's Reed–Solomon codewords,
 * and interleaves: the first data codeword of every block, then the second, …, then the EC
 * codewords the same way. A damaged patch of the symbol so spreads over many blocks.
 */
export function interleave(data: Uint8Array, version: number, level: EcLevel = 'M'): Uint8Array {
  const { ecPerBlock, dataPerBlock } = blockLayout(version, level);
  const blocks: Uint8Array[] = [];
  const ecBlocks: Uint8Array[] = [];
  let offset = 0;
  for (const length of dataPerBlock) {
    const block = data.subarray(offset, offset + length);
    blocks.push(block);
    ecBlocks.push(reedSolomon(block, ecPerBlock));
    offset += length;
  }
  const out = new Uint8Array(data.length + ecPerBlock * blocks.length);
  let k = 0;
  const longest = Math.max(...dataPerBlock);
  for (let i = 0; i < longest; i++) for (const block of blocks) if (i < block.length) out[k++] = block[i]!;
  for (let i = 0; i < ecPerBlock; i++) for (const ec of ecBlocks) out[k++] = ec[i]!;
  return out;
}

/**
 * Encodes `text` (as UTF-8) into a QR symbol at level M, or L when M cannot hold it. Throws a
 * RangeError past 40-L's capacity (`MAX_QR_BYTES`). `mask` forces one mask instead of the best
 * one: any mask gives a valid symbol, and the tests have readers check each of them; `level`
 * forces one level likewise.
 */
export function encodeQr(text: string, options: { mask?: number; level?: EcLevel } = {}): QrSymbol {
  const bytes = new TextEncoder().encode(text);
  const { level, version } = chooseFit(bytes.length, options.level === undefined ? LEVELS : [options.level]);
  const m = functionPatterns(version);
  placeCodewords(m, interleave(dataCodewords(bytes, version, level), version, level));
  const mask = options.mask ?? bestMask(m, level);
  if (!Number.isInteger(mask) || mask < 0 || mask >= MASK_COUNT) throw new RangeError(`no QR mask ${mask}`);
  applyMask(m, mask);
  drawFormat(m, level, mask);
  return { version, level, mask, size: m.size, modules: m.modules };
}

/** The mask whose finished symbol scores the lowest penalty (the lowest number on a tie). */
function bestMask(m: Matrix, level: EcLevel): number {
  let best = 0;
  let bestScore = Infinity;
  for (let mask = 0; mask < MASK_COUNT; mask++) {
    applyMask(m, mask);
    drawFormat(m, level, mask);
    const score = penalty(m);
    if (score < bestScore) {
      best = mask;
      bestScore = score;
    }
    applyMask(m, mask);
  }
  return best;
}
