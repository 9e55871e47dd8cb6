/**
 * Arithmetic in GF(256), the field the QR code's Reed–Solomon codewords live in: bytes, with
 * addition as XOR and multiplication modulo the primitive polynomial
 * x^8 + x^4 + x^3 + x^2 + 1 (0x11D), whose root α = 2 generates every non-zero element.
 */

/** The field's reduction polynomial, ISO/IEC 18004's choice for QR codes. */
export const PRIMITIVE = 0x11d;

/**
 * EXP[i] = α^i. It holds 510 entries, so that EXP[LOG[a] + LOG[b]] needs no `% 255`: the sum of
 * two logarithms is at most 508.
 */
export const EXP: Uint8Array = new Uint8Array(510);

/** LOG[a] = i with α^i = a, for a ≠ 0 (LOG[0] is meaningless and left 0). */
export const LOG: Uint8Array = new Uint8Array(256);

{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= PRIMITIVE;
  }
  for (let i = 255; i < EXP.length; i++) EXP[i] = EXP[i - 255]!;
}

/** a · b in GF(256). */
export function gfMultiply(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return EXP[LOG[a]! + LOG[b]!]!;
}
