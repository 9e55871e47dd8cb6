/**
 * Text to QR symbol (ISO/IEC 18004): byte mode over the text's UTF-8 bytes, error-correction level
 * M, the smallest version that holds it, and the mask with the lowest penalty.
 */
import { reedSolomon } from './reed-solomon.ts';
import { applyMask, MASK_COUNT, penalty } from './mask.ts';
import { drawFormat, functionPatterns, placeCodewords, type Matrix } from './matrix.ts';
import { blockLayout, byteCapacity, countBits, MAX_VERSION, MIN_VERSION } from './tables.ts';

/** A finished symbol: `modules` row-major, `size` × `size`, 1 = dark; no quiet zone. */
export interface QrSymbol {
  version: number;
  mask: number;
  size: number;
  modules: Uint8Array;
}

/** The pad codewords that fill the data capacity after the terminator, alternately. */
const PAD = [0xec, 0x11];
const BYTE_MODE = 0b0100;

/** The smallest version whose level-M byte capacity holds `length` bytes, or a RangeError. */
export function chooseVersion(length: number): number {
  for (let v = MIN_VERSION; v <= MAX_VERSION; v++) if (byteCapacity(v) >= length) return v;
  throw new RangeError(`${length} bytes do not fit in a QR code (version 40-M holds at most ${byteCapacity(MAX_VERSION)} bytes)`);
}

/**
 * The data codewords: mode indicator, character count, the bytes, a terminator of up to four zero
 * bits, zero bits to the byte boundary, then pad codewords to the version's capacity.
 */
export function dataCodewords(bytes: Uint8Array, version: number): Uint8Array {
  const capacity = blockLayout(version).dataCodewords;
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
export function interleave(data: Uint8Array, version: number): Uint8Array {
  const { ecPerBlock, dataPerBlock } = blockLayout(version);
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
 * Encodes `text` (as UTF-8) into a QR symbol at level M. Throws a RangeError past 40-M's capacity.
 * `mask` forces one mask instead of the best one: any mask gives a valid symbol, and the tests
 * have readers check each of them.
 */
export function encodeQr(text: string, options: { mask?: number } = {}): QrSymbol {
  const bytes = new TextEncoder().encode(text);
  const version = chooseVersion(bytes.length);
  const m = functionPatterns(version);
  placeCodewords(m, interleave(dataCodewords(bytes, version), version));
  const mask = options.mask ?? bestMask(m);
  if (!Number.isInteger(mask) || mask < 0 || mask >= MASK_COUNT) throw new RangeError(`no QR mask ${mask}`);
  applyMask(m, mask);
  drawFormat(m, 'M', mask);
  return { version, mask, size: m.size, modules: m.modules };
}

/** The mask whose finished symbol scores the lowest penalty (the lowest number on a tie). */
function bestMask(m: Matrix): number {
  let best = 0;
  let bestScore = Infinity;
  for (let mask = 0; mask < MASK_COUNT; mask++) {
    applyMask(m, mask);
    drawFormat(m, 'M', mask);
    const score = penalty(m);
    if (score < bestScore) {
      best = mask;
      bestScore = score;
    }
    applyMask(m, mask);
  }
  return best;
}
