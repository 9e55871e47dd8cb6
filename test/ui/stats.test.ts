/// <reference lib="dom" />
/**
 * A link's stats and the all-links dashboard in a real browser (docs/ui.md, stats), over visits
 * seeded through the redirect with real browsers' `User-Agent`s, `Referer`s and client addresses
 * (`X-Forwarded-For` behind one trusted proxy, countries from the public-domain database), at
 * chosen times of the harness clock; the browser's clock and time zone (Berlin) are fixed to match.
 * Checked: the totals, "N bot visits hidden", untracked visits in words, the series' bucket count of
 * every range (custom dates too), the top lists' values (a referrer, a country's name, a browser),
 * the bots toggle, the latest visits page by page, the download's rows, the fragment (back,
 * forward, reload), the chart's pointer and keyboard read-out and its table, and axe-core at 375
 * and 1280 px, light and dark.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchFound, noBrowser, openPage, type Watched } from '../support/browser.ts';
import { open, tempDir, type Harness } from '../support/helpers.ts';
import { overflow, seriousViolations, shot, unexpected } from './support.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const CHROME_ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
const EDGE = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80';
const CURL = 'curl/8.4.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** A title longer than any top list has room for: cut there, whole in its tooltip. */
const LONG_TITLE = 'Autumn newsletter: every reader who opened the October issue from its footer, in all editions and languages';

/** Wednesday 15 May 2024, 10:30 UTC: 12:30 in Berlin. */
const NOW = Date.UTC(2024, 4, 15, 10, 30);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ZONE = 'Europe/Berlin';

/** Addresses whose country the public-domain database knows (checked against it by maxmind's tests). */
const IP = { DE: '81.169.145.1', US: '8.8.8.8', JP: '133.242.0.3', NL: '193.0.6.139', BR: '200.160.2.3', AU: '1.1.1.1' };

