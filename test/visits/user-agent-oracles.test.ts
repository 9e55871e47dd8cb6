/**
 * The `User-Agent` classifier against packages nobody here wrote (docs/architecture.md, the visit
 * classification): `isbot` judges the bot flag and `bowser` the browser, OS and device families,
 * over every agent of `crawler-user-agents` (its `instances`: bots, and a few apps it lists) and
 * every distinct agent of the data set `user-agents` ships (real browsers, weighted by use). The
 * flag must agree on at least 99 % of each list, each family on at least 98 % of the agents both
 * call human. Every disagreement is printed; the ones we make on purpose are in KNOWN, each with
 * its reason, and checked one by one so a change on either side shows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Bowser from 'bowser';
import crawlers from 'crawler-user-agents';
import { isbot } from 'isbot';
import { classifyUserAgent, type Browser, type Device, type Os, type UserAgentClass } from '../../src/visits/user-agent.ts';

// The data set behind `new UserAgent()`, read whole: the package draws from it with Math.random,
// which no seed controls, and every distinct string is better than a random few thousand.
const require = createRequire(import.meta.url);
const browserRows = JSON.parse(readFileSync(join(dirname(require.resolve('user-agents')), 'user-agents.json'), 'utf8')) as { userAgent: string }[];

const LISTS: Record<string, readonly string[]> = {
  'crawler-user-agents': [...new Set(crawlers.flatMap((c) => c.instances))],
  'user-agents': [...new Set(browserRows.map((r) => r.userAgent))],
};

/** bowser's names mapped onto our families; a name not here is `Other`. */
const BROWSERS: Record<string, Browser> = {
  Chrome: 'Chrome',
  Chromium: 'Chrome',
  Safari: 'Safari',
  Firefox: 'Firefox',
  'Microsoft Edge': 'Edge',
  Opera: 'Opera',
  'Opera Touch': 'Opera',
  'Samsung Internet for Android': 'Samsung Internet',
};
const SYSTEMS: Record<string, Os> = { Windows: 'Windows', macOS: 'macOS', iOS: 'iOS', Android: 'Android', Linux: 'Linux', 'Chrome OS': 'ChromeOS' };
const DEVICES: Record<string, Device> = { desktop: 'desktop', mobile: 'mobile', tablet: 'tablet' };

type Family = 'browser' | 'os' | 'device';

function bowserFamilies(ua: string): Record<Family, string> {
  const parsed = Bowser.parse(ua);
  return {
    browser: BROWSERS[parsed.browser.name ?? ''] ?? 'Other',
    os: SYSTEMS[parsed.os.name ?? ''] ?? 'Other',
    device: DEVICES[parsed.platform.type ?? ''] ?? 'other',
  };
}

interface Known {
  ua: string;
  /** What we answer. */
  ours: Partial<UserAgentClass>;
  /** What the oracle answers instead. */
  oracle: Partial<Record<Family | 'bot', string | boolean>>;
  reason: string;
}

/** The differences we make on purpose. */
const KNOWN: readonly Known[] = [
  {
    ua: 'Mozilla/5.0 (X11; Linux x86_64) Miniature.io/6.0 AppleWebKit/537.36 (KHTML, like Gecko) QtWebEngine/5.12.4 Chrome/69.0.3497.128 Safari/537.36',
    ours: { bot: true },
    oracle: { bot: false },
    reason: 'a screenshot service, and it names its domain: no browser does',
  },
  {
    ua: 'Dalvik/2.1.0 (Linux; U; Android 11; SM-A115F Build/RP1A.200720.012)',
    ours: { bot: true },
    oracle: { bot: false },
    reason: "Android's HTTP library: an app fetching in the background, not a person in a browser",
  },
  {
    ua: 'Mozilla/5.0 (Linux; Android 17) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/153.0.0.0 Mobile DuckDuckGo/5 Safari/537.36',
    ours: { browser: 'Other' },
    oracle: { browser: 'Chrome' },
    reason: "DuckDuckGo's own browser; bowser names it so on iOS and calls it Chrome only on Android, where its string also has Chrome/",
  },
  ...[
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 newsai/1.0 Safari/537.36',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko; compatible; BW/1.2; rb.gy/oupwis) Chrome/124.0.0.0 Safari/537.36',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.26 Safari/537.36 TestLocally/1.0',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; GeedoShopProductFinder) Chrome/142.0.0.0 Safari/537.36',
  ].map((ua) => ({
    ua,
    ours: { bot: false },
    oracle: { bot: true },
    reason:
      "a browser's string with a product's name added and no word bots use: isbot lists such names one by one, we list the kinds of program and the services most seen",
  })),
];

function agreement(t: TestContext, label: string, agents: readonly string[], same: (ua: string) => boolean, show: (ua: string) => string): number {
  const differ = agents.filter((ua) => !same(ua));
  t.diagnostic(`${label}: ${agents.length - differ.length} of ${agents.length} agree, ${differ.length} differ`);
  for (const ua of differ) t.diagnostic(`  ${show(ua)}  ${ua}`);
  return (agents.length - differ.length) / agents.length;
}

test('the lists are read whole', () => {
  assert.ok(LISTS['crawler-user-agents']!.length > 1500, `${LISTS['crawler-user-agents']!.length} crawler agents`);
  assert.ok(LISTS['user-agents']!.length > 500, `${LISTS['user-agents']!.length} browser agents`);
});

for (const [name, agents] of Object.entries(LISTS)) {
  test(`the bot flag agrees with isbot on at least 99 % of ${name}`, (t) => {
    const share = agreement(
      t,
      `bot (${name})`,
      agents,
      (ua) => classifyUserAgent(ua).bot === isbot(ua),
      (ua) => `isbot ${isbot(ua)}, ours ${classifyUserAgent(ua).bot}`,
    );
    assert.ok(share >= 0.99, `${(share * 100).toFixed(2)} % agree`);
  });
}

const humans = [...new Set(Object.values(LISTS).flat())].filter((ua) => !isbot(ua) && !classifyUserAgent(ua).bot);

for (const family of ['browser', 'os', 'device'] as const) {
  test(`the ${family} family agrees with bowser on at least 98 % of the human agents`, (t) => {
    assert.ok(humans.length > 900, `${humans.length} human agents`);
    const share = agreement(
      t,
      family,
      humans,
      (ua) => classifyUserAgent(ua)[family] === bowserFamilies(ua)[family],
      (ua) => `bowser ${bowserFamilies(ua)[family]}, ours ${classifyUserAgent(ua)[family]}`,
    );
    assert.ok(share >= 0.98, `${(share * 100).toFixed(2)} % agree`);
  });
}

test('the known differences are the ones we make, for the reasons given', () => {
  for (const known of KNOWN) {
    const ours = classifyUserAgent(known.ua);
    for (const [key, value] of Object.entries(known.ours)) assert.equal(ours[key as keyof UserAgentClass], value, `${known.reason}: ours ${key}`);
    for (const [key, value] of Object.entries(known.oracle)) {
      const theirs = key === 'bot' ? isbot(known.ua) : bowserFamilies(known.ua)[key as Family];
      assert.equal(theirs, value, `${known.reason}: the oracle's ${key}`);
    }
  }
});
