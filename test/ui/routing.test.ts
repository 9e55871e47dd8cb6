/// <reference lib="dom" />
/**
 * Where a link sends each visitor, in the row's edit form (docs/ui.md, your links), in a real
 * browser: rules added (each condition's input as its type takes it), reordered, a condition and
 * a rule removed; query forwarding, validity (read in the browser's time zone), fallback URL and
 * password set and removed. Each save is checked against the API's record and real redirects, the
 * request against what was changed, the form reopened against the record, a refusal said in the
 * form, the row's marks, and axe-core on the open form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage } from '../support/browser.ts';
import { type Harness, start } from '../support/helpers.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

/** The browser's time zone: the form's dates are read in it. */
const ZONE = 'America/New_York';
/** 2030-01-02T03:04 in New York (EST, UTC−5). */
const UNTIL = Date.UTC(2030, 0, 2, 8, 4) / 1000;
const PASSWORD = 'correct horse battery';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

interface Routing {
  rules: { url: string; conditions: { type: string; key: string | null; value: string }[] }[];
  forward_query: boolean;
  valid_since: number | null;
  valid_until: number | null;
  fallback_url: string | null;
  password_protected: boolean;
}

/** The routing fields of the link's record, as the API gives them. */
async function routing(h: Harness, code: string): Promise<Routing> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, `record of ${code}`);
  const { rules, forward_query, valid_since, valid_until, fallback_url, password_protected } = JSON.parse(r.body) as Routing;
  return { rules, forward_query, valid_since, valid_until, fallback_url, password_protected };
}

/** The page with "Your links" listed, and the body of every `PATCH` it sends, in order. */
async function linksPage(browser: Browser, origin: string): Promise<{ w: Awaited<ReturnType<typeof openPage>>; patches: Record<string, unknown>[] }> {
  const w = await openPage(browser, origin, { width: 1280, timezoneId: ZONE });
  const patches: Record<string, unknown>[] = [];
  w.page.on('request', (req) => {
    if (req.method() === 'PATCH') patches.push(req.postDataJSON() as Record<string, unknown>);
  });
  await w.page.goto(`${origin}/`);
  await w.page.getByLabel('Admin API key').fill('k');
  await w.page.getByLabel('Admin API key').press('Enter');
  await w.page.locator('#admin-rows tr').first().waitFor();
  return { w, patches };
}

async function openForm(page: Page, code: string): Promise<Locator> {
  await page.getByRole('button', { name: `Edit ${code}` }).click();
  const form = page.getByRole('form', { name: `Edit ${code}` });
  await form.waitFor();
  return form;
}

async function save(page: Page, form: Locator, code: string): Promise<void> {
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  await page
    .locator('#admin-summary')
    .filter({ hasText: `Saved ${code}.` })
    .waitFor();
}

const rule = (form: Locator, n: number) => form.getByRole('group', { name: `Rule ${n}`, exact: true });
const condition = (ruleBox: Locator, n: number) => ruleBox.getByRole('group', { name: `Condition ${n}`, exact: true });
const isFocused = (locator: Locator) => locator.evaluate((e) => e === document.activeElement);
/** The marks of a row, by the name of their list. */
const marks = (page: Page, code: string) =>
  page
    .getByRole('list', { name: `How ${code} sends visitors` })
    .getByRole('listitem')
    .allTextContents();

const chromiumPath = findChromium();
const missing = noBrowser();

