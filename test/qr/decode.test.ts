import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeQr } from '../../src/qr/encode.ts';
import { qrSvg } from '../../src/qr/svg.ts';
import { tempDir } from '../support/helpers.ts';
import { haveZbar, openReader } from './decoders.ts';

test('probe', async (t) => {
  if (!haveZbar(t)) return;
  const reader = await openReader(t, tempDir(t));
  if (!reader) return;
  for (const text of ['http://localhost:3000/Ab3dE6', 'https://example.com/' + 'x'.repeat(300), 'https://example.com/' + 'y'.repeat(700), 'z'.repeat(2331)]) {
    const r = await reader.read(qrSvg(text), 'p');
    console.log(encodeQr(text).version, encodeQr(text).mask, r.version, r.jsqr === text, r.zbar === text);
  }
});
