/**
 * The two BCH-protected words of a QR symbol: format information (error-correction level and mask,
 * BCH(15,5)) and version information (BCH(18,6), versions 7 and up). A reader that misreads a few
 * bits of either still finds the nearest valid word, which is why each table is checked for its
 * minimum distance in the tests.
 */

/** x^10 + x^8 + x^5 + x^4 + x^2 + x + 1, the format information's generator. */
const FORMAT_GENERATOR = 0x537;
/** XORed into every format word so that no valid one is all zeros. */
export const FORMAT_MASK = 0x5412;
/** x^12 + x^11 + x^10 + x^9 + x^8 + x^5 + x^2 + 1, the version information's generator. */
const VERSION_GENERATOR = 0x1f25;

/** The two error-correction-level bits of the format information (M is 00, not 01). */
export const LEVEL_BITS = { L: 0b01, M: 0b00, Q: 0b11, H: 0b10 } as const;
export type Level = keyof typeof LEVEL_BITS;

/** `value << degree(generator)` followed by its remainder modulo `generator` (systematic BCH). */
function bchEncode(value: number, generator: number): number {
  const degree = 31 - Math.clz32(generator);
  let remainder = value << degree;
  for (let bit = 31 - Math.clz32(remainder); bit >= degree; bit--) {
    if (remainder & (1 << bit)) remainder ^= generator << (bit - degree);
  }
  return (value << degree) | remainder;
}

/** The 15-bit format word for `level` and `mask` (0–7), masked, most significant bit first. */
export function formatBits(level: Level, mask: number): number {
  return bchEncode((LEVEL_BITS[level] << 3) | mask, FORMAT_GENERATOR) ^ FORMAT_MASK;
}

/** The 18-bit version word (6 bits of version, 12 of check), for versions 7 to 40. */
export function versionBits(version: number): number {
  return bchEncode(version, VERSION_GENERATOR);
}
