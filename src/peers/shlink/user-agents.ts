/**
 * A `User-Agent` for a Shlink visit (docs/compat.md). A visit keeps the browser and OS families of
 * its client, never the text; Shlink's clients parse `userAgent` themselves (the web client with
 * `bowser`), so each visit is shown with a typical string of its families, one that parses back
 * to them. A test holds every combination to this service's own classifier and the real ones to
 * `bowser`.
 */
import type { Browser, Os } from '../../visits/event.ts';

/** The platform token of each OS, as its most common browser sends it. */
const PLATFORMS: Readonly<Record<Os, string>> = {
  Windows: 'Windows NT 10.0; Win64; x64',
  macOS: 'Macintosh; Intel Mac OS X 10_15_7',
  iOS: 'iPhone; CPU iPhone OS 17_5 like Mac OS X',
  Android: 'Linux; Android 14; Pixel 8',
  Linux: 'X11; Linux x86_64',
  ChromeOS: 'X11; CrOS x86_64 15886.44.0',
  // KaiOS: no family of ours, and no browser's either (bowser names no OS, the web client says "Others").
  Other: 'Mobile; KAIOS/3.0',
};

const WEBKIT = 'AppleWebKit/537.36 (KHTML, like Gecko)';
const MOBILE_WEBKIT = 'AppleWebKit/605.1.15 (KHTML, like Gecko)';

/**
 * The string of a browser on a platform: `mobile` for Android (its browsers add `Mobile`), `ios`
 * for iOS, where every browser is Safari's engine and names itself with its own token.
 */
type Template = (platform: string, os: Os) => string;

const chromeLike =
  (token: string, iosToken: string): Template =>
  (platform, os) => {
    if (os === 'iOS') return `Mozilla/5.0 (${platform}) ${MOBILE_WEBKIT} ${iosToken} Mobile/15E148 Safari/604.1`;
    const mobile = os === 'Android' ? 'Mobile ' : '';
    return `Mozilla/5.0 (${platform}) ${WEBKIT} Chrome/126.0.0.0 ${mobile}Safari/537.36${token}`;
  };

const BROWSERS: Readonly<Record<Browser, Template>> = {
  Chrome: chromeLike('', 'CriOS/126.0.6478.54'),
  Edge: (platform, os) => chromeLike(os === 'Android' ? ' EdgA/126.0.0.0' : ' Edg/126.0.0.0', 'EdgiOS/126.0.2592.56')(platform, os),
  Opera: chromeLike(' OPR/111.0.0.0', 'OPiOS/16.0.14'),
  'Samsung Internet': (platform, os) =>
    os === 'iOS'
      ? `Mozilla/5.0 (${platform}) ${MOBILE_WEBKIT} SamsungBrowser/25.0 Mobile/15E148 Safari/604.1`
      : `Mozilla/5.0 (${platform}) ${WEBKIT} SamsungBrowser/25.0 Chrome/121.0.0.0 ${os === 'Android' ? 'Mobile ' : ''}Safari/537.36`,
  Firefox: (platform, os) => {
    if (os === 'iOS') return `Mozilla/5.0 (${platform}) ${MOBILE_WEBKIT} FxiOS/127.0 Mobile/15E148 Safari/605.1.15`;
    if (os === 'Android') return 'Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0';
    return `Mozilla/5.0 (${platform}; rv:127.0) Gecko/20100101 Firefox/127.0`;
  },
  Safari: (platform, os) => `Mozilla/5.0 (${platform}) ${MOBILE_WEBKIT} Version/17.5 ${os === 'iOS' ? 'Mobile/15E148 ' : ''}Safari/604.1`,
  // A browser of none of the families (Yandex's): Shlink's web client files it under "Others".
  Other: chromeLike(' YaBrowser/24.6.0.0', 'YaBrowser/24.6.0.0'),
};

/** A typical `User-Agent` of `browser` on `os`; `""` for a visit without one (or one that asked not to be tracked). */
export function typicalUserAgent(browser: Browser | null, os: Os | null): string {
  if (browser === null || os === null) return '';
  return BROWSERS[browser](PLATFORMS[os], os);
}
