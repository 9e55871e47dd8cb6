/**
 * fast-check arbitraries for whole raw HTTP requests, shared by test/fuzz.test.ts and
 * scripts/fuzz.ts: methods (odd tokens too), request targets (near-misses of the real routes and
 * free compositions: dot segments plain and encoded, broken percent-encodings, absolute form, `;`
 * parameters, many slashes, unicode, NUL, overlong), headers (Authorization right, wrong, twice;
 * odd Content-Type; Transfer-Encoding and Content-Length tricks; huge values) and bodies (valid,
 * truncated, deeply nested, wrong types, too large), each framed right or wrong; MCP tool calls
 * (fuzz-tool-calls.ts); and calls of the peers' surfaces, Shlink's `/rest/` and YOURLS'
 * `/yourls-api.php` (fuzz-peer-calls.ts).
 *
 * Request lines and headers are latin1 strings (one char per byte), so any byte can be sent; text
 * meant as UTF-8 is converted first with `utf8Bytes`.
 */
import fc from 'fast-check';
import { shlinkCall, yourlsCall } from './fuzz-peer-calls.ts';
import { toolCalls } from './fuzz-tool-calls.ts';

/** Replaced by a live short code when a case is rendered. */
export const CODE = '{code}';

export type AuthMode = 'none' | 'right' | 'wrong' | 'lower-scheme' | 'empty' | 'basic' | 'token-only' | 'padded' | 'twice-right' | 'right-then-wrong' | 'huge';

export type Framing = 'length' | 'chunked' | 'none' | 'short-length' | 'long-length' | 'te-and-length' | 'bad-chunks';

export interface FuzzCase {
  method: string;
  target: string;
  version: string;
  host: boolean;
  auth: AuthMode;
  /** A Content-Type header, apart from the others so that valid bodies often come with a fitting one. */
  contentType: string | undefined;
  headers: (readonly [string, string])[];
  body: string;
  framing: Framing;
}

export function utf8Bytes(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'QUERY', 'M-SEARCH', 'PURGE', 'CONNECT'];

export const method: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS') },
  { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom('get', 'Get', 'G ET', '', 'GET\0', 'POST\t', 'HEAD HEAD', '\u00e9', 'GET/') },
);

const API_ROUTES = ['/api/health', '/api/shorten', '/api/urls', `/api/urls/${CODE}`, '/api/lookup'];

/** The real routes (and the ones another part of the service adds) as templates; the API twice as often. */
const ROUTES = [
  '/',
  '/healthz',
  '/auth-check',
  '/static/index.html',
  '/static/x.js',
  `/${CODE}`,
  ...API_ROUTES,
  ...API_ROUTES,
  '/mcp',
  '/docs',
  '/openapi.json',
  '/schemas/v2/DeprecationNoticeNotification.json',
  '/metrics',
  '/rest/v3/short-urls',
  `/rest/v3/short-urls/${CODE}`,
  '/rest/v3/tags/stats',
  '/rest/health',
  '/yourls-api.php',
];

const KNOWN_SEGMENTS = [
  'api',
  'urls',
  'shorten',
  'health',
  'lookup',
  'healthz',
  'auth-check',
  'static',
  'index.html',
  'mcp',
  'docs',
  'openapi.json',
  'schemas',
  'v2',
  'favicon.ico',
  'metrics',
  CODE,
  'rest',
  'v3',
  'short-urls',
  'tags',
  'yourls-api.php',
];

const TRICKY_SEGMENTS = [
  '',
  '.',
  '..',
  '...',
  '%2e',
  '%2E',
  '%2e%2e',
  '%2E%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '..;',
  ';',
  'api;x=1',
  'urls;jsessionid=1',
  '%2f',
  '%2F',
  'api%2Furls',
  '%5c',
  '%5C',
  '\\',
  '..\\',
  '%00',
  '\0',
  '%',
  '%z',
  '%zz',
  '%%',
  '%C0%AE',
  '%C0%AE%C0%AE',
  '%u002e',
  '%252e%252e',
  '%252F',
  '%61pi',
  '%41PI',
  'API',
  'Api',
  'URLS',
  '%20',
  ' ',
  '\t',
  '%09',
  '%0d%0a',
  '\r\n',
  '%EF%BC%8F',
  utf8Bytes('é'),
  utf8Bytes('\u0430pi'),
  utf8Bytes('😀'),
  '\u00ff',
  '\u0080',
  '*',
  '~',
  '@',
  ':',
  'a'.repeat(300),
];

