/// <reference lib="dom" />
/**
 * Titles and tags in a real browser (docs/ui.md): a link created with a title and tags from the
 * shorten form, shown in "Your links" (the title above the target, the tags as chips), the list
 * filtered by a tag (the filter field, and a chip), both edited and cleared in the row's edit form
 * (each checked against the API's own record), a refusal explained next to its field, and axe-core
 * clean with all of it on screen.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { launch, openPage } from '../support/browser.ts';
import { start, type Harness } from '../support/helpers.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

async function labels(h: Harness, code: string): Promise<{ title: string | null; tags: string[] }> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, `record of ${code}`);
  const { title, tags } = JSON.parse(r.body) as { title: string | null; tags: string[] };
  return { title, tags };
}

const summary = (page: Page) => page.locator('#admin-summary');
const listed = (page: Page) => page.locator('#admin-rows tr:not(.detail) td[data-label="Code"]').allTextContents();

test('create with a title and tags, see them in the list, filter by a tag (field and chip), edit and clear both', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const other = await h.shorten('https://other.example/');
  const w = await openPage(browser, origin, { width: 1280 });
  const { page } = w;
  await page.goto(`${origin}/`);

  // Create: a title and tags under Options; a refusal first, shown next to the tags.
  await page.getByLabel('Long URL').fill('labels.example/report');
  await page.getByText('Options', { exact: true }).click();
  await page.getByLabel('Title', { exact: true }).fill('  Q3 report — Ünïcödé 😀  ');
  await page.getByLabel('Tags', { exact: true }).fill(`reports, ${'x'.repeat(51)}`);
  await page.getByLabel('Long URL').press('Enter');
  const tagsError = page.locator('#tags-error');
  await tagsError.waitFor({ state: 'visible' });
  assert.equal(await tagsError.textContent(), 'A tag must be 1 to 50 characters long (after trimming spaces), not 51.');
  assert.equal(await page.locator('#shorten-result').isHidden(), true);
  await page.getByLabel('Tags', { exact: true }).fill('reports, 2026 , Work,reports');
  await page.getByLabel('Long URL').press('Enter');
  await page.locator('#shorten-qr svg').waitFor();
  assert.equal(await tagsError.isHidden(), true);
  const shortUrl = (await page.locator('#short-link').textContent())!;
  const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
  assert.deepEqual(await labels(h, code), { title: 'Q3 report — Ünïcödé 😀', tags: ['2026', 'Work', 'reports'] });
  // The result's record shows them.
  const record = page.locator('#shorten-record');
  assert.equal(await record.locator('dt', { hasText: 'Title' }).locator('+ dd').textContent(), 'Q3 report — Ünïcödé 😀');
  assert.equal(await record.locator('dt', { hasText: 'Tags' }).locator('+ dd').textContent(), '2026, Work, reports');

  // The list: the title above the target, the tags as chips in the API's order.
  await page.getByLabel('Admin API key').fill('k');
  await page.getByLabel('Admin API key').press('Enter');
  const row = page.locator(`#admin-rows tr[data-code="${code}"]`);
  await row.waitFor();
  const target = row.locator('td[data-label="Target"]');
  assert.equal(await target.locator('.link-title').textContent(), 'Q3 report — Ünïcödé 😀');
  assert.deepEqual(await target.locator('.target > *').evaluateAll((nodes) => nodes.map((n) => n.className || n.tagName)), ['link-title', 'A', 'tags']);
  assert.deepEqual(await target.getByRole('listitem').allTextContents(), ['2026', 'Work', 'reports']);
  assert.equal(await page.locator(`#admin-rows tr[data-code="${other}"] .link-title`).count(), 0, 'no title, no title line');
  assert.deepEqual(await listed(page), [code, other]);
  assert.deepEqual(await seriousViolations(page), []);
  await shot(page, 'labels-list');

  // Filter by the field: exact, case-sensitive, every tag named.
  await page.getByLabel('Tagged', { exact: true }).fill('work');
  await page.getByLabel('Tagged', { exact: true }).press('Enter');
  await summary(page).filter({ hasText: 'No links are tagged “work”.' }).waitFor();
  assert.deepEqual(await listed(page), []);
  await page.getByLabel('Tagged', { exact: true }).fill('Work, reports');
  await page.getByRole('button', { name: 'Search' }).click();
  await summary(page).filter({ hasText: 'Links 1–1 of 1 tagged “Work” and “reports”, newest first.' }).waitFor();
  assert.deepEqual(await listed(page), [code]);
  // A tag past the limits is explained next to the filter.
  await page.getByLabel('Tagged', { exact: true }).fill('y'.repeat(51));
  await page.getByLabel('Tagged', { exact: true }).press('Enter');
  await page.locator('#search-error').filter({ hasText: 'A tag must be 1 to 50 characters long (after trimming spaces), not 51.' }).waitFor();
  // Cleared: every link; then a chip filters by its tag, and the summary takes the focus.
  await page.getByLabel('Tagged', { exact: true }).fill('');
  await page.getByLabel('Tagged', { exact: true }).press('Enter');
  await summary(page).filter({ hasText: 'Links 1–2 of 2, newest first.' }).waitFor();
  await row.getByRole('button', { name: 'Show links tagged 2026' }).click();
  await summary(page).filter({ hasText: 'Links 1–1 of 1 tagged “2026”, newest first.' }).waitFor();
  assert.equal(await page.getByLabel('Tagged', { exact: true }).inputValue(), '2026');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'admin-summary');
  // q finds titles too (case-insensitively: beyond ASCII, as the store's database folds letters).
  await page.getByLabel('Tagged', { exact: true }).fill('');
  await page.getByLabel('Search').fill('q3 REPORT');
  await page.getByLabel('Search').press('Enter');
  await summary(page).filter({ hasText: 'Links 1–1 of 1 matching “q3 REPORT”, newest first.' }).waitFor();
  assert.deepEqual(await listed(page), [code]);
  await page.getByLabel('Search').fill('');
  await page.getByLabel('Search').press('Enter');
  await summary(page).filter({ hasText: 'Links 1–2 of 2, newest first.' }).waitFor();

  // Edit: the form holds the title and the tags; change both.
  await page.getByRole('button', { name: `Edit ${code}` }).click();
  const form = page.getByRole('form', { name: `Edit ${code}` });
  await form.waitFor();
  assert.equal(await form.getByLabel('Title').inputValue(), 'Q3 report — Ünïcödé 😀');
  assert.equal(await form.getByLabel('Tags').inputValue(), '2026, Work, reports');
  await form.getByLabel('Title').fill('Q3 report, final');
  await form.getByLabel('Tags').fill('final, reports, 2026');
  assert.deepEqual(await seriousViolations(page), [], 'the edit form open');
  await form.getByRole('button', { name: 'Save' }).click();
  await summary(page)
    .filter({ hasText: `Saved ${code}.` })
    .waitFor();
  assert.deepEqual(await labels(h, code), { title: 'Q3 report, final', tags: ['2026', 'final', 'reports'] });
  assert.equal(await row.locator('.link-title').textContent(), 'Q3 report, final');
  assert.deepEqual(await row.locator('.tags li').allTextContents(), ['2026', 'final', 'reports']);

  // A refused edit is explained in the form; nothing changes.
  await page.getByRole('button', { name: `Edit ${code}` }).click();
  await form.getByLabel('Tags').fill(Array.from({ length: 21 }, (_, i) => `t${i}`).join(','));
  await form.getByRole('button', { name: 'Save' }).click();
  await form.locator('.error').filter({ hasText: 'A link may have at most 20 distinct tags, not 21.' }).waitFor();
  assert.deepEqual(await labels(h, code), { title: 'Q3 report, final', tags: ['2026', 'final', 'reports'] });

  // Cleared: no title line, no chips.
  await form.getByLabel('Title').fill('');
  await form.getByLabel('Tags').fill('');
  await form.getByRole('button', { name: 'Save' }).click();
  // The summary already says "Saved" from the edit before: the row itself tells when the list is back.
  await row.locator('.link-title').waitFor({ state: 'detached' });
  assert.equal(await summary(page).textContent(), `Saved ${code}. Links 1–2 of 2, newest first.`);
  assert.deepEqual(await labels(h, code), { title: null, tags: [] });
  assert.equal(await row.locator('.tags').count(), 0);
  assert.deepEqual(unexpected(w, [400]), []);
  await w.context.close();
});

test('at 375 px: a long title and many tags fit the card, the filters stack, and axe-core stays clean', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const made = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      url: 'https://narrow.example/',
      title: 'A title without any break '.repeat(8) + 'x'.repeat(120),
      tags: Array.from({ length: 20 }, (_, i) => `${'tag'.repeat(12)}-${i}`),
    }),
  });
  assert.equal(made.status, 201, made.body);
  for (const colorScheme of ['light', 'dark'] as const) {
    const w = await openPage(browser, origin, { width: 375, colorScheme });
    const { page } = w;
    await page.goto(`${origin}/`);
    await page.getByText('Options', { exact: true }).click();
    await page.getByLabel('Admin API key').fill('k');
    await page.getByLabel('Admin API key').press('Enter');
    await page.locator('#admin-rows .tags li').first().waitFor();
    assert.equal(await page.locator('#admin-rows .tags li').count(), 20);
    assert.equal(await overflow(page), 0, colorScheme);
    const [search, tagged] = await Promise.all(['#search', '#tag-filter'].map((s) => page.locator(s).boundingBox()));
    assert.ok(tagged!.y > search!.y, 'the tag filter under the search');
    assert.deepEqual(await seriousViolations(page), [], colorScheme);
    await shot(page, `labels-narrow-${colorScheme}`);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  }
});
