/**
 * Link-preview fetchers: the programs a chat or social app sends to read a page's title and
 * picture the moment someone pastes a link. Such a fetch is no one's visit, and for a link with a
 * visit limit it would use up a visit nobody made, so the redirect asks this table first.
 *
 * Each row is the exact token the fetcher sends, matched case for case. The tokens are chosen
 * so that no person's browser holds them: the in-app browsers of the same apps send other words
 * (Facebook's `FBAN`/`FB_IAB`, `Instagram`, `[LinkedInApp]`, `Twitter for iPhone`,
 * `[Pinterest/iOS]`, Slack's and Discord's desktop `Slack/`, `discord/`), and a token that such a
 * browser could carry somewhere in its string is only matched at the start, where the fetcher
 * puts it and no browser does (every browser starts with `Mozilla/`). Microsoft Teams fetches
 * previews as `SkypeUriPreview` and `MicrosoftPreview`; `Teams/` is the Teams app's own string, a
 * person's, so it is not a token here.
 */

interface PreviewFetcher {
  /** Who sends it. */
  readonly service: string;
  /** The exact token. */
  readonly token: string;
  /** `start`: the string begins with the token; `anywhere`: it holds it. */
  readonly at: 'start' | 'anywhere';
}

export const PREVIEW_FETCHERS: readonly PreviewFetcher[] = [
  { service: 'Slack', token: 'Slackbot-LinkExpanding', at: 'anywhere' },
  { service: 'Slack (images)', token: 'Slack-ImgProxy', at: 'anywhere' },
  { service: 'Facebook, Messenger, Instagram, LINE', token: 'facebookexternalhit', at: 'anywhere' },
  { service: 'Facebook', token: 'Facebot', at: 'anywhere' },
  { service: 'X (Twitter)', token: 'Twitterbot', at: 'anywhere' },
  { service: 'Discord', token: 'Discordbot', at: 'anywhere' },
  { service: 'Telegram', token: 'TelegramBot', at: 'anywhere' },
  { service: 'WhatsApp, Signal', token: 'WhatsApp', at: 'start' },
  { service: 'LinkedIn', token: 'LinkedInBot', at: 'anywhere' },
  { service: 'Skype, Microsoft Teams', token: 'SkypeUriPreview', at: 'anywhere' },
  { service: 'Microsoft Teams, Outlook', token: 'MicrosoftPreview', at: 'anywhere' },
  { service: 'iMessage, Siri', token: 'Applebot', at: 'anywhere' },
  { service: 'Google Chat, Google Docs', token: 'Google-PageRenderer', at: 'anywhere' },
  { service: 'Mastodon', token: 'Mastodon/', at: 'anywhere' },
  { service: 'Bluesky', token: 'Bluesky Cardyb', at: 'anywhere' },
  { service: 'Matrix (Synapse)', token: 'Synapse (bot;', at: 'anywhere' },
  { service: 'Pinterest', token: 'Pinterest/0.', at: 'start' },
  { service: 'Reddit', token: 'redditbot', at: 'anywhere' },
  { service: 'Snapchat', token: 'Snap URL Preview Service', at: 'anywhere' },
  { service: 'VK', token: 'vkShare', at: 'anywhere' },
  { service: 'KakaoTalk', token: 'kakaotalk-scrap', at: 'anywhere' },
  { service: 'Mattermost', token: 'Mattermost-Bot', at: 'anywhere' },
  { service: 'Yahoo Mail', token: 'Yahoo Link Preview', at: 'anywhere' },
  { service: 'Embedly (Medium and others)', token: 'Embedly', at: 'anywhere' },
  { service: 'Iframely', token: 'Iframely', at: 'anywhere' },
];

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every token in one expression, so the question costs one scan of the string. */
const PATTERN = new RegExp(PREVIEW_FETCHERS.map((f) => (f.at === 'start' ? '^' : '') + escapeRegExp(f.token)).join('|'));

/** True when `ua` is a link-preview fetcher's. */
export function isPreviewFetcher(ua: string | undefined): boolean {
  return ua !== undefined && PATTERN.test(ua);
}