/** Percent-encodes every byte of `s` (valid encodings of arbitrary text). */
function percentAll(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** Visible ASCII: what a request target may hold unencoded (and a few that it may not). */
const visible = (max: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[\\x21-\\x7e]{0,${max}}$`));

// Bytes Node's parser refuses in a target (controls, non-ASCII, spaces) are in, but rare: most
// requests should get past the parser to the router and the gate.
const segment: fc.Arbitrary<string> = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom(...KNOWN_SEGMENTS) },
  // The live code once more: its redirect is the hot path, and a run of 5,000 should meet it often.
  { weight: 12, arbitrary: fc.constant(CODE) },
  { weight: 10, arbitrary: fc.constantFrom(...TRICKY_SEGMENTS) },
  { weight: 6, arbitrary: visible(12) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }).map(utf8Bytes) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(...KNOWN_SEGMENTS).map(percentAll) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }).map(percentAll) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => 'a'.repeat(n)) },
);

const separator = fc.oneof({ weight: 10, arbitrary: fc.constant('/') }, { weight: 1, arbitrary: fc.constantFrom('//', '///', '/./', '/../', '\\', '%2F') });

const authority = fc.constantFrom(
  'http://127.0.0.1',
  'http://evil.example',
  'HTTP://EVIL.EXAMPLE:80',
  'https://u:p@evil.example',
  'http://[::1]:1',
  'http://',
  'http:',
  '//evil.example',
);

const queryPart = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.constantFrom(
      'api_key=k1',
      'api_key=wrong',
      `url=${encodeURIComponent('https://example.com/fuzz')}`,
      'url=https://example.com/raw',
      'url=',
      'url=%zz',
      'limit=2&offset=1',
      'limit=-1',
      'limit=100000',
      'offset=x',
      'retention_days=7',
      'retention_days=-1',
      'retention_days=1e3',
      'access_token=x',
      'x=/../api/urls',
      '%',
      '&&',
      '=',
      '?',
      // Text no store can hold (a NUL; a surrogate's UTF-8 is invalid and decodes to U+FFFD).
      'q=%00',
      'q=a%00b',
      'q=fuzz',
      'q=%ED%A0%80',
      'url=https://example.com/%00',
      'q=',
    ),
  },
  { weight: 3, arbitrary: visible(20) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }) },
);

/** `fc.option`'s `freq` is the odds of *no* value; this is the odds of one. */
function sometimes<T>(arb: fc.Arbitrary<T>, none: T, oneIn: number): fc.Arbitrary<T> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(none) }, { weight: 1, arbitrary: arb });
}

const query = sometimes(
  fc.array(queryPart, { minLength: 1, maxLength: 3 }).map((parts) => `?${parts.join('&')}`),
  '',
  3,
);
const fragment = sometimes(fc.constantFrom('#', '#x', '#/../api/urls'), '', 20);
const absolute = sometimes(authority, '', 10);

/** A real route, maybe bent: a segment encoded or re-cased, a dot segment or `;` inserted, a slash doubled. */
const nearMiss: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...ROUTES),
    fc.array(
      fc.tuple(
        fc.nat(),
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom('encode', 'upper', 'semicolon', 'trailing') },
          { weight: 2, arbitrary: fc.constantFrom('dot', 'dotdot', 'encdot', 'slash', 'static-climb') },
        ),
      ),
      { maxLength: 2 },
    ),
  )
  .map(([route, edits]) => {
    const parts = route === '/' ? [] : route.slice(1).split('/');
    let trailing = false;
    for (const [at, edit] of edits) {
      const i = parts.length === 0 ? 0 : at % parts.length;
      const seg = parts[i] ?? '';
      if (edit === 'encode' && seg) parts[i] = seg.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
      else if (edit === 'upper') parts[i] = seg.toUpperCase();
      else if (edit === 'dot') parts.splice(i, 0, '.');
      else if (edit === 'dotdot') parts.splice(i, 0, 'x', '..');
      else if (edit === 'encdot') parts.splice(i, 0, 'static', '%2e%2e');
      else if (edit === 'semicolon') parts[i] = `${seg};p=1`;
      else if (edit === 'slash') parts.splice(i, 0, '');
      else if (edit === 'trailing') trailing = true;
      else parts.unshift('static', '..');
    }
    return `/${parts.join('/')}${trailing && parts.length > 0 ? '/' : ''}`;
  });

const composed: fc.Arbitrary<string> = fc
  .tuple(fc.array(segment, { maxLength: 5 }), fc.array(separator, { minLength: 5, maxLength: 5 }), fc.boolean())
  .map(([segs, seps, trailing]) => segs.map((s, i) => `${seps[i]}${s}`).join('') + (trailing || segs.length === 0 ? '/' : ''));

export const target: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: fc.tuple(absolute, nearMiss, query, fragment).map((t) => t.join('')) },
  { weight: 16, arbitrary: fc.tuple(absolute, composed, query, fragment).map((t) => t.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('*', '', 'api/urls', '?', '#', '/%', 'http://x', `http://x${'/a'.repeat(3)}`) },
  { weight: 1, arbitrary: visible(40) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
);

export const version = fc.oneof(
  { weight: 30, arbitrary: fc.constant('HTTP/1.1') },
  { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 ', 'http/1.1', 'HTTP/1.10', 'HTTP/9', '') },
);

export const auth: fc.Arbitrary<AuthMode> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<AuthMode>('none') },
  { weight: 5, arbitrary: fc.constant<AuthMode>('right') },
  {
    weight: 3,
    arbitrary: fc.constantFrom<AuthMode>('wrong', 'lower-scheme', 'empty', 'basic', 'token-only', 'padded', 'twice-right', 'right-then-wrong', 'huge'),
  },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  '',
  ';',
  'application/json;;;',
  'json',
  '*/*',
  utf8Bytes('application/jsön'),
];

/** A header name that is never `Authorization` (that one is chosen by `auth`, so the tests know it). */
const headerName = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,20}$/).filter((n) => n.toLowerCase() !== 'authorization');

