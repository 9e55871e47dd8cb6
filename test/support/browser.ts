/**
 * A real browser for the UI tests: Debian's Chromium (its headless shell where installed) driven
 * by playwright-core. Every page is watched: a request to another origin, a console error or an
 * uncaught exception fails the test.
 *
 * Without Chromium the browser tests skip with a loud message on a developer machine, and fail
 * under CI, where `.ci/run` installs it (`missing-tool.ts`).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type * as Playwright from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROOT } from './helpers.ts';
import { missingTool } from './missing-tool.ts';
import { afterTheFiles } from './test-groups.ts';

/**
 * Chromium's headless shell first (Debian's `chromium-headless-shell`: the same engine, without the
 * browser's windowing, as playwright runs headless by its own builds): the browser tests took 137 s
 * of the machine's CPU with it against 234 s with the whole browser, and pass alike.
 */
const CANDIDATES = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'];

// Required, not imported: as an ES module import node first scans the package for its exports, and
// the load took about 0.5 s of CPU against 0.34 s.
const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof Playwright;

export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

export function findChromium(): string | undefined {
  return CANDIDATES.find((p): p is string => !!p && existsSync(p));
}

const NO_CHROMIUM = 'Chromium not found (apt-get install chromium, or set CHROMIUM_PATH): the browser tests cannot run';

/**
 * False when Chromium is there; else why the browser tests cannot run (after a loud message), or
 * it throws under CI. For the `skip` option of a suite: a suite's hooks have no `skip`.
 */
export function noBrowser(): string | false {
  return findChromium() ? false : missingTool('BROWSER TESTS', NO_CHROMIUM);
}

/** The Chromium of this test process's `launch`es, launched at the first. */
let shared: Promise<Browser> | undefined;
afterTheFiles(async () => {
  await (await shared)?.close();
});

/**
 * This test process's Chromium, launched at its first call and closed after its last test file
 * (`afterTheFiles`); or skips `t` (developer machine) / throws (CI) when there is none. The
 * contexts and pages `t` opens in it are closed after `t`, so each test still starts from a
 * browser with nothing open, without a launch of its own (about 0.3 s of CPU each: 19 of a run's
 * launches were a test's own).
 */
export async function launch(t: Pick<TestContext, 'skip' | 'after'>): Promise<Browser | undefined> {
  const executablePath = findChromium();
  if (!executablePath) {
    t.skip(missingTool('BROWSER TESTS', NO_CHROMIUM));
    return undefined;
  }
  shared ??= launchFound(executablePath);
  const browser = await shared;
  const before = new Set(browser.contexts());
  const opened = (): BrowserContext[] => browser.contexts().filter((context) => !before.has(context));
  t.after(() => Promise.all(opened().map((context) => context.close())));
  return browser;
}

/** Launches the Chromium `findChromium` found. */
export function launchFound(executablePath: string): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

export interface Watched {
  context: BrowserContext;
  page: Page;
  /** Requests to another origin, console errors and page errors seen so far. */
  problems: string[];
  /** Every request URL, in order. */
  requests: string[];
}

/**
 * A fresh context and page on `origin`, with every request and console message watched. The
 * locale is `en-US` (the page's dates and country names are the browser's) and the time zone the
 * machine's unless `timezoneId` names one.
 */
export async function openPage(
  browser: Browser,
  origin: string,
  options: { width?: number; colorScheme?: 'light' | 'dark'; timezoneId?: string } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1024, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
    locale: 'en-US',
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('request', (req) => {
    requests.push(req.url());
    if (new URL(req.url()).origin !== origin) problems.push(`request off the origin: ${req.url()}`);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return { context, page, problems, requests };
}

/**
 * A full-page screenshot under `test-results/screenshots/`, for a person to look at, when
 * `TEST_SCREENSHOTS=1`: no test reads them, and they cost 5 of the 27 s of CPU of ui.test.ts and
 * domains.test.ts.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['TEST_SCREENSHOTS'] !== '1') return;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
