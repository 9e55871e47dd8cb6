/**
 * The input rules of the shortening API (docs/api.md, creating links) as pure functions: checkUrl,
 * checkRetention, checkPaging. Every rejection is a `Refusal` with a reason, never a throw.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPaging } from '../../src/links/list-query.ts';
import { isLoopbackHost, isOwnShortLink } from '../../src/links/url-rules.ts';
import { checkRetention, checkUrl, MAX_LIMIT, MAX_RETENTION_DAYS, Refusal, type UrlRules } from '../../src/links/validate.ts';
import { BAD_PAGING } from '../support/paging-cases.ts';

/** `checked` is a refusal whose detail is a sentence matching `reason`. */
function refused(checked: unknown, reason: RegExp, label?: string): void {
  assert.ok(checked instanceof Refusal, `${label ?? ''}: expected a refusal, got ${JSON.stringify(checked)}`);
  assert.match(checked.detail, reason, label);
}

/** The paging of a list's query string, as the REST door hands it over: the text as sent. */
const paging = (query: string) => {
  const q = new URLSearchParams(query);
  return checkPaging(q.get('limit') ?? undefined, q.get('offset') ?? undefined);
};

const RULES: UrlRules = { maxLength: 40, baseUrl: 'https://s.example/x' };

test('checkUrl returns the WHATWG serialization of acceptable URLs', () => {
  const cases: [string, string][] = [
    ['https://example.com/page', 'https://example.com/page'],
    ['http://example.com', 'http://example.com/'],
    ['HTTPS://Example.COM/a b', 'https://example.com/a%20b'],
    ['http://example.com:80/x', 'http://example.com/x'],
    ['https://example.com:443/x', 'https://example.com/x'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    ['https://example.com/a/../b', 'https://example.com/b'],
    ['https://example.com/?q=1#frag', 'https://example.com/?q=1#frag'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['  https://example.com/trim  ', 'https://example.com/trim'],
    // The shortener's host outside its base path is another site's space, not ours.
    ['https://s.example/', 'https://s.example/'],
    ['https://s.example/other', 'https://s.example/other'],
    ['https://s.example/xy', 'https://s.example/xy'],
    ['https://t.example/x/abc', 'https://t.example/x/abc'],
  ];
  for (const [input, expected] of cases) {
    assert.equal(checkUrl(input, RULES), expected, input);
    assert.equal(expected, new URL(input).href, `${input}: the expectation is new URL(input).href`);
  }
});

test('checkUrl rejects every bad URL class with a reason', () => {
  const cases: [string, unknown, RegExp][] = [
    ['missing', undefined, /required/],
    ['null', null, /required/],
    ['empty', '', /required/],
    ['number', 123, /string/],
    ['boolean', true, /string/],
    ['array', ['https://example.com/'], /string/],
    ['object', { href: 'https://example.com/' }, /string/],
    ['ftp scheme', 'ftp://example.com/file', /http/],
    ['javascript scheme', 'javascript:alert(1)', /http/],
    ['data scheme', 'data:text/html,<script>alert(1)</script>', /http/],
    ['mailto scheme', 'mailto:someone@example.com', /http/],
    ['file scheme', 'file:///etc/passwd', /http/],
    ['relative path', '/x', /absolute/],
    ['bare host', 'example.com', /absolute/],
    ['protocol-relative', '//example.com/x', /absolute/],
    ['no host', 'http://', /absolute|host/],
    ['no host, query only', 'https://?q=1', /absolute|host/],
    ['userinfo phishing', 'https://bank.com@evil.example', /user/],
    ['user and password', 'https://u:p@x.example', /user/],
    ['password only', 'https://:p@x.example', /user/],
    ['too long raw', `https://example.com/${'a'.repeat(21)}`, /long/],
    // 40 characters as sent, 42 once the space becomes %20.
    ['too long once normalized', `https://example.com/${'a'.repeat(18)} b`, /long/],
    // Too long as sent, even though it normalizes to something short.
    ['too long raw, short normalized', `https://example.com/a/../${'b'.repeat(16)}`, /long/],
    ['own base URL', 'https://s.example/x', /shortener|loop/],
    ['own base URL with slash', 'https://s.example/x/', /shortener|loop/],
    ['own short link', 'https://s.example/x/abc', /shortener|loop/],
    ['own short link, other spelling', 'HTTPS://S.EXAMPLE:443/x/abc?q=1#f', /shortener|loop/],
    ['own short link with dot segment', 'https://s.example/y/../x/abc', /shortener|loop/],
  ];
  for (const [name, input, reason] of cases) {
    refused(checkUrl(input, RULES), reason, name);
  }
});

test('checkUrl length limit: exactly max_url_length is accepted, as sent and as stored', () => {
  const exact = `https://example.com/${'a'.repeat(20)}`;
  assert.equal(exact.length, 40);
  assert.equal(checkUrl(exact, RULES), exact);
  refused(checkUrl(`${exact}a`, RULES), /long/);
  // The serializer adds a `/` before the query: 39 characters sent, 40 stored → accepted;
  // 40 sent, 41 stored → rejected.
  const fits = `https://example.com?${'q'.repeat(19)}`;
  assert.equal(fits.length, 39);
  assert.equal(checkUrl(fits, RULES), `https://example.com/?${'q'.repeat(19)}`);
  refused(checkUrl(`${fits}q`, RULES), /long/);
});

test('checkUrl with a base URL without path: the whole origin is our short-link space', () => {
  const rules: UrlRules = { maxLength: 8192, baseUrl: 'http://127.0.0.1:3000' };
  for (const input of ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/', 'http://127.0.0.1:3000/abc', 'http://2130706433:3000/abc']) {
    refused(checkUrl(input, rules), /shortener|loop/, input);
  }
  assert.equal(checkUrl('http://127.0.0.1:3001/abc', rules), 'http://127.0.0.1:3001/abc');
});

/**
 * docs/api.md, "No redirect loops": the host of base_url with a path inside the base path, whatever
 * the scheme or port — except that a loopback base counts only on its own port, in every loopback
 * spelling. Rows: base URL, candidate URL, whether it points into the base's own short-link space.
 */
const OWN_SPACE: readonly [base: string, url: string, own: boolean][] = [
  // Loopback base on port 3000: every spelling of this machine on that port, any scheme.
  ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/x', true],
  ['http://127.0.0.1:3000', 'http://127.0.0.1:3000', true],
  ['http://127.0.0.1:3000', 'http://localhost:3000/x', true],
  ['http://127.0.0.1:3000', 'http://LocalHost:3000/x', true],
  ['http://127.0.0.1:3000', 'http://localhost.:3000/x', true],
  ['http://127.0.0.1:3000', 'http://127.0.0.1.:3000/x', true],
  ['http://127.0.0.1:3000', 'http://[::1]:3000/x', true],
  ['http://127.0.0.1:3000', 'http://[0:0:0:0:0:0:0:1]:3000/x', true],
  ['http://127.0.0.1:3000', 'http://[::ffff:127.0.0.1]:3000/x', true],
  ['http://127.0.0.1:3000', 'http://[::ffff:7f00:1]:3000/x', true],
  ['http://127.0.0.1:3000', 'http://127.0.0.2:3000/x', true],
  ['http://127.0.0.1:3000', 'http://127.255.255.254:3000/x', true],
  ['http://127.0.0.1:3000', 'http://127.1:3000/x', true],
  ['http://127.0.0.1:3000', 'http://2130706433:3000/x', true],
  ['http://127.0.0.1:3000', 'http://0x7f000001:3000/x', true],
  ['http://127.0.0.1:3000', 'http://0177.0.0.1:3000/x', true],
  ['http://127.0.0.1:3000', 'http://app.localhost:3000/x', true],
  ['http://127.0.0.1:3000', 'http://%6c%6fcalhost:3000/x', true],
  ['http://127.0.0.1:3000', 'http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:3000/x', true],
  ['http://127.0.0.1:3000', 'http://0.0.0.0:3000/x', true],
  ['http://127.0.0.1:3000', 'http://[::]:3000/x', true],
  ['http://127.0.0.1:3000', 'https://127.0.0.1:3000/x', true],
  ['http://127.0.0.1:3000', 'https://localhost:3000/x', true],
  ['http://127.0.0.1:3000', 'https://[::1]:3000/x?q=1#f', true],
  ['http://127.0.0.1:3000', 'http://localhost:3000/%41bc', true],
  // …but another port of this machine is another service.
  ['http://127.0.0.1:3000', 'http://127.0.0.1:3001/x', false],
  ['http://127.0.0.1:3000', 'http://localhost:3001/x', false],
  ['http://127.0.0.1:3000', 'http://localhost/x', false],
  ['http://127.0.0.1:3000', 'https://localhost/x', false],
  ['http://127.0.0.1:3000', 'http://[::1]/x', false],
  // …and a host that is not this machine is another site.
  ['http://127.0.0.1:3000', 'http://128.0.0.1:3000/x', false],
  ['http://127.0.0.1:3000', 'http://[::2]:3000/x', false],
  ['http://127.0.0.1:3000', 'http://[::ffff:10.0.0.1]:3000/x', false],
  ['http://127.0.0.1:3000', 'http://localhost.example:3000/x', false],
  ['http://127.0.0.1:3000', 'http://mylocalhost:3000/x', false],
  ['http://127.0.0.1:3000', 'http://example.com:3000/x', false],
  // A loopback base without a port: 80 for http, 443 for https, written or implied.
  ['http://localhost', 'http://127.0.0.1/x', true],
  ['http://localhost', 'http://127.0.0.1:80/x', true],
  ['http://localhost', 'https://[::1]:80/x', true],
  ['http://localhost', 'https://127.0.0.1/x', false],
  ['http://localhost', 'http://localhost:8080/x', false],
  ['https://localhost', 'https://[::1]/x', true],
  ['https://localhost', 'http://127.0.0.1:443/x', true],
  ['https://localhost', 'http://localhost/x', false],
  ['http://[::1]:3000', 'http://127.0.0.1:3000/x', true],
  ['http://localhost.:3000', 'http://localhost:3000/x', true],
  // A loopback base with a base path: the port and the path must both match.
  ['http://localhost:3000/s', 'http://127.0.0.1:3000/s/x', true],
  ['http://localhost:3000/s', 'http://[::1]:3000/s', true],
  ['http://localhost:3000/s', 'http://127.0.0.1:3000/other', false],
  ['http://localhost:3000/s', 'http://127.0.0.1:4000/s/x', false],
  // A public base: its host whatever the scheme or port, inside the base path.
  ['https://s.example/x', 'https://s.example/x/abc', true],
  ['https://s.example/x', 'https://s.example/x', true],
  ['https://s.example/x', 'https://s.example/x/', true],
  ['https://s.example/x', 'http://s.example/x/abc', true],
  ['https://s.example/x', 'http://s.example:80/x/abc', true],
  ['https://s.example/x', 'https://s.example:443/x/abc', true],
  ['https://s.example/x', 'https://s.example:8443/x/abc', true],
  ['https://s.example/x', 'HTTPS://S.EXAMPLE/x/abc', true],
  ['https://s.example/x', 'https://s.example./x/abc', true],
  ['https://s.example/x', 'https://s.example/%78/abc', true],
  ['https://s.example/x', 'https://s.example/x/%61bc', true],
  ['https://s.example/x', 'https://s.example/y/../x/abc', true],
  ['https://s.example/x', 'https://s.example/x/abc?q=1#frag', true],
  ['https://s.example/x', 'https://s.example/', false],
  ['https://s.example/x', 'https://s.example/xy', false],
  ['https://s.example/x', 'https://s.example/X/abc', false],
  ['https://s.example/x', 'https://s.example/x%2Fabc', false],
  ['https://s.example/x', 'https://t.example/x/abc', false],
  ['https://s.example/x', 'https://www.s.example/x/abc', false],
  ['https://s.example/x', 'https://s.example.com/x/abc', false],
  ['https://s.example/x', 'https://localhost/x/abc', false],
  ['https://s.example/x', 'http://127.0.0.1/x/abc', false],
  // A public base without a path: the whole host.
  ['https://s.example', 'http://s.example:8080/', true],
  ['https://s.example', 'https://s.example/anything/deeper', true],
  ['http://10.0.0.5:8080', 'http://10.0.0.5/a', true],
  ['http://10.0.0.5:8080', 'http://167772165:9000/a', true],
  ['http://10.0.0.5:8080', 'http://10.0.0.6:8080/a', false],
  ['http://[2001:db8::1]', 'https://[2001:DB8:0:0::1]:9/x', true],
  ['http://[2001:db8::1]', 'http://[2001:db8::2]/x', false],
];

test('isOwnShortLink: every spelling of the own short-link space, and its neighbours', () => {
  for (const [base, url, own] of OWN_SPACE) {
    assert.equal(isOwnShortLink(new URL(url), new URL(base)), own, `${url} under base ${base}`);
  }
});

test('checkUrl refuses exactly the URLs isOwnShortLink calls own (the loop reason), and accepts the rest', () => {
  for (const [base, url, own] of OWN_SPACE) {
    const rules: UrlRules = { maxLength: 8192, baseUrl: base };
    if (own) refused(checkUrl(url, rules), /shortener|loop/, `${url} under base ${base}`);
    else assert.equal(checkUrl(url, rules), new URL(url).href, `${url} under base ${base}`);
  }
});

test('isLoopbackHost: the spellings of this machine as the WHATWG parser leaves them', () => {
  const loopback = ['localhost', 'localhost.', 'a.localhost', '127.0.0.1', '127.1.2.3', '[::1]', '[::ffff:7f00:1]', '[::ffff:7fff:ffff]', '0.0.0.0', '[::]'];
  const other = ['localhost.example', 'mylocalhost', '128.0.0.1', '10.0.0.1', '[::2]', '[::ffff:a00:1]', '[::ffff:8000:1]', 'example.com', ''];
  for (const host of loopback) assert.equal(isLoopbackHost(host), true, host);
  for (const host of other) assert.equal(isLoopbackHost(host), false, host);
});

test('checkUrl rejects a percent-encoded spelling of the base path (the router decodes it: a loop)', () => {
  // `/%78/abc` is routed as `/x/abc` (segments are percent-decoded), so it redirects to itself.
  refused(checkUrl('https://s.example/%78/abc', RULES), /shortener|loop/);
});

test('checkUrl rejects the fully-qualified (trailing-dot) spelling of its own host', () => {
  // `s.example.` is the same host to DNS and to this service (which does not check Host): a loop.
  refused(checkUrl('https://s.example./x/abc', RULES), /shortener|loop/);
});

test('checkRetention accepts integers 0–36500: numbers, and decimal digits from a query or form', () => {
  assert.equal(MAX_RETENTION_DAYS, 36500);
  const cases: [unknown, number][] = [
    [undefined, 0],
    [null, 0],
    [0, 0],
    [1, 1],
    [30, 30],
    [36500, 36500],
    [30.0, 30],
    ['0', 0],
    ['7', 7],
    ['007', 7],
    ['36500', 36500],
  ];
  for (const [input, expected] of cases) {
    assert.equal(checkRetention(input, typeof input === 'string'), expected, JSON.stringify(input));
  }
  // In JSON a number must be a number: digits in a string are refused there.
  refused(checkRetention('30'), /retention_days/);
  refused(checkRetention('30', false), /retention_days/);
});

test('checkRetention refuses everything else', () => {
  const cases: unknown[] = [
    -1,
    1.5,
    36501,
    1e9,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    false,
    {},
    [],
    [1],
    '',
    '-1',
    '1.5',
    'abc',
    '36501',
    '1000000',
    '+1',
    ' 1',
    '1 ',
    '1e2',
    '0x10',
    '٣',
  ];
  for (const input of cases) {
    refused(checkRetention(input, true), /retention_days/, JSON.stringify(input) ?? String(input));
  }
});

test('checkPaging accepts limit 1–1000 and offset ≥ 0, both optional', () => {
  assert.equal(MAX_LIMIT, 1000);
  const cases: [string, { limit: number | undefined; offset: number }][] = [
    ['', { limit: undefined, offset: 0 }],
    ['limit=1', { limit: 1, offset: 0 }],
    ['limit=50', { limit: 50, offset: 0 }],
    ['limit=1000', { limit: 1000, offset: 0 }],
    ['offset=0', { limit: undefined, offset: 0 }],
    ['offset=7', { limit: undefined, offset: 7 }],
    ['offset=1000000', { limit: undefined, offset: 1000000 }],
    ['limit=10&offset=20', { limit: 10, offset: 20 }],
    ['api_key=k&limit=3', { limit: 3, offset: 0 }],
  ];
  for (const [query, expected] of cases) assert.deepEqual(paging(query), expected, query);
});

test('checkPaging refuses bad limit and offset values, naming the parameter', () => {
  for (const [query, reason] of BAD_PAGING) {
    refused(paging(query), reason, query);
  }
});