export const header: fc.Arbitrary<readonly [string, string]> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constant('Content-Type'), fc.constantFrom(...CONTENT_TYPES)) },
  { weight: 6, arbitrary: fc.tuple(fc.constant('X-API-Key'), fc.constantFrom('k1', 'wrong', '', 'k1, k1')) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constant('Transfer-Encoding'),
      fc.constantFrom('chunked', 'chunked, identity', 'identity', 'gzip, chunked', 'Chunked', 'chunked, chunked', 'x'),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constant('Content-Length'), fc.constantFrom('0', '-1', '1e3', 'abc', '99999999999999999999', '5', ' 5', '5,5', '70000')),
  },
  {
    weight: 6,
    arbitrary: fc.tuple(
      fc.constantFrom(
        'Expect',
        'Connection',
        'Upgrade',
        'If-None-Match',
        'Origin',
        'Cookie',
        'X-HTTP-Method-Override',
        'X-Original-URL',
        'Host',
        'Mcp-Session-Id',
        'MCP-Protocol-Version',
      ),
      fc.constantFrom(
        '100-continue',
        'keep-alive',
        'Upgrade',
        'websocket',
        'h2c',
        '*',
        'W/"x"',
        'https://evil.example',
        'token=x',
        'DELETE',
        '/api/urls',
        '',
        'evil.example',
        '2025-11-25',
      ),
    ),
  },
  { weight: 6, arbitrary: fc.tuple(headerName, visible(40)) },
  { weight: 1, arbitrary: fc.tuple(headerName, fc.string({ unit: 'grapheme', maxLength: 10 }).map(utf8Bytes)) },
  { weight: 1, arbitrary: fc.tuple(headerName, fc.string({ unit: 'binary-ascii', maxLength: 40 })) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      headerName,
      fc.integer({ min: 100, max: 20_000 }).map((n) => 'v'.repeat(n)),
    ),
  },
);

