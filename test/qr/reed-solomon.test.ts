/**
 * Reed–Solomon over GF(256): the generator polynomials of ISO/IEC 18004 Annex A and the EC
 * codewords of two published worked examples, each confirmed by a second published source.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXP, gfMultiply, LOG } from '../../src/qr/gf256.ts';
import { generatorPolynomial, reedSolomon } from '../../src/qr/reed-solomon.ts';
import { BLOCKS_M } from '../../src/qr/tables.ts';

/** A polynomial (highest degree first) evaluated at x, by Horner's rule. */
function evaluate(poly: ArrayLike<number>, x: number): number {
  let value = 0;
  for (let i = 0; i < poly.length; i++) value = gfMultiply(value, x) ^ poly[i]!;
  return value;
}

/** A reproducible byte stream for the property checks. */
function bytes(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed;
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

test('generator polynomials as Annex A lists them (exponents of α)', () => {
  const exponents = (degree: number): number[] => [...generatorPolynomial(degree)].map((c) => LOG[c]!);
  assert.deepEqual(exponents(7), [0, 87, 229, 146, 149, 238, 102, 21]);
  assert.deepEqual(exponents(10), [0, 251, 67, 46, 61, 118, 70, 64, 94, 32, 45]);
  assert.deepEqual([...generatorPolynomial(2)], [1, 3, 2]);
});

test('every generator level M uses vanishes exactly at α^0 … α^(n−1)', () => {
  const degrees = new Set(BLOCKS_M.map(([ec]) => ec));
  assert.deepEqual(
    [...degrees].sort((a, b) => a - b),
    [10, 16, 18, 22, 24, 26, 28, 30],
  );
  for (const degree of degrees) {
    const g = generatorPolynomial(degree);
    assert.equal(g.length, degree + 1);
    assert.equal(g[0], 1, 'monic');
    for (let i = 0; i < degree; i++) assert.equal(evaluate(g, EXP[i]!), 0, `degree ${degree}: root α^${i}`);
    assert.notEqual(evaluate(g, EXP[degree]!), 0, `degree ${degree}: α^${degree} is no root`);
  }
});

test('the ISO/IEC 18004 Annex I example: "01234567", version 1-M', () => {
  // Numeric mode, padded with 0xEC 0x11 to the 16 data codewords of 1-M.
  const data = Uint8Array.from([0x10, 0x20, 0x0c, 0x56, 0x61, 0x80, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11, 0xec, 0x11]);
  assert.deepEqual([...reedSolomon(data, 10)], [0xa5, 0x24, 0xd4, 0xc1, 0xed, 0x36, 0xc7, 0x87, 0x2c, 0x55]);
});

test('the widely published "HELLO WORLD" 1-M example', () => {
  const data = Uint8Array.from([32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]);
  assert.deepEqual([...reedSolomon(data, 10)], [196, 35, 39, 119, 235, 215, 231, 226, 93, 23]);
});

test('data followed by its EC codewords is a codeword: every syndrome is zero', () => {
  for (const [ec, , data1, , data2] of BLOCKS_M) {
    for (const length of [data1, data2].filter((n) => n > 0)) {
      const data = bytes(ec * 1000 + length, length);
      const codeword = Uint8Array.from([...data, ...reedSolomon(data, ec)]);
      for (let i = 0; i < ec; i++) assert.equal(evaluate(codeword, EXP[i]!), 0, `${length}+${ec}: syndrome ${i}`);
      // One changed byte is noticed.
      codeword[3]! ^= 0x40;
      assert.ok([...Array(ec).keys()].some((i) => evaluate(codeword, EXP[i]!) !== 0));
    }
  }
});

test('all-zero data has all-zero EC codewords, and the data is left untouched', () => {
  assert.deepEqual([...reedSolomon(new Uint8Array(16), 10)], Array(10).fill(0));
  const data = bytes(7, 20);
  const copy = Uint8Array.from(data);
  reedSolomon(data, 16);
  assert.deepEqual(data, copy);
});
