/**
 * The symbols read back by decoders nobody here wrote: Chromium renders the SVG, jsQR and zbar's
 * `zbarimg` decode the screenshot, and both must return exactly the text encoded. One browser
 * serves every case. The PNGs are kept in a temporary directory for the length of the test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeQr } from '../../src/qr/encode.ts';
import { qrSvg, symbolSvg } from '../../src/qr/svg.ts';
import { byteCapacity, MAX_VERSION } from '../../src/qr/tables.ts';
import { tempDir } from '../support/helpers.ts';
import { haveZbar, openReader, type ReadBack } from './decoders.ts';

const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A base URL whose path has about `length` characters, in segments like a real deployment's. */
function basePath(length: number): string {
  let path = '';
  for (let i = 0; path.length < length; i++) path += `/segment-${i}-${CODE_ALPHABET.slice(i % 50, (i % 50) + 12)}`;
  return `https://links.example.org${path.slice(0, length)}`;
}

/** A short-URL-like text of exactly `length` bytes (for the full-capacity cases). */
function textOf(length: number): string {
  let text = 'https://sho.rt/';
  for (let i = 0; text.length < length; i++) text += CODE_ALPHABET[(i * 7) % 64];
  return text.slice(0, length);
}

const SHORT_URLS: [string, string][] = [
  ['short URL', 'http://localhost:3000/Ab3dE6'],
  ['64-character custom code', `http://localhost:3000/${CODE_ALPHABET}`],
  ['base path of ~300 characters', `${basePath(300)}/4kZt9q`],
  ['base path of ~700 characters', `${basePath(700)}/${CODE_ALPHABET}`],
  ['https on a port, with an underscore and a hyphen', 'https://s.example.com:8443/my_link-2025'],
];

test('decoders nobody here wrote read every symbol back exactly', async (t) => {
  if (!haveZbar(t)) return;
  const reader = await openReader(t, tempDir(t, 'qr-decode-'));
  if (!reader) return;

  await t.test('short URLs: plain, long custom codes, long base paths', async () => {
    const versions = new Set<number>();
    for (const [name, url] of SHORT_URLS) {
      const symbol = encodeQr(url);
      versions.add(symbol.version);
      const result: ReadBack = await reader.read(qrSvg(url), name.replace(/\W+/g, '-'));
      assert.equal(result.jsqr, url, `${name} (version ${symbol.version}): jsQR`);
      assert.equal(result.zbar, url, `${name} (version ${symbol.version}): zbarimg`);
      assert.equal(result.version, symbol.version, `${name}: the version jsQR found`);
    }
    // The long base paths reach versions with version-information blocks (7 and up).
    assert.ok([...versions].some((v) => v >= 7) && [...versions].some((v) => v >= 15), [...versions].join());
  });

  await t.test('every version, 1 to 40, filled to capacity', async () => {
    for (let v = 1; v <= MAX_VERSION; v++) {
      const text = textOf(byteCapacity(v));
      assert.equal(encodeQr(text).version, v);
      const result: ReadBack = await reader.read(qrSvg(text), `version-${v}`);
      assert.equal(result.jsqr, text, `version ${v}: jsQR`);
      assert.equal(result.zbar, text, `version ${v}: zbarimg`);
      assert.equal(result.version, v, `version ${v}: the version jsQR found`);
    }
  });

  await t.test('each of the eight masks', async () => {
    const url = `${basePath(120)}/Ab3dE6`;
    for (let mask = 0; mask < 8; mask++) {
      const result: ReadBack = await reader.read(symbolSvg(encodeQr(url, { mask })), `mask-${mask}`);
      assert.equal(result.jsqr, url, `mask ${mask}: jsQR`);
      assert.equal(result.zbar, url, `mask ${mask}: zbarimg`);
    }
  });
});
