/**
 * The referrer a visit keeps (docs/architecture.md, the visit classification): the host of
 * `Referer` in lower case, never its path, query, user or port; `null` for none, for a string that
 * is no URL, and for a scheme that is neither the web's nor an Android app's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_HOST_LENGTH, referrerHost } from '../../src/visits/referrer.ts';

const CASES: readonly [string | undefined, string | null][] = [
  ['https://news.ycombinator.com/item?id=1', 'news.ycombinator.com'],
  ['https://www.google.com/', 'www.google.com'],
  ['http://example.com', 'example.com'],
  ['HTTPS://Example.COM/Path?Q=Secret#frag', 'example.com'],
  ['https://example.com:8443/x', 'example.com'],
  ['https://example.com:65535/x', 'example.com'],
  ['https://example.com./', 'example.com'],
  ['https://example.com?q', 'example.com'],
  ['https://example.com#top', 'example.com'],
  ['https://user:password@example.com/private', 'example.com'],
  ['https://sub_domain.example.com/', 'sub_domain.example.com'],
  ['https://bücher.de/', 'xn--bcher-kva.de'],
  ['http://[2001:DB8::1]:8080/', '[2001:db8::1]'],
  ['http://192.0.2.1/', '192.0.2.1'],
  ['android-app://com.google.android.gm/', 'com.google.android.gm'],
  ['android-app://com.Slack', 'com.slack'],
  // None, or nothing worth keeping.
  [undefined, null],
  ['', null],
  ['example.com', null],
  ['/relative/path', null],
  ['not a url', null],
  ['https://', null],
  ['https://example.com:99999/', null],
  ['file:///home/me/notes.html', null],
  ['about:blank', null],
  ['chrome-extension://abcdefghijklmnop/popup.html', null],
  ['data:text/html,hello', null],
  ['ftp://example.com/', null],
  [`https://${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(10)}/`, null],
];

test('each Referer gives its host or null', () => {
  for (const [referer, host] of CASES) assert.equal(referrerHost(referer), host, String(referer));
});

test('a host of the longest DNS length is kept, one character more is not', () => {
  const label = 'a'.repeat(63);
  const longest = `${label}.${label}.${label}.${'b'.repeat(61)}`;
  assert.equal(longest.length, MAX_HOST_LENGTH);
  assert.equal(referrerHost(`https://${longest}/`), longest);
  assert.equal(referrerHost(`https://${longest}b/`), null);
});
