/// <reference lib="dom" />
/**
 * The API keys page in a real browser (docs/ui.md, keys): an admin makes a key of each role, sees
 * its secret once (copied, gone once the page is left), finds it in the list with its dates, and
 * revokes it after confirming, after which the API refuses it; a key whose role may not manage keys
 * sees the API's refusal instead of the page, and an expiry passed is said; every key prompt says where the first admin key is,
 * and that file, written by a fresh server, opens the page. Axe-core at 375 and 1280 px, light and
 * dark, with the secret, the list and a confirmation shown.
 */
import assert from 'node:assert/strict';
import { readFileSync, watch } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { INITIAL_KEY_FILE } from '../../src/cli/first-admin.ts';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { serverProcessOn, start, type Harness } from '../support/helpers.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

const ADMIN = 'env-admin-key';
const SECRET = /^us_[A-Za-z0-9_-]{43}$/;
const FIRST_KEY_SENTENCE = "The first admin key is in the file initial-admin-key in the server's data directory.";

/** Opens the keys page from the header's navigation and enters `key` in its prompt. */
async function openKeys(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByLabel('API key', { exact: true }).press('Enter');
}

/** Makes a key through the page's form and returns its secret, as the page shows it. */
async function makeKey(page: Page, name: string, role: string, expires = ''): Promise<string> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Role', { exact: true }).selectOption(role);
  await page.getByLabel('Expires on').fill(expires);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#keys-summary', { hasText: `Made the key “${name}”.` }).waitFor();
  return (await page.locator('#key-secret').textContent())!;
}

/** A key's row in the list, by its name. */
const rowOf = (page: Page, name: string) => page.locator('#key-rows tr').filter({ has: page.locator('td.name', { hasText: name }) });

/** What each role's key may do, checked with the API: the status of one route it may use (creators and editors create). */
async function allowed(h: Harness, role: string, key: string): Promise<number> {
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  if (role === 'creator' || role === 'editor')
    return (await h.req('/api/shorten', { method: 'POST', headers, body: '{"url":"https://made.example/"}' })).status;
  if (role === 'admin') return (await h.req('/api/keys', { headers })).status;
  return (await h.req('/api/urls', { headers })).status;
}

/** Resolves with the secret once a fresh server has written the first admin key's file (watched, not polled). */
function firstKey(dir: string): Promise<string> {
  const file = join(dir, INITIAL_KEY_FILE);
  return new Promise((resolve) => {
    const check = (): boolean => {
      let text = '';
      try {
        text = readFileSync(file, 'utf8').trim();
      } catch {
        return false;
      }
      if (!SECRET.test(text)) return false;
      watcher.close();
      resolve(text);
      return true;
    };
    const watcher = watch(dir, () => void check());
    check();
  });
}

const chromiumPath = findChromium();
const missing = noBrowser();

