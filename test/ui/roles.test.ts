/**
 * Keys with roles in the web UI (docs/ui.md, docs/security.md): an `editor`'s "Your links" lists the
 * links it made and no other; a key whose role may not list (a `creator`) or may not read the whole
 * instance's stats (an `editor` on the dashboard) is told so in the API's words, not that the key
 * was not accepted; a key that is no key still is.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { open, type Harness } from '../support/helpers.ts';
import { ADMIN, makeKey, type MadeKey } from '../support/keys.ts';
import { unexpected } from './support.ts';

const chromiumPath = findChromium();
const missing = noBrowser();

/** Makes a link with `key`; its code. */
async function made(h: Harness, key: string, url: string): Promise<string> {
  const res = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ url }) });
  assert.equal(res.status, 201, res.body);
  return new URL(res.body).pathname.slice(1);
}

describe('keys with roles in the web UI', { skip: missing }, () => {
  let browser: Browser;
  let h: Harness;
  let origin: string;
  let editor: MadeKey;
  let creator: MadeKey;
  let mine: string[];

  before(async () => {
    browser = await launchFound(chromiumPath!);
    h = await open({ apiKeys: [ADMIN], logLevel: 'silent' });
    origin = `http://127.0.0.1:${h.port}`;
    editor = await makeKey(h, 'editor');
    creator = await makeKey(h, 'creator');
    mine = [await made(h, editor.key, 'https://mine.example/1'), await made(h, editor.key, 'https://mine.example/2')];
    await made(h, ADMIN, 'https://admins.example/');
    await made(h, creator.key, 'https://creators.example/');
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test("an editor's list holds its own links; the dashboard says its role may not read the instance's stats", async () => {
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    await page.getByLabel('Admin API key').fill(editor.key);
    await page.getByLabel('Admin API key').press('Enter');
    await page.locator('#admin-summary', { hasText: 'Links 1–2 of 2, newest first.' }).waitFor();
    assert.deepEqual(await page.locator('#admin-rows tr td:first-child').allTextContents(), [...mine].reverse());

    await page.goto(`${origin}/#stats`);
    await page.locator('#stats-key-error', { hasText: "This key's role (editor) does not allow reading the whole instance's stats." }).waitFor();
    assert.equal(await page.locator('#stats-body').isHidden(), true);
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });

  test('a creator is told its role may not list; a wrong key that it was not accepted', async () => {
    const w = await openPage(browser, origin);
    const { page } = w;
    await page.goto(`${origin}/`);
    const key = page.getByLabel('Admin API key');
    await key.fill(creator.key);
    await key.press('Enter');
    await page.locator('#admin-error', { hasText: "This key's role (creator) does not allow listing, searching or exporting links." }).waitFor();
    assert.equal(await page.locator('#admin-list').isHidden(), true);
    await key.fill('not-a-key');
    await key.press('Enter');
    await page.locator('#admin-error', { hasText: 'That API key was not accepted. Check it and try again.' }).waitFor();
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });
});
