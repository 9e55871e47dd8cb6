/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * What the browser tests of the UI share: the expected-status filter of a watched page, the
 * sideways-overflow measure, screenshots named by width, a QR code read back from the
 * page's own pixels with jsQR, and axe-core's verdict.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults, RunOptions } from 'axe-core';
import type { Locator, Page } from 'playwright-core';
import { screenshot, type Watched } from '../support/browser.ts';
import { readWithJsqr } from '../qr/decoders.ts';

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
  const found = await readWithJsqr(scratch, png);
  await scratch.close();
  return found ? found.data : null;
}

/**
 * axe-core's own script, the one @axe-core/playwright injects (resolved through it, whose
 * dependency it is).
 */
const AXE_SOURCE = readFileSync(createRequire(createRequire(import.meta.url).resolve('@axe-core/playwright')).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now, one line each.
 *
 * `axe.run` in the page itself, as @axe-core/playwright's legacy mode runs it, not its default,
 * which runs each frame apart and merges the parts in a new blank page (the UI has no frames),
 * nor its injection of the script before each check: a document keeps it across the checks of
 * its views and schemes. Only the violations carry every node: axe names each node of each
 * result by a unique selector, which for the thousands of passing nodes took longer than the
 * check; the passes still list their rules, all that the check below of a run that checked
 * nothing reads. Together: the same verdict in a quarter of the time.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const { violations, passes } = await page.evaluate(
    (options) => (window as unknown as { axe: { run(context: Document, options: RunOptions): Promise<AxeResults> } }).axe.run(document, options),
    { resultTypes: ['violations'] } satisfies RunOptions,
  );
  // A run that checked nothing would pass anything.
  if (!passes.some((rule) => rule.id === 'color-contrast')) throw new Error('axe-core did not check the contrast');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