// One browser for the file; each test has its own server and pages.
describe('the keys page', { skip: missing }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchFound(chromiumPath!);
  });
  after(() => browser?.close());

  test('an admin makes a key of each role: the secret shown once and copied, the list with its dates, revoked after confirming and then refused', async (t) => {
    const h = await start(t, { apiKeys: [ADMIN] });
    const origin = `http://127.0.0.1:${h.port}`;
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    await openKeys(page, origin, ADMIN);
    await page.locator('#keys-summary', { hasText: 'No stored keys yet.' }).waitFor();
    assert.equal(await page.locator('#home').isVisible(), false, 'the keys in place of the home view');
    assert.equal(await page.getByRole('link', { name: 'Keys' }).getAttribute('aria-current'), 'page');

    // Each role says what it may do under the select, and the creator (the default) comes first.
    assert.deepEqual(await page.locator('#key-role option').allTextContents(), ['Creator', 'Viewer', 'Editor', 'Admin']);
    assert.match((await page.locator('#key-role-help').textContent())!, /^Makes links and nothing else/);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    assert.match((await page.locator('#key-role-help').textContent())!, /^Reads every link, its stats and the exports; never makes/);

    // A month ahead, in the browser's calendar; the key stops working when that day begins.
    const day = await page.evaluate(() => {
      const d = new Date();
      d.setDate(d.getDate() + 30);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    });
    const dayStart = await page.evaluate((iso) => new Date(`${iso}T00:00:00`).getTime() / 1000, day);

    const secrets = new Map<string, string>();
    for (const role of ['creator', 'viewer', 'editor', 'admin']) {
      const name = `${role} tool`;
      const secret = await makeKey(page, name, role, role === 'creator' ? day : '');
      assert.match(secret, SECRET, role);
      assert.ok(![...secrets.values()].includes(secret), 'a new secret each time');
      secrets.set(role, secret);
      assert.equal(await page.locator('#key-made-title').textContent(), `The secret of “${name}” (${role[0]!.toUpperCase()}${role.slice(1)}):`);
      assert.match((await page.locator('#key-made').innerText())!, /Copy it now: it will not be shown again\./);
      // The form is emptied for the next key, the role back to the least; the copy button has the focus, so Enter copies.
      assert.deepEqual(
        [
          await page.getByLabel('Name', { exact: true }).inputValue(),
          await page.getByLabel('Role', { exact: true }).inputValue(),
          await page.getByLabel('Expires on').inputValue(),
        ],
        ['', 'creator', ''],
      );
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-copy');
      // The list shows it (before any use: never used).
      const cells = await rowOf(page, name).locator('td').allInnerTexts();
      assert.equal(cells[0], name);
      assert.equal(cells[1], `${role[0]!.toUpperCase()}${role.slice(1)}`);
      assert.match(cells[2]!, /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/, 'created, as a date');
      assert.equal(cells[3], 'Never', 'not used yet');
      assert.equal(
        cells[4],
        role === 'creator'
          ? await page.evaluate((s) => new Date(s * 1000).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }), dayStart)
          : 'Never',
      );
    }

    // The store has each with its role, the expiry the day chosen; each key works for its role.
    const listed = JSON.parse((await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } })).body) as {
      keys: { id: string; name: string; role: string; expires_at: number | null }[];
    };
    assert.deepEqual(
      listed.keys.map((k) => [k.name, k.role, k.expires_at]),
      [
        ['creator tool', 'creator', dayStart],
        ['viewer tool', 'viewer', null],
        ['editor tool', 'editor', null],
        ['admin tool', 'admin', null],
      ],
    );
    for (const [role, secret] of secrets)
      assert.equal(await allowed(h, role, secret), role === 'creator' || role === 'editor' ? 201 : 200, `${role} key works`);

    // Copy: Enter on the focused button puts the secret on the clipboard.
    await page.keyboard.press('Enter');
    await page.locator('#key-copy-status', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secrets.get('admin'));

    // Shown once: away and back, the secret is nowhere in the page, nor kept in the tab.
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Links' }).click();
    await page.locator('#home').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#keys').isVisible(), false);
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Keys' }).click();
    // The list read again: the summary without the note of the last create.
    await page.locator('#keys-summary', { hasText: /^4 stored keys, oldest first\.$/ }).waitFor();
    assert.equal(await page.locator('#key-made').isVisible(), false);
    const everywhere = await page.evaluate(
      () => document.documentElement.outerHTML + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }),
    );
    for (const secret of secrets.values()) assert.ok(!everywhere.includes(secret), 'the secret is gone');
    // Used keys say when (the list is read again when the page opens).
    assert.notEqual((await rowOf(page, 'viewer tool').locator('td').allInnerTexts())[3], 'Never', 'used once');
    await shot(page, 'keys-list');

    // Revoke asks first, in place; Cancel keeps the key and gives the focus back.
    await page.getByRole('button', { name: 'Revoke viewer tool' }).click();
    assert.equal((await rowOf(page, 'viewer tool').locator('.confirm').innerText()).trim(), 'Revoke “viewer tool”? Whatever uses it stops working.');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Revoke viewer tool');
    assert.equal(await allowed(h, 'viewer', secrets.get('viewer')!), 200, 'not revoked');
    await page.getByRole('button', { name: 'Revoke viewer tool' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.locator('#keys-summary', { hasText: 'Revoked “viewer tool”: it no longer works. 3 stored keys, oldest first.' }).waitFor();
    assert.equal(await rowOf(page, 'viewer tool').count(), 0);
    assert.deepEqual(await page.locator('#key-rows td.name').allInnerTexts(), ['creator tool', 'editor tool', 'admin tool']);
    const refused = await h.req('/api/urls', { headers: { 'x-api-key': secrets.get('viewer')! } });
    assert.deepEqual([refused.status, refused.body], [403, ''], 'the revoked key is refused, without a word');
    assert.equal(await allowed(h, 'editor', secrets.get('editor')!), 201, 'the others still work');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test("a key whose role may not manage keys sees the API's refusal instead of the page; a wrong key is not accepted; an admin key opens it; an expiry passed is said", async (t) => {
    const h = await start(t, { apiKeys: [ADMIN] });
    const origin = `http://127.0.0.1:${h.port}`;
    const make = async (body: Record<string, unknown>): Promise<string> => {
      const made = await h.req('/api/keys', {
        method: 'POST',
        headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (JSON.parse(made.body) as { key: string }).key;
    };
    const viewer = await make({ name: 'viewer', role: 'viewer' });
    const soon = Math.floor(Date.now() / 1000) + 3600;
    await make({ name: 'soon', role: 'creator', expires_at: soon });
    const w = await openPage(browser, origin);
    const { page } = w;
    // The browser two days on: the key that expires within the hour has expired by its clock.
    await w.context.clock.setFixedTime(Date.now() + 2 * 86_400_000);
    await openKeys(page, origin, viewer);
    const error = page.locator('#keys-key-error');
    await error.filter({ hasText: "This key's role (viewer) does not allow managing keys." }).waitFor();
    assert.equal(await page.locator('#keys-body').isVisible(), false, 'no form, no list');
    assert.equal(await page.getByLabel('API key', { exact: true }).inputValue(), '', 'ready for another key');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'keys-key');
    await shot(page, 'keys-refused');

    await page.getByLabel('API key', { exact: true }).fill('wrong');
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await error.filter({ hasText: 'That API key was not accepted. Check it and try again.' }).waitFor();
    assert.equal(await page.locator('#keys-body').isVisible(), false);

    await page.getByLabel('API key', { exact: true }).fill(ADMIN);
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await page.locator('#keys-summary', { hasText: '2 stored keys, oldest first.' }).waitFor();
    assert.equal(await error.isVisible(), false);
    const expires = (name: string) => rowOf(page, name).locator('td[data-label="Expires"]').innerText();
    assert.deepEqual(
      [await expires('viewer'), await expires('soon')],
      ['Never', `${await page.evaluate((s) => new Date(s * 1000).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }), soon)} (expired)`],
    );
    // The key entered serves "Your links" too.
    assert.equal(await page.getByLabel('Admin API key').inputValue(), ADMIN);

    // The form's own checks, said beside their fields.
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.equal(await page.locator('#key-name-error').textContent(), 'Enter a name: what the key is for.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-name');
    await page.getByLabel('Name', { exact: true }).fill('late');
    await page.getByLabel('Expires on').fill('2020-01-01');
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.equal(await page.locator('#key-expires-error').textContent(), 'Choose a day after today, or none.');
    assert.equal(await page.locator('#key-name-error').isVisible(), false);
    assert.equal(JSON.parse((await h.req('/api/keys', { headers: { 'x-api-key': ADMIN } })).body).count, 2, 'nothing made');
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });

  test('every key prompt says where the first admin key is, and the file a fresh server writes opens the keys page', async (t) => {
    // A fresh server, as the README starts it: no admin key anywhere, so it writes one to a file.
    const server = await serverProcessOn(t, { FSYNC: 'off', LOG_LEVEL: 'info', API_TOKEN: 'gate-token' });
    const origin = `http://127.0.0.1:${server.port}`;
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    // Behind the gate the views' links wait for the token.
    await page.locator('#gate').waitFor({ state: 'visible' });
    assert.equal(await page.getByRole('navigation', { name: 'Views' }).isVisible(), false);
    await page.getByLabel('Token', { exact: true }).fill('gate-token');
    await page.getByLabel('Token', { exact: true }).press('Enter');
    await page.getByRole('navigation', { name: 'Views' }).waitFor();

    // Your links, the stats and the keys: each prompt says it, next to its field.
    assert.equal(INITIAL_KEY_FILE, 'initial-admin-key', 'the sentence names the file the server writes');
    assert.ok((await page.locator('#admin-help').innerText()).endsWith(FIRST_KEY_SENTENCE));
    assert.ok(await page.locator('#admin-help').isVisible());
    await page.goto(`${origin}/#stats`);
    await page.locator('#stats-key-form').waitFor();
    assert.ok((await page.locator('#stats-key-help').innerText()).endsWith(FIRST_KEY_SENTENCE));
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Keys' }).click();
    await page.locator('#keys-key-form').waitFor();
    assert.equal(await page.locator('#stats').isVisible(), false);
    assert.ok((await page.locator('#keys-key-help').innerText()).endsWith(FIRST_KEY_SENTENCE));
    await shot(page, 'keys-prompt');

    // Where the sentence says: the key that opens the page, listed as "initial".
    const secret = await firstKey(server.dir);
    await page.getByLabel('API key', { exact: true }).fill(secret);
    await page.getByLabel('API key', { exact: true }).press('Enter');
    await page.locator('#keys-summary', { hasText: '1 stored key, oldest first.' }).waitFor();
    assert.deepEqual((await rowOf(page, 'initial').locator('td').allInnerTexts()).slice(0, 2), ['initial', 'Admin']);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('at 375 and 1280 px, light and dark, with a secret, the list and a confirmation shown: no sideways scroll, cards or table, no serious axe violation', async (t) => {
    const h = await start(t, { apiKeys: [ADMIN] });
    const origin = `http://127.0.0.1:${h.port}`;
    for (const width of [375, 1280]) {
      const w = await openPage(browser, origin, { width });
      const { page } = w;
      await openKeys(page, origin, ADMIN);
      await page
        .locator('#keys-summary')
        .filter({ hasText: /stored key/ })
        .waitFor();
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        assert.equal(await overflow(page), 0, `the empty page at ${width} ${colorScheme}`);
        assert.deepEqual(await seriousViolations(page), [], `the empty page at ${width} ${colorScheme}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      const long = `A tool with a name long enough to wrap ${width}`.padEnd(64, 'x');
      await makeKey(page, long, 'editor', await page.evaluate(() => `${new Date().getFullYear() + 1}-06-30`));
      await makeKey(page, `phone ${width}`, 'creator');
      await page.getByRole('button', { name: `Revoke ${long}` }).click();
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        const where = `${width} px ${colorScheme}`;
        assert.equal(await overflow(page), 0, where);
        assert.equal(
          await page.evaluate(() => document.querySelector('#keys .table-wrap')!.scrollWidth - document.querySelector('#keys .table-wrap')!.clientWidth),
          0,
          `the list fits at ${where}`,
        );
        const header = await page.locator('#keys-table thead').isVisible();
        const label = await rowOf(page, `phone ${width}`)
          .locator('td[data-label="Created"]')
          .evaluate((td) => getComputedStyle(td, '::before').content);
        assert.deepEqual([header, label], width === 375 ? [false, '"Created"'] : [true, 'none'], `cards when narrow, a table when wide: ${where}`);
        assert.deepEqual(await seriousViolations(page), [], where);
        await shot(page, `keys-${colorScheme}`);
      }
      assert.deepEqual(unexpected(w), [], `${width} px`);
      await w.context.close();
    }
  });
});
