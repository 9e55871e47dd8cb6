/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web UI in a real browser (Chromium through playwright-core): shorten and copy, errors, look
 * up, the admin list, narrow screens, dark mode and a base path. In every scenario no request may
 * leave the origin and nothing may be logged as an error, except the network line Chromium prints
 * for an answer the scenario expects (a 403 for a wrong key, say).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage, screenshot } from '../support/browser.ts';
import { codeOf, open, start, type Harness } from '../support/helpers.ts';
import { overflow, unexpected } from './support.ts';

let browser: Browser | undefined;
// One browser for the file: the file's hooks start it, and a hook cannot skip: the reason is
// decided here (a loud message, or under CI a failure) and each test skips with it.
const chromiumPath = findChromium();
const missing = noBrowser();

before(async () => {
  if (chromiumPath) browser = await launchFound(chromiumPath);
});

after(() => browser?.close());

describe('web UI', { timeout: 120_000 }, () => {
  let h: Harness;
  let origin: string;

  before(async () => {
    h = await open({ apiKeys: ['admin-key'] });
    origin = `http://127.0.0.1:${h.port}`;
  });

  after(() => h?.close());

  test('shorten with Enter, see the record, copy the short link', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    await screenshot(page, 'home');
    await page.getByLabel('Long URL').fill('https://example.com/a/very/long/path?with=query');
    await page.getByText('Options', { exact: true }).click();
    await page.getByLabel('Keep for (days)').fill('30');
    await page.getByLabel('Long URL').press('Enter');
    const link = page.locator('#short-link');
    await link.waitFor({ state: 'visible' });
    const shortUrl = (await link.textContent())!;
    assert.match(shortUrl, new RegExp(`^${origin}/[1-9A-HJ-NP-Za-km-z]{6}$`));
    assert.equal(await link.getAttribute('href'), shortUrl);
    const record = await page.locator('#shorten-record').innerText();
    assert.match(record, /Original URL\s+https:\/\/example\.com\/a\/very\/long\/path\?with=query/);
    assert.match(record, /Expires\s+\S/);
    assert.doesNotMatch(record, /Expires\s+Never/);
    // The link exists, with its retention.
    const code = codeOf(shortUrl);
    const meta = JSON.parse((await h.req(`/api/urls/${code}`)).body) as { retention_days: number; original_url: string };
    assert.equal(meta.retention_days, 30);
    assert.equal(meta.original_url, 'https://example.com/a/very/long/path?with=query');

    await page.getByRole('button', { name: 'Copy' }).click();
    await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shortUrl);
    await screenshot(page, 'shortened');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('invalid input shows the API reason next to its field, in words', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    await page.getByLabel('Long URL').fill('ftp://example.com/file');
    await page.getByRole('button', { name: 'Shorten' }).click();
    const error = page.locator('#url-error');
    await error.waitFor({ state: 'visible' });
    assert.equal(await error.textContent(), 'The URL must use http or https, not ftp.');
    assert.equal(await page.locator('#shorten-result').isHidden(), true);
    await screenshot(page, 'invalid-url');

    await page.getByLabel('Long URL').fill('https://example.com/');
    await page.getByText('Options', { exact: true }).click();
    await page.getByLabel('Keep for (days)').fill('99999');
    await page.getByRole('button', { name: 'Shorten' }).click();
    const retention = page.locator('#retention-error');
    await retention.waitFor({ state: 'visible' });
    assert.match((await retention.textContent())!, /^The number of days must be an integer from 0 to 36500/);
    assert.equal(await error.isHidden(), true);

    await page.getByLabel('Long URL').fill('');
    await page.getByLabel('Keep for (days)').fill('');
    await page.getByRole('button', { name: 'Shorten' }).click();
    assert.equal(await error.textContent(), 'Enter the URL to shorten.');
    assert.deepEqual(unexpected(w, [400]), []);
    await w.context.close();
  });

  test('look up by code, by short link and by original URL, with the visit count', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    const code = await h.shorten('https://lookup.example/page');
    await h.req(`/${code}`);
    await h.req(`/${code}`);
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    const input = page.getByLabel('Short code or original URL');
    const record = page.locator('#lookup-record');
    for (const query of [code, `${origin}/${code}`, 'https://lookup.example/page']) {
      await input.fill(query);
      await input.press('Enter');
      await record.waitFor({ state: 'visible' });
      const text = await record.innerText();
      assert.match(text, new RegExp(`Short link\\s+${origin}/${code}`), query);
      assert.match(text, /Visits\s+2/, query);
      await page.evaluate(() => document.getElementById('lookup-record')!.setAttribute('hidden', ''));
    }
    await screenshot(page, 'lookup');
    await input.fill('zzzzzz');
    await input.press('Enter');
    await page.locator('#lookup-error', { hasText: 'There is no link with that code.' }).waitFor();
    await input.fill('https://nothing.example/');
    await input.press('Enter');
    await page.locator('#lookup-error', { hasText: 'No link points to that URL.' }).waitFor();
    assert.deepEqual(unexpected(w, [404]), []);
    await w.context.close();
  });

  test('admin: a wrong key is refused, the right one lists newest first, pages, and deletes after a confirmation', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    const codes: string[] = [];
    for (let i = 0; i < 23; i++) codes.push(await h.shorten(`https://admin.example/${i}`));
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    const key = page.getByLabel('Admin API key');
    await key.fill('wrong');
    await key.press('Enter');
    await page.locator('#admin-error', { hasText: 'That API key was not accepted.' }).waitFor();
    assert.equal(await page.locator('#admin-list').isHidden(), true);

    await key.fill('admin-key');
    await key.press('Enter');
    await page.locator('#admin-summary', { hasText: /^Links 1–20 of \d+, newest first\.$/ }).waitFor();
    const total = Number(/of (\d+)/.exec((await page.locator('#admin-summary').textContent())!)![1]);
    const first = page.locator('#admin-rows tr').first();
    assert.equal(await first.locator('td').first().textContent(), codes.at(-1));
    assert.equal(await page.locator('#admin-rows tr').count(), 20);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('url-shortener.api-key')), 'admin-key');
    await screenshot(page, 'admin-list');

    await page.getByRole('button', { name: 'Older' }).click();
    await page.locator('#admin-summary', { hasText: `Links 21–${total} of ${total}` }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.locator('#admin-summary', { hasText: 'Links 1–20' }).waitFor();

    const victim = codes.at(-1)!;
    await page.getByRole('button', { name: `Delete ${victim}` }).click();
    // Cancel keeps it; the confirmation is in place, reachable by keyboard (focus is on Cancel).
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await page.keyboard.press('Enter');
    assert.equal((await h.req(`/api/urls/${victim}`)).status, 200);
    await page.getByRole('button', { name: `Delete ${victim}` }).click();
    await screenshot(page, 'admin-confirm-delete');
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.locator('#admin-summary', { hasText: `Deleted ${victim}.` }).waitFor();
    assert.equal((await h.req(`/api/urls/${victim}`)).status, 404);
    assert.notEqual(await first.locator('td').first().textContent(), victim);
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });

  test('at 375 and 360 px wide nothing overflows sideways, with results and the list shown', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    for (const width of [375, 360]) {
      const w = await openPage(browser, origin, { width });
      const { page } = w;
      await page.goto(`${origin}/`);
      assert.equal(await overflow(page), 0, `empty page at ${width}`);
      await page.getByLabel('Long URL').fill(`https://example.com/${'long-segment-'.repeat(20)}`);
      await page.getByLabel('Long URL').press('Enter');
      await page.locator('#short-link').waitFor({ state: 'visible' });
      await page.getByLabel('Admin API key').fill('admin-key');
      await page.getByLabel('Admin API key').press('Enter');
      await page.locator('#admin-rows tr').first().waitFor();
      assert.equal(await overflow(page), 0, `page with a result and the list at ${width}`);
      if (width === 375) await screenshot(page, 'narrow-375');
      assert.deepEqual(unexpected(w), []);
      await w.context.close();
    }
  });

  test('dark colour scheme, keyboard focus is visible, assets are cached by ETag', { skip: missing }, async () => {
    assert.ok(browser, 'started by the suite');
    const light = await openPage(browser, origin, { colorScheme: 'light' });
    await light.page.goto(`${origin}/`);
    const lightBg = await light.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await light.context.close();
    const w = await openPage(browser, origin, { colorScheme: 'dark' });
    const { page } = w;
    await page.goto(`${origin}/`);
    const darkBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.notEqual(darkBg, lightBg);
    assert.equal(darkBg, 'rgb(20, 22, 26)');
    // Keyboard alone: Tab reaches the URL field (after the header's links) and shows a focus ring.
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.id === 'url')) break;
    }
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'url');
    assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), 'solid');
    await screenshot(page, 'dark');
    const css = await h.req('/static/style.css');
    assert.equal(css.status, 200);
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal(css.headers['cache-control'], 'no-cache');
    assert.equal((await h.req('/static/style.css', { headers: { 'if-none-match': css.headers.etag! } })).status, 304);
    assert.equal((await h.req('/static/app.js')).headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal((await h.req('/static/missing.js')).status, 404);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });
});

