/**
 * Reads QR codes back with decoders written elsewhere: the SVG is rendered by Chromium, the
 * screenshot is decoded by jsQR (from the PNG's pixels, which Chromium unpacks through a canvas)
 * and by zbar's `zbarimg` (from the PNG file). Neither knows anything of our encoder.
 *
 * Without `zbarimg` the decoder tests skip with a loud message on a developer machine (install
 * Debian's `zbar-tools`) and fail under CI, where `.ci/run` installs it, like the browser tests
 * without Chromium (`missing-tool.ts`).
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import jsQRModule from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import { launch } from '../support/browser.ts';
import { missingTool } from '../support/missing-tool.ts';

// jsQR is a CommonJS bundle that sets `exports.default`; its types describe that property.
const jsQR = jsQRModule.default;

/** Pixels per module: at least 3 for the decoders, and images of at most about 600 pixels. */
export function scaleFor(side: number): number {
  return Math.max(3, Math.min(8, Math.floor(600 / side)));
}

/** True when `zbarimg` runs; otherwise skips the test (developer machine) or throws (CI). */
export function haveZbar(t: TestContext): boolean {
  const probe = spawnSync('zbarimg', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  t.skip(missingTool('QR DECODER TESTS', 'zbarimg not found (apt-get install zbar-tools): the QR decoder tests cannot run'));
  return false;
}

/** What each decoder read (null: no symbol found), and the version jsQR saw. */
export interface ReadBack {
  jsqr: string | null;
  zbar: string | null;
  version: number | null;
}

export interface Reader {
  /** Renders `svg` at `scaleFor(side)` px per module, saves the PNG in the test's directory, decodes it. */
  read(svg: string, name: string): Promise<ReadBack>;
}

/** zbarimg's reading of a PNG file (null: no symbol found); it runs while jsQR reads the same PNG. */
function readWithZbar(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('zbarimg', ['--raw', '-q', file], { encoding: 'utf8' }, (error, stdout) => resolve(error ? null : stdout.replace(/\n$/, '')));
  });
}

/**
 * One Chromium page for every case of a test, and a second one that holds jsQR (the same bundle
 * Node loads) and reads each screenshot itself: only the text and version come back, not the
 * megabytes of pixels. Undefined when the test was skipped.
 */
export async function openReader(t: TestContext, dir: string): Promise<Reader | undefined> {
  const browser: Browser | undefined = await launch(t);
  if (!browser) return undefined;
  const [page, decoder]: Page[] = await Promise.all([browser.newPage(), browser.newPage()]);
  await decoder!.addScriptTag({ content: readFileSync(createRequire(import.meta.url).resolve('jsqr'), 'utf8') });
  return {
    async read(svg, name) {
      const side = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
      const px = side * scaleFor(side);
      await page!.setViewportSize({ width: px, height: px });
      await page!.setContent(`<!doctype html><style>html,body{margin:0;background:#fff}svg{display:block;width:${px}px;height:${px}px}</style>${svg}`);
      const png = await page!.locator('svg').screenshot();
      const file = join(dir, `${name}.png`);
      writeFileSync(file, png);
      const [found, zbar] = await Promise.all([decoder!.evaluate(jsqrInPage, png.toString('base64')), readWithZbar(file)]);
      return { jsqr: found ? found.data : null, zbar, version: found ? found.version : null };
    },
  };
}

/** Runs in the page that holds jsQR: a PNG (base64) drawn on a canvas and read; null: unreadable. */
async function jsqrInPage(png: string): Promise<{ data: string; version: number } | null> {
  const image = new Image();
  image.src = `data:image/png;base64,${png}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d')!;
  context.drawImage(image, 0, 0);
  const { data, width, height } = context.getImageData(0, 0, canvas.width, canvas.height);
  const found = (window as unknown as { jsQR: typeof jsQR }).jsQR(data, width, height, { inversionAttempts: 'dontInvert' });
  return found ? { data: found.data, version: found.version } : null;
}

/** jsQR's reading of a PNG, its pixels unpacked by `page` (any page whose CSP allows `data:` images); null: unreadable. */
export async function readWithJsqr(page: Page, png: Buffer): Promise<{ data: string; version: number } | null> {
  const rgba = await page.evaluate(pixelsOf, png.toString('base64'));
  const bytes = Buffer.from(rgba.data, 'base64');
  return jsQR(new Uint8ClampedArray(bytes.buffer, bytes.byteOffset, bytes.length), rgba.width, rgba.height, { inversionAttempts: 'dontInvert' });
}

/** Runs in the page: a PNG (base64) drawn on a canvas, its RGBA pixels back as base64. */
async function pixelsOf(png: string): Promise<{ width: number; height: number; data: string }> {
  const image = new Image();
  image.src = `data:image/png;base64,${png}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d')!;
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let binary = '';
  for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return { width: canvas.width, height: canvas.height, data: btoa(binary) };
}