const deep = fc.integer({ min: 10, max: 5000 });

export const body: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '{"url":"https://example.com/fuzz"}',
      '{"url":"https://example.com/a","retention_days":3}',
      'url=https%3A%2F%2Fexample.com%2Fform',
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom('{"url":', '{"url":"https://exa', '{', '[', '"', '{"url":"https://example.com/"', 'url=%zz&') },
  { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify({ url: v, retention_days: v })) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: deep.map((n) => '['.repeat(n) + ']'.repeat(n)) },
  { weight: 1, arbitrary: deep.map((n) => '{"url":'.repeat(n)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"__proto__":{"url":"https://example.com/p"}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"url":"https://example.com/","url":"javascript:alert(1)"}',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.integer({ min: 65_000, max: 70_000 }).map((n) => `{"url":"https://example.com/${'a'.repeat(n)}"}`) },
  { weight: 1, arbitrary: fc.constant('GET /api/urls HTTP/1.1\r\nHost: x\r\n\r\n') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"url":"https://example.com/\\u0000"}',
      '{"url":"https://example.com/\\ud800"}',
      '{"url":"https://example.com/","code":"ab\\u0000cdef"}',
    ),
  },
);

export const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Framing>('length') },
  { weight: 3, arbitrary: fc.constant<Framing>('chunked') },
  { weight: 2, arbitrary: fc.constant<Framing>('none') },
  { weight: 1, arbitrary: fc.constantFrom<Framing>('short-length', 'long-length', 'te-and-length', 'bad-chunks') },
);

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constant('application/x-www-form-urlencoded') },
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