describe('web UI under a base path', { timeout: 60_000 }, () => {
  test('served at /s/ with working assets and API calls', { skip: missing }, async (t) => {
    const b = browser!;
    const h = await start(t, { basePath: '/s', apiKeys: ['k'], logLevel: 'silent' });
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(b, origin);
    const { page } = w;
    await page.goto(`${origin}/s`);
    assert.equal(page.url(), `${origin}/s/`, 'the bare base path redirects to /s/');
    await page.getByLabel('Long URL').fill('https://example.com/under-base');
    await page.getByLabel('Long URL').press('Enter');
    await page.locator('#short-link').waitFor({ state: 'visible' });
    assert.match((await page.locator('#short-link').textContent())!, new RegExp(`^${origin}/s/[1-9A-Za-z]{6}$`));
    await page.getByLabel('Admin API key').fill('k');
    await page.getByLabel('Admin API key').press('Enter');
    await page.locator('#admin-rows tr').first().waitFor();
    const paths = w.requests.map((u) => new URL(u).pathname);
    for (const p of paths) assert.ok(p.startsWith('/s/') || p === '/s', `request inside the base path: ${p}`);
    assert.ok(paths.includes('/s/static/app.js') && paths.includes('/s/static/style.css') && paths.includes('/s/api/shorten'));
    await screenshot(page, 'base-path');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });
});

