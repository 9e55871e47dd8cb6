/// <reference lib="dom" />
/**
 * The UI behind the token gate: everything the page loads after the prompt carries the token (the
 * QR code fetched and inserted, the export downloaded through a fetched blob), a 401 re-opens the
 * prompt and the interrupted request completes afterwards, and the page says when short links
 * need the token to open — which it learns from a HEAD of a short link without it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { launch, openPage } from '../support/browser.ts';
import { start } from '../support/helpers.ts';
import { readQr, shot, unexpected, watchAbortedHops } from './support.ts';

const TOKEN = 'gate-token-456';

async function enterToken(page: Page): Promise<void> {
  await page.getByLabel('Token', { exact: true }).fill(TOKEN);
  await page.getByLabel('Token', { exact: true }).press('Enter');
  await page.locator('#app').waitFor({ state: 'visible' });
}

test('gated, links private: QR code and export carry the token, the page says links need it, a 401 prompts and retries', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k'] });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  const sent: { method: string; path: string; auth: string | undefined }[] = [];
  page.on('request', (req) => sent.push({ method: req.method(), path: new URL(req.url()).pathname, auth: req.headers()['authorization'] }));
  await page.goto(`${origin}/`);
  await page.locator('#gate').waitFor({ state: 'visible' });
  await enterToken(page);

  await page.getByLabel('Long URL').fill('gated.example/page');
  await page.getByLabel('Long URL').press('Enter');
  const link = page.locator('#short-link');
  await link.waitFor({ state: 'visible' });
  const shortUrl = (await link.textContent())!;
  const code = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
  await page.locator('#private-note').waitFor({ state: 'visible' });
  assert.equal(
    await page.locator('#private-note').textContent(),
    'Opening this link needs the access token (or the proxy in front of this service): it is not public.',
  );
  const svg = page.locator('#shorten-qr svg');
  await svg.waitFor({ state: 'visible' });
  assert.equal(await readQr(page, svg), shortUrl);
  await shot(page, 'gate-private-link');

  // Every API request carried the token; the one request without it is the HEAD that asked
  // whether links are public, and it counted no visit.
  const api = sent.filter((r) => r.path.startsWith('/api/'));
  assert.ok(api.some((r) => r.path === `/api/urls/${code}/qr`));
  assert.deepEqual(new Set(api.map((r) => r.auth)), new Set([`Bearer ${TOKEN}`]));
  assert.deepEqual(
    sent.filter((r) => r.path === `/${code}`).map((r) => [r.method, r.auth]),
    [['HEAD', undefined]],
  );
  assert.equal(JSON.parse((await h.req(`/api/urls/${code}`, { headers: auth })).body).visit_count, 0);

  // The list says it too, and the export is fetched with the token and the key.
  await page.getByLabel('Admin API key').fill('k');
  await page.getByLabel('Admin API key').press('Enter');
  await page.locator('#list-note').waitFor({ state: 'visible' });
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSONL' }).click()]);
  const path = await file.path();
  const { readFileSync } = await import('node:fs');
  assert.equal(JSON.parse(readFileSync(path, 'utf8').trim()).short_code, code);
  const exportRequest = sent.find((r) => r.path === '/api/export');
  assert.equal(exportRequest?.auth, `Bearer ${TOKEN}`);

  // The token stops working: the next request opens the prompt; once a good token is entered,
  // the interrupted request is sent again and completes without another click.
  await page.evaluate(() => sessionStorage.setItem('url-shortener.token', 'rotated-away'));
  await page.getByLabel('Long URL').fill('https://gated.example/after-401');
  await page.getByRole('button', { name: 'Shorten' }).click();
  await page.locator('#gate').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#gate-error').textContent(), 'That token was not accepted. Enter it again.');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'token');
  await enterToken(page);
  await page
    .locator('#short-link', { hasText: /\/[1-9A-Za-z]{6}$/ })
    .filter({ hasNotText: code })
    .waitFor();
  const lookup = await h.req(`/api/lookup?url=${encodeURIComponent('https://gated.example/after-401')}`, { headers: auth });
  assert.equal(lookup.status, 200, 'the retried create went through');
  assert.deepEqual(unexpected(w, [401]), []);
  await w.context.close();
});

test('gated with public redirects: no note, since a HEAD without the token redirects', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await start(t, { apiToken: TOKEN, publicRedirects: true });
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin);
  const { page } = w;
  const hops = watchAbortedHops(page);
  await page.goto(`${origin}/`);
  await enterToken(page);
  await page.getByLabel('Long URL').fill('https://public.example/');
  await page.getByLabel('Long URL').press('Enter');
  await page.locator('#shorten-qr svg').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#private-note').isHidden(), true);
  // The probe's redirect was seen, not followed: nothing was sent to public.example.
  assert.deepEqual([...hops], ['request off the origin: https://public.example/']);
  assert.deepEqual(
    unexpected(w).filter((p) => !hops.has(p)),
    [],
  );
  const code = new URL((await page.locator('#short-link').textContent())!).pathname.slice(1);
  const record = await h.req(`/api/urls/${code}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(JSON.parse(record.body).visit_count, 0, 'the HEAD counted no visit');
  await w.context.close();
});
