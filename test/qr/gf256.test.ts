/**
 * GF(256) with the 0x11D polynomial: the exp/log tables and multiplication, checked against a
 * bit-by-bit multiplication written here from the definition.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXP, gfMultiply, LOG, PRIMITIVE } from '../../src/qr/gf256.ts';

/** Carry-less multiplication, reduced modulo 0x11D after every shift. */
function slowMultiply(a: number, b: number): number {
  let product = 0;
  for (let x = a, y = b; y; y >>= 1) {
    if (y & 1) product ^= x;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  return product;
}

test('the field polynomial is x^8 + x^4 + x^3 + x^2 + 1', () => {
  assert.equal(PRIMITIVE, 0b1_0001_1101);
});

test('EXP holds the powers of α = 2 and wraps after 255', () => {
  assert.deepEqual([...EXP.subarray(0, 10)], [1, 2, 4, 8, 16, 32, 64, 128, 29, 58]);
  // Values the published antilog tables give further on.
  assert.equal(EXP[25], 3);
  assert.equal(EXP[100], 17);
  assert.equal(EXP[254], 142);
  assert.equal(EXP[255], 1);
  for (let i = 0; i < EXP.length; i++) assert.equal(EXP[i], EXP[i % 255], `EXP[${i}]`);
  // α is primitive: its first 255 powers are the 255 non-zero bytes, each once.
  assert.equal(new Set(EXP.subarray(0, 255)).size, 255);
  assert.ok(!EXP.includes(0));
});

test('LOG inverts EXP on every non-zero byte', () => {
  for (let a = 1; a < 256; a++) assert.equal(EXP[LOG[a]!], a, `α^log(${a})`);
  for (let i = 0; i < 255; i++) assert.equal(LOG[EXP[i]!], i, `log(α^${i})`);
  assert.equal(LOG[1], 0);
  assert.equal(LOG[2], 1);
  assert.equal(LOG[29], 8);
});

test('multiplication agrees with the definition on every pair of bytes', () => {
  for (let a = 0; a < 256; a++) {
    for (let b = 0; b < 256; b++) {
      const expected = slowMultiply(a, b);
      if (gfMultiply(a, b) !== expected) assert.fail(`${a} · ${b} = ${gfMultiply(a, b)}, expected ${expected}`);
    }
  }
  assert.equal(gfMultiply(0x80, 2), 0x1d);
  assert.equal(gfMultiply(0, 77), 0);
  assert.equal(gfMultiply(77, 1), 77);
});
