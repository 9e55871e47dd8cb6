/// <reference lib="dom" />
/**
 * The shorten form in a real browser: the options (custom code, expiry, visit limit), a bare
 * `example.com` completed with `https://`, copy, the QR code read back from the page's pixels,
 * errors next to their field replacing the old result, and the pending state of the button.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launch, openPage } from '../support/browser.ts';
import { start } from '../support/helpers.ts';
import { readQr, shot, unexpected } from './support.ts';

interface Record {
  original_url: string;
  retention_days: number;
  max_visits: number | null;
  visit_count: number;
  short_url: string;
}

test('a link with every option: custom code, days, visit limit; copy and a QR code that reads as the short link', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiKeys: ['k'] });
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  await page.goto(`${origin}/`);
  // Typed without a scheme, as people do.
  await page.getByLabel('Long URL').fill('example.com/options?x=1');
  await page.getByText('Options', { exact: true }).click();
  await page.getByLabel('Custom code').fill('promo-2026');
  await page.getByLabel('Keep for (days)').fill('7');
  await page.getByLabel('Visit limit').fill('3');
  await page.getByRole('button', { name: 'Shorten' }).click();
  const link = page.locator('#short-link');
  await link.waitFor({ state: 'visible' });
  assert.equal(await link.textContent(), `${origin}/promo-2026`);
  assert.equal(await page.getByLabel('Long URL').inputValue(), 'https://example.com/options?x=1');

  const record = JSON.parse((await h.req('/api/urls/promo-2026')).body) as Record;
  assert.equal(record.original_url, 'https://example.com/options?x=1');
  assert.equal(record.retention_days, 7);
  assert.equal(record.max_visits, 3);
  const shown = await page.locator('#shorten-record').innerText();
  assert.match(shown, /Visits\s+0 of 3/);
  assert.match(shown, /Original URL\s+https:\/\/example\.com\/options\?x=1/);
  assert.doesNotMatch(shown, /Expires\s+Never/);
  // Gate off: nothing says the link needs a token.
  assert.equal(await page.locator('#private-note').isHidden(), true);

  // Focus lands on Copy: Enter copies.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'copy-button');
  await page.keyboard.press('Enter');
  await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${origin}/promo-2026`);

  const svg = page.locator('#shorten-qr svg');
  await svg.waitFor({ state: 'visible' });
  assert.equal(await svg.getAttribute('role'), 'img');
  assert.equal(await svg.getAttribute('aria-label'), `QR code of ${origin}/promo-2026`);
  assert.equal(await readQr(page, svg), `${origin}/promo-2026`);
  assert.ok(w.requests.some((u) => new URL(u).pathname === '/api/urls/promo-2026/qr'));
  await shot(page, 'shortened-with-options');
  assert.deepEqual(unexpected(w), []);
  await w.context.close();
});

test('errors go next to their field in words, and a new error replaces the old result', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t);
  await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://first.example/', code: 'taken1' }),
  });
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  await page.goto(`${origin}/`);
  await page.getByLabel('Long URL').fill('https://second.example/');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#shorten-result').waitFor({ state: 'visible' });

  // The code is taken: the reason is under the code field (the options open to show it), and the
  // earlier result is gone.
  await page.getByText('Options', { exact: true }).click();
  await page.getByLabel('Custom code').fill('taken1');
  await page.getByRole('button', { name: 'Shorten' }).click();
  const codeError = page.locator('#code-error');
  await codeError.waitFor({ state: 'visible' });
  assert.equal(await codeError.textContent(), 'That code is already in use. Choose another.');
  assert.equal(await page.locator('#shorten-result').isHidden(), true);
  assert.equal(await page.locator('#url-error').isHidden(), true);
  await shot(page, 'code-taken');

  await page.getByLabel('Custom code').fill('no spaces');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#code-error', { hasText: /^The code / }).waitFor();

  await page.getByLabel('Custom code').fill('');
  await page.getByLabel('Visit limit').fill('0');
  await page.getByRole('button', { name: 'Shorten' }).click();
  const limitError = page.locator('#max-visits-error');
  await limitError.waitFor({ state: 'visible' });
  // The form's own words: an empty field, not the API's null, means no limit.
  assert.equal(await limitError.textContent(), 'Visit limit: a whole number from 1 to 2147483647, or empty for no limit.');
  assert.equal(await codeError.isHidden(), true, 'the old error is cleared');
  // Nothing was created by the refused attempts.
  assert.equal((await h.req('/api/urls/taken1')).status, 200);
  assert.equal(JSON.parse((await h.req('/api/urls/taken1')).body).original_url, 'https://first.example/');
  assert.deepEqual(unexpected(w, [400, 409]), []);
  await w.context.close();
});

test('the code field says the lengths this instance takes, and a code of another length is refused in those words', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { minShortLength: 3, maxShortLength: 9 });
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  await page.goto(`${origin}/`);
  await page.getByText('Options', { exact: true }).click();
  // Said before anything is typed, with the instance's numbers.
  await page.locator('#code-help', { hasText: '3 to 9 characters: letters, digits, - and _.' }).waitFor();
  await page.getByLabel('Long URL').fill('https://short-codes.example/');
  await page.getByLabel('Custom code').fill('cv');
  await page.getByRole('button', { name: 'Shorten' }).click();
  const codeError = page.locator('#code-error');
  await codeError.waitFor({ state: 'visible' });
  assert.equal(await codeError.textContent(), 'The code must be 3 to 9 characters long, not 2.');
  await page.getByLabel('Custom code').fill('cv1');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#short-link', { hasText: `${origin}/cv1` }).waitFor();
  await shot(page, 'code-lengths');
  assert.deepEqual(unexpected(w, [400]), []);
  await w.context.close();
});

test('a link made empties its options for the next one, unless they are kept', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t);
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin, { width: 1280 });
  const { page } = w;
  await page.goto(`${origin}/`);
  await page.getByText('Options', { exact: true }).click();
  const options = ['Custom code', 'Keep for (days)', 'Visit limit', 'Title', 'Tags'];
  const values = () => Promise.all(options.map((label) => page.getByLabel(label, { exact: true }).inputValue()));
  const fill = async (code: string) => {
    for (const [label, value] of [
      ['Custom code', code],
      ['Keep for (days)', '30'],
      ['Visit limit', '5'],
      ['Title', 'Spring offer'],
      ['Tags', 'promo, 2026'],
    ])
      await page.getByLabel(label!, { exact: true }).fill(value!);
  };
  const shorten = async (url: string, code: string) => {
    await page.getByLabel('Long URL').fill(url);
    await page.getByRole('button', { name: 'Shorten' }).click();
    await page.locator('#short-link', { hasText: `${origin}/${code}` }).waitFor();
  };
  const record = async (code: string) => JSON.parse((await h.req(`/api/urls/${code}`)).body) as Record & { title: string | null; tags: string[] };

  // Made with every option: each is in the record, and every field is empty after.
  await fill('offer-1');
  await shorten('https://offers.example/1', 'offer-1');
  const first = await record('offer-1');
  assert.deepEqual([first.retention_days, first.max_visits, first.title, first.tags], [30, 5, 'Spring offer', ['2026', 'promo']]);
  assert.deepEqual(await values(), ['', '', '', '', '']);
  // So the next link has none of them.
  await page.getByLabel('Long URL').fill('https://offers.example/plain');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#short-link', { hasNotText: 'offer-1' }).waitFor();
  const plainCode = (await page.locator('#short-link').textContent())!.split('/').pop()!;
  const plain = await record(plainCode);
  assert.deepEqual([plain.retention_days, plain.max_visits, plain.title, plain.tags], [0, null, null, []]);

  // Kept: the options stay for the next link (a custom code makes one link: it is emptied).
  const keep = page.getByRole('checkbox', { name: 'Keep these options for the next link' });
  await keep.check();
  await fill('offer-2');
  await shorten('https://offers.example/2', 'offer-2');
  assert.deepEqual(await values(), ['', '30', '5', 'Spring offer', 'promo, 2026']);
  await shot(page, 'options-kept');
  await page.getByLabel('Long URL').fill('https://offers.example/3');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#short-link', { hasNotText: 'offer-2' }).waitFor();
  const thirdCode = (await page.locator('#short-link').textContent())!.split('/').pop()!;
  const third = await record(thirdCode);
  assert.deepEqual([third.retention_days, third.max_visits, third.title, third.tags], [30, 5, 'Spring offer', ['2026', 'promo']]);
  assert.equal(await keep.isChecked(), true);
  assert.deepEqual(unexpected(w), []);
  await w.context.close();
});

test('the Shorten button shows it is waiting while the request is under way', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t);
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/shorten', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`${origin}/`);
  await page.getByLabel('Long URL').fill('https://slow.example/');
  await page.getByLabel('Long URL').press('Enter');
  const button = page.locator('#shorten-button');
  await page.locator('#shorten-button[aria-busy="true"]').waitFor();
  assert.equal(await button.isDisabled(), true);
  assert.equal(await button.evaluate((b) => b.classList.contains('busy')), true);
  await shot(page, 'shorten-pending');
  release();
  await page.locator('#short-link').waitFor({ state: 'visible' });
  // The link shows before the request's work is over (its QR code is fetched next): the busy
  // state must clear once it is, which a wait that times out would catch.
  await page.locator('#shorten-button:not([aria-busy])').waitFor({ timeout: 5_000 });
  assert.equal(await button.isDisabled(), false);
  assert.equal(await button.evaluate((b) => b.classList.contains('busy')), false);
  assert.deepEqual(unexpected(w), []);
  await w.context.close();
});
