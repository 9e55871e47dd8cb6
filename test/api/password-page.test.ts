/// <reference lib="dom" />
/**
 * The page of a password-protected link (api/password-page.ts): one labelled password field in a
 * form that posts back to the page itself, under any base path, with or without a trailing slash,
 * its query string kept; no script, so it works with JavaScript off; an error tied to the field
 * when the password was wrong or too many were; nothing of a target anywhere; and the reader of the
 * form's body. The markup is read here; a browser with JavaScript off then fills the form and
 * posts it, every request answered in the test itself (no socket), to prove where it goes and that
 * what it sends reads back as typed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { passwordFromForm, passwordPage, type PasswordPageOptions } from '../../src/api/password-page.ts';
import { SECURITY_HEADERS } from '../../src/http/headers.ts';
import { htmlPage } from '../../src/http/respond.ts';
import { launch, openPage } from '../support/browser.ts';
import { ROOT } from '../support/helpers.ts';
import { seriousViolations, unexpected } from '../ui/support.ts';

type Attributes = Record<string, string>;

/** Every `<name …>` start tag of `html`, as its attributes (a bare attribute is `''`). */
function tags(html: string, name: string): Attributes[] {
  return [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>`, 'g'))].map((m) =>
    Object.fromEntries([...m[1]!.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map((a) => [a[1]!, a[2] ?? ''])),
  );
}

/** Every state of the page, under both roots, with and without the link home. */
const VARIANTS: PasswordPageOptions[] = [{}, { wrong: true }, { retryAfter: 1 }, { retryAfter: 42 }, { wrong: true, retryAfter: 7 }].flatMap((state) =>
  ['', '../'].flatMap((root) => [true, false].map((home) => ({ ...state, root, home }))),
);

test('a labelled password field, a submit button, in a form that posts back to the page itself', () => {
  for (const options of VARIANTS) {
    const html = passwordPage(options);
    const forms = tags(html, 'form');
    // No `action`: the browser posts to the page's own URL, query included (the browser test below).
    assert.deepEqual(forms, [{ method: 'post' }]);
    const inputs = tags(html, 'input');
    assert.equal(inputs.length, 1);
    const input = inputs[0]!;
    assert.equal(input['type'], 'password');
    assert.equal(input['name'], 'password');
    assert.equal(input['autocomplete'], 'current-password');
    assert.equal(input['required'], '');
    assert.deepEqual(tags(html, 'label'), [{ for: input['id']! }]);
    assert.match(html, /<label for="password">Password<\/label>/);
    assert.deepEqual(tags(html, 'button'), [{ type: 'submit' }]);
    assert.ok(html.indexOf('<form') < html.indexOf('<input') && html.indexOf('<button') < html.indexOf('</form>'), 'the field and the button are in the form');
    assert.match(html, /<title>This link is protected<\/title>/);
    assert.match(html, /<h1>This link is protected<\/h1>/);
  }
});

test('no script, no inline style, no handler: the page works with JavaScript off and under the CSP', () => {
  for (const options of VARIANTS) {
    const html = passwordPage(options);
    assert.doesNotMatch(html, /<script|\son\w+=|\sstyle=|javascript:|<style/i);
  }
});

test('nothing of a target: no absolute URL at all, every URL relative to the service root', () => {
  for (const options of VARIANTS) {
    const html = passwordPage(options);
    assert.doesNotMatch(html, /:\/\/|http|www\./i);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    const page = options.root === '' ? 'https://s.example/base/abc123?a=1' : 'https://s.example/base/abc123/?a=1';
    const resolved = hrefs.map((h) => new URL(h, page).pathname);
    assert.deepEqual(resolved, ['/base/static/favicon.svg', '/base/static/style.css', '/base/static/controls.css', ...(options.home ? ['/base/'] : [])]);
  }
});

test("the look of the other pages of a link: the same head, body and card, plus the controls' stylesheet", () => {
  for (const root of ['', '../']) {
    const page = passwordPage({ home: true, root });
    const other = htmlPage('This link is protected', 'x', { home: true, root });
    const head = (html: string): string => html.slice(0, html.indexOf('<div class="card">'));
    assert.equal(head(page), head(other).replace('</head>', `<link rel="stylesheet" href="${root}static/controls.css">\n</head>`));
    assert.match(page, /<\/form>\n<p><a href="[^"]+">Go to the home page<\/a><\/p>\n<\/div>\n<\/main>\n<\/body>\n<\/html>\n$/);
    assert.doesNotMatch(passwordPage({ home: false, root }), /home page/);
  }
});

test('no error at first; a wrong password and a refusal are tied to the field and announced', () => {
  const describedBy = (html: string): Attributes => tags(html, 'input')[0]!;
  const first = passwordPage({ home: false, root: '' });
  assert.equal(describedBy(first)['aria-describedby'], undefined);
  assert.equal(describedBy(first)['aria-invalid'], undefined);
  assert.doesNotMatch(first, /role="alert"|Wrong|Too many/);

  const rows: [PasswordPageOptions, string, boolean][] = [
    [{ wrong: true, home: false, root: '' }, 'Wrong password. Try again.', true],
    // A refusal did not check the password: it is not said to be wrong.
    [{ retryAfter: 42, home: false, root: '' }, 'Too many wrong passwords. Try again in 42 seconds.', false],
    [{ retryAfter: 1, home: true, root: '../' }, 'Too many wrong passwords. Try again in 1 second.', false],
    [{ wrong: true, retryAfter: 7, home: false, root: '' }, 'Too many wrong passwords. Try again in 7 seconds.', false],
  ];
  for (const [options, text, invalid] of rows) {
    const html = passwordPage(options);
    const input = describedBy(html);
    assert.equal(input['aria-invalid'], invalid ? 'true' : undefined, text);
    const id = input['aria-describedby']!;
    const said = new RegExp(`<p class="error" id="${id}" role="alert">([^<]*)</p>`).exec(html);
    assert.ok(said, text);
    assert.equal(said[1], text);
    assert.ok(html.indexOf('<input') < html.indexOf(said[0]), 'the message follows the field');
  }
});

test('the form body: its password field decoded as a browser encodes it; malformed is undefined, never a throw', () => {
  const rows: [string, string | undefined][] = [
    ['password=hunter22', 'hunter22'],
    ['password=correct+horse+battery', 'correct horse battery'],
    ['password=%2B%26%3D%25', '+&=%'],
    ['password=caf%C3%A9%20%F0%9F%98%80', 'café 😀'],
    ['other=1&password=second&x=%ZZ', 'second'],
    ['password=first&password=second', 'first'],
    ['pass%77ord=by+name', 'by name'],
    ['password+=x', undefined],
    ['password=', ''],
    ['password', ''],
    ['', undefined],
    ['passwords=x&Password=y', undefined],
    ['password=%', undefined],
    ['password=%2', undefined],
    ['password=%ZZ', undefined],
    ['password=%C3', undefined],
    ['password=%ED%A0%80', undefined],
    ['password=%FF', undefined],
    ['x=%ZZ&password=ok=fine', 'ok=fine'],
    ['%ZZ=1&password=after', 'after'],
  ];
  for (const [body, want] of rows) assert.equal(passwordFromForm(body), want, body);
});

/** Answers every request of `context` in the test: the page at any path, the static files, and a posted form. */
async function serve(context: BrowserContext, posts: { url: string; type: string | undefined; body: string }[]): Promise<void> {
  const headers = Object.fromEntries(SECURITY_HEADERS);
  await context.route('**/*', async (route) => {
    const req = route.request();
    const url = new URL(req.url());
    const file = /\/static\/([a-z]+\.(?:css|svg))$/.exec(url.pathname);
    if (file) {
      const type = extname(file[1]!) === '.css' ? 'text/css' : 'image/svg+xml';
      return route.fulfill({ status: 200, contentType: type, body: readFileSync(join(ROOT, 'static', file[1]!)) });
    }
    const root = url.pathname.endsWith('/') ? '../' : '';
    const posted = req.method() === 'POST';
    if (posted) posts.push({ url: req.url(), type: req.headers()['content-type'], body: req.postData() ?? '' });
    await route.fulfill({
      status: posted ? 401 : 200,
      headers,
      contentType: 'text/html; charset=utf-8',
      body: passwordPage({ wrong: posted, home: true, root }),
    });
  });
}

// https: a secure context, which the watched page's permissions need; no request leaves the test.
const ORIGIN = 'https://short.test';
const TYPED = 'p@ss +&=% café 😀 word';

test('in a browser with JavaScript off: the form posts what was typed back to the page, query included', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const context = await browser.newContext({ javaScriptEnabled: false });
  const posts: { url: string; type: string | undefined; body: string }[] = [];
  await serve(context, posts);
  const page = await context.newPage();
  for (const path of ['/abc123', '/base/abc123/', '/base/abc123?utm_source=news&x=a+b']) {
    posts.length = 0;
    assert.equal((await page.goto(`${ORIGIN}${path}`))?.status(), 200, path);
    await page.getByLabel('Password').fill(TYPED);
    const answered = page.waitForResponse((res) => res.request().method() === 'POST');
    await page.getByRole('button', { name: 'Open the link' }).click();
    assert.equal((await answered).status(), 401);
    assert.equal(posts.length, 1, path);
    assert.equal(posts[0]!.url, `${ORIGIN}${path}`);
    assert.equal(posts[0]!.type, 'application/x-www-form-urlencoded');
    assert.equal(passwordFromForm(posts[0]!.body), TYPED);
    // The answer to a wrong password: the field again, described by the message.
    const field = page.getByLabel('Password');
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator(`#${await field.getAttribute('aria-describedby')}`).textContent(), 'Wrong password. Try again.');
    assert.equal(await page.getByRole('alert').textContent(), 'Wrong password. Try again.');
    assert.equal(page.url(), `${ORIGIN}${path}`);
  }
  await context.close();
});

test('in a browser: styled like the UI, no CSP violation, no serious accessibility violation in any state', async (t) => {
  const browser = await launch(t);
  if (!browser) return;
  const w = await openPage(browser, ORIGIN);
  await serve(w.context, []);
  for (const path of ['/abc123', '/base/abc123/']) {
    assert.equal((await w.page.goto(`${ORIGIN}${path}`))?.status(), 200);
    assert.equal(await w.page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(245, 246, 248)');
    assert.equal(await w.page.locator('.card').evaluate((e) => getComputedStyle(e).borderTopStyle), 'solid');
    assert.equal(await w.page.getByLabel('Password').evaluate((e) => getComputedStyle(e).borderTopStyle), 'solid');
    assert.deepEqual(await seriousViolations(w.page), [], path);
    await w.page.getByLabel('Password').fill('a wrong one');
    await w.page.getByRole('button', { name: 'Open the link' }).click();
    await w.page.getByRole('alert').waitFor();
    assert.deepEqual(await seriousViolations(w.page), [], `${path} after a wrong password`);
  }
  assert.deepEqual(unexpected(w, [401]), []);
  await w.context.close();
});