describe('web UI behind the token gate', { timeout: 60_000 }, () => {
  test('the prompt appears, a wrong token brings it back after a 401, the right one works and stays in sessionStorage', { skip: missing }, async (t) => {
    const b = browser!;
    const h = await start(t, { apiToken: 'ui-token-123', apiKeys: ['admin-key'] });
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(b, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    const prompt = page.locator('#gate');
    await prompt.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#app').isHidden(), true, 'the forms wait for the token');
    assert.equal(await page.locator('#docs-link').isHidden(), true);
    await screenshot(page, 'gate-prompt');

    await page.getByLabel('Token', { exact: true }).fill('wrong-token');
    await page.getByLabel('Token', { exact: true }).press('Enter');
    await page.locator('#gate-error', { hasText: 'That token was not accepted. Enter it again.' }).waitFor();
    assert.equal(await prompt.isVisible(), true);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('url-shortener.token')), null, 'a refused token is not kept');
    await screenshot(page, 'gate-wrong-token');

    await page.getByLabel('Token', { exact: true }).fill('ui-token-123');
    await page.getByLabel('Token', { exact: true }).press('Enter');
    await page.locator('#app').waitFor({ state: 'visible' });
    assert.equal(await prompt.isHidden(), true);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('url-shortener.token')), 'ui-token-123');

    // Every API call carries the token: shorten, look up and list all work.
    const sent: (string | undefined)[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname.startsWith('/api/')) sent.push(req.headers()['authorization']);
    });
    await page.getByLabel('Long URL').fill('https://gated.example/');
    await page.getByLabel('Long URL').press('Enter');
    await page.locator('#short-link').waitFor({ state: 'visible' });
    await page.getByLabel('Admin API key').fill('admin-key');
    await page.getByLabel('Admin API key').press('Enter');
    await page.locator('#admin-rows tr').first().waitFor();
    assert.ok(sent.length >= 3);
    assert.deepEqual(new Set(sent), new Set(['Bearer ui-token-123']));

    // A reload keeps the token (same tab): no prompt.
    await page.reload();
    await page.locator('#app').waitFor({ state: 'visible' });
    assert.equal(await prompt.isHidden(), true);

    // A token that stops working (rotated on the server) leads back to the prompt on the next 401.
    await page.evaluate(() => sessionStorage.setItem('url-shortener.token', 'rotated-away'));
    await page.getByLabel('Long URL').fill('https://gated.example/2');
    await page.getByLabel('Long URL').press('Enter');
    await prompt.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#gate-error').textContent(), 'That token was not accepted. Enter it again.');

    // Forget the token.
    await page.getByLabel('Token', { exact: true }).fill('ui-token-123');
    await page.getByLabel('Token', { exact: true }).press('Enter');
    await page.locator('#app').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Forget token' }).click();
    await prompt.waitFor({ state: 'visible' });
    assert.equal(await page.evaluate(() => sessionStorage.getItem('url-shortener.token')), null);
    assert.deepEqual(unexpected(w, [401]), []);
    await w.context.close();
  });
});

describe('/docs in the browser', { timeout: 60_000 }, () => {
  test('renders offline: no request leaves the origin, no CSP violation or console error, the stylesheet applies', { skip: missing }, async (t) => {
    const b = browser!;
    const h = await start(t);
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(b, origin);
    const { page } = w;
    await page.goto(`${origin}/docs`);
    await page.locator('#deprecations').waitFor();
    // docs.css sets the page's font; an unstyled page would have the browser default.
    const styled = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
    assert.notEqual(styled, 'Times New Roman');
    const paths = w.requests.map((u) => new URL(u).pathname);
    assert.ok(paths.includes('/static/docs.css'), paths.join(' '));
    // Every in-page link points at an anchor that exists.
    const broken = await page.evaluate(() =>
      [...document.querySelectorAll('a[href^="#"]')]
        .map((a) => a.getAttribute('href')!.slice(1))
        .filter((id) => !document.getElementById(decodeURIComponent(id))),
    );
    assert.deepEqual(broken, []);
    await screenshot(page, 'docs');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });
});
