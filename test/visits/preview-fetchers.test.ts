/**
 * Link-preview fetchers (docs/architecture.md, the visit classification): the strings the chat and
 * social apps' fetchers send are recognized, and are bots; the in-app browsers of the same apps —
 * a person who tapped the link — are not, and neither is any other browser or program.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import crawlers from 'crawler-user-agents';
import { isPreviewFetcher, PREVIEW_FETCHERS } from '../../src/visits/preview-fetchers.ts';
import { classifyUserAgent } from '../../src/visits/user-agent.ts';

/** What each fetcher sends, as the services publish it. */
const FETCHERS: readonly string[] = [
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Slack-ImgProxy (+https://api.slack.com/robots)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'facebookexternalhit/1.1;line-poker/1.0',
  'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  'Facebot/1.0',
  'Twitterbot/1.0',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'TelegramBot (like TwitterBot)',
  'WhatsApp/2.23.20.0 A',
  'WhatsApp/2.2337.7 i',
  'WhatsApp',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
  'Mozilla/5.0 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/56.0.2924.87 Safari/537.36 Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)',
  'http.rb/5.1.1 (Mastodon/4.2.8; +https://mastodon.social/)',
  'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)',
  'Synapse (bot; +https://github.com/matrix-org/synapse)',
  'Pinterest/0.2 (+http://www.pinterest.com/bot.html)',
  'Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)',
  'Snap URL Preview Service; bot; snapchat; https://developers.snap.com/robots',
  'Mozilla/5.0 (compatible; vkShare; +http://vk.com/dev/Share)',
  'facebookexternalhit/1.1; kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap/33984',
  'Mattermost-Bot/1.1',
  'Mozilla/5.0 (compatible; Yahoo Link Preview; https://help.yahoo.com/kb/mail/yahoo-link-preview-SLN23615.html)',
  'Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)',
  'Iframely/1.3.1 (+https://iframely.com/docs/about) Atlassian',
];

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const ANDROID_WEBVIEW =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36';
const ELECTRON = (app: string): string =>
  `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) ${app} Chrome/120.0.6099.291 Electron/28.2.10 Safari/537.36`;

/** People: the same apps' in-app browsers and desktop clients, and plain browsers and programs. */
const NOT_FETCHERS: readonly (string | undefined)[] = [
  `${IPHONE} [FBAN/FBIOS;FBAV/460.0.0.40.106;FBBV/590000000;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/0]`,
  `${ANDROID_WEBVIEW} [FB_IAB/FB4A;FBAV/460.0.0.48.109;]`,
  `${ANDROID_WEBVIEW} MetaIAB Facebook`,
  `${IPHONE} Instagram 329.0.3.30.89 (iPhone15,2; iOS 17_4; en_US; en; scale=3.00; 1179x2556; 593000000)`,
  `${IPHONE} [LinkedInApp]/9.29.7447`,
  `${IPHONE} Twitter for iPhone/10.40`,
  `${ANDROID_WEBVIEW} TwitterAndroid`,
  `${IPHONE} [Pinterest/iOS]`,
  `${ANDROID_WEBVIEW} [Pinterest/Android]`,
  `${IPHONE} Snapchat/13.0.0.40 (like Safari/8617.1.17.10.9, panda)`,
  `${ANDROID_WEBVIEW} Telegram-Android/10.11.1 (Google Pixel 8; Android 14; SDK 34; AVERAGE)`,
  `${ANDROID_WEBVIEW} WhatsApp/2.24.9.78`,
  `${IPHONE} KAKAOTALK 10.6.5`,
  `${ANDROID_WEBVIEW} Line/14.5.1`,
  ELECTRON('Slack/4.38.115'),
  ELECTRON('discord/1.0.9040'),
  ELECTRON('Teams/1.7.00.7956'),
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'curl/8.5.0',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  // The exact token, not a word that contains it in another case.
  'slackbot-linkexpanding 1.0',
  'whatsapp/2.23.20.0 A',
  '',
  undefined,
];

test('every preview fetcher is recognized, and is a bot', () => {
  for (const ua of FETCHERS) {
    assert.equal(isPreviewFetcher(ua), true, ua);
    assert.equal(classifyUserAgent(ua).bot, true, ua);
  }
});

test('every token of the table is in one of the fetchers above', () => {
  for (const { token } of PREVIEW_FETCHERS)
    assert.ok(
      FETCHERS.some((ua) => ua.includes(token)),
      token,
    );
});

test('in-app browsers, desktop clients, browsers and other programs are not preview fetchers', () => {
  for (const ua of NOT_FETCHERS) assert.equal(isPreviewFetcher(ua), false, String(ua));
});

test('every agent of crawler-user-agents that holds a token is a bot by our classifier too', () => {
  const matched = [...new Set(crawlers.flatMap((c) => c.instances))].filter((ua) => isPreviewFetcher(ua));
  assert.ok(matched.length >= 20, `${matched.length} fetchers found`);
  for (const ua of matched) assert.equal(classifyUserAgent(ua).bot, true, ua);
});