// One browser for the file; each test has its own server and page.
describe('where a link sends visitors, in the edit form', { skip: missing }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchFound(chromiumPath!);
  });
  after(() => browser?.close());

  test('two rules added, reordered, a condition removed; forwarding, an end, a fallback and a password set; saved, reopened, a refusal said', async (t) => {
    const h = await start(t, { apiKeys: ['k'] });
    const origin = `http://127.0.0.1:${h.port}`;
    const code = await h.shorten('https://target.example/');
    const { w, patches } = await linksPage(browser, origin);
    const { page } = w;
    let form = await openForm(page, code);
    const section = form.locator('details.routing');
    assert.equal(await section.getAttribute('open'), null, 'closed while the link has none of it');
    await form.getByText('Where it sends visitors', { exact: true }).click();

    // Rule 1: iOS devices, with a second condition (a browser) removed further down.
    await form.getByRole('button', { name: 'Add a rule' }).click();
    assert.ok(await isFocused(rule(form, 1).getByLabel('URL', { exact: true })), 'the new rule’s URL has the focus');
    await rule(form, 1).getByLabel('URL', { exact: true }).fill('https://a.example/ios');
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Condition').inputValue(), 'device');
    assert.ok(await condition(rule(form, 1), 1).getByRole('button', { name: 'Remove condition' }).isDisabled(), 'a rule keeps one condition');
    await condition(rule(form, 1), 1).getByLabel('Device').selectOption('ios');
    await rule(form, 1).getByRole('button', { name: 'Add a condition' }).click();
    assert.ok(await isFocused(condition(rule(form, 1), 2).getByLabel('Condition')));
    await condition(rule(form, 1), 2).getByLabel('Condition').selectOption('browser');
    assert.ok(await isFocused(condition(rule(form, 1), 2).getByLabel('Condition')), 'the picker keeps the focus');
    await condition(rule(form, 1), 2).getByLabel('Browser').selectOption('Safari');

    // Rule 2: ?ref=x; a bare host gets https:// as the target does.
    await form.getByRole('button', { name: 'Add a rule' }).click();
    const refCondition = condition(rule(form, 2), 1);
    await rule(form, 2).getByLabel('URL', { exact: true }).fill('b.example/ref');
    await refCondition.getByLabel('Condition').selectOption('query-param');
    assert.equal(await refCondition.getByLabel('Device').count(), 0, 'the device list is gone');
    await refCondition.getByLabel('Parameter').fill('ref');
    await refCondition.getByLabel('Value').fill('x');

    // Reordered: rule 2 moved up keeps the focus, on the button that still moves it.
    await rule(form, 2).getByRole('button', { name: 'Move up' }).click();
    assert.equal(await rule(form, 1).getByLabel('URL', { exact: true }).inputValue(), 'b.example/ref');
    assert.equal(await rule(form, 2).getByLabel('URL', { exact: true }).inputValue(), 'https://a.example/ios');
    assert.ok(await rule(form, 1).getByRole('button', { name: 'Move up' }).isDisabled());
    assert.ok(await isFocused(rule(form, 1).getByRole('button', { name: 'Move down' })));
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Parameter').inputValue(), 'ref', 'what was typed moves with its rule');

    // The browser condition removed: the iOS one stays, and can no longer be removed.
    await condition(rule(form, 2), 2).getByRole('button', { name: 'Remove condition' }).click();
    assert.equal(await rule(form, 2).getByRole('group').count(), 1);
    assert.equal(await condition(rule(form, 2), 1).getByLabel('Device').inputValue(), 'ios');
    assert.ok(await condition(rule(form, 2), 1).getByRole('button', { name: 'Remove condition' }).isDisabled());
    assert.ok(await isFocused(rule(form, 2).getByRole('button', { name: 'Add a condition' })));

    await form.getByLabel('Forward the query string').check();
    await form.getByLabel('Valid until').fill('2030-01-02T03:04');
    await form.getByLabel('Fallback URL').fill('fallback.example/gone');
    await form.getByLabel('Set a new password').fill(PASSWORD);
    assert.equal(await form.getByLabel('Remove the password').count(), 0, 'nothing to remove yet');
    await shot(page, 'routing-edit');
    await save(page, form, code);

    // Only what changed is sent: "Valid from" was left empty.
    const sent = patches.at(-1)!;
    assert.deepEqual(Object.keys(sent).sort(), [
      'fallback_url',
      'forward_query',
      'max_visits',
      'password',
      'retention_days',
      'rules',
      'tags',
      'title',
      'url',
      'valid_until',
    ]);
    const expected: Routing = {
      rules: [
        { url: 'https://b.example/ref', conditions: [{ type: 'query-param', key: 'ref', value: 'x' }] },
        { url: 'https://a.example/ios', conditions: [{ type: 'device', key: null, value: 'ios' }] },
      ],
      forward_query: true,
      valid_since: null,
      valid_until: UNTIL,
      fallback_url: 'https://fallback.example/gone',
      password_protected: true,
    };
    assert.deepEqual(await routing(h, code), expected);
    // The link does it: the password typed opens it, the first rule that holds wins, the query follows.
    assert.equal((await h.req(`/${code}?ref=x`)).status, 200, 'the password form first');
    const ref = await h.req(`/${code}?ref=x`, { headers: { 'x-link-password': PASSWORD, 'user-agent': IPHONE } });
    assert.deepEqual([ref.status, ref.headers.location], [302, 'https://b.example/ref?ref=x']);
    const ios = await h.req(`/${code}`, { headers: { 'x-link-password': PASSWORD, 'user-agent': IPHONE } });
    assert.deepEqual([ios.status, ios.headers.location], [302, 'https://a.example/ios']);
    const [rules, password, validity, ...rest] = await marks(page, code);
    assert.deepEqual([rules, password, rest], ['2 rules', 'Password', []]);
    assert.match(validity!, /^Valid until Jan 2, 2030, 3:04\sAM$/);

    // Reopened: open, every value as stored.
    form = await openForm(page, code);
    assert.equal(await form.locator('details.routing').getAttribute('open'), '');
    assert.equal(await rule(form, 1).getByLabel('URL', { exact: true }).inputValue(), 'https://b.example/ref');
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Condition').inputValue(), 'query-param');
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Parameter').inputValue(), 'ref');
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Value').inputValue(), 'x');
    assert.equal(await rule(form, 2).getByLabel('URL', { exact: true }).inputValue(), 'https://a.example/ios');
    assert.equal(await condition(rule(form, 2), 1).getByLabel('Device').inputValue(), 'ios');
    assert.equal(await form.getByRole('group', { name: 'Rule 3', exact: true }).count(), 0);
    assert.ok(await form.getByLabel('Forward the query string').isChecked());
    assert.equal(await form.getByLabel('Valid from').inputValue(), '');
    assert.equal(await form.getByLabel('Valid until').inputValue(), '2030-01-02T03:04');
    assert.equal(await form.getByLabel('Fallback URL').inputValue(), 'https://fallback.example/gone');
    assert.equal(await form.getByLabel('Set a new password').inputValue(), '', 'the password is never shown');
    assert.equal(await form.getByLabel('Remove the password').isChecked(), false);

    assert.deepEqual(await seriousViolations(page), [], 'the form open with its rules');
    // axe-core is in the page now: every violation within the form, of any impact.
    const all = await form.evaluate(async (node) => {
      const axe = (window as unknown as { axe: { run(n: Element): Promise<{ violations: { id: string }[] }> } }).axe;
      return (await axe.run(node)).violations.map((v) => v.id);
    });
    assert.deepEqual(all, []);
    // On a phone the rules' fields stack: nothing scrolls sideways.
    await page.setViewportSize({ width: 375, height: 800 });
    assert.equal(await overflow(page), 0);
    await shot(page, 'routing-reopened');
    await page.setViewportSize({ width: 1280, height: 800 });

    // A refused value: the API's reason, in the form's words; only the rules were sent, nothing stored.
    await rule(form, 1).getByLabel('URL', { exact: true }).fill('ftp://x');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.error').filter({ hasText: 'Rule 1, URL: must use http or https, not ftp.' }).waitFor();
    assert.deepEqual(Object.keys(patches.at(-1)!).sort(), ['max_visits', 'retention_days', 'rules', 'tags', 'title', 'url']);
    assert.deepEqual(await routing(h, code), expected);
    // A rule without a URL is said before anything is sent.
    await rule(form, 2).getByLabel('URL', { exact: true }).fill(' ');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.error').filter({ hasText: 'Enter the URL of rule 2.' }).waitFor();
    assert.equal(patches.length, 2);
    await shot(page, 'routing-refused');
    assert.deepEqual(unexpected(w, [400]), []);
    await w.context.close();
  });

  test('a date condition in local time, each type’s own input; the password, validity, fallback and forwarding removed, then every rule', async (t) => {
    const h = await start(t, { apiKeys: ['k'] });
    const origin = `http://127.0.0.1:${h.port}`;
    const code = await h.shorten('https://target.example/');
    // 2027-07-01T12:30 in New York (EDT, UTC−4); the new one 2027-12-25T08:00 (EST, UTC−5).
    const afterDate = Date.UTC(2027, 6, 1, 16, 30) / 1000;
    const christmas = Date.UTC(2027, 11, 25, 13, 0) / 1000;
    const set = await h.req(`/api/urls/${code}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({
        rules: [{ url: 'https://late.example/', conditions: [{ type: 'after-date', key: null, value: String(afterDate) }] }],
        forward_query: true,
        valid_since: UNTIL - 86400 * 365,
        valid_until: UNTIL,
        fallback_url: 'https://fb.example/',
        password: 'an old password',
      }),
    });
    assert.equal(set.status, 200, set.body);
    const { w, patches } = await linksPage(browser, origin);
    const { page } = w;
    const [one, locked, window, ...none] = await marks(page, code);
    assert.deepEqual([one, locked, none], ['1 rule', 'Password', []]);
    assert.match(window!, /^Valid Jan 2, 2029, 3:04\sAM – Jan 2, 2030, 3:04\sAM$/);
    let form = await openForm(page, code);
    assert.equal(await form.locator('details.routing').getAttribute('open'), '', 'open: the link has some of it');
    const first = condition(rule(form, 1), 1);
    assert.equal(await first.getByLabel('Condition').inputValue(), 'after-date');
    assert.equal(await first.getByLabel('Date and time').inputValue(), '2027-07-01T12:30');
    await first.getByLabel('Date and time').fill('2027-12-25T08:00');

    // Each type's value input: a list, text, a date, a parameter name only for the query types.
    await rule(form, 1).getByRole('button', { name: 'Add a condition' }).click();
    const added = condition(rule(form, 1), 2);
    const shape = () =>
      added.evaluate((group) =>
        [...group.querySelectorAll('label')].map((label) => {
          const control = document.getElementById(label.htmlFor) as HTMLInputElement | HTMLSelectElement;
          const kind = control instanceof HTMLSelectElement ? `select of ${control.options.length}` : control.type;
          return `${label.textContent}: ${kind}`;
        }),
      );
    for (const [type, controls] of [
      ['device', ['Device: select of 8']],
      ['browser', ['Browser: select of 7']],
      ['language', ['Language: text']],
      ['country', ['Country code: text']],
      ['query-param', ['Parameter: text', 'Value: text']],
      ['any-value-query-param', ['Parameter: text']],
      ['ip-address', ['Address or range: text']],
      ['before-date', ['Date and time: datetime-local']],
      ['after-date', ['Date and time: datetime-local']],
      ['language', ['Language: text']],
    ] as const) {
      await added.getByLabel('Condition').selectOption(type);
      assert.deepEqual(await shape(), ['Condition: select of 9', ...controls], type);
    }
    await added.getByLabel('Language').fill('fr-CA');

    await form.getByLabel('Remove the password').check();
    assert.ok(await form.getByLabel('Set a new password').isDisabled(), 'no new password while removing it');
    assert.equal(await form.getByLabel('Valid from').inputValue(), '2029-01-02T03:04');
    await form.getByLabel('Valid from').fill('');
    await form.getByLabel('Valid until').fill('');
    await form.getByLabel('Fallback URL').fill('');
    await form.getByLabel('Forward the query string').uncheck();
    await save(page, form, code);
    const sent = patches.at(-1)!;
    assert.deepEqual(
      [sent['password'], sent['valid_since'], sent['valid_until'], sent['fallback_url'], sent['forward_query']],
      [null, null, null, null, false],
    );
    assert.deepEqual(await routing(h, code), {
      rules: [
        {
          url: 'https://late.example/',
          conditions: [
            { type: 'after-date', key: null, value: String(christmas) },
            { type: 'language', key: null, value: 'fr-CA' },
          ],
        },
      ],
      forward_query: false,
      valid_since: null,
      valid_until: null,
      fallback_url: null,
      password_protected: false,
    });
    assert.deepEqual(await marks(page, code), ['1 rule']);

    // Every rule removed: none left, the focus on Add a rule; the row without marks.
    form = await openForm(page, code);
    assert.equal(await condition(rule(form, 1), 1).getByLabel('Date and time').inputValue(), '2027-12-25T08:00');
    await rule(form, 1).getByRole('button', { name: 'Remove rule' }).click();
    assert.equal(await form.getByRole('group', { name: 'Rule 1', exact: true }).count(), 0);
    assert.ok(await isFocused(form.getByRole('button', { name: 'Add a rule' })));
    await save(page, form, code);
    assert.deepEqual(patches.at(-1)!['rules'], []);
    assert.deepEqual((await routing(h, code)).rules, []);
    assert.equal(await page.getByRole('list', { name: `How ${code} sends visitors` }).count(), 0);
    form = await openForm(page, code);
    assert.equal(await form.locator('details.routing').getAttribute('open'), null, 'closed again: nothing of it left');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });
});
