/// <reference lib="dom" />
/**
 * The states of the stats view (docs/ui.md, stats): loading (busy, a spinner, the figures kept in
 * place so nothing moves), a missing or refused admin key (the key prompt, then the same stats),
 * the token gate (the token prompt, then the interrupted request again), a link deleted meanwhile
 * (404), and a server error, each said in words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page, Route } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { open, type Harness } from '../support/helpers.ts';
import { shot, unexpected } from './support.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const TOKEN = 'stats-token-789';

const chromiumPath = findChromium();
const missing = noBrowser();

describe('stats in the web UI: loading, prompts and errors', { timeout: 120_000 }, () => {
  let browser: Browser | undefined;
  let h: Harness;
  let origin: string;

  before(async () => {
    if (chromiumPath) browser = await launchFound(chromiumPath);
    h = await open({ apiKeys: ['k'] });
    origin = `http://127.0.0.1:${h.port}`;
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function seeded(code: string, visits: number): Promise<void> {
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://states.example/', code }),
    });
    assert.equal(r.status, 201, r.body);
    for (let i = 0; i < visits; i++) assert.equal((await h.req(`/${code}`, { headers: { 'user-agent': CHROME } })).status, 302);
  }

  const idle = (p: Page) => p.locator('#stats-body[aria-busy="false"]').waitFor();
  const pick = (p: Page, group: string, label: string) => p.getByRole('group', { name: group }).getByText(label, { exact: true }).click();

  test('loading: busy and a spinner over the figures of before, which keep their place; then the new ones', { skip: missing }, async () => {
    await seeded('loading1', 3);
    const w = await openPage(browser!, origin, { width: 1280 });
    const { page: p } = w;
    await p.goto(`${origin}/`);
    await p.evaluate(() => sessionStorage.setItem('url-shortener.api-key', 'k'));
    await p.goto(`${origin}/#stats/loading1?range=7d&bots=exclude`);
    await p.locator('#stats-chart svg').waitFor();
    await idle(p);
    const boxes = () => Promise.all(['#stats-totals', '#stats-chart', '#stats-tops'].map((s) => p.locator(s).boundingBox()));
    const before = await boxes();
    // The next stats answer waits until the test lets it through.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route('**/api/urls/loading1/stats?*', async (route: Route) => {
      await held;
      await route.continue();
    });
    await pick(p, 'Range', '24 h');
    await p.locator('#stats-body[aria-busy="true"]').waitFor();
    assert.equal(await p.locator('#stats .spinner').isVisible(), true);
    assert.equal(await p.locator('#stats-chart').evaluate((c) => getComputedStyle(c).opacity), '0.45');
    assert.deepEqual(await boxes(), before, 'nothing moved while loading');
    assert.equal(await p.locator('#stats-series-table tbody tr').count(), 7, 'the figures of before stay until the new ones come');
    await shot(p, 'stats-loading');
    release();
    await idle(p);
    assert.equal(await p.locator('#stats .spinner').isVisible(), false);
    assert.equal(await p.locator('#stats-series-table tbody tr').count(), 24);
    assert.equal(await p.locator('#total-visits').textContent(), '3');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('no key, then a refused one: the key prompt; the right key shows the stats and serves the list too', { skip: missing }, async () => {
    await seeded('keyed1', 2);
    const w = await openPage(browser!, origin, { width: 375 });
    const { page: p } = w;
    await p.goto(`${origin}/#stats/keyed1`);
    const prompt = p.locator('#stats-key-form');
    await prompt.waitFor({ state: 'visible' });
    assert.equal(await p.evaluate(() => document.activeElement?.id), 'stats-key');
    assert.equal(await p.locator('#stats-body').isHidden(), true);
    await p.getByLabel('Admin key').fill('wrong');
    await p.getByLabel('Admin key').press('Enter');
    await p.locator('#stats-key-error', { hasText: 'That API key was not accepted. Check it and try again.' }).waitFor();
    assert.equal(await p.locator('#stats-body').isHidden(), true);
    await p.getByLabel('Admin key').fill('k');
    await p.getByRole('button', { name: 'Show stats' }).click();
    await p.locator('#total-visits', { hasText: '2' }).waitFor();
    assert.equal(await prompt.isHidden(), true);
    assert.equal(await p.evaluate(() => sessionStorage.getItem('url-shortener.api-key')), 'k');
    await p.getByRole('link', { name: 'Back to your links' }).click();
    assert.equal(await p.getByLabel('Admin API key').inputValue(), 'k');
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });

  test('a link deleted meanwhile, and a server error, are said in words; the next answer brings the figures back', { skip: missing }, async () => {
    await seeded('doomed1', 1);
    await seeded('flaky01', 4);
    const w = await openPage(browser!, origin, { width: 1280 });
    const { page: p } = w;
    await p.goto(`${origin}/`);
    await p.evaluate(() => sessionStorage.setItem('url-shortener.api-key', 'k'));
    await p.goto(`${origin}/#stats/doomed1`);
    await p.locator('#total-visits', { hasText: '1' }).waitFor();
    assert.equal((await h.req('/api/urls/doomed1', { method: 'DELETE', headers: { 'x-api-key': 'k' } })).status, 204);
    await pick(p, 'Range', '7 d');
    const error = p.locator('#stats-error');
    await error.filter({ hasText: 'This link no longer exists (deleted, or expired).' }).waitFor();
    assert.equal(await p.locator('#stats-body').isHidden(), true);

    // A server error: the reason in words, no figures that would be read as this range's.
    await p.goto(`${origin}/#stats/flaky01?range=30d&bots=exclude`);
    await p.locator('#total-visits', { hasText: '4' }).waitFor();
    await idle(p);
    await p.route('**/api/urls/flaky01/stats?*', (route: Route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: '{"detail":"database unavailable"}' }),
    );
    await pick(p, 'Range', '90 d');
    await error.filter({ hasText: 'The stats could not be loaded. Database unavailable.' }).waitFor();
    assert.equal(await p.locator('#stats-body').isHidden(), true);
    await shot(p, 'stats-server-error');
    await p.unroute('**/api/urls/flaky01/stats?*');
    await pick(p, 'Range', '7 d');
    await p.locator('#stats-body').waitFor({ state: 'visible' });
    await idle(p);
    assert.equal(await error.isHidden(), true);
    assert.equal(await p.locator('#total-visits').textContent(), '4');
    assert.deepEqual(unexpected(w, [404, 503]), []);
    await w.context.close();
  });

  test('behind the token gate: the prompt on opening, and again after a 401 mid-way, then the same stats', { skip: missing }, async (t) => {
    const g = await open({ apiKeys: ['k'], apiToken: TOKEN });
    t.after(() => g.close());
    const auth = { authorization: `Bearer ${TOKEN}` };
    assert.equal(
      (
        await g.req('/api/shorten', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: '{"url":"https://gated.example/","code":"gated1"}',
        })
      ).status,
      201,
    );
    for (let i = 0; i < 2; i++) assert.equal((await g.req('/gated1', { headers: { ...auth, 'user-agent': CHROME } })).status, 302);
    const gOrigin = `http://127.0.0.1:${g.port}`;
    const w = await openPage(browser!, gOrigin, { width: 1280 });
    const { page: p } = w;
    await p.goto(`${gOrigin}/`);
    await p.evaluate(() => sessionStorage.setItem('url-shortener.api-key', 'k'));
    await p.goto(`${gOrigin}/#stats/gated1?range=7d&bots=exclude`);
    await p.locator('#gate').waitFor({ state: 'visible' });
    await p.getByLabel('Token', { exact: true }).fill(TOKEN);
    await p.getByLabel('Token', { exact: true }).press('Enter');
    await p.locator('#total-visits', { hasText: '2' }).waitFor();
    assert.equal(await p.locator('#stats-series-table tbody tr').count(), 7);
    // The token stops working: the next stats request opens the prompt, and goes through after it.
    await p.evaluate(() => sessionStorage.setItem('url-shortener.token', 'rotated-away'));
    await pick(p, 'Range', '24 h');
    await p.locator('#gate').waitFor({ state: 'visible' });
    assert.equal(await p.locator('#gate-error').textContent(), 'That token was not accepted. Enter it again.');
    await p.getByLabel('Token', { exact: true }).fill(TOKEN);
    await p.getByLabel('Token', { exact: true }).press('Enter');
    await p.locator('#stats-series-table tbody tr').nth(23).waitFor({ state: 'attached' });
    await idle(p);
    assert.equal(await p.locator('#stats-series-table tbody tr').count(), 24);
    assert.equal(await p.locator('#stats').isVisible(), true);
    assert.equal(await p.locator('#total-visits').textContent(), '2');
    assert.deepEqual(unexpected(w, [401]), []);
    await w.context.close();
  });
});