/** WCAG's contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, bl] = rgb
      .match(/\d+/g)!
      .slice(0, 3)
      .map((c) => {
        const s = Number(c) / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

const chromiumPath = findChromium();
const missing = noBrowser();

describe('stats in the web UI', { timeout: 180_000 }, () => {
  let browser: Browser | undefined;
  let h: Harness;
  let origin: string;
  let clock = NOW;

  /** One counted visit of `code` at `ago` ms before NOW, from a browser behind the proxy. */
  async function visit(code: string, ago: number, ua: string, ip: string, referer?: string): Promise<void> {
    clock = NOW - ago;
    const headers: Record<string, string> = { 'user-agent': ua, 'x-forwarded-for': ip };
    if (referer) headers['referer'] = referer;
    const r = await h.req(`/${code}`, { headers });
    assert.equal(r.status, 302);
  }

  async function create(body: Record<string, unknown>): Promise<void> {
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://target.example/', ...body }),
    });
    assert.equal(r.status, 201, r.body);
  }

  before(async () => {
    if (chromiumPath) browser = await launchFound(chromiumPath);
    const pkg = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
    h = await open({ apiKeys: ['k'], trustProxy: 1, geoipDb: join(pkg, 'geo-whois-asn-country-ipv4.mmdb'), now: () => clock });
    origin = `http://127.0.0.1:${h.port}`;
    clock = NOW - 300 * DAY;
    await create({ code: 'stats-a', title: 'Spring campaign' });
    await create({ code: 'stats-b', title: LONG_TITLE });
    await create({ code: 'quiet1' });
    // stats-a: three visits of one Chrome now (one visitor), a Firefox an hour ago, then one visit
    // further back for each range; curl now and Googlebot 3 days ago are bots.
    for (let i = 0; i < 3; i++) await visit('stats-a', i * 60_000, CHROME, IP.DE, 'https://News.Example/today?utm=x');
    await visit('stats-a', HOUR, FIREFOX, IP.US);
    await visit('stats-a', 2 * DAY, SAFARI_IPHONE, IP.JP, 'https://t.co/abc');
    await visit('stats-a', 10 * DAY, CHROME_ANDROID, IP.NL, 'https://news.example/');
    await visit('stats-a', 40 * DAY, EDGE, IP.BR);
    await visit('stats-a', 200 * DAY, FIREFOX, IP.AU);
    await visit('stats-a', 0, CURL, IP.US);
    await visit('stats-a', 3 * DAY, GOOGLEBOT, IP.US);
    // stats-b: 23 visits today, enough for two pages of latest visits.
    for (let i = 0; i < 23; i++) await visit('stats-b', 2 * HOUR + i * 1000, CHROME, `81.169.145.${i + 10}`);
    // An imported link: its count has no events (untracked visits).
    const imported = await h.req('/api/import', {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/x-ndjson' },
      body: '{"short_code":"old-one","original_url":"https://old.example/","visit_count":5}\n',
    });
    assert.equal(imported.status, 200, imported.body);
    clock = NOW;
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A page on the home view with the key in this tab, its clock and zone those of the test. */
  async function page(options: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<Watched> {
    const w = await openPage(browser!, origin, { timezoneId: ZONE, ...options });
    await w.context.clock.setFixedTime(NOW);
    await w.page.goto(`${origin}/`);
    await w.page.evaluate(() => sessionStorage.setItem('url-shortener.api-key', 'k'));
    return w;
  }

  const totals = async (p: Page) => ({
    visits: await p.locator('#total-visits').textContent(),
    unique: await p.locator('#total-unique').textContent(),
    count: await p.locator('#total-count').textContent(),
  });
  const idle = (p: Page) => p.locator('#stats-body[aria-busy="false"]').waitFor();
  const buckets = (p: Page) => p.locator('#stats-series-table tbody tr').count();
  const bars = (p: Page) => p.locator('#stats-chart svg rect.bar').count();
  /** The rows of the top list `caption`: [value, visits]. */
  const top = (p: Page, caption: string) =>
    p
      .locator('table.toplist', { has: p.locator('caption', { hasText: new RegExp(`^${caption}$`) }) })
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.querySelector('.value')?.textContent ?? '', r.querySelector('td')?.textContent ?? '']));
  async function pick(p: Page, group: string, label: string): Promise<void> {
    await p.getByRole('group', { name: group }).getByText(label, { exact: true }).click();
    await idle(p);
  }

  test("a link's stats from its row: totals, bots hidden, every range's buckets, top lists, bots toggle, custom dates, latest visits", {
    skip: missing,
  }, async () => {
    const w = await page();
    const { page: p } = w;
    await p.getByLabel('Admin API key').fill('k');
    await p.getByLabel('Admin API key').press('Enter');
    await p.getByRole('link', { name: 'Stats of stats-a' }).click();
    await p.locator('#stats').waitFor({ state: 'visible' });
    assert.equal(new URL(p.url()).hash, '#stats/stats-a');
    await idle(p);
    assert.equal(await p.locator('#home').isHidden(), true);
    assert.equal(await p.evaluate(() => document.activeElement?.id), 'stats-title');
    assert.equal(await p.locator('#stats-title').textContent(), 'Stats of stats-a');
    assert.match(
      await p.locator('#stats-link').innerText(),
      /Title\s+Spring campaign\s+Short link\s+http:\/\/127\.0\.0\.1:\d+\/stats-a\s+Target\s+https:\/\/target\.example\//,
    );
    // The default range: today and the 29 days before, in Berlin (sent as tz).
    assert.equal(await p.locator('input[name="range"]:checked').getAttribute('value'), '30d');
    assert.deepEqual(await totals(p), { visits: '6', unique: '4', count: '10' });
    assert.equal(await buckets(p), 30);
    assert.equal(await bars(p), 30);
    assert.match((await p.locator('#stats-range').textContent()) ?? '', /^Apr 16, 2024, 12:00\s?AM – May 16, 2024, 12:00\s?AM, per day \(Europe\/Berlin\)\.$/);
    // curl and Googlebot are bots: hidden, and said so.
    assert.match(await p.locator('#stats-notes').innerText(), /^2 bot visits hidden: crawlers, link previews and scripts such as curl\./);
    // The top lists: hosts only ("Direct" for none), country names from the browser, families.
    assert.deepEqual(await top(p, 'Referrers'), [
      ['news.example', '4'],
      ['Direct', '1'],
      ['t.co', '1'],
    ]);
    assert.deepEqual(await top(p, 'Countries'), [
      ['Germany', '3'],
      ['Japan', '1'],
      ['Netherlands', '1'],
      ['United States', '1'],
    ]);
    assert.deepEqual(await top(p, 'Browsers'), [
      ['Chrome', '4'],
      ['Firefox', '1'],
      ['Safari', '1'],
    ]);
    assert.deepEqual(await top(p, 'Operating systems'), [
      ['Windows', '3'],
      // Ties by value, as the API orders them.
      ['Android', '1'],
      ['Linux', '1'],
      ['iOS', '1'],
    ]);
    assert.deepEqual(await top(p, 'Devices'), [
      ['Desktop', '4'],
      ['Mobile', '2'],
    ]);
    assert.equal(await p.locator('table.toplist caption', { hasText: 'Top links' }).count(), 0, 'a link has no top links');

    // Every range: its bucket count and its visits.
    const ranges: [string, number, string][] = [
      ['24 h', 24, '4'],
      ['7 d', 7, '5'],
      ['90 d', 90, '7'],
      ['1 y', 12, '8'],
      // From the month of the first visit (200 days back: October 2023) to May 2024.
      ['All', 8, '8'],
    ];
    for (const [label, count, visits] of ranges) {
      await pick(p, 'Range', label);
      assert.equal(await buckets(p), count, label);
      assert.equal(await bars(p), count, label);
      assert.equal(await p.locator('#total-visits').textContent(), visits, label);
    }
    assert.match(new URL(p.url()).hash, /^#stats\/stats-a\?range=all&bots=exclude$/);
    // Months are named with their year in full, on the axis ("May 2024": "May 24" reads as a day),
    // in the table and under the pointer or the keyboard.
    const axis = await p.locator('#stats-chart .labels text').allTextContents();
    assert.ok(axis.length >= 3 && axis.every((l) => /^[A-Z][a-z]{2} \d{4}$/.test(l)), axis.join(' | '));
    assert.equal(axis.at(-1), 'May 2024');
    const months = await p.locator('#stats-series-table tbody tr th').allTextContents();
    assert.deepEqual([months[0], months.at(-1)], ['October 2023', 'May 2024']);
    await p.locator('#stats-chart svg').focus();
    assert.equal(await p.locator('.chart-tip').textContent(), 'May 2024: 6 visits, 4 unique visitors');
    await p.keyboard.press('Home');
    assert.equal(await p.locator('.chart-tip').textContent(), 'October 2023: 1 visit, 1 unique visitor');
    await shot(p, 'stats-months');
    // 24 h is hourly, on Berlin's clock: the last bucket is 12:00–13:00 today.
    await pick(p, 'Range', '24 h');
    assert.equal(await p.locator('#stats-series-table tbody tr th').last().textContent(), 'Wed, May 15, 12:00 PM');
    assert.equal(await p.locator('#stats-series-table tbody tr td').nth(-2).textContent(), '3');

    // The bots toggle: the totals change, the note with them.
    await pick(p, 'Bots', 'Include');
    assert.deepEqual(await totals(p), { visits: '5', unique: '3', count: '10' });
    assert.equal(await p.locator('#stats-notes').innerText(), 'Including 1 bot visit.');
    await pick(p, 'Bots', 'Only bots');
    assert.equal(await p.locator('#stats-totals dt').first().textContent(), 'Bot visits');
    assert.equal(await p.locator('#total-visits').textContent(), '1');
    assert.deepEqual(await top(p, 'Browsers'), [['Other', '1']]);
    await pick(p, 'Bots', 'Exclude');
    assert.equal(await p.locator('#total-visits').textContent(), '4');

    // Custom dates: starts from the days shown; 1–10 May holds the Android visit only.
    await pick(p, 'Range', 'Custom');
    assert.equal(await p.getByLabel('From').inputValue(), '2024-05-14');
    assert.equal(await p.getByLabel('To (included)').inputValue(), '2024-05-15');
    await p.getByLabel('From').fill('2024-05-01');
    await p.getByLabel('To (included)').fill('2024-05-10');
    await p.getByRole('button', { name: 'Apply' }).click();
    await p.locator('#stats-range', { hasText: 'May 1, 2024' }).waitFor();
    await idle(p);
    assert.equal(await buckets(p), 10);
    assert.deepEqual(await totals(p), { visits: '1', unique: '1', count: '10' });
    assert.deepEqual(await top(p, 'Countries'), [['Netherlands', '1']]);
    assert.equal(new URL(p.url()).hash, '#stats/stats-a?range=custom&bots=exclude&from=2024-05-01&to=2024-05-10');
    await p.getByLabel('From').fill('2024-05-11');
    await p.getByRole('button', { name: 'Apply' }).click();
    assert.equal(await p.locator('#stats-custom-error').textContent(), 'The first date must not be after the last.');

    // The latest visits of the range: newest first, each value in words.
    await pick(p, 'Range', '7 d');
    const rows = p.locator('#stats-visit-rows tr');
    assert.equal(await p.locator('#stats-latest-summary').textContent(), 'Visits 1–5 of 5, newest first.');
    assert.deepEqual(await rows.first().locator('td').allTextContents(), [
      'May 15, 2024, 12:30:00 PM',
      'news.example',
      'Germany',
      'Chrome',
      'Windows',
      'Desktop',
      'No',
    ]);
    assert.deepEqual(await rows.last().locator('td').nth(1).textContent(), 't.co');
    assert.equal(await p.locator('#visits-next').isDisabled(), true);
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('the fragment: back and forward, a reload keeps the range, the dashboard top links open a link and come back', { skip: missing }, async () => {
    const w = await page();
    const { page: p } = w;
    await p.getByLabel('Admin API key').fill('k');
    await p.getByLabel('Admin API key').press('Enter');
    await p.getByRole('link', { name: 'Stats of stats-b' }).click();
    await idle(p);
    await pick(p, 'Range', '24 h');
    // The range is replaced in the fragment, not added: back leaves the stats.
    await p.goBack();
    await p.locator('#home').waitFor({ state: 'visible' });
    assert.equal(await p.locator('#stats').isHidden(), true);
    assert.equal(await p.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Stats of stats-b');
    await p.goForward();
    await p.locator('#stats').waitFor({ state: 'visible' });
    await idle(p);
    assert.equal(await p.locator('input[name="range"]:checked').getAttribute('value'), '24h');
    assert.equal(await buckets(p), 24);
    // Paged latest visits: 20, then the other 3.
    assert.equal(await p.locator('#stats-latest-summary').textContent(), 'Visits 1–20 of 23, newest first.');
    await p.getByRole('button', { name: 'Older' }).click();
    await p.locator('#stats-latest-summary', { hasText: 'Visits 21–23 of 23, newest first.' }).waitFor();
    assert.equal(await p.locator('#stats-visit-rows tr').count(), 3);
    assert.equal(await p.locator('#visits-next').isDisabled(), true);
    assert.equal(await p.locator('#visits-prev').isDisabled(), false);

    // A reload lands on the same stats and range.
    await p.reload();
    await p.locator('#stats').waitFor({ state: 'visible' });
    await idle(p);
    assert.equal(await p.locator('input[name="range"]:checked').getAttribute('value'), '24h');
    assert.equal(await p.locator('#total-visits').textContent(), '23');

    // The dashboard: every link, the top links first; a top link opens its stats, back returns.
    await p.goto(`${origin}/#stats`);
    await p.locator('#stats-title', { hasText: 'Stats of all links' }).waitFor();
    await idle(p);
    assert.deepEqual(await totals(p), { visits: '29', unique: '27', count: '38' });
    // Each top link by its code, and its title beside it when it has one (whole in the tooltip).
    const topLinks = await p
      .locator('table.toplist', { has: p.locator('caption', { hasText: /^Top links$/ }) })
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.querySelector('.value a')?.textContent ?? '',
          r.querySelector('.value .top-title')?.getAttribute('title') ?? '',
          r.querySelector('.value .top-title')?.textContent ?? '',
          r.querySelector('td')?.textContent ?? '',
        ]),
      );
    assert.deepEqual(topLinks.slice(0, 2), [
      ['stats-b', LONG_TITLE, LONG_TITLE, '23'],
      ['stats-a', 'Spring campaign', 'Spring campaign', '6'],
    ]);
    assert.match(
      await p.locator('#stats-notes').innerText(),
      /5 visits were counted without details .* they are in the 38 visits of every link, not in these figures\./,
    );
    assert.equal(await p.locator('#stats-latest').isHidden(), true, 'no latest visits over every link');
    await p.getByRole('link', { name: 'Stats of stats-a' }).click();
    await p.locator('#stats-title', { hasText: 'Stats of stats-a' }).waitFor();
    await idle(p);
    assert.equal(await p.locator('#total-visits').textContent(), '6');
    await p.goBack();
    await p.locator('#stats-title', { hasText: 'Stats of all links' }).waitFor();
    await idle(p);
    assert.equal(await p.locator('#total-visits').textContent(), '29');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('after a lookup, an imported link: untracked visits in words, and "No visits in this range"', { skip: missing }, async () => {
    const w = await page();
    const { page: p } = w;
    await p.getByLabel('Short code or original URL').fill('old-one');
    await p.getByLabel('Short code or original URL').press('Enter');
    await p.getByRole('link', { name: 'Stats of old-one' }).click();
    await idle(p);
    assert.deepEqual(await totals(p), { visits: '0', unique: '0', count: '5' });
    assert.equal(
      await p.locator('#stats-notes').innerText(),
      '5 visits were counted without details (imported counts, or visits from before visit tracking or while it was off): they are in the 5 visits since created, not in these figures.',
    );
    assert.equal(await p.locator('#stats-chart').innerText(), 'No visits in this range.');
    assert.equal(await p.locator('#stats-chart svg').count(), 0);
    assert.equal(await p.locator('#stats-latest-summary').textContent(), 'No visits in this range.');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test("the download holds the range's visits under the bots filter, fetched with the key", { skip: missing }, async () => {
    const dir = tempDir();
    const w = await page();
    const { page: p } = w;
    await p.goto(`${origin}/#stats/stats-a?range=7d&bots=include`);
    await idle(p);
    const [file] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Download CSV' }).click()]);
    const path = join(dir, file.suggestedFilename());
    await file.saveAs(path);
    assert.equal(file.suggestedFilename(), 'visits-2024-05-15.csv');
    const lines = readFileSync(path, 'utf8').trim().split(/\r?\n/);
    assert.equal(lines[0], 'short_code,time,referrer,country,browser,os,device,bot,domain,rule');
    // 7 d with bots: the five visits and both bots, oldest first.
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(',').slice(2).join(',')),
      [
        ',US,Other,Other,other,true,,',
        't.co,JP,Safari,iOS,mobile,false,,',
        ',US,Firefox,Linux,desktop,false,,',
        'news.example,DE,Chrome,Windows,desktop,false,,',
        'news.example,DE,Chrome,Windows,desktop,false,,',
        'news.example,DE,Chrome,Windows,desktop,false,,',
        ',US,Other,Other,other,true,,',
      ],
    );
    const [jsonl] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Download JSONL' }).click()]);
    await jsonl.saveAs(join(dir, 'v.jsonl'));
    const events = readFileSync(join(dir, 'v.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { short_code: string; bot: boolean; domain: string | null });
    assert.equal(events.length, 7);
    assert.ok(events.every((e) => e.short_code === 'stats-a' && e.domain === null));
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test("the chart: the pointer and the arrow keys show a bucket's date and figures; its table is in the accessibility tree", { skip: missing }, async () => {
    const w = await page({ width: 1280 });
    const { page: p } = w;
    await p.goto(`${origin}/#stats/stats-a?range=7d&bots=exclude`);
    await idle(p);
    const svg = p.locator('#stats-chart svg');
    const tip = p.locator('.chart-tip');
    // The last bar (today) under the pointer.
    await svg.scrollIntoViewIfNeeded();
    const box = (await p.locator('#stats-chart rect.bar').last().boundingBox())!;
    await p.mouse.move(box.x + box.width / 2, box.y + box.height - 2);
    assert.equal(await tip.textContent(), 'Wed, May 15, 2024: 4 visits, 2 unique visitors');
    assert.equal(await p.locator('#stats-chart .cursor').getAttribute('visibility'), 'visible');
    await p.mouse.move(0, 0);
    assert.equal(await tip.isHidden(), true);
    // The keyboard: focus reads the last bucket, arrows move, Home goes to the first.
    await svg.focus();
    assert.equal(await tip.textContent(), 'Wed, May 15, 2024: 4 visits, 2 unique visitors');
    await p.keyboard.press('ArrowLeft');
    assert.equal(await tip.textContent(), 'Tue, May 14, 2024: 0 visits, 0 unique visitors');
    await p.keyboard.press('ArrowLeft');
    assert.equal(await tip.textContent(), 'Mon, May 13, 2024: 1 visit, 1 unique visitor');
    await p.keyboard.press('Home');
    assert.equal(await tip.textContent(), 'Thu, May 9, 2024: 0 visits, 0 unique visitors');
    // The chart says what it is; the table has every bucket, reachable by a screen reader.
    assert.equal(await svg.getAttribute('role'), 'img');
    assert.match((await svg.getAttribute('aria-label'))!, /^Visits per day, 7 days: 5 visits in all\./);
    const table = p.getByRole('table', { name: 'Visits per day' });
    assert.equal(await table.getByRole('row').count(), 8);
    assert.deepEqual(await table.getByRole('row').last().getByRole('cell').allTextContents(), ['4', '2']);
    // Labels stay 12 px whatever the width: the SVG is drawn at the box's width, not scaled.
    assert.equal(await svg.getAttribute('width'), String(Math.floor((await p.locator('#stats-chart .chart-frame').boundingBox())!.width)));
    assert.equal(await svg.evaluate((s) => getComputedStyle(s.querySelector('text')!).fontSize), '12px');
    assert.deepEqual(unexpected(w), []);
    await w.context.close();
  });

  test('at 375 and 1280 px, light and dark: the stats and the dashboard fit, read well and pass axe-core', { skip: missing }, async () => {
    // One page for the four: the viewport and the scheme change under it (the chart redraws at its
    // box's width), and each view is loaded afresh from its fragment.
    const w = await page();
    const { page: p } = w;
    for (const width of [375, 1280]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        await p.setViewportSize({ width, height: 800 });
        await p.emulateMedia({ colorScheme });
        // A range without visits: the sentence in a small box where the chart would be.
        await p.goto(`${origin}/#stats/old-one?range=30d&bots=exclude`);
        await p.locator('#stats-title', { hasText: 'Stats of old-one' }).waitFor();
        const empty = p.locator('#stats-chart > p.empty');
        await empty.waitFor();
        await idle(p);
        const where = `no visits at ${width} px ${colorScheme}`;
        assert.equal(await empty.textContent(), 'No visits in this range.', where);
        const chart = (await p.locator('#stats-chart').boundingBox())!;
        const box = (await empty.boundingBox())!;
        assert.ok(chart.height < 80 && Math.abs(chart.height - box.height) < 1, `the box is ${box.height} px high, its place ${chart.height}, ${where}`);
        assert.notEqual(await empty.evaluate((e) => getComputedStyle(e).borderTopStyle), 'none', where);
        assert.equal(await overflow(p), 0, where);
        assert.deepEqual(await seriousViolations(p), [], where);
        await shot(p, `stats-empty-${colorScheme}`);
        for (const [name, fragment, title] of [
          ['link', '#stats/stats-a?range=30d&bots=exclude', 'Stats of stats-a'],
          ['dashboard', '#stats?range=30d&bots=exclude', 'Stats of all links'],
        ] as const) {
          await p.goto(`${origin}/${fragment}`);
          // The title changes with the view, as its old chart goes: the chart waited on is the new one.
          await p.locator('#stats-title', { hasText: title }).waitFor();
          await p.locator('#stats-chart svg').waitFor();
          await idle(p);
          const where = `${name} at ${width} px ${colorScheme}`;
          assert.equal(await overflow(p), 0, where);
          if (name === 'dashboard') {
            // A long title is cut with an ellipsis in the room its list has; the code beside it never is.
            const cut = await p
              .locator('.top-title', { hasText: /^Autumn newsletter/ })
              .evaluate((t) => ({ cut: t.scrollWidth > t.clientWidth, shown: t.clientWidth, code: t.previousElementSibling!.clientWidth }));
            assert.ok(cut.cut && cut.shown > 40, `${JSON.stringify(cut)}, ${where}`);
            const code = p.getByRole('link', { name: 'Stats of stats-b' });
            assert.equal(await code.evaluate((a) => a.scrollWidth <= a.getBoundingClientRect().width + 0.5), true, where);
          }
          // The x labels never overlap, and none leaves the chart.
          const labels = await p
            .locator('#stats-chart .labels text')
            .evaluateAll((texts) => texts.map((t) => t.getBoundingClientRect()).map((r) => [r.left, r.right]));
          assert.ok(labels.length >= 3, `${labels.length} labels, ${where}`);
          for (let i = 1; i < labels.length; i++) assert.ok(labels[i]![0]! > labels[i - 1]![1]!, `labels ${i - 1} and ${i} apart, ${where}`);
          const frame = (await p.locator('#stats-chart .chart-frame').boundingBox())!;
          assert.ok(labels[0]![0]! >= frame.x - 0.5 && labels[labels.length - 1]![1]! <= frame.x + frame.width + 0.5, where);
          // Bars in the accent colour of the scheme; against the card, bars and bar-list bars reach
          // 3:1 (WCAG's non-text contrast) and the axis labels 4.5:1 (axe-core leaves SVG text alone).
          const fill = await p
            .locator('#stats-chart rect.bar')
            .first()
            .evaluate((r) => getComputedStyle(r).fill);
          assert.equal(fill, colorScheme === 'dark' ? 'rgb(122, 162, 255)' : 'rgb(43, 89, 195)', where);
          const card = await p.locator('#stats').evaluate((s) => getComputedStyle(s).backgroundColor);
          const share = await p
            .locator('table.toplist rect.bar')
            .first()
            .evaluate((r) => getComputedStyle(r).fill);
          const label = await p
            .locator('#stats-chart .labels text')
            .first()
            .evaluate((t) => getComputedStyle(t).fill);
          assert.ok(contrast(fill, card) >= 3, `bars ${fill} on ${card}: ${contrast(fill, card)}, ${where}`);
          assert.ok(contrast(share, card) >= 3, `list bars ${share} on ${card}, ${where}`);
          assert.ok(contrast(label, card) >= 4.5, `labels ${label} on ${card}: ${contrast(label, card)}, ${where}`);
          assert.deepEqual(await seriousViolations(p), [], where);
          await shot(p, `stats-${name}-${colorScheme}`);
        }
        assert.deepEqual(unexpected(w), [], `${width} px ${colorScheme}`);
      }
    }
    await w.context.close();
  });
});
