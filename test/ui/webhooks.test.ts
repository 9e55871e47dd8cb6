/// <reference lib="dom" />
/**
 * The webhooks page in a real browser (docs/ui.md, webhooks), against a real server and a real
 * receiver on 127.0.0.1 (`WEBHOOK_ALLOW_PRIVATE`): an admin subscribes through the form (the form's
 * own checks and an API refusal said beside their fields, the domain picker of an instance of two
 * domains), sees the signing secret once (copied, the one the deliveries are signed with, gone
 * after leaving the view and after a reload), sends a test ping that the receiver gets and the
 * deliveries show as delivered with its status, gets `link.created` for a link made with the API,
 * and deletes a subscription after confirming. The header names the page once the key kept is
 * known to be an admin's; a key whose role may not manage webhooks gets no link, and the API's
 * refusal instead of the page at its address. Axe-core at 375 and 1280 px, light and dark, with the secret,
 * the list, the deliveries and a confirmation shown.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { open, type Harness } from '../support/helpers.ts';
import { ADMIN, makeKey } from '../support/keys.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

const GO = 'go.example';
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
const ADMIN_JSON = { 'content-type': 'application/json', 'x-api-key': ADMIN };

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A receiver: a node:http server on 127.0.0.1 that answers every delivery 200 and keeps it;
 * `next(match)` resolves with the first delivery `match` holds, at once if one came already.
 */
