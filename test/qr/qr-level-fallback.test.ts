/**
 * Regression: `GET /api/urls/<code>/qr` was a 500 when the short URL did not fit a QR code at level
 * M (a long base path). docs/api.md, "QR code": level M wherever it fits, else level L, and a `422`
 * with a detail when the short URL fits neither. The symbols are read back by decoders nobody here
 * wrote, and their level is read from the format information the server drew.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FORMAT_MASK, LEVEL_BITS } from '../../src/qr/bch.ts';
import { QUIET_ZONE } from '../../src/qr/svg.ts';
import { start, tempDir, type Harness } from '../support/helpers.ts';
import { haveZbar, openReader } from './decoders.ts';

/** 2331 bytes fit version 40 at level M, 2953 at level L (ISO/IEC 18004, byte mode). */
const MAX_M = 2331;
const MAX_L = 2953;

/**
 * A base path in segments like a real deployment's, long enough that a 30-character code makes a
 * short URL of about `bytes` (the custom code's length then sets it exactly).
 */
function basePathFor(bytes: number): string {
  const length = bytes - 'http://127.0.0.1:65535/'.length - 30;
  return `${`/${'links-of-the-marketing-department/'.repeat(100)}`.slice(0, length - 1)}s`;
}

/** A server under `basePath` that takes custom codes of up to 64 characters. */
async function serverAt(t: Parameters<typeof start>[0], basePath: string): Promise<{ h: Harness; origin: string; basePath: string }> {
  const h = await start(t, { basePath, maxShortLength: 64, fsync: 'off' });
  return { h, origin: `http://127.0.0.1:${h.port}`, basePath };
}

/** Creates a link with a custom code sized so that its short URL is exactly `bytes` long. */
async function linkOf({ h, origin, basePath }: { h: Harness; origin: string; basePath: string }, bytes: number): Promise<{ code: string; shortUrl: string }> {
  const prefix = `${origin}${basePath}/`;
  const code = 'Q'.repeat(bytes - prefix.length);
  const r = await h.req(`${basePath}/api/shorten`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/landing', code }),
  });
  assert.equal(r.status, 201, r.body);
  assert.equal(Buffer.byteLength(r.body), bytes);
  return { code, shortUrl: r.body };
}

/**
 * The error-correction level in the format information of a served SVG: the dark cells of its path
 * (`M x y h len v1 h -len z` runs), then the 15 bits around the top-left finder, unmasked; the top two
 * data bits are the level. The second copy (top-right and bottom-left) must say the same.
 */
function levelOf(svg: string): string {
  const side = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)![1]);
  const n = side - 2 * QUIET_ZONE;
  const dark = new Set<number>();
  for (const [, x, y, len] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    for (let i = 0; i < Number(len); i++) dark.add((Number(y) - QUIET_ZONE) * n + Number(x) - QUIET_ZONE + i);
  }
  const at = (row: number, col: number): number => (dark.has(row * n + col) ? 1 : 0);
  const first: number[] = [];
  const second: number[] = [];
  for (let i = 0; i <= 5; i++) first[i] = at(i, 8);
  first[6] = at(7, 8);
  first[7] = at(8, 8);
  first[8] = at(8, 7);
  for (let i = 9; i < 15; i++) first[i] = at(8, 14 - i);
  for (let i = 0; i < 8; i++) second[i] = at(8, n - 1 - i);
  for (let i = 8; i < 15; i++) second[i] = at(n - 15 + i, 8);
  assert.deepEqual(second, first, 'both copies of the format information agree');
  const word = first.reduce((acc, bit, i) => acc | (bit << i), 0) ^ FORMAT_MASK;
  const bits = (word >> 13) & 0b11;
  return Object.entries(LEVEL_BITS).find(([, v]) => v === bits)![0];
}

test('a short URL too long for level M is drawn at level L and reads back exactly; past level L it is 422', async (t) => {
  if (!haveZbar(t)) return;
  const reader = await openReader(t, tempDir(t, 'qr-level-'));
  if (!reader) return;
  const nearM = await serverAt(t, basePathFor(MAX_M));
  const nearL = await serverAt(t, basePathFor(MAX_L));

  // The longest short URL level M holds stays at level M.
  const atM = await linkOf(nearM, MAX_M);
  const m = await nearM.h.req(`${nearM.basePath}/api/urls/${atM.code}/qr`);
  assert.equal(m.status, 200, m.body);
  assert.equal(levelOf(m.body), 'M');

  // One byte more, and up to the most level L holds: level L, version 36 and version 40.
  for (const [server, bytes] of [
    [nearM, MAX_M + 1],
    [nearL, MAX_L],
  ] as const) {
    const link = await linkOf(server, bytes);
    const r = await server.h.req(`${server.basePath}/api/urls/${link.code}/qr`);
    assert.equal(r.status, 200, `${bytes} bytes: ${r.body.slice(0, 200)}`);
    assert.equal(r.headers['content-type'], 'image/svg+xml');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(levelOf(r.body), 'L', `${bytes} bytes`);
    const read = await reader.read(r.body, `level-l-${bytes}`);
    assert.equal(read.jsqr, link.shortUrl, `${bytes} bytes: jsQR`);
    assert.equal(read.zbar, link.shortUrl, `${bytes} bytes: zbarimg`);
    assert.equal(read.version, bytes === MAX_L ? 40 : 36, `${bytes} bytes: the version jsQR found`);
  }

  // One byte past level L's capacity: no QR code can hold it.
  const tooLong = await linkOf(nearL, MAX_L + 1);
  const r = await nearL.h.req(`${nearL.basePath}/api/urls/${tooLong.code}/qr`);
  assert.equal(r.status, 422);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.body, JSON.stringify({ detail: `the short URL is ${MAX_L + 1} bytes long; a QR code holds at most ${MAX_L} (version 40, level L)` }));
  assert.equal(nearL.h.logs.lines.filter((l) => l['level'] === 'error').length, 0, 'nothing logged as an error');
});
