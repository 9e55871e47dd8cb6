/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * What the browser tests of the UI share: the expected-status filter of a watched page, the
 * sideways-overflow measure, screenshots named by width, a QR code read back from the
 * page's own pixels with jsQR, and axe-core's verdict.
 */
import { AxeBuilder } from '@axe-core/playwright';
import jsQRModule from 'jsqr';
import type { Locator, Page } from 'playwright-core';
import { screenshot, type Watched } from '../support/browser.ts';

// jsQR is a CommonJS bundle that sets `exports.default`; its types describe that property.
const jsQR = jsQRModule.default;

/** Problems of a page, less Chromium's own line for each expected HTTP error status. */
export function unexpected(w: Watched, statuses: number[] = []): string[] {
  return w.problems.filter((p) => {
    const m = /Failed to load resource: the server responded with a status of (\d{3})/.exec(p);
    return !(m && statuses.includes(Number(m[1])));
  });
}

/**
 * Redirect hops the page never followed: with `redirect: 'manual'` Chromium reports the hop to the
 * `Location` as a request, which it aborts before anything is sent (net::ERR_ABORTED, no
 * response). The watcher of `browser.ts` counts it as a request off the origin; these are the
 * ones to forgive, and only these.
 */
export function watchAbortedHops(page: Page): Set<string> {
  const hops = new Set<string>();
  page.on('requestfailed', (req) => {
    if (req.redirectedFrom() && req.failure()?.errorText === 'net::ERR_ABORTED') hops.add(`request off the origin: ${req.url()}`);
  });
  return hops;
}

/** How many pixels the page scrolls sideways (0: none). */
export async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** A full-page screenshot under `test-results/screenshots/`, named with the viewport's width. */
export async function shot(page: Page, name: string): Promise<void> {
  await screenshot(page, `${name}-${page.viewportSize()?.width ?? 0}`);
}

/** The text of the QR code `svg` shows, read by jsQR from a screenshot of it (null: unreadable). */
export async function readQr(page: Page, svg: Locator): Promise<string | null> {
  const png = await svg.screenshot();
  // Decoded on a blank page of the same browser: the UI's CSP rightly refuses `data:` images.
  const scratch = await page.context().newPage();
  const rgba = await scratch.evaluate(pixelsOf, png.toString('base64'));
  await scratch.close();
  const bytes = Buffer.from(rgba.data, 'base64');
  const found = jsQR(new Uint8ClampedArray(bytes.buffer, bytes.byteOffset, bytes.length), rgba.width, rgba.height, { inversionAttempts: 'dontInvert' });
  return found ? found.data : null;
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

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations, passes } = await new AxeBuilder({ page }).analyze();
  // A run that checked nothing would pass anything.
  if (!passes.some((rule) => rule.id === 'color-contrast')) throw new Error('axe-core did not check the contrast');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
