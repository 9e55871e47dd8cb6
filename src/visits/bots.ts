/**
 * Which `User-Agent`s are bots: crawlers, link-preview fetchers, monitors, scanners and HTTP
 * libraries such as curl. The judgement is the one the `isbot` package makes (a test holds this
 * file to it over every agent of the crawler-user-agents list and a thousand real browsers), but
 * the rules are ours, and fewer than a list of every bot ever seen:
 *
 * 1. A browser announces itself as `Mozilla/<n.n> (<platform>…` (old Opera as `Opera/`). Anything
 *    else is a program — curl, a library, a feed reader, an app's background fetch — and a
 *    program that follows a short link is not a person reading it.
 * 2. `Mozilla/5.0 (compatible; …)` without Internet Explorer's `MSIE` or `Trident` is the form
 *    crawlers took from old IE; no browser of this century sends it.
 * 3. A program dressed as a browser nearly always leaves what a browser never sends: a contact (a
 *    URL, a domain, an e-mail address, a leading `+`), or one of the words of `BOT_WORDS`.
 *
 * The words are matched anywhere and in any case, as one regular expression, so a miss costs one
 * scan of the string; the caller remembers the answer per distinct string (user-agent.ts).
 */

/** Words no browser sends but bots do: the kinds of program first, then services known by name. */
const BOT_WORDS: readonly string[] = [
  // What a program calls itself.
  '(?<!cu)bot',
  'crawl',
  'spider',
  'slurp',
  'scrap',
  'fetch',
  'preview',
  'headless',
  'archiv',
  'index',
  'monitor',
  'uptime',
  'check',
  'scan',
  'survey',
  'audit',
  'inspect',
  'validat',
  'synthetic',
  'agent',
  'proxy',
  'feed',
  'rss',
  'render',
  'capture',
  'grab',
  'sitemap',
  'favicon',
  'research',
  'optimi[sz]er',
  'analy[sz]',
  'download',
  // HTTP libraries, tools and test drivers.
  'http',
  'curl',
  'wget',
  'python',
  'java(?!;)',
  'perl',
  'php',
  'ruby',
  'okhttp',
  'axios',
  'node-fetch',
  'undici',
  'libwww',
  'lwp',
  'httrack',
  'indy library',
  'postman',
  'insomnia',
  'selenium',
  'playwright',
  'puppeteer',
  'phantomjs',
  'webdriver',
  'cypress',
  'lighthouse',
  // Google's many fetchers, but not the Google app's in-app browser or a Pixel phone.
  'google(?!app| pixel|wv)',
  // Monitors, scanners and services that send a browser's string with their name after it.
  'pingdom',
  'datadog',
  'newrelic',
  'thousandeyes',
  'ptst',
  'rigor',
  'prtg',
  'sucuri',
  'nikto',
  'acunetix',
  'openvas',
  'netcraft',
  'watchtowr',
  'hardenize',
  'securityheaders',
  'siteimprove',
  'silktide',
  'dareboost',
  'cookiehub',
  'hotjar',
  'marketgoo',
  'linktiger',
  'collapsify',
  'attracta',
  'datanyze',
  'dataprovider',
  'outbrain',
  'twingly',
  'daum',
  'infegy',
  'appinsights',
  'criticalcss',
  'foregenix',
  'zotero',
  'readable',
  'printfriendly',
  'newsnow',
  'upday',
  'inoreader',
  'feeder',
  'splash',
  'claude',
  'manus-user',
  'sindup',
  'keydrop',
  'adbeat',
  'scope3',
  '\\bdlc/',
];

const WORDS = new RegExp(BOT_WORDS.join('|'), 'i');

/** A way to be reached: a URL, a domain, an e-mail address, a `+` before a name or address. */
const CONTACT = /https?:|www\.|[\w.+-]@[\w-]+\.[a-z]|\((?:at|dot)\)|\[(?:at|dot)\]|mailto|[(;]\s*\+|\.(?:com|net|org|io|co|ai|de|fr|ru|uk|info|app|dev)\b/i;

/** The start of every browser's string. */
const BROWSER_START = /^(?:Mozilla\/\d\.\d \(|Opera\/\d)/;

/** The crawlers' imitation of Internet Explorer, told from the real one by its missing `MSIE`. */
const COMPATIBLE = /^Mozilla\/\d\.\d \(compatible;/;
const INTERNET_EXPLORER = /MSIE |Trident\//;

/** True when `ua` is a bot's (rules 1–3 above). */
export function isBotAgent(ua: string): boolean {
  if (!BROWSER_START.test(ua)) return true;
  if (COMPATIBLE.test(ua) && !INTERNET_EXPLORER.test(ua)) return true;
  return CONTACT.test(ua) || WORDS.test(ua);
}
