/**
 * The SVG: a self-contained document in module units, quiet zone included, whose path covers
 * exactly the symbol's dark modules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeQr } from '../../src/qr/encode.ts';
import { QUIET_ZONE, qrSvg } from '../../src/qr/svg.ts';

const URL = 'http://localhost:3000/Ab3dE6';

/** The dark cells a path of `M x y h w v1 h -w z` rectangles paints, on a side × side grid. */
function paint(d: string, side: number): Uint8Array {
  const cells = new Uint8Array(side * side);
  const rect = /M(\d+) (\d+)h(\d+)v1h-(\d+)z/y;
  let rest = 0;
  for (let match = rect.exec(d); match; match = rect.exec(d)) {
    const [x, y, w, back] = match.slice(1).map(Number) as [number, number, number, number];
    assert.equal(back, w);
    for (let k = 0; k < w; k++) {
      assert.equal(cells[y * side + x + k], 0, 'no module painted twice');
      cells[y * side + x + k] = 1;
    }
    rest = rect.lastIndex;
  }
  assert.equal(rest, d.length, 'the path is nothing but rectangles');
  return cells;
}

test('an SVG document with a viewBox in modules, a white background and one black path', () => {
  const svg = qrSvg(URL);
  const side = encodeQr(URL).size + 2 * QUIET_ZONE;
  assert.equal(side, 29 + 8);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 37 37" shape-rendering="crispEdges">/);
  assert.ok(svg.endsWith('</svg>\n'));
  assert.ok(svg.includes('<rect width="37" height="37" fill="#fff"/>'));
  assert.equal(svg.match(/<path /g)?.length, 1);
  assert.match(svg, /<path fill="#000" d="M/);
  assert.match(svg, /<title>QR code<\/title>/);
  // No fixed size: it scales to its container.
  const open = /^<svg[^>]*>/.exec(svg)![0];
  assert.doesNotMatch(open, /\s(width|height)=/);
});

test('self-contained: nothing external, no script', () => {
  const svg = qrSvg(`${URL}/x`);
  assert.deepEqual(svg.match(/https?:\/\/[^"]*/g), ['http://www.w3.org/2000/svg'], 'only the namespace');
  assert.doesNotMatch(svg, /href|url\(|<script|<image|<use|<style|@import/i);
});

test('the path paints exactly the dark modules, inside the 4-module quiet zone', () => {
  for (const text of [URL, 'x'.repeat(300), 'y'.repeat(2331)]) {
    const symbol = encodeQr(text);
    const side = symbol.size + 2 * QUIET_ZONE;
    const d = /<path fill="#000" d="([^"]*)"/.exec(qrSvg(text))![1]!;
    const cells = paint(d, side);
    for (let row = 0; row < side; row++) {
      for (let col = 0; col < side; col++) {
        const r = row - QUIET_ZONE;
        const c = col - QUIET_ZONE;
        const inside = r >= 0 && r < symbol.size && c >= 0 && c < symbol.size;
        const expected = inside ? symbol.modules[r * symbol.size + c] : 0;
        if (cells[row * side + col] !== expected) assert.fail(`${text.length} bytes: cell (${row}, ${col})`);
      }
    }
  }
});

test('the same text gives the same SVG; another text another one', () => {
  assert.equal(qrSvg(URL), qrSvg(URL));
  assert.notEqual(qrSvg(URL), qrSvg(URL.replace('Ab3', 'Ab4')));
});

test('too long for a QR code: the RangeError reaches the caller', () => {
  assert.throws(() => qrSvg('x'.repeat(2954)), RangeError);
});
