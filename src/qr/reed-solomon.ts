/**
 * Reed–Solomon error-correction codewords as ISO/IEC 18004 defines them: the remainder of the data
 * polynomial times x^n divided by the generator polynomial (x − α^0)(x − α^1)…(x − α^(n−1)).
 * Polynomials are arrays of coefficients, highest degree first.
 */
import { EXP, gfMultiply } from './gf256.ts';

const generators = new Map<number, Uint8Array>();

/**
 * The monic generator polynomial of degree `degree`, `degree + 1` coefficients with the leading 1
 * first. Cached: a version-40 symbol uses one degree for all of its 49 blocks.
 */
export function generatorPolynomial(degree: number): Uint8Array {
  const cached = generators.get(degree);
  if (cached) return cached;
  let poly = Uint8Array.of(1);
  for (let i = 0; i < degree; i++) {
    // poly · (x + α^i): in GF(256) subtraction is addition.
    const next = new Uint8Array(poly.length + 1);
    for (let j = 0; j < poly.length; j++) {
      next[j]! ^= poly[j]!;
      next[j + 1]! ^= gfMultiply(poly[j]!, EXP[i]!);
    }
    poly = next;
  }
  generators.set(degree, poly);
  return poly;
}

/** The `ecCount` error-correction codewords of one block of data codewords. */
export function reedSolomon(data: Uint8Array, ecCount: number): Uint8Array {
  const generator = generatorPolynomial(ecCount);
  // Polynomial long division, keeping only the running remainder (a shift register).
  const remainder = new Uint8Array(ecCount);
  for (const byte of data) {
    const factor = byte ^ remainder[0]!;
    remainder.copyWithin(0, 1);
    remainder[ecCount - 1] = 0;
    if (factor === 0) continue;
    for (let i = 0; i < ecCount; i++) remainder[i]! ^= gfMultiply(generator[i + 1]!, factor);
  }
  return remainder;
}
