/**
 * A `User-Agent` as a visit records it: the browser, OS and device families and the bot flag,
 * never the text itself (docs/architecture.md, the visit classification).
 *
 * The families are few on purpose: the ones a link's owner asks about, and `Other`. Each is the
 * first row of its table whose pattern the string holds, so the order of the rows is the rule: a
 * browser built on Chrome names itself before `Chrome/` is looked at (Edge sends `Edg/`, Opera
 * `OPR/`, Samsung Internet `SamsungBrowser/`, and each of them `Chrome/` too); an iPhone's string
 * says `like Mac OS X`, so iOS is decided before macOS; Android's says `Linux`, so Android comes
 * before Linux. A test holds the tables to the `bowser` package over a thousand real browsers.
 *
 * This runs on the redirect's path, so it is asked through a cache per distinct string
 * (`createUserAgentClassifier`): a popular client costs one `Map` lookup, and only a string not
 * seen lately pays for the regular expressions. The results are shared frozen objects, one per
 * combination of families, so the cache holds references and no copies.
 */
import { isBotAgent } from './bots.ts';
import { MAX_REMEMBERED_LENGTH, rememberRecent } from './recent-texts.ts';

export type Browser = 'Chrome' | 'Safari' | 'Firefox' | 'Edge' | 'Opera' | 'Samsung Internet' | 'Other';
export type Os = 'Windows' | 'macOS' | 'iOS' | 'Android' | 'Linux' | 'ChromeOS' | 'Other';
export type Device = 'desktop' | 'mobile' | 'tablet' | 'other';

/** What a visit keeps of a `User-Agent`. Without one, the families are `null` (and bot false). */
export interface UserAgentClass {
  readonly browser: Browser | null;
  readonly os: Os | null;
  readonly device: Device | null;
  readonly bot: boolean;
}

/** Browsers, first match wins: the ones built on Chrome or Safari before the engines they name. */
const BROWSERS: readonly (readonly [RegExp, Browser])[] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOPT\/|\bOPiOS\/|^Opera\/|\bOpera /, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  // Other browsers that carry an engine's token too: their users are not Chrome's or Safari's.
  [
    /\bYaBrowser\/|\bUCBrowser\/|\bVivaldi\/|\bGSA\/|\bDdg\/|\bDuckDuckGo\/|\bElectron\/|\bSilk\/|\bMiuiBrowser\/|\bHuaweiBrowser\/|\bQQBrowser\/|\bWhale\/|\bPuffin\/|\bFocus\//,
    'Other',
  ],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/Chrome\/|\bCriOS\/|\bChromium\//, 'Chrome'],
  [/\bSafari\/|\bAppleWebKit\/.*\bMobile\//, 'Safari'],
];

/** Operating systems, first match wins. */
const SYSTEMS: readonly (readonly [RegExp, Os])[] = [
  // Systems that name another underneath: Windows Phone's strings say Android, a TV's Linux.
  [/\bWindows Phone\b|\bTizen\b|\bWeb0S\b|\bKAIOS\b/i, 'Other'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** Devices, first match wins; an OS of the desktop's family with no other sign is a desktop. */
const DEVICES: readonly (readonly [RegExp, Device])[] = [
  [/\bSMART-?TV\b|\bTV\b|\bCrKey\b|\bAppleTV\b|\bWeb0S\b|\bPlayStation\b|\bXbox\b|\bNintendo\b/i, 'other'],
  [/\biPad\b|\bTablet\b|\bKindle\b|\bSilk\//, 'tablet'],
  [/\biPhone\b|\biPod\b|\bMobile\b|\bWindows Phone\b|\bMobi\b/, 'mobile'],
  // An Android string without `Mobile` is a tablet's: Android's own rule for the browsers on it.
  [/\bAndroid\b/, 'tablet'],
];

const DESKTOP_SYSTEMS: ReadonlySet<Os> = new Set(['Windows', 'macOS', 'Linux', 'ChromeOS']);

function firstOf<T>(table: readonly (readonly [RegExp, T])[], ua: string, none: T): T {
  for (const [pattern, value] of table) if (pattern.test(ua)) return value;
  return none;
}

/** One frozen object per combination, so every caller and the cache share them. */
const SHARED = new Map<string, UserAgentClass>();

function shared(browser: Browser | null, os: Os | null, device: Device | null, bot: boolean): UserAgentClass {
  const key = `${browser}|${os}|${device}|${bot}`;
  let found = SHARED.get(key);
  if (found === undefined) {
    found = Object.freeze({ browser, os, device, bot });
    SHARED.set(key, found);
  }
  return found;
}

/**
 * No `User-Agent` (or an empty one) says nothing of the browser, so the families are `null`; it is
 * not called a bot either, as `isbot` does not: a bot that hides its name is no more a bot for it.
 */
export const NO_USER_AGENT: UserAgentClass = shared(null, null, null, false);

/** The classes of `ua`, computed (no cache). */
export function classifyUserAgent(ua: string | undefined): UserAgentClass {
  if (ua === undefined || ua.trim() === '') return NO_USER_AGENT;
  const os = firstOf(SYSTEMS, ua, 'Other');
  const device = firstOf(DEVICES, ua, DESKTOP_SYSTEMS.has(os) ? 'desktop' : 'other');
  return shared(firstOf(BROWSERS, ua, 'Other'), os, device, isBotAgent(ua));
}

/** Strings longer than this are classified but not remembered (recent-texts.ts). */
export const MAX_CACHED_LENGTH = MAX_REMEMBERED_LENGTH;

/**
 * `classify` (by default `classifyUserAgent`; a test counts its calls) behind a cache of the last
 * `max` distinct strings (`rememberRecent`, recent-texts.ts).
 */
export function createUserAgentClassifier(
  max = 4096,
  classify: (ua: string) => UserAgentClass = classifyUserAgent,
): (ua: string | undefined) => UserAgentClass {
  const remembered = rememberRecent(classify, max);
  return function classifyCached(ua) {
    return ua === undefined ? NO_USER_AGENT : remembered(ua);
  };
}
