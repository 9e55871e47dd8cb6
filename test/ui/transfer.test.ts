/// <reference lib="dom" />
/**
 * Export and import in a real browser: both formats downloaded through the page, the JSON Lines
 * file uploaded into a second, empty instance gives back the same links, and the import report
 * (taken codes, bad rows) is shown line by line; an import a full disk cut short goes on from its
 * line when the same file is imported again, storing each row once.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { launch, openPage } from '../support/browser.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { start, tempDir } from '../support/helpers.ts';
import { shot, unexpected } from './support.ts';

async function showLinks(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('Admin API key').fill('k');
  await page.getByLabel('Admin API key').press('Enter');
  await page.locator('#admin-list').waitFor({ state: 'visible' });
}

/** Clicks `button` and returns the file the page downloads: its suggested name and its text. */
async function download(page: Page, button: string, dir: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  const path = join(dir, file.suggestedFilename());
  await file.saveAs(path);
  return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
}

test('export JSONL and CSV downloads, JSONL imported into an empty instance gives the same links, then a report of taken codes', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const dir = tempDir(t);
  const a = await start(t, { apiKeys: ['k'] });
  const aOrigin = `http://127.0.0.1:${a.port}`;
  for (const body of [
    { url: 'https://one.example/' },
    { url: 'https://two.example/', max_visits: 4, code: 'two-22' },
    { url: 'https://three.example/?a=1,2', retention_days: 30 },
  ]) {
    const r = await a.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201);
  }
  await a.req('/two-22');
  const w = await openPage(browser, aOrigin);
  await showLinks(w.page, aOrigin);
  const jsonl = await download(w.page, 'Export JSONL', dir);
  assert.match(jsonl.name, /^urls-\d{4}-\d{2}-\d{2}\.jsonl$/);
  const exported = jsonl.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(jsonl.text, (await a.req('/api/export', { headers: { 'x-api-key': 'k' } })).body, 'the file is the export');
  assert.deepEqual(
    exported.map((r) => r['original_url']),
    ['https://one.example/', 'https://two.example/', 'https://three.example/?a=1,2'],
  );
  const csv = await download(w.page, 'Export CSV', dir);
  assert.match(csv.name, /^urls-\d{4}-\d{2}-\d{2}\.csv$/);
  assert.equal(
    csv.text.split('\r\n')[0],
    'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash',
  );
  assert.match(csv.text, /"https:\/\/three\.example\/\?a=1,2"/);
  assert.deepEqual(unexpected(w), []);
  await w.context.close();

  const b = await start(t, { apiKeys: ['k'] });
  const bOrigin = `http://127.0.0.1:${b.port}`;
  const v = await openPage(browser, bOrigin);
  const { page } = v;
  await showLinks(page, bOrigin);
  await page.locator('#admin-summary', { hasText: 'No links yet.' }).waitFor();
  await page.getByLabel('Import a file').setInputFiles(join(dir, jsonl.name));
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const report = page.locator('#import-report');
  await report.waitFor({ state: 'visible' });
  assert.equal(await report.innerText(), 'Imported 3 links, skipped 0 rows.');
  await page.locator('#admin-summary', { hasText: 'Links 1–3 of 3' }).waitFor();
  const imported = (await b.req('/api/export', { headers: { 'x-api-key': 'k' } })).body
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  // The same links; their visits come as untracked visits (the events are the visits import's).
  const sameBut = (r: Record<string, unknown>) => ({ ...r, short_url: String(r['short_url']).replace(/^http:\/\/[^/]+/, ''), untracked_visits: undefined });
  assert.deepEqual(imported.map(sameBut), exported.map(sameBut));
  for (const r of imported) assert.equal(r['untracked_visits'], r['visit_count']);
  await shot(page, 'import-report');

  // Again: every code is taken now, and the report says so for each line.
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await report.filter({ hasText: 'Imported 0 links, skipped 3 rows.' }).waitFor();
  assert.deepEqual(await report.locator('li').allTextContents(), ['Line 1: code already in use', 'Line 2: code already in use', 'Line 3: code already in use']);

  // A CSV from elsewhere, one bad row.
  const yourls = join(dir, 'yourls.csv');
  writeFileSync(yourls, 'keyword,url,clicks\r\nabc123,https://csv.example/,7\r\nbad,ftp://nope.example/,0\r\n');
  await page.getByLabel('Import a file').setInputFiles(yourls);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await report.filter({ hasText: 'Imported 1 link, skipped 1 row.' }).waitFor();
  assert.equal(await report.locator('li').count(), 1);
  assert.match((await report.locator('li').textContent())!, /^Line 3: /);
  assert.equal(JSON.parse((await b.req('/api/urls/abc123')).body).visit_count, 7);

  // No file chosen: said next to the field.
  await page.getByLabel('Import a file').setInputFiles([]);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  assert.equal(await page.locator('#import-error').textContent(), 'Choose a file to import.');
  assert.deepEqual(unexpected(v), []);
  await v.context.close();
});

test('an import cut short by a full disk says where it stopped, and the same file imported again goes on from there: each row once', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const dir = tempDir(t);
  const { fs, disk } = fillableDisk();
  const h = await start(t, { apiKeys: ['k'], fs });
  const origin = `http://127.0.0.1:${h.port}`;
  // Rows without codes: a plain re-import could not tell the stored ones from the rest.
  const urls = Array.from({ length: 300 }, (_, i) => `https://row.example/${i}`);
  const file = join(dir, 'rows.jsonl');
  writeFileSync(file, `${urls.map((url) => JSON.stringify({ url })).join('\n')}\n`);
  const v = await openPage(browser, origin);
  const { page } = v;
  await showLinks(page, origin);
  // Room for some of the rows (an entry is about 50 bytes).
  disk.bytesLeft = 5_000;
  await page.getByLabel('Import a file').setInputFiles(file);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const error = page.locator('#import-error');
  await error.filter({ hasText: 'Import the same file again' }).waitFor();
  const said = /The rows before line (\d+) are stored \((\d+) imported\)\. Import the same file again to go on from line (\d+)\.$/.exec(
    (await error.textContent())!,
  );
  assert.ok(said, (await error.textContent())!);
  const line = Number(said[1]);
  assert.equal(Number(said[2]), line - 1, 'one row a line, every row before the line stored');
  assert.equal(Number(said[3]), line);
  assert.ok(line > 1 && line < 300, `line ${line}`);

  disk.bytesLeft = Infinity;
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.locator('#import-report', { hasText: `Imported ${300 - (line - 1)} links, skipped 0 rows.` }).waitFor();
  assert.equal(await error.textContent(), '');
  const stored = (await h.req('/api/export', { headers: { 'x-api-key': 'k' } })).body
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { original_url: string }).original_url);
  assert.deepEqual(stored, urls, 'each row exactly once, in file order');
  assert.deepEqual(unexpected(v, [503]), []);
  await v.context.close();
});
