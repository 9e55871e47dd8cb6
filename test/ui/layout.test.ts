/// <reference lib="dom" />
/**
 * The whole UI at 375 and 1280 px, light and dark, with everything open at once (a result with its
 * QR code, the list with a QR code and an edit form, an import report): no sideways scroll, rows
 * as cards on narrow screens and a table on wide ones, a visible label for every field, no serious
 * or critical axe-core violation, and the main flow done with the keyboard alone.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { start, tempDir } from '../support/helpers.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

/** Every input, with the text of its label (empty: none, or a hidden one). */
async function labels(page: Page): Promise<{ id: string; label: string }[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input')]
      .filter((input) => input.offsetParent !== null)
      .map((input) => {
        const label = input.labels?.[0];
        const shown = label && label.offsetParent !== null && label.getBoundingClientRect().width > 1;
        return { id: input.id, label: shown ? label.textContent!.trim() : '' };
      }),
  );
}

const chromiumPath = findChromium();
const missing = noBrowser();

// One browser for the file; each test has its own server and pages.
describe('the layout', { skip: missing }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchFound(chromiumPath!);
  });
  after(() => browser?.close());

  test('at 375 and 1280 px, light and dark, with everything open: no overflow, labelled fields, cards or table, no serious axe violation', async (t) => {
    const h = await start(t, { apiKeys: ['k'] });
    const origin = `http://127.0.0.1:${h.port}`;
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) codes.push(await h.shorten(`https://layout.example/${'a-rather-long-path-segment/'.repeat(i * 3)}${i}`));
    const file = join(tempDir(t), 'bad.jsonl');
    writeFileSync(file, '{"url":"ftp://x.example/"}\n');

    // The flow is done once per width; the scheme is switched under the same page, empty and with
    // everything open.
    for (const width of [375, 1280]) {
      const w = await openPage(browser, origin, { width });
      const { page } = w;
      await page.goto(`${origin}/`);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        assert.equal(await overflow(page), 0, `empty page at ${width}`);
        assert.deepEqual(await seriousViolations(page), [], `empty page at ${width} ${colorScheme}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });

      await page.getByLabel('Long URL').fill(`example.com/${'long-segment-'.repeat(15)}`);
      await page.getByText('Options', { exact: true }).click();
      await page.getByLabel('Visit limit').fill('9');
      await page.getByLabel('Long URL').press('Enter');
      await page.locator('#shorten-qr svg').waitFor();
      await page.getByLabel('Admin API key').fill('k');
      await page.getByLabel('Admin API key').press('Enter');
      await page.locator('#admin-rows tr').first().waitFor();
      // The import reloads the list: before the row's QR code and edit form are opened.
      await page.getByLabel('Import a file').setInputFiles(file);
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      await page.locator('#import-report li').waitFor();
      await page.getByRole('button', { name: `QR code of ${codes[0]}` }).click();
      await page.locator('#admin-rows tr.detail svg').waitFor();
      await page.getByRole('button', { name: `Edit ${codes[1]}` }).click();
      await page.getByRole('form', { name: `Edit ${codes[1]}` }).waitFor();
      await page.getByRole('button', { name: `Delete ${codes[2]}` }).click();

      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        const where = `${width} px ${colorScheme}`;
        assert.equal(await overflow(page), 0, `everything open at ${where}`);
        const fields = await labels(page);
        assert.ok(fields.length >= 11, `${fields.length} fields`);
        for (const f of fields) assert.notEqual(f.label, '', `a visible label for #${f.id} at ${where}`);
        // Narrow: each link is a card (no header row, each value under its name); wide: a table.
        const header = await page.locator('#links thead').isVisible();
        const cell = await page
          .locator('#admin-rows td[data-label="Created"]')
          .first()
          .evaluate((td) => getComputedStyle(td).display);
        const labelShown = await page
          .locator('#admin-rows td[data-label="Created"]')
          .first()
          .evaluate((td) => getComputedStyle(td, '::before').content);
        if (width === 375) {
          assert.equal(header, false);
          assert.equal(cell, 'grid');
          assert.equal(labelShown, '"Created"');
        } else {
          assert.equal(header, true);
          assert.equal(cell, 'table-cell');
        }
        if (colorScheme === 'dark') assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(20, 22, 26)');
        // QR codes stay black on white, whatever the scheme.
        assert.equal(await page.locator('#shorten-qr svg').evaluate((s) => getComputedStyle(s).backgroundColor), 'rgb(255, 255, 255)');
        assert.deepEqual(await seriousViolations(page), [], `everything open at ${where}`);
        await shot(page, `everything-open-${colorScheme}`);
        assert.deepEqual(unexpected(w), [], where);
      }
      await w.context.close();
    }
  });

  test('just under 860 px the list is already cards and nothing scrolls sideways', async (t) => {
    const h = await start(t, { apiKeys: ['k'] });
    const origin = `http://127.0.0.1:${h.port}`;
    await h.shorten(`https://wide.example/${'x'.repeat(300)}`);
    for (const [width, cards] of [
      [820, true],
      [1000, false],
    ] as const) {
      const w = await openPage(browser, origin, { width });
      const { page } = w;
      await page.goto(`${origin}/`);
      await page.getByLabel('Admin API key').fill('k');
      await page.getByLabel('Admin API key').press('Enter');
      await page.locator('#admin-rows tr').first().waitFor();
      assert.equal(await overflow(page), 0, `at ${width}`);
      assert.equal(await page.locator('#links thead').isVisible(), !cards, `at ${width}`);
      assert.equal(
        await page.evaluate(() => document.querySelector('.table-wrap')!.scrollWidth - document.querySelector('.table-wrap')!.clientWidth),
        0,
        `the table fits at ${width}`,
      );
      if (width === 820) {
        // The checker catches what it should: a field without a label is a critical violation.
        await page.evaluate(() => document.querySelector('main')!.append(document.createElement('input')));
        assert.match((await seriousViolations(page)).join('\n'), /^label \(critical\)/m);
      }
      await w.context.close();
    }
  });

  test('at 1280 px the target has the room: wider than the icon actions, a title on two lines at most, a URL broken between its parts', async (t) => {
    const h = await start(t, { apiKeys: ['k'] });
    const origin = `http://127.0.0.1:${h.port}`;
    const title = 'Installation guide for the whole product family, on every platform we support, with notes on upgrades from older releases';
    const url = 'https://docs.example.org/guides/getting-started/installation?lang=en&version=2.4#linux-packages';
    const created = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url, title, tags: ['docs'], code: 'guide1' }),
    });
    assert.equal(created.status, 201);
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    await page.goto(`${origin}/`);
    await page.getByLabel('Admin API key').fill('k');
    await page.getByLabel('Admin API key').press('Enter');
    const row = page.locator('#admin-rows tr[data-code="guide1"]');
    await row.waitFor();
    const width = (selector: string) => row.locator(selector).evaluate((e) => e.getBoundingClientRect().width);
    const [target, actions] = [await width('td.url'), await width('td.actions')];
    assert.ok(target > actions, `target ${target} px, actions ${actions} px`);
    assert.ok(actions < 200, `actions ${actions} px`);
    // Each action is an icon with a name for screen readers.
    for (const name of ['Stats of guide1', 'Copy guide1', 'QR code of guide1', 'Edit guide1', 'Delete guide1']) {
      const action = row.getByRole(name.startsWith('Stats') ? 'link' : 'button', { name, exact: true });
      assert.equal(await action.locator('svg').count(), 1, name);
      assert.equal((await action.innerText()).trim(), '', `${name}: no visible text`);
    }
    // The title: two lines at most, cut, with the whole of it as the tooltip.
    const shown = row.locator('.link-title');
    assert.equal(await shown.getAttribute('title'), title);
    const lines = await shown.evaluate((e) => ({ height: e.clientHeight, full: e.scrollHeight, line: Number.parseFloat(getComputedStyle(e).lineHeight) }));
    assert.ok(lines.height <= 2 * lines.line + 1 && lines.full > lines.height, JSON.stringify(lines));
    // The URL breaks only between its parts (no part is split over two lines), here on one line or
    // two, on a phone over several.
    const breaks = () =>
      row.locator('td.url a').evaluate((a) => {
        // The link is a flex item (one box): its lines are those of its text.
        const tops = (node: Node) => {
          const range = document.createRange();
          range.selectNodeContents(node);
          return [...range.getClientRects()].map((r) => Math.round(r.top));
        };
        const parts = [...a.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
        return {
          parts: parts.length,
          split: parts.filter((n) => new Set(tops(n)).size !== 1).map((n) => n.textContent),
          lines: new Set(tops(a)).size,
        };
      });
    const wide = await breaks();
    assert.ok(wide.parts > 4, JSON.stringify(wide));
    assert.deepEqual(wide.split, []);
    await page.setViewportSize({ width: 375, height: 800 });
    const narrow = await breaks();
    assert.deepEqual(narrow.split, []);
    assert.ok(narrow.lines >= 2, JSON.stringify(narrow));
    assert.equal(await overflow(page), 0);
    await page.setViewportSize({ width: 1280, height: 800 });
    // The edit form's target has the form's width.
    await row.getByRole('button', { name: 'Edit guide1' }).click();
    const form = page.getByRole('form', { name: 'Edit guide1' });
    const [field, fields] = await Promise.all([
      form.getByLabel('Target').evaluate((e) => e.getBoundingClientRect().width),
      form.locator(':scope > .fields').evaluate((e) => e.getBoundingClientRect().width),
    ]);
    assert.ok(Math.abs(field - fields) < 1, `target field ${field} px of ${fields}`);
    await shot(page, 'links-room');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('/docs at 375 px, light and dark: nothing scrolls sideways', async (t) => {
    const h = await start(t);
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(browser, origin, { width: 375 });
    const { page } = w;
    await page.goto(`${origin}/docs`);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      assert.ok(
        await page.evaluate(() => document.documentElement.scrollWidth <= 375),
        `scrollWidth ${await page.evaluate(() => document.documentElement.scrollWidth)}`,
      );
    }
    // The tables are there, each in a box that scrolls on its own when wider than the screen.
    assert.ok((await page.locator('.table-wrap > table').count()) > 20);
    await shot(page, 'docs');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('keyboard alone: Tab to the URL, type, Enter; open the options from the keyboard; copy with Enter', async (t) => {
    const h = await start(t);
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(browser, origin, { width: 375 });
    const { page } = w;
    await page.goto(`${origin}/`);
    const active = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
    for (let i = 0; i < 4 && (await active()) !== 'url'; i++) await page.keyboard.press('Tab');
    assert.equal(await active(), 'url');
    assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), 'solid');
    await page.keyboard.type('keyboard.example/only');
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'shorten-button');
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'SUMMARY');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    assert.equal(await active(), 'code');
    await page.keyboard.type('kbd-only');
    await page.keyboard.press('Enter');
    await page.locator('#short-link', { hasText: `${origin}/kbd-only` }).waitFor();
    assert.equal(await active(), 'copy-button');
    await page.keyboard.press('Enter');
    await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${origin}/kbd-only`);
    assert.equal(JSON.parse((await h.req('/api/urls/kbd-only')).body).original_url, 'https://keyboard.example/only');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });
});
