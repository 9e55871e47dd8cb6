/// <reference lib="dom" />
/**
 * Several short domains in a real browser (docs/ui.md, domains): a link made on `go.example`
 * through the shorten form's domain picker, the same code on the default domain, the list filtered
 * by domain, the `go.example` row's QR code, edit, stats and delete acting on that link and never
 * on the default domain's (checked with the API), the lookup of a short link of either domain; the
 * Domains page setting a domain's three redirects (checked with `GET /api/domains` and a real
 * request to that domain), an API refusal said beside its field, and a viewer key's refusal; an
 * instance of one domain without picker, filter or Domains in the header. Axe-core at 375 and
 * 1280 px, light and dark, on the Domains page and on the home view with the picker.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { start, tempDir, type Harness } from '../support/helpers.ts';
import { overflow, readQr, seriousViolations, shot, unexpected } from './support.ts';

const ADMIN = 'env-admin-key';
const GO = 'go.example';
const CODE = 'shared-1';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

interface LinkRecord {
  short_code: string;
  domain: string | null;
  short_url: string;
  original_url: string;
  title: string | null;
}

interface DomainEntry {
  domain: string;
  is_default: boolean;
  links: number;
  redirects: { base_url: string | null; not_found: string | null; expired: string | null };
}

/** The link of `code` on `domain` (absent: the default one), as the API has it; null when there is none. */
async function stored(h: Harness, code: string, domain?: string): Promise<LinkRecord | null> {
  const r = await h.req(`/api/urls/${code}${domain ? `?domain=${domain}` : ''}`);
  if (r.status === 404) return null;
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as LinkRecord;
}

async function domainsOf(h: Harness): Promise<DomainEntry[]> {
  const r = await h.req('/api/domains', { headers: { 'x-api-key': ADMIN } });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { domains: DomainEntry[] }).domains;
}

/** Makes a link through the shorten form, on the domain the picker names by its host (absent: left as it is). */
async function shorten(page: Page, url: string, code: string, host?: string): Promise<string> {
  await page.getByLabel('Long URL').fill(url);
  if (host !== undefined) await page.locator('#shorten-form').getByLabel('Domain').selectOption({ label: host });
  if ((await page.locator('#options').getAttribute('open')) === null) await page.getByText('Options', { exact: true }).click();
  await page.getByLabel('Custom code').fill(code);
  // Each attempt hides the previous result first: the result shown is this one's.
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#shorten-result').waitFor({ state: 'visible' });
  return (await page.locator('#short-link').textContent())!;
}

async function showLinks(page: Page): Promise<void> {
  await page.getByLabel('Admin API key').fill(ADMIN);
  await page.getByLabel('Admin API key').press('Enter');
  await page.locator('#admin-rows tr').first().waitFor();
}

/** The list's rows as `[domain shown, code]`. */
async function rows(page: Page): Promise<string[][]> {
  return page
    .locator('#admin-rows tr:not(.detail)')
    .evaluateAll((trs) => trs.map((tr) => [tr.querySelector('.domain-name')?.textContent ?? '', tr.querySelector('td.code a')?.textContent ?? '']));
}

const summary = (page: Page) => page.locator('#admin-summary');

/** The cells of a visits CSV row but its time (the visits are made at the real clock's time). */
const withoutTime = (row: string): string[] => row.split(',').filter((_, i) => i !== 1);

/**
 * Clicks the stats view's download button of `format` and returns the file's text and the query of
 * the export request it made.
 */
