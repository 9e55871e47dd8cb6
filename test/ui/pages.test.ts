/// <reference lib="dom" />
/**
 * The pages of a short link that does not redirect — not found (404), expired and used up (410):
 * in the UI's look, saying what happened, with a way home when the UI is served, none with
 * `PRODUCTION=true`; relative URLs that hold under a base path and after a trailing slash.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { answerVisit } from '../../src/api/redirect.ts';
import { htmlPage, type Responder } from '../../src/http/respond.ts';
import { launch, openPage } from '../support/browser.ts';
import { start, type Harness } from '../support/helpers.ts';
import { seriousViolations, shot, unexpected } from './support.ts';

const DAY = 86_400_000;

/** A harness with a used-up link (`once11`) and an expired one (`gone22`), on a clock it can move. */
async function withDeadLinks(t: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<Harness> {
  const clock = { ms: Date.now() };
  const h = await start(t, { now: () => clock.ms, ...options });
  const base = new URL(h.shortener.config.baseUrl).pathname.replace(/\/$/, '');
  for (const body of [
    { url: 'https://once.example/', code: 'once11', max_visits: 1 },
    { url: 'https://gone.example/', code: 'gone22', retention_days: 1 },
  ]) {
    assert.equal(
      (await h.req(`${base}/api/shorten`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status,
      201,
    );
  }
  assert.equal((await h.req(`${base}/once11`)).status, 302);
  clock.ms += 2 * DAY;
  return h;
}

test('404 and both 410 pages: styled like the UI, say what happened, link home; the link works', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await withDeadLinks(t);
  const origin = `http://127.0.0.1:${h.port}`;
  const cases = [
    { path: '/nothing9', status: 404, title: 'Link not found', says: /no short link at this address/ },
    { path: '/gone22', status: 410, title: 'This link has expired', says: /limited lifetime/ },
    { path: '/once11', status: 410, title: 'This link has reached its visit limit', says: /limited number of times/ },
  ];
  for (const width of [375, 1280]) {
    const w = await openPage(browser, origin, { width });
    const { page } = w;
    for (const c of cases) {
      const res = await page.goto(`${origin}${c.path}`);
      assert.equal(res?.status(), c.status, c.path);
      assert.equal(await page.title(), c.title);
      assert.equal(await page.locator('h1').textContent(), c.title);
      assert.match(await page.locator('main').innerText(), c.says);
      // The UI's stylesheet applied: its background, its card, its font.
      assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(245, 246, 248)');
      assert.equal(await page.locator('.card').evaluate((e) => getComputedStyle(e).borderTopStyle), 'solid');
      assert.deepEqual(await seriousViolations(page), [], `${c.path} at ${width}`);
      await shot(page, `page-${c.status}-${c.path.slice(1)}`);
    }
    await page.getByRole('link', { name: 'Go to the home page' }).click();
    await page.locator('#shorten-form').waitFor();
    assert.equal(page.url(), `${origin}/`);
    assert.deepEqual(unexpected(w, [404, 410]), []);
    await w.context.close();
  }
  // HEAD answers as GET would; the visit limit was not moved by the 410s.
  assert.equal((await h.req('/once11', { method: 'HEAD' })).status, 410);
  assert.equal(JSON.parse((await h.req('/api/urls/once11')).body).visit_count, 1);
});

test('dark mode, a base path and a trailing slash: the page still finds its stylesheet and the way home', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await withDeadLinks(t, { basePath: '/s' });
  const origin = `http://127.0.0.1:${h.port}`;
  const w = await openPage(browser, origin, { colorScheme: 'dark' });
  const { page } = w;
  for (const path of ['/s/gone22', '/s/gone22/', '/s/nothing9/']) {
    const res = await page.goto(`${origin}${path}`);
    assert.equal(res?.status(), path.includes('gone') ? 410 : 404, path);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(20, 22, 26)', path);
    assert.equal(await page.getByRole('link', { name: 'Go to the home page' }).evaluate((a) => (a as HTMLAnchorElement).href), `${origin}/s/`, path);
  }
  await shot(page, 'page-410-dark');
  const paths = w.requests.map((u) => new URL(u).pathname);
  assert.ok(
    paths.every((p) => p.startsWith('/s/')),
    paths.join(' '),
  );
  assert.ok(paths.includes('/s/static/style.css'));
  assert.deepEqual(unexpected(w, [404, 410]), []);
  await w.context.close();
});

test('PRODUCTION=true: the same pages, styled, without a link to a home page that is not served', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const h = await withDeadLinks(t, { production: true });
  const origin = `http://127.0.0.1:${h.port}`;
  assert.equal((await h.req('/')).status, 404);
  const w = await openPage(browser, origin);
  const { page } = w;
  for (const path of ['/nothing9', '/gone22', '/once11']) {
    await page.goto(`${origin}${path}`);
    assert.equal(await page.locator('a').count(), 0, path);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(245, 246, 248)', path);
  }
  const raw = await h.req('/gone22');
  assert.equal(raw.status, 410);
  assert.equal(raw.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(raw.headers['cache-control'], 'private, no-store');
  assert.doesNotMatch(raw.body, /<a |<script|style=/);
  assert.deepEqual(unexpected(w, [404, 410]), []);
  await w.context.close();
});

test('htmlPage: escaped text, the stylesheet and the way home relative to the given root, no link unless asked', () => {
  const page = htmlPage('<Gone> & "away"', "it's <b>over</b>", { status: 410, root: '../', home: true });
  assert.match(page, /<title>&lt;Gone&gt; &amp; &quot;away&quot;<\/title>/);
  assert.match(page, /<h1>&lt;Gone&gt; &amp; &quot;away&quot;<\/h1>\n<p>it&#39;s &lt;b&gt;over&lt;\/b&gt;<\/p>/);
  assert.match(page, /<link rel="stylesheet" href="\.\.\/static\/style\.css">/);
  assert.match(page, /<p class="status-code">Error 410<\/p>/);
  assert.match(page, /<a href="\.\.\/">Go to the home page<\/a>/);
  assert.match(htmlPage('T', 'm', { home: true }), /<a href="\.\/">Go to the home page<\/a>/);
  const bare = htmlPage('T', 'm');
  assert.doesNotMatch(bare, /<a |status-code|<script|style=/);
  assert.match(bare, /<link rel="stylesheet" href="static\/style\.css">/);
});

test('answerVisit picks the page for the path: one level deeper after a trailing slash, home only when asked', () => {
  const sent: string[] = [];
  const reply = { send: (_res: unknown, _status: number, _type: string, body: string) => sent.push(body) } as unknown as Responder;
  const res = (url: string) => ({ req: { url } }) as unknown as ServerResponse;
  answerVisit(reply, res('/abc123'), { kind: 'missing' }, true);
  answerVisit(reply, res('/abc123/?x=1'), { kind: 'expired' }, true);
  answerVisit(reply, res('/abc123/'), { kind: 'limit_reached' });
  assert.match(sent[0]!, /href="static\/style\.css"[\s\S]*<a href="\.\/">Go to the home page/);
  assert.match(sent[1]!, /href="\.\.\/static\/style\.css"[\s\S]*<h1>This link has expired<\/h1>[\s\S]*<a href="\.\.\/">/);
  assert.match(sent[2]!, /href="\.\.\/static\/style\.css"/);
  assert.doesNotMatch(sent[2]!, /<a /);
});
