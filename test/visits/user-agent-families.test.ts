/**
 * The `User-Agent` families and the bot flag on a table of strings picked by hand
 * (docs/architecture.md, the visit classification): each browser family on each system, the
 * in-app browsers of chat and social apps (people, not bots), HTTP libraries and crawlers (bots),
 * and no `User-Agent` at all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyUserAgent, NO_USER_AGENT, type UserAgentClass } from '../../src/visits/user-agent.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const ANDROID_WEBVIEW =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36';
const WINDOWS_ELECTRON = (app: string): string =>
  `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) ${app} Chrome/120.0.6099.291 Electron/28.2.10 Safari/537.36`;

const person = (browser: UserAgentClass['browser'], os: UserAgentClass['os'], device: UserAgentClass['device']): UserAgentClass => ({
  browser,
  os,
  device,
  bot: false,
});
const program = (
  browser: UserAgentClass['browser'] = 'Other',
  os: UserAgentClass['os'] = 'Other',
  device: UserAgentClass['device'] = 'other',
): UserAgentClass => ({ browser, os, device, bot: true });

const CASES: readonly [string, UserAgentClass][] = [
  // The families.
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', person('Chrome', 'Windows', 'desktop')],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    person('Safari', 'macOS', 'desktop'),
  ],
  [`${IPHONE} Version/17.4 Mobile/15E148 Safari/604.1`, person('Safari', 'iOS', 'mobile')],
  [
    'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    person('Safari', 'iOS', 'tablet'),
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
    person('Chrome', 'Android', 'mobile'),
  ],
  ['Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', person('Chrome', 'Android', 'tablet')],
  [
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
    person('Samsung Internet', 'Android', 'mobile'),
  ],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', person('Firefox', 'Windows', 'desktop')],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', person('Firefox', 'Linux', 'desktop')],
  [`${IPHONE} FxiOS/125.0 Mobile/15E148 Safari/605.1.15`, person('Firefox', 'iOS', 'mobile')],
  [`${IPHONE} CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1`, person('Chrome', 'iOS', 'mobile')],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
    person('Edge', 'Windows', 'desktop'),
  ],
  [
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 EdgA/124.0.0.0',
    person('Edge', 'Android', 'mobile'),
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 OPR/110.0.0.0',
    person('Opera', 'Windows', 'desktop'),
  ],
  ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', person('Chrome', 'ChromeOS', 'desktop')],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 YaBrowser/24.4.0.0 Safari/537.36',
    person('Other', 'Windows', 'desktop'),
  ],
  [
    'Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/124.2.1 like Chrome/124.0.6367.82 Safari/537.36',
    person('Other', 'Android', 'tablet'),
  ],
  ['Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko', person('Other', 'Windows', 'desktop')],
  ['Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.2; Trident/6.0)', person('Other', 'Windows', 'desktop')],
  [
    'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36',
    person('Samsung Internet', 'Other', 'other'),
  ],
  ['Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)', person('Other', 'Other', 'other')],
  // A phone maker whose name ends in "bot".
  [
    'Mozilla/5.0 (Linux; Android 10; Cubot X20) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/90.0.4430.91 Mobile Safari/537.36',
    person('Chrome', 'Android', 'mobile'),
  ],
  // In-app browsers: a person who tapped a link inside an app.
  [
    `${IPHONE} Mobile/15E148 [FBAN/FBIOS;FBAV/460.0.0.40.106;FBBV/590000000;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/0]`,
    person('Safari', 'iOS', 'mobile'),
  ],
  [`${ANDROID_WEBVIEW} [FB_IAB/FB4A;FBAV/460.0.0.48.109;]`, person('Chrome', 'Android', 'mobile')],
  [`${IPHONE} Mobile/15E148 Instagram 329.0.3.30.89 (iPhone15,2; iOS 17_4; en_US; en; scale=3.00; 1179x2556; 593000000)`, person('Safari', 'iOS', 'mobile')],
  [`${IPHONE} Mobile/15E148 [LinkedInApp]/9.29.7447`, person('Safari', 'iOS', 'mobile')],
  [`${IPHONE} Mobile/15E148 Twitter for iPhone/10.40`, person('Safari', 'iOS', 'mobile')],
  [`${IPHONE} Mobile/15E148 [Pinterest/iOS]`, person('Safari', 'iOS', 'mobile')],
  [`${IPHONE} Mobile/15E148 Snapchat/13.0.0.40 (like Safari/8617.1.17.10.9, panda)`, person('Safari', 'iOS', 'mobile')],
  [`${ANDROID_WEBVIEW} Telegram-Android/10.11.1 (Google Pixel 8; Android 14; SDK 34; AVERAGE)`, person('Chrome', 'Android', 'mobile')],
  [`${ANDROID_WEBVIEW} WhatsApp/2.24.9.78`, person('Chrome', 'Android', 'mobile')],
  [WINDOWS_ELECTRON('Slack/4.38.115'), person('Other', 'Windows', 'desktop')],
  [WINDOWS_ELECTRON('discord/1.0.9040'), person('Other', 'Windows', 'desktop')],
  [WINDOWS_ELECTRON('Teams/1.7.00.7956'), person('Other', 'Windows', 'desktop')],
  // Programs: HTTP libraries, tools, crawlers, monitors, preview fetchers.
  ['curl/8.5.0', program()],
  ['Wget/1.21.4', program()],
  ['python-requests/2.31.0', program()],
  ['Go-http-client/1.1', program()],
  ['okhttp/4.12.0', program()],
  ['node', program()],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36', program('Chrome', 'Linux', 'desktop')],
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', program()],
  [
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    program('Chrome', 'Android', 'mobile'),
  ],
  ['Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)', program()],
  [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.7204.168 Safari/537.36 DatadogSynthetics',
    program('Chrome', 'Linux', 'desktop'),
  ],
  ['facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)', program()],
  ['WhatsApp/2.23.20.0 A', program()],
  ['Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com', program('Other', 'Windows', 'desktop')],
];

test('each string gets its families and its bot flag', () => {
  for (const [ua, expected] of CASES) assert.deepEqual({ ...classifyUserAgent(ua) }, expected, ua);
});

test('no User-Agent, or an empty one, has null families and is no bot', () => {
  const none = { browser: null, os: null, device: null, bot: false };
  for (const ua of [undefined, '', '   ']) {
    assert.deepEqual({ ...classifyUserAgent(ua) }, none, JSON.stringify(ua));
    assert.equal(classifyUserAgent(ua), NO_USER_AGENT);
  }
});

test('the results are frozen and shared: one object per combination of families', () => {
  const a = classifyUserAgent(CASES[0]![0]);
  const b = classifyUserAgent('Mozilla/5.0 (Windows NT 11.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36');
  assert.ok(Object.isFrozen(a));
  assert.equal(a, b);
  assert.throws(() => {
    (a as { bot: boolean }).bot = true;
  }, TypeError);
});
