/// <reference lib="dom" />
/**
 * "Your links" in a real browser: search, paging, and each row's copy, QR code, edit (by mouse and
 * by keyboard alone) and delete, each checked against the API's own record.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { launch, openPage } from '../support/browser.ts';
import { start, type Harness } from '../support/helpers.ts';
import { readQr, shot, unexpected } from './support.ts';

interface Record {
  short_code: string;
  short_url: string;
  original_url: string;
  retention_days: number;
  max_visits: number | null;
}

async function record(h: Harness, code: string): Promise<Record> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, `record of ${code}`);
  return JSON.parse(r.body) as Record;
}

async function showLinks(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Admin API key').fill('k');
  await page.getByLabel('Admin API key').press('Enter');
  await page.locator('#admin-rows tr').first().waitFor();
}

const summary = (page: Page) => page.locator('#admin-summary');

test('search narrows the list by code or URL, pages through matches, and says when nothing matches', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const needles: string[] = [];
  for (let i = 0; i < 26; i++) {
    const code = await h.shorten(i % 2 === 0 ? `https://needle.example/${i}` : `https://hay.example/${i}`);
    if (i % 2 === 0) needles.push(code);
  }
  const w = await openPage(browser, origin, { width: 1280 });
  const { page } = w;
  await showLinks(page, origin);
  await summary(page).filter({ hasText: 'Links 1–20 of 26, newest first.' }).waitFor();

  await page.getByLabel('Search').fill('NEEDLE');
  await page.getByLabel('Search').press('Enter');
  await summary(page).filter({ hasText: 'Links 1–13 of 13 matching “NEEDLE”, newest first.' }).waitFor();
  const codes = await page.locator('#admin-rows tr td[data-label="Code"]').allTextContents();
  assert.deepEqual(codes, [...needles].reverse());
  assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
  await shot(page, 'links-search');

  // A code matches too.
  await page.getByLabel('Search').fill(needles[3]!);
  await page.getByRole('button', { name: 'Search' }).click();
  await summary(page)
    .filter({ hasText: `of 1 matching “${needles[3]}”` })
    .waitFor();

  await page.getByLabel('Search').fill('nothing-like-this');
  await page.getByLabel('Search').press('Enter');
  await summary(page).filter({ hasText: 'No links match “nothing-like-this”.' }).waitFor();
  assert.equal(await page.locator('#admin-rows tr').count(), 0);

  // Cleared: the whole list again, and the pages.
  await page.getByLabel('Search').fill('');
  await page.getByLabel('Search').press('Enter');
  await summary(page).filter({ hasText: 'Links 1–20 of 26' }).waitFor();
  await page.getByRole('button', { name: 'Older' }).click();
  await summary(page).filter({ hasText: 'Links 21–26 of 26' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Newer' }).isDisabled(), false);
  assert.deepEqual(unexpected(w), []);
  await w.context.close();
});

test('each row: copy, QR code, a long target shortened with the full URL on hover, delete after asking', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const long = `https://long.example/${'segment/'.repeat(12)}end`;
  const code = await h.shorten(long);
  const other = await h.shorten('https://other.example/');
  const w = await openPage(browser, origin, { width: 1280 });
  const { page } = w;
  await showLinks(page, origin);
  const row = page.locator(`#admin-rows tr[data-code="${code}"]`);

  const target = row.locator('td[data-label="Target"] a');
  assert.equal(await target.getAttribute('title'), long);
  assert.equal(await target.getAttribute('href'), long);
  const text = (await target.textContent())!;
  assert.ok(text.endsWith('…') && text.length < long.length && long.startsWith(text.slice(0, -1)), text);

  await page.getByRole('button', { name: `Copy ${code}` }).click();
  await row
    .getByRole('button', { name: `Copy ${code}` })
    .filter({ hasText: 'Copied' })
    .waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${origin}/${code}`);

  const qrButton = page.getByRole('button', { name: `QR code of ${code}` });
  await qrButton.click();
  const svg = page.locator('#admin-rows tr.detail.qr svg');
  await svg.waitFor({ state: 'visible' });
  assert.equal(await qrButton.getAttribute('aria-expanded'), 'true');
  assert.equal(await readQr(page, svg), `${origin}/${code}`);
  await shot(page, 'links-row-qr');
  await qrButton.click();
  assert.equal(await page.locator('#admin-rows tr.detail').count(), 0);
  assert.equal(await qrButton.getAttribute('aria-expanded'), 'false');

  await page.getByRole('button', { name: `Delete ${other}` }).click();
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await summary(page)
    .filter({ hasText: `Deleted ${other}.` })
    .waitFor();
  assert.equal((await h.req(`/api/urls/${other}`)).status, 404);
  assert.equal(await page.locator(`#admin-rows tr[data-code="${other}"]`).count(), 0);
  assert.deepEqual(unexpected(w), []);
  await w.context.close();
});

test('edit a row: target (bare host completed), days and visit limit; a bad value is explained in the form', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const code = await h.shorten('https://before.example/');
  const w = await openPage(browser, origin, { width: 1280 });
  const { page } = w;
  await showLinks(page, origin);

  await page.getByRole('button', { name: `Edit ${code}` }).click();
  const form = page.getByRole('form', { name: `Edit ${code}` });
  await form.waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-url-${code}`);
  assert.equal(await form.getByLabel('Target').inputValue(), 'https://before.example/');
  await form.getByLabel('Target').fill('after.example/page');
  await form.getByLabel('Keep for (days)').fill('10');
  await form.getByLabel('Visit limit').fill('0');
  await form.getByRole('button', { name: 'Save' }).click();
  const error = form.locator('.error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.textContent(), 'Visit limit: a whole number from 1 to 2147483647, or empty for no limit.');
  assert.equal((await record(h, code)).original_url, 'https://before.example/', 'nothing changed');
  await shot(page, 'links-edit-error');

  await form.getByLabel('Visit limit').fill('5');
  await form.getByRole('button', { name: 'Save' }).click();
  await summary(page)
    .filter({ hasText: `Saved ${code}.` })
    .waitFor();
  const saved = await record(h, code);
  assert.equal(saved.original_url, 'https://after.example/page');
  assert.equal(saved.retention_days, 10);
  assert.equal(saved.max_visits, 5);
  const row = page.locator(`#admin-rows tr[data-code="${code}"]`);
  assert.equal(await row.locator('td[data-label="Visits"]').textContent(), '0 of 5');
  assert.notEqual(await row.locator('td[data-label="Expires"]').textContent(), 'Never');
  assert.equal(await row.locator('td[data-label="Target"] a').getAttribute('href'), 'https://after.example/page');

  // Keyboard alone: open the form, clear the limit and the days, save with Enter.
  await page.getByRole('button', { name: `Edit ${code}` }).focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-url-${code}`);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-days-${code}`);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), `edit-limit-${code}`);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Enter');
  await page.locator(`#admin-rows tr[data-code="${code}"] td[data-label="Visits"]`, { hasText: /^0$/ }).waitFor();
  const cleared = await record(h, code);
  assert.equal(cleared.max_visits, null);
  assert.equal(cleared.retention_days, 0);
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), `Edit ${code}`, 'focus returns to the row');
  assert.deepEqual(unexpected(w, [400]), []);
  await w.context.close();
});