async function receiver(): Promise<{
  origin: string;
  deliveries: Delivery[];
  next(match: (d: Delivery) => boolean): Promise<Delivery>;
  close(): Promise<void>;
}> {
  const deliveries: Delivery[] = [];
  let waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    next: (match) =>
      new Promise((resolve) => {
        const check = (): void => {
          const found = deliveries.find(match);
          if (found) resolve(found);
          else waiters.push(check);
        };
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A delivery's body, checked against `secret` as a receiver would (throws when the signature does not hold). */
function verified(secret: string, d: Delivery): { type: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(d.headers['webhook-id']),
    'webhook-timestamp': String(d.headers['webhook-timestamp']),
    'webhook-signature': String(d.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(d.body, headers) as { type: string; data: Record<string, unknown> };
}

const typeOf = (d: Delivery): string => (JSON.parse(d.body) as { type: string }).type;

/** Opens the webhooks page at its address and enters `key` in its prompt. */
async function openWebhooks(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/#webhooks`);
  await page.getByLabel('API key of an admin').fill(key);
  await page.getByLabel('API key of an admin').press('Enter');
}

/** Subscribes `url` to `events` (on `domain`, by its host) through the page's form; the secret the page shows. */
async function subscribe(page: Page, url: string, events: string[], domain?: string): Promise<string> {
  await page.getByLabel('Receiver URL').fill(url);
  for (const type of events) await page.getByLabel(type, { exact: true }).check();
  if (domain) await page.locator('#webhook-form').getByLabel('Domain').selectOption({ label: domain });
  await page.getByRole('button', { name: 'Create subscription' }).click();
  await page.locator('#webhooks-summary', { hasText: `Subscribed ${url}.` }).waitFor();
  return page.getByLabel(`The signing secret of the subscription of ${url}:`).inputValue();
}

/** A subscription's row in the list, by its receiver. */
const rowOf = (page: Page, url: string) => page.locator('#webhook-rows > tr:not(.detail)').filter({ has: page.locator('td.url', { hasText: url }) });

/** The cells of a row, by their column's name. */
async function cellsOf(row: ReturnType<Page['locator']>): Promise<Record<string, string>> {
  return row.evaluate((tr) =>
    Object.fromEntries([...tr.querySelectorAll('td[data-label]')].map((td) => [td.getAttribute('data-label'), (td as HTMLElement).innerText])),
  );
}

/** The subscriptions as the API lists them. */
async function listed(h: Harness): Promise<{ id: string; url: string; events: string[]; domain: string | null; disabled: boolean }[]> {
  const r = await h.req('/api/webhooks', { headers: { 'x-api-key': ADMIN } });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { webhooks: { id: string; url: string; events: string[]; domain: string | null; disabled: boolean }[] }).webhooks;
}

const chromiumPath = findChromium();
const missing = noBrowser();

// One browser, one server of two domains and one receiver for the file; each test has its own pages.
describe('the webhooks page', { skip: missing }, () => {
  let browser: Browser;
  let h: Harness;
  let origin: string;
  let rx: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    [browser, h, rx] = await Promise.all([
      launchFound(chromiumPath!),
      open({ apiKeys: [ADMIN], domains: [GO], webhookAllowPrivate: true, logLevel: 'silent' }),
      receiver(),
    ]);
    origin = `http://127.0.0.1:${h.port}`;
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    await rx?.close();
  });

  test('an admin subscribes through the form: the secret shown once, a test ping delivered and listed, link.created received, deleted after confirming', async () => {
    const w = await openPage(browser, origin, { width: 1280 });
    const { page } = w;
    // The header names the page once the key entered in "Your links" is known to be an admin's.
    await page.goto(`${origin}/`);
    const views = page.getByRole('navigation', { name: 'Views' });
    await views.getByRole('link', { name: 'Keys' }).waitFor();
    assert.equal(await views.getByRole('link', { name: 'Webhooks' }).count(), 0, 'no key yet: no link');
    await page.getByLabel('Admin API key').fill(ADMIN);
    await page.getByLabel('Admin API key').press('Enter');
    await views.getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('#webhooks-summary', { hasText: 'No subscriptions yet.' }).waitFor();
    assert.equal(await page.locator('#home').isVisible(), false, 'the webhooks in place of the home view');
    assert.equal(await views.getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current'), 'page');
    assert.equal(await page.locator('#webhooks-key-form').isVisible(), false, 'the key of your links serves, unasked');

    // One checkbox per event in a group named Events, each with what it tells; the domains to choose from.
    const group = page.getByRole('group', { name: 'Events' });
    assert.deepEqual(await group.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).labels![0]!.textContent)), [
      'link.created',
      'link.updated',
      'link.deleted',
      'link.clicked',
      'link.limit_reached',
    ]);
    assert.equal(await page.locator('#webhook-event-0-help').textContent(), 'A link was made.');
    assert.deepEqual(await page.locator('#webhook-domain option').allTextContents(), ['Every domain', `127.0.0.1:${h.port}`, GO]);

    // The form's own checks, said beside their fields, the focus on the field.
    await page.getByRole('button', { name: 'Create subscription' }).click();
    assert.equal(await page.locator('#webhook-url-error').textContent(), 'Enter the URL of the receiver.');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-url');
    await page.getByLabel('Receiver URL').fill(`${rx.origin}/a`);
    await page.getByRole('button', { name: 'Create subscription' }).click();
    assert.equal(await page.locator('#webhook-events-error').textContent(), 'Choose one or more events.');
    assert.equal(await page.locator('#webhook-url-error').isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-event-0');
    // The API's refusal, beside the field it is about.
    await page.getByLabel('Receiver URL').fill('ftp://127.0.0.1/a');
    await page.getByLabel('link.created', { exact: true }).check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.locator('#webhook-url-error', { hasText: 'The URL must use http or https, not ftp.' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-url');
    assert.deepEqual(await listed(h), [], 'nothing made');
    await page.getByLabel('link.created', { exact: true }).uncheck();

    // Every domain's link.created and link.deleted to /a; go.example's link.updated to /b.
    const a = `${rx.origin}/a`;
    const b = `${rx.origin}/b`;
    const secret = await subscribe(page, a, ['link.created', 'link.deleted']);
    assert.match(secret, SECRET);
    assert.equal(await page.locator('#webhook-secret').getAttribute('readonly'), '');
    assert.match(await page.locator('#webhook-made').innerText(), /Copy it now: it will not be shown again\./);
    // The form is emptied for the next one; the copy button has the focus, so Enter copies.
    assert.equal(await page.getByLabel('Receiver URL').inputValue(), '');
    assert.equal(await group.getByRole('checkbox', { checked: true }).count(), 0);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-copy');
    await page.keyboard.press('Enter');
    await page.locator('#webhook-copy-status', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    const other = await subscribe(page, b, ['link.updated'], GO);
    assert.match(other, SECRET);
    assert.notEqual(other, secret, 'a new secret each time');
    await page.locator('#webhooks-summary', { hasText: `Subscribed ${b}. 2 subscriptions, oldest first.` }).waitFor();
    const created = (await page.locator('#webhook-rows tr[data-id] td.date').first().innerText()).trim();
    assert.match(created, /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/, 'created, as a date');
    assert.deepEqual(await cellsOf(rowOf(page, a)), {
      Receiver: a,
      Events: 'link.created\nlink.deleted',
      Domain: 'Every domain',
      Created: created,
      Status: 'Active',
    });
    assert.deepEqual({ ...(await cellsOf(rowOf(page, b))), Created: '' }, { Receiver: b, Events: 'link.updated', Domain: GO, Created: '', Status: 'Active' });
    // The store has both, as the form said; the list never shows a secret.
    const subs = await listed(h);
    assert.deepEqual(
      subs.map((s) => [s.url, s.events, s.domain, s.disabled]),
      [
        [a, ['link.created', 'link.deleted'], null, false],
        [b, ['link.updated'], GO, false],
      ],
    );
    assert.ok(!JSON.stringify(subs).includes('whsec_'));

    // Send test: the receiver gets the ping, signed with the secret shown; the deliveries, opened
    // under the row, show its attempt once it is made, as delivered with the receiver's 200.
    await rowOf(page, a)
      .getByRole('button', { name: `Send test to ${a}` })
      .click();
    const ping = await rx.next((d) => d.path === '/a' && typeOf(d) === 'ping');
    const pinged = verified(secret, ping);
    assert.deepEqual([pinged.type, pinged.data], ['ping', { subscription: subs[0]!.id }]);
    assert.throws(() => verified(other, ping), 'not signed with the other secret');
    const eventId = String(ping.headers['webhook-id']);
    assert.equal(
      await rowOf(page, a)
        .getByRole('button', { name: `Deliveries to ${a}` })
        .getAttribute('aria-expanded'),
      'true',
    );
    const panel = page.locator(`#deliveries-${subs[0]!.id}`);
    const attempt = panel.locator(`tr[data-event="${eventId}"]`);
    await attempt.waitFor();
    assert.deepEqual(
      { ...(await cellsOf(attempt)), Time: '', Duration: '' },
      { Time: '', 'Event id': eventId, Type: 'ping', Status: '200', Duration: '', Outcome: 'Delivered', Error: 'None' },
    );
    assert.match(await attempt.locator('td[data-label="Duration"]').innerText(), /^\d+ ms$/);
    await panel.locator('[role="status"]', { hasText: 'Test ping: delivered (200). 1 attempt, newest first (the last 100 are kept).' }).waitFor();
    await shot(page, 'webhooks-ping');

    // A link made with the API: its link.created reaches /a, signed, and Refresh lists it newest first.
    const made = await h.req('/api/shorten', {
      method: 'POST',
      headers: ADMIN_JSON,
      body: JSON.stringify({ url: 'https://hooked.example/page', code: 'hooked1' }),
    });
    assert.equal(made.status, 201, made.body);
    const event = await rx.next((d) => d.path === '/a' && typeOf(d) === 'link.created');
    const body = verified(secret, event);
    assert.deepEqual([body.type, body.data['short_code'], body.data['original_url']], ['link.created', 'hooked1', 'https://hooked.example/page']);
    await panel.getByRole('button', { name: 'Refresh' }).click();
    await panel.locator('tbody tr').nth(1).waitFor();
    assert.deepEqual(await panel.locator('tbody td[data-label="Type"]').allInnerTexts(), ['link.created', 'ping']);
    assert.deepEqual(await panel.locator('tbody td[data-label="Outcome"]').allInnerTexts(), ['Delivered', 'Delivered']);
    assert.equal(await panel.locator('tbody tr').first().getAttribute('data-event'), String(event.headers['webhook-id']));
    assert.ok(!rx.deliveries.some((d) => d.path === '/b'), "go.example's subscription wants link.updated alone");
    // Deliveries again closes them.
    await rowOf(page, a)
      .getByRole('button', { name: `Deliveries to ${a}` })
      .click();
    assert.equal(await panel.count(), 0);

    // Shown once: away and back, and after a reload, the secret is nowhere in the page nor kept in the tab.
    const nowhere = async (where: string) => {
      assert.equal(await page.locator('#webhook-made').isVisible(), false, where);
      assert.equal(await page.locator('#webhook-secret').inputValue(), '', where);
      const everywhere = await page.evaluate(
        () => document.documentElement.outerHTML + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }),
      );
      for (const s of [secret, other]) assert.ok(!everywhere.includes(s), `the secret is gone: ${where}`);
    };
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Links' }).click();
    await page.locator('#home').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#webhooks').isVisible(), false);
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('#webhooks-summary', { hasText: /^2 subscriptions, oldest first\.$/ }).waitFor();
    await nowhere('back in the view');
    await page.reload();
    await page.locator('#webhooks-summary', { hasText: /^2 subscriptions, oldest first\.$/ }).waitFor();
    await nowhere('after a reload');

    // Delete asks first, in place; Cancel keeps the subscription and gives the focus back.
    await rowOf(page, b)
      .getByRole('button', { name: `Delete ${b}` })
      .click();
    assert.equal(
      (await rowOf(page, b).locator('.confirm').innerText()).trim(),
      `Delete the subscription of ${b}? Nothing more is sent to it, not even what is still owed.`,
    );
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), `Delete ${b}`);
    assert.equal((await listed(h)).length, 2, 'not deleted');
    await rowOf(page, b)
      .getByRole('button', { name: `Delete ${b}` })
      .click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.locator('#webhooks-summary', { hasText: `Deleted the subscription of ${b}. 1 subscription, oldest first.` }).waitFor();
    assert.equal(await rowOf(page, b).count(), 0);
    assert.deepEqual(
      (await listed(h)).map((s) => s.url),
      [a],
    );
    await rowOf(page, a)
      .getByRole('button', { name: `Delete ${a}` })
      .click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.locator('#webhooks-summary', { hasText: `Deleted the subscription of ${a}. No subscriptions yet.` }).waitFor();
    assert.deepEqual(await listed(h), []);
    assert.deepEqual(unexpected(w, [400]), []);
    await w.context.close();
  });

  test("a key whose role may not manage webhooks: no link in the header, the API's refusal in place of the page; a wrong key is not accepted; an admin key opens it", async () => {
    const viewer = await makeKey(h, 'viewer', { name: 'webhooks viewer' });
    const w = await openPage(browser, origin);
    const { page } = w;
    // A viewer lists the links, but the header does not name the webhooks once its key was asked about.
    await page.goto(`${origin}/`);
    const asked = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/webhooks');
    await page.getByLabel('Admin API key').fill(viewer.key);
    await page.getByLabel('Admin API key').press('Enter');
    assert.equal((await asked).status(), 403);
    await page.locator('#admin-rows tr').first().waitFor();
    const views = page.getByRole('navigation', { name: 'Views' });
    assert.equal(await views.getByRole('link', { name: 'Webhooks' }).count(), 0, 'no link for a viewer');
    // At its address, the view says why, in place of the form and the list.
    await page.goto(`${origin}/#webhooks`);
    const error = page.locator('#webhooks-key-error');
    await error.filter({ hasText: "This key's role (viewer) does not allow managing webhooks." }).waitFor();
    assert.equal(await page.locator('#webhooks-body').isVisible(), false, 'no form, no list');
    assert.equal(await page.getByRole('button', { name: 'Create subscription' }).count(), 0);
    assert.equal(await page.getByLabel('API key of an admin').inputValue(), '', 'ready for another key');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'webhooks-key');
    assert.match(
      await page.locator('#webhooks-key-help').innerText(),
      /The first admin key is in the file initial-admin-key in the server's data directory\.$/,
    );
    await shot(page, 'webhooks-refused');
    // A reload keeps the refusal: the key is kept in the tab, and still may not.
    await page.reload();
    await error.filter({ hasText: "This key's role (viewer) does not allow managing webhooks." }).waitFor();
    assert.equal(await page.locator('#webhooks-body').isVisible(), false);

    await page.getByLabel('API key of an admin').fill('wrong');
    await page.getByLabel('API key of an admin').press('Enter');
    await error.filter({ hasText: 'That API key was not accepted. Check it and try again.' }).waitFor();
    assert.equal(await page.locator('#webhooks-body').isVisible(), false);
    assert.equal(await views.getByRole('link', { name: 'Webhooks' }).count(), 0);
    // An admin key: the page, and the header names it.
    await page.getByLabel('API key of an admin').fill(ADMIN);
    await page.getByLabel('API key of an admin').press('Enter');
    await page
      .locator('#webhooks-summary')
      .filter({ hasText: /subscription/ })
      .waitFor();
    assert.equal(await error.isVisible(), false);
    assert.equal(await views.getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current'), 'page');
    assert.deepEqual(unexpected(w, [403]), []);
    await w.context.close();
  });

  test('at 375 and 1280 px, light and dark, with a secret, the list, deliveries and a confirmation shown: no sideways scroll, cards or table, no serious axe violation', async () => {
    for (const width of [375, 1280]) {
      const w = await openPage(browser, origin, { width });
      const { page } = w;
      await openWebhooks(page, origin, ADMIN);
      await page
        .locator('#webhooks-summary')
        .filter({ hasText: /subscription/ })
        .waitFor();
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        assert.equal(await overflow(page), 0, `the page at ${width} ${colorScheme}`);
        assert.deepEqual(await seriousViolations(page), [], `the page at ${width} ${colorScheme}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      const long = `${rx.origin}/a/rather/long/path/of/a/receiver/that/has/to/wrap/somewhere/${width}?token=${'x'.repeat(40)}`;
      const short = `${rx.origin}/w${width}`;
      await subscribe(page, long, ['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'link.limit_reached'], GO);
      await subscribe(page, short, ['link.deleted']);
      await rowOf(page, short)
        .getByRole('button', { name: `Send test to ${short}` })
        .click();
      // Once the receiver has it, its attempt is listed: the page watches for it ten seconds, and
      // on a busy machine a delivery can take longer; then Refresh shows it, as the page says.
      await rx.next((d) => d.path === `/w${width}` && typeOf(d) === 'ping');
      const delivered = page.locator('#webhook-rows td[data-label="Outcome"]', { hasText: 'Delivered' }).first();
      for (let i = 0; ; i++) {
        const listed = await delivered.waitFor({ timeout: 12_000 }).then(
          () => true,
          () => false,
        );
        if (listed) break;
        assert.ok(i < 4, 'the delivered ping is listed after a Refresh');
        await page.getByRole('button', { name: 'Refresh' }).click();
      }
      await rowOf(page, long)
        .getByRole('button', { name: `Delete ${long}` })
        .click();
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        const where = `${width} px ${colorScheme}`;
        assert.equal(await overflow(page), 0, where);
        assert.equal(
          await page.evaluate(
            () => document.querySelector('#webhooks .table-wrap')!.scrollWidth - document.querySelector('#webhooks .table-wrap')!.clientWidth,
          ),
          0,
          `the list fits at ${where}`,
        );
        const header = await page.locator('#webhooks-table > thead').isVisible();
        const label = await rowOf(page, short)
          .locator('td[data-label="Created"]')
          .evaluate((td) => getComputedStyle(td, '::before').content);
        assert.deepEqual([header, label], width === 375 ? [false, '"Created"'] : [true, 'none'], `cards when narrow, a table when wide: ${where}`);
        assert.deepEqual(await seriousViolations(page), [], where);
        await shot(page, `webhooks-${colorScheme}`);
      }
      assert.deepEqual(unexpected(w), [], `${width} px`);
      await w.context.close();
    }
  });
});