/** Anything: every part drawn on its own. */
const anyRequest: fc.Arbitrary<FuzzCase> = fc.record({
  method,
  target,
  version,
  host: fc.oneof({ weight: 30, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  auth,
  contentType,
  headers: fc.array(header, { maxLength: 3 }),
  body,
  framing,
});

/**
 * A well-formed call of an API route with the token and fuzzed inputs (query, content type, body):
 * free composition reaches the handlers behind the gate too rarely to try their input handling.
 */
const apiCall: fc.Arbitrary<FuzzCase> = fc.record({
  method: fc.constantFrom('POST', 'GET', 'HEAD', 'DELETE', 'PATCH'),
  target: fc.tuple(fc.constantFrom(...API_ROUTES), fc.constantFrom('', '/'), query).map((t) => t.join('')),
  version: fc.constant('HTTP/1.1'),
  host: fc.constant(true),
  auth: fc.constant<AuthMode>('right'),
  contentType,
  headers: fc.array(fc.oneof(fc.constant(['X-API-Key', 'k1'] as const), header), { maxLength: 2 }),
  body,
  framing: fc.constantFrom<Framing>('length', 'length', 'length', 'chunked'),
});

/** An MCP tool call with the token: the tools hand their arguments to the service with no path rules before them. */
const mcpCall: fc.Arbitrary<FuzzCase> = fc.record({
  method: fc.constant('POST'),
  target: fc.constant('/mcp'),
  version: fc.constant('HTTP/1.1'),
  host: fc.constant(true),
  auth: fc.constant<AuthMode>('right'),
  contentType: fc.constant('application/json'),
  headers: fc.constant([]),
  body: toolCalls(CODE),
  framing: fc.constant<Framing>('length'),
});

/** Who calls a peer's surface: no bearer token mostly (its clients cannot send one), or the token, or a wrong one. */
const peerAuth = fc.constantFrom<AuthMode>('none', 'none', 'none', 'right', 'wrong');

/** A call of Shlink's REST API, with `X-Api-Key` mostly right, a JSON body whatever the method. */
const shlinkRequest: fc.Arbitrary<FuzzCase> = fc.record({ call: shlinkCall, auth: peerAuth, json: fc.boolean() }).map(
  ({ call, auth, json }): FuzzCase => ({
    method: call.method,
    target: call.target,
    version: 'HTTP/1.1',
    host: true,
    auth,
    contentType: json ? 'application/json' : undefined,
    headers: [...call.key],
    body: call.method === 'GET' || call.method === 'DELETE' ? '' : call.body,
    framing: 'length',
  }),
);

/** A call of YOURLS' API: its parameters in the query string, or in a POST's url-encoded form. */
const yourlsRequest: fc.Arbitrary<FuzzCase> = fc.record({ call: yourlsCall, auth: peerAuth }).map(({ call, auth }): FuzzCase => {
  const form = call.inBody && call.method === 'POST';
  return {
    method: call.method,
    target: form ? '/yourls-api.php' : `/yourls-api.php?${call.params}`,
    version: 'HTTP/1.1',
    host: true,
    auth,
    contentType: form ? 'application/x-www-form-urlencoded' : undefined,
    headers: [],
    body: form ? call.params : '',
    framing: 'length',
  };
});

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  { weight: 8, arbitrary: anyRequest },
  { weight: 2, arbitrary: apiCall },
  { weight: 1, arbitrary: mcpCall },
  { weight: 1, arbitrary: shlinkRequest },
  { weight: 1, arbitrary: yourlsRequest },
);

export interface Rendered {
  bytes: Buffer;
  /** The body is declared longer than sent: the server waits for more, so the client half-closes. */
  incomplete: boolean;
  /** The first request's method (a response to HEAD has no body). */
  method: string;
}

function authLines(mode: AuthMode, token: string): string[] {
  const right = `Authorization: Bearer ${token}`;
  switch (mode) {
    case 'none':
      return [];
    case 'right':
      return [right];
    case 'wrong':
      return ['Authorization: Bearer not-the-token'];
    case 'lower-scheme':
      return [`Authorization: bearer ${token}`];
    case 'empty':
      return ['Authorization:'];
    case 'basic':
      return [`Authorization: Basic ${Buffer.from(`x:${token}`).toString('base64')}`];
    case 'token-only':
      return [`Authorization: ${token}`];
    case 'padded':
      return [`Authorization: \t Bearer ${token} \t`];
    case 'twice-right':
      return [right, right];
    case 'right-then-wrong':
      return [right, 'authorization: Bearer x'];
    case 'huge':
      return [`Authorization: Bearer ${token}${'x'.repeat(20_000)}`];
  }
}

/** The bytes of one case; `code` replaces `{code}` (in the target, and in a tool call's arguments). */
export function render(c: FuzzCase, token: string, code: string): Rendered {
  const payload = Buffer.from(c.body.split(CODE).join(code), 'utf8');
  const lines = [`${c.method} ${c.target.split(CODE).join(code)} ${c.version}`.trimEnd()];
  if (c.host) lines.push('Host: 127.0.0.1');
  lines.push(...authLines(c.auth, token));
  if (c.contentType !== undefined) lines.push(`Content-Type: ${c.contentType}`);
  for (const [name, value] of c.headers) lines.push(`${name}: ${value}`);
  let framed = payload;
  let incomplete = false;
  switch (c.framing) {
    case 'length':
      if (payload.length > 0 || c.method === 'POST') lines.push(`Content-Length: ${payload.length}`);
      break;
    case 'chunked':
    case 'bad-chunks': {
      lines.push('Transfer-Encoding: chunked');
      const size = c.framing === 'chunked' ? payload.length.toString(16) : 'zz';
      framed = Buffer.concat([Buffer.from(payload.length > 0 ? `${size}\r\n` : ''), payload, Buffer.from(payload.length > 0 ? '\r\n0\r\n\r\n' : '0\r\n\r\n')]);
      break;
    }
    case 'none':
      break;
    case 'short-length':
      lines.push(`Content-Length: ${Math.floor(payload.length / 2)}`);
      break;
    case 'long-length':
      lines.push(`Content-Length: ${payload.length + 10}`);
      incomplete = true;
      break;
    case 'te-and-length':
      lines.push('Transfer-Encoding: chunked', `Content-Length: ${payload.length}`);
      break;
  }
  lines.push('Connection: close');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return { bytes: Buffer.concat([head, framed]), incomplete, method: c.method };
}