async function download(page: Page, dir: string, format: 'CSV' | 'JSONL'): Promise<{ text: string; query: URLSearchParams }> {
  const asked: URLSearchParams[] = [];
  const seen = (req: { url(): string }): void => {
    const url = new URL(req.url());
    if (url.pathname === '/api/visits/export') asked.push(url.searchParams);
  };
  page.on('request', seen);
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${format}` }).click()]);
  page.off('request', seen);
  const path = join(dir, `${asked.length}-${file.suggestedFilename()}`);
  await file.saveAs(path);
  assert.equal(asked.length, 1, 'one export request');
  return { text: readFileSync(path, 'utf8'), query: asked[0]! };
}

/** Opens the Domains page from the header's navigation; the key of "Your links" (if any) is used. */
async function openDomains(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Domains' }).click();
  await page.locator('#domains').waitFor({ state: 'visible' });
}

const domainForm = (page: Page, host: string) => page.getByRole('form', { name: host, exact: true });

const chromiumPath = findChromium();
const missing = noBrowser();

describe('several domains in the UI', { skip: missing }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchFound(chromiumPath!);
  });
  after(() => browser?.close());

  test('a link made on go.example with the picker and the same code on the default domain; the list filtered by domain; the go.example row’s QR code, lookup, edit, stats and delete act on it alone', async (t) => {
    const h = await start(t, { apiKeys: [ADMIN], domains: [GO] });
    const origin = `http://127.0.0.1:${h.port}`;
    const home = `127.0.0.1:${h.port}`;
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    await page.goto(`${origin}/`);

    // The picker: every host, the default first and chosen.
    const picker = page.locator('#shorten-form').getByLabel('Domain');
    assert.equal(await picker.isVisible(), true);
    assert.deepEqual(await picker.locator('option').allTextContents(), [home, GO]);
    assert.equal(await picker.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent), home);

    // On go.example: the API stores it there, and the page shows go.example's short link and its QR code.
    const made = await shorten(page, 'https://target.example/go', CODE, GO);
    assert.equal(made, `http://${GO}/${CODE}`);
    const onGo = await stored(h, CODE, GO);
    assert.deepEqual([onGo?.domain, onGo?.short_url, onGo?.original_url], [GO, `http://${GO}/${CODE}`, 'https://target.example/go']);
    assert.equal(await stored(h, CODE), null, 'nothing on the default domain');
    assert.match(await page.locator('#shorten-record').innerText(), new RegExp(`Short link\\s+http://${GO.replace('.', '\\.')}/${CODE}`));
    const resultQr = page.locator('#shorten-qr svg');
    await resultQr.waitFor({ state: 'visible' });
    assert.equal(await readQr(page, resultQr), `http://${GO}/${CODE}`);
    await shot(page, 'domains-shorten');

    // The same code on the default domain: a second link, the first one unchanged.
    const second = await shorten(page, 'https://target.example/default', CODE, home);
    assert.equal(second, `${origin}/${CODE}`);
    assert.equal((await stored(h, CODE))?.domain, null);
    assert.equal((await stored(h, CODE))?.original_url, 'https://target.example/default');
    assert.equal((await stored(h, CODE, GO))?.original_url, 'https://target.example/go');

    // Look up: a short link pasted whole finds the link of its domain; a code alone, the default domain's.
    await page.getByLabel('Short code or original URL').fill(`http://${GO}/${CODE}`);
    await page.getByLabel('Short code or original URL').press('Enter');
    await page.locator('#lookup-stats-link', { hasText: `Stats of ${GO}/${CODE}` }).waitFor();
    assert.match(await page.locator('#lookup-record').innerText(), /Original URL\s+https:\/\/target\.example\/go/);
    assert.equal(await page.locator('#lookup-stats-link').getAttribute('href'), `#stats/${CODE}?domain=${GO}`);
    await page.getByLabel('Short code or original URL').fill(CODE);
    await page.getByLabel('Short code or original URL').press('Enter');
    await page.locator('#lookup-stats-link', { hasText: new RegExp(`^Stats of ${CODE}$`) }).waitFor();
    assert.match(await page.locator('#lookup-record').innerText(), /Original URL\s+https:\/\/target\.example\/default/);

    // The list: each row says its domain; the filter shows one domain's links (the default one as `default`).
    await showLinks(page);
    await summary(page).filter({ hasText: 'Links 1–2 of 2, newest first.' }).waitFor();
    assert.deepEqual(await rows(page), [
      [home, CODE],
      [GO, CODE],
    ]);
    const filter = page.locator('#search-form').getByLabel('Domain');
    assert.deepEqual(await filter.locator('option').allTextContents(), ['All domains', home, GO]);
    const asked: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/api/urls') asked.push(new URL(req.url()).searchParams.get('domain') ?? '');
    });
    await filter.selectOption({ label: GO });
    await summary(page)
      .filter({ hasText: `Links 1–1 of 1 on ${GO}, newest first.` })
      .waitFor();
    assert.deepEqual(await rows(page), [[GO, CODE]]);
    await filter.selectOption({ label: home });
    await summary(page)
      .filter({ hasText: `Links 1–1 of 1 on ${home}, newest first.` })
      .waitFor();
    assert.deepEqual(await rows(page), [[home, CODE]]);
    await page.getByLabel('Search').fill('nothing-like-this');
    await page.getByLabel('Search').press('Enter');
    await summary(page)
      .filter({ hasText: `No links on ${home} match “nothing-like-this”.` })
      .waitFor();
    await page.getByLabel('Search').fill('');
    await filter.selectOption({ label: 'All domains' });
    await summary(page).filter({ hasText: 'Links 1–2 of 2, newest first.' }).waitFor();
    assert.deepEqual(asked, [GO, 'default', 'default', '']);
    await shot(page, 'domains-list');

    const goRow = page.locator(`#admin-rows tr[data-domain="${GO}"]`);
    // The QR code of the go.example row holds go.example's short link.
    await page.getByRole('button', { name: `QR code of ${GO}/${CODE}` }).click();
    const rowQr = page.locator('#admin-rows tr.detail.qr svg');
    await rowQr.waitFor({ state: 'visible' });
    assert.equal(await readQr(page, rowQr), `http://${GO}/${CODE}`);
    await page.getByRole('button', { name: `QR code of ${GO}/${CODE}` }).click();

    // Copy gives go.example's short link.
    await page.getByRole('button', { name: `Copy ${GO}/${CODE}` }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `http://${GO}/${CODE}`);

    // Edit the go.example row: that link changes, the default domain's does not.
    await page.getByRole('button', { name: `Edit ${GO}/${CODE}` }).click();
    const form = page.getByRole('form', { name: `Edit ${GO}/${CODE}` });
    await form.getByLabel('Target').fill('https://edited.example/go');
    await form.getByLabel('Title').fill('Edited on go');
    await form.getByRole('button', { name: 'Save' }).click();
    await summary(page)
      .filter({ hasText: `Saved ${GO}/${CODE}.` })
      .waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), `Edit ${GO}/${CODE}`, 'the focus back on the row saved');
    assert.deepEqual([(await stored(h, CODE, GO))?.original_url, (await stored(h, CODE, GO))?.title], ['https://edited.example/go', 'Edited on go']);
    assert.deepEqual([(await stored(h, CODE))?.original_url, (await stored(h, CODE))?.title], ['https://target.example/default', null]);
    assert.match(await goRow.locator('td.url').innerText(), /Edited on go/);

    // Its stats: two visits through go.example; the default domain's link of the same code has one of its own.
    for (let i = 0; i < 2; i++) {
      const hit = await h.req(`/${CODE}`, { headers: { host: GO, 'user-agent': CHROME } });
      assert.deepEqual([hit.status, hit.headers.location], [302, 'https://edited.example/go']);
    }
    const onDefault = await h.req(`/${CODE}`, { headers: { 'user-agent': FIREFOX } });
    assert.deepEqual([onDefault.status, onDefault.headers.location], [302, 'https://target.example/default']);
    await page.getByRole('link', { name: `Stats of ${GO}/${CODE}` }).click();
    await page.locator('#stats-title', { hasText: `Stats of ${GO}/${CODE}` }).waitFor();
    await page.locator('#stats-latest-summary', { hasText: 'Visits 1–2 of 2, newest first.' }).waitFor();
    assert.equal(await page.locator('#total-visits').textContent(), '2');
    assert.match(
      await page.locator('#stats-link').innerText(),
      new RegExp(`Short link\\s+http://go\\.example/${CODE}\\s+Target\\s+https://edited\\.example/go`),
    );
    // The downloads hold this link's visits alone, each with its bare code and its domain: the
    // export is asked for the code on go.example, never the default domain's link of that code.
    const dir = tempDir(t);
    const csv = await download(page, dir, 'CSV');
    assert.deepEqual([csv.query.get('format'), csv.query.get('code'), csv.query.get('domain')], ['csv', CODE, GO]);
    const csvLines = csv.text.trim().split('\r\n');
    assert.equal(csvLines[0], 'short_code,time,referrer,country,browser,os,device,bot,domain,rule');
    assert.deepEqual(csvLines.slice(1).map(withoutTime), [
      [CODE, '', '', 'Chrome', 'Linux', 'desktop', 'false', GO, ''],
      [CODE, '', '', 'Chrome', 'Linux', 'desktop', 'false', GO, ''],
    ]);
    const jsonl = await download(page, dir, 'JSONL');
    assert.deepEqual([jsonl.query.get('format'), jsonl.query.get('code'), jsonl.query.get('domain')], ['jsonl', CODE, GO]);
    const events = jsonl.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { short_code: string; browser: string; domain: string | null });
    assert.deepEqual(
      events.map((e) => [e.short_code, e.browser, e.domain]),
      [
        [CODE, 'Chrome', GO],
        [CODE, 'Chrome', GO],
      ],
    );
    // Another range keeps the domain in the address; a reload opens the same link's stats.
    await page.getByText('7 d', { exact: true }).click();
    await page.waitForFunction(() => location.hash.includes('range=7d'));
    assert.equal(new URL(page.url()).hash, `#stats/${CODE}?domain=${GO}&range=7d&bots=exclude`);
    await page.reload();
    await page.locator('#stats-title', { hasText: `Stats of ${GO}/${CODE}` }).waitFor();
    await page.locator('#stats-latest-summary', { hasText: 'Visits 1–2 of 2, newest first.' }).waitFor();
    await shot(page, 'domains-stats');
    // The default domain's link has none of them: its own visit alone, in its stats and its download (no domain asked).
    await page.goto(`${origin}/#stats/${CODE}?range=7d`);
    await page.locator('#stats-title', { hasText: new RegExp(`^Stats of ${CODE}$`) }).waitFor();
    await page.locator('#stats-latest-summary', { hasText: 'Visits 1–1 of 1, newest first.' }).waitFor();
    const home1 = await download(page, dir, 'CSV');
    assert.deepEqual([home1.query.get('code'), home1.query.has('domain')], [CODE, false]);
    assert.deepEqual(home1.text.trim().split('\r\n').slice(1).map(withoutTime), [[CODE, '', '', 'Firefox', 'Linux', 'desktop', 'false', '', '']]);
    // The dashboard tells the orphan visits apart: a scanner's path on go.example is one.
    assert.equal((await h.req('/wp-login.php', { headers: { host: GO, 'user-agent': CHROME } })).status, 404);
    // It is written in the background: the dashboard is loaded once the API has it.
    for (let i = 0; i < 100; i++) {
      const listed = await h.req('/api/visits/orphan', { headers: { 'x-api-key': ADMIN } });
      if (listed.headers['x-total-count'] !== '0') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The dashboard's top links name the link with its domain, and open its stats.
    await page.goto(`${origin}/#stats?range=7d`);
    await page
      .locator('#stats-notes span', {
        hasText: /^\d+ orphan visits? in this range: requests no link answered \(unknown codes, expired links, a domain's home page\), not in these figures\.$/,
      })
      .waitFor();
    await page.getByRole('link', { name: `Stats of ${GO}/${CODE}` }).click();
    await page.locator('#stats-title', { hasText: `Stats of ${GO}/${CODE}` }).waitFor();
    await page.locator('#stats-latest-summary', { hasText: 'Visits 1–2 of 2, newest first.' }).waitFor();

    // Delete the go.example row: that link is gone, the default domain's stays.
    await page.goto(`${origin}/`);
    await showLinks(page);
    await summary(page).filter({ hasText: 'Links 1–2 of 2, newest first.' }).waitFor();
    await page.getByRole('button', { name: `Delete ${GO}/${CODE}` }).click();
    assert.equal((await goRow.locator('.confirm').innerText()).trim(), `Delete ${GO}/${CODE}?`);
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await summary(page)
      .filter({ hasText: `Deleted ${GO}/${CODE}. Links 1–1 of 1, newest first.` })
      .waitFor();
    assert.equal(await stored(h, CODE, GO), null);
    assert.equal((await stored(h, CODE))?.original_url, 'https://target.example/default');
    assert.deepEqual(await rows(page), [[home, CODE]]);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test("the Domains page sets go.example's three redirects, says an API refusal beside its field, clears one; a viewer key gets the API's refusal", async (t) => {
    const h = await start(t, { apiKeys: [ADMIN], domains: [GO] });
    const origin = `http://127.0.0.1:${h.port}`;
    const home = `127.0.0.1:${h.port}`;
    await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://target.example/', domain: GO }),
    });
    const made = await h.req('/api/keys', {
      method: 'POST',
      headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'viewer', role: 'viewer' }),
    });
    const viewer = (JSON.parse(made.body) as { key: string }).key;
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    await page.goto(`${origin}/`);

    // A viewer key: the API's refusal in place of the page, and the prompt for another key.
    await openDomains(page);
    assert.equal(await page.getByRole('link', { name: 'Domains' }).getAttribute('aria-current'), 'page');
    assert.equal(await page.locator('#home').isVisible(), false, 'the domains in place of the home view');
    const keyField = page.getByLabel("Admin's API key");
    await keyField.fill(viewer);
    await keyField.press('Enter');
    const keyError = page.locator('#domains-key-error');
    await keyError.filter({ hasText: "This key's role (viewer) does not allow managing domains." }).waitFor();
    assert.equal(await page.locator('#domains-body').isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'domains-key');
    await shot(page, 'domains-refused');

    // An admin key: every domain, the default first and marked, with its live links.
    await keyField.fill(ADMIN);
    await keyField.press('Enter');
    await page.locator('#domains-summary', { hasText: '2 domains, the default one first.' }).waitFor();
    assert.deepEqual(await page.locator('.domain-form h3').allTextContents(), [home, GO]);
    assert.equal(await domainForm(page, home).locator(':scope > p.status').textContent(), 'Default domain. 0 live links.');
    assert.equal(await domainForm(page, GO).locator(':scope > p.status').textContent(), '1 live link.');
    // The key entered serves "Your links" too.
    assert.equal(await page.getByLabel('Admin API key').inputValue(), ADMIN);

    // The three redirects of go.example, saved together (one typed without its scheme).
    const go = domainForm(page, GO);
    await go.getByLabel('Home page').fill('https://www.example/');
    await go.getByLabel('Unknown code').fill('www.example/missing');
    await go.getByLabel('Expired link').fill('https://www.example/expired');
    await go.getByRole('button', { name: 'Save' }).click();
    await go
      .getByRole('status')
      .filter({ hasText: `Saved the redirects of ${GO}.` })
      .waitFor();
    assert.equal(await go.getByLabel('Unknown code').inputValue(), 'https://www.example/missing');
    const set = { base_url: 'https://www.example/', not_found: 'https://www.example/missing', expired: 'https://www.example/expired' };
    assert.deepEqual(
      (await domainsOf(h)).map((d) => [d.domain, d.is_default, d.redirects]),
      [
        [home, true, { base_url: null, not_found: null, expired: null }],
        [GO, false, set],
      ],
    );
    // They work: go.example's home and an unknown code there are redirected; the default domain's are not.
    const goHome = await h.req('/', { headers: { host: GO } });
    assert.deepEqual([goHome.status, goHome.headers.location], [302, 'https://www.example/']);
    const goMissing = await h.req('/no-such-code', { headers: { host: GO } });
    assert.deepEqual([goMissing.status, goMissing.headers.location], [302, 'https://www.example/missing']);
    assert.equal((await h.req('/no-such-code')).status, 404);
    await shot(page, 'domains-saved');

    // A reason of the API, said beside its field in the form's words; nothing is changed.
    await go.getByLabel('Home page').fill('ftp://x');
    await go.getByRole('button', { name: 'Save' }).click();
    const homeError = go.locator(`#${await go.getByLabel('Home page').getAttribute('id')}-error`);
    await homeError.filter({ hasText: 'Home page: must use http or https, not ftp.' }).waitFor();
    assert.equal(await go.getByRole('status').textContent(), '', 'no success said');
    assert.equal(await page.evaluate(() => document.activeElement?.closest('.field')?.querySelector('label')?.textContent), 'Home page');
    assert.deepEqual((await domainsOf(h))[1]?.redirects, set);
    await go.getByLabel('Expired link').fill(`${origin}/loop`);
    await go.getByLabel('Home page').fill('https://www.example/');
    await go.getByRole('button', { name: 'Save' }).click();
    await go.locator('.error').filter({ hasText: 'Expired link: points at this shortener itself; a short link to a short link would loop.' }).waitFor();
    assert.equal(await homeError.isVisible(), false, 'the old reason gone');
    await shot(page, 'domains-error');

    // An emptied field clears its redirect (null); the others stay.
    await go.getByLabel('Expired link').fill('');
    await go.getByRole('button', { name: 'Save' }).click();
    await go
      .getByRole('status')
      .filter({ hasText: `Saved the redirects of ${GO}.` })
      .waitFor();
    assert.deepEqual((await domainsOf(h))[1]?.redirects, { ...set, expired: null });
    assert.equal(await go.locator('.error:visible').count(), 0);

    // Back home and again: the page reads them back.
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Links' }).click();
    await page.locator('#home').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#domains').isVisible(), false);
    await openDomains(page);
    await page.locator('#domains-summary', { hasText: '2 domains' }).waitFor();
    assert.equal(await domainForm(page, GO).getByLabel('Home page').inputValue(), 'https://www.example/');
    assert.equal(await domainForm(page, GO).getByLabel('Expired link').inputValue(), '');
    assert.deepEqual(unexpected(w, [403, 400]), []);
    await w.context.close();
  });

  test('with one domain: no picker, no filter, no domain under the codes, no Domains in the header; the page at #domains lists the default one', async (t) => {
    const h = await start(t, { apiKeys: [ADMIN] });
    const origin = `http://127.0.0.1:${h.port}`;
    await h.shorten('https://one.example/');
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    await page.goto(`${origin}/`);
    assert.equal(await page.locator('meta[name="domains"]').count(), 0);
    assert.equal(await page.locator('#shorten-form').getByLabel('Domain').isVisible(), false);
    await showLinks(page);
    assert.equal(await page.locator('#search-form').getByLabel('Domain').isVisible(), false);
    assert.equal(await page.locator('#admin-rows .domain-name').count(), 0);
    // The create sends no domain.
    const bodies: string[] = [];
    page.on('request', (req) => {
      if (req.url().endsWith('/api/shorten')) bodies.push(req.postData() ?? '');
    });
    await page.getByLabel('Long URL').fill('https://two.example/');
    await page.getByRole('button', { name: 'Shorten' }).click();
    await page.locator('#shorten-result').waitFor({ state: 'visible' });
    assert.deepEqual(
      bodies.map((b) => Object.keys(JSON.parse(b) as object)),
      [['url']],
    );
    assert.equal(await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Domains' }).count(), 0);
    await page.goto(`${origin}/#domains`);
    await page.locator('#domains-summary', { hasText: 'One domain: the default one, the host of BASE_URL.' }).waitFor();
    assert.deepEqual(await page.locator('.domain-form h3').allTextContents(), [`127.0.0.1:${h.port}`]);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('at 375 and 1280 px, light and dark: the Domains page (saved, refused) and the home view with the picker, the list and its filter; no sideways scroll, no serious axe violation', async (t) => {
    const h = await start(t, { apiKeys: [ADMIN], domains: [GO, 'a-rather-long-short-domain.example'] });
    const origin = `http://127.0.0.1:${h.port}`;
    for (const domain of [GO, null]) {
      await h.req('/api/shorten', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          url: 'https://target.example/a/long/path/to/somewhere',
          code: 'a11y-code',
          title: 'A title',
          tags: ['work'],
          ...(domain ? { domain } : {}),
        }),
      });
    }
    for (const width of [375, 1280]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const w = await openPage(browser, origin, { width, colorScheme });
        const { page } = w;
        await page.goto(`${origin}/`);
        await shorten(page, 'https://made.example/', `made-${width}-${colorScheme}`.slice(0, 12), GO);
        await page.locator('#shorten-qr svg').waitFor({ state: 'visible' });
        await showLinks(page);
        await page.locator('#search-form').getByLabel('Domain').selectOption({ label: GO });
        await summary(page)
          .filter({ hasText: `on ${GO}` })
          .waitFor();
        await page.getByRole('button', { name: `Edit ${GO}/a11y-code` }).click();
        assert.equal(await overflow(page), 0, `home at ${width} px, ${colorScheme}`);
        assert.deepEqual(await seriousViolations(page), [], `home at ${width} px, ${colorScheme}`);
        await shot(page, `domains-home-${colorScheme}`);

        await openDomains(page);
        await page.locator('#domains-summary', { hasText: '3 domains' }).waitFor();
        const go = domainForm(page, GO);
        await go.getByLabel('Unknown code').fill('https://www.example/missing');
        await go.getByRole('button', { name: 'Save' }).click();
        await go.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
        await go.getByLabel('Home page').fill('ftp://x');
        await go.getByRole('button', { name: 'Save' }).click();
        await go.locator('.error', { hasText: 'Home page: must use http or https' }).waitFor();
        assert.equal(await overflow(page), 0, `domains at ${width} px, ${colorScheme}`);
        assert.deepEqual(await seriousViolations(page), [], `domains at ${width} px, ${colorScheme}`);
        await shot(page, `domains-page-${colorScheme}`);
        assert.deepEqual(unexpected(w, [400]), []);
        await w.context.close();
      }
    }
  });
});
