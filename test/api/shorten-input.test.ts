/**
 * Shorten input over real sockets (docs/api.md, creating links, and its URL rules): where `url` and
 * `retention_days` come from, which one wins, what is rejected, and what is stored.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { RandomSource } from '../../src/links/codes.ts';
import type { UrlRecord } from '../../src/links/record.ts';
import { start, type Harness, type Reply } from '../support/helpers.ts';

type Method = 'GET' | 'POST';

/** A request to /api/shorten; a body always travels with its Content-Length (GET has no default). */
function shortenReq(h: Harness, o: { method?: Method; query?: string; type?: string; body?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (o.type !== undefined) headers['content-type'] = o.type;
  if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
  const path = `/api/shorten${o.query === undefined ? '' : `?${o.query}`}`;
  return h.req(path, { method: o.method ?? 'POST', headers, ...(o.body === undefined ? {} : { body: o.body }) });
}

function json(body: unknown): { type: string; body: string } {
  return { type: 'application/json', body: JSON.stringify(body) };
}

function form(fields: Record<string, string>): { type: string; body: string } {
  return { type: 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() };
}

function q(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** Asserts a 201 with the short URL as body and Location; returns the stored record. */
async function created(h: Harness, r: Reply): Promise<UrlRecord> {
  assert.equal(r.status, 201, r.body);
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(r.headers.location, r.body);
  const prefix = `http://127.0.0.1:${h.port}/`;
  assert.ok(r.body.startsWith(prefix), r.body);
  const code = r.body.slice(prefix.length);
  const meta = await h.req(`/api/urls/${code}`);
  assert.equal(meta.status, 200);
  const record = JSON.parse(meta.body) as UrlRecord;
  assert.equal(record.short_code, code);
  assert.equal(record.short_url, r.body);
  return record;
}

/** Asserts a 400 with a JSON `detail` sentence; returns the detail. */
function rejected(r: Reply, what: string): string {
  assert.equal(r.status, 400, `${what}: ${r.status} ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/json', what);
  const parsed = JSON.parse(r.body) as { detail?: unknown };
  assert.equal(typeof parsed.detail, 'string', what);
  assert.ok((parsed.detail as string).length > 0, what);
  return parsed.detail as string;
}

async function withHarness(t: TestContext, fn: (h: Harness) => Promise<void>, options: Parameters<typeof start>[1] = {}): Promise<void> {
  await fn(await start(t, options));
}

test('url from the query string, by POST and by GET, without a body', (t) =>
  withHarness(t, async (h) => {
    for (const method of ['POST', 'GET'] as const) {
      const url = `https://example.com/query/${method}`;
      const record = await created(h, await shortenReq(h, { method, query: q({ url }) }));
      assert.equal(record.original_url, url);
      assert.equal(record.retention_days, 0);
    }
  }));

test('url and retention_days from a JSON body, by POST and by GET', (t) =>
  withHarness(t, async (h) => {
    for (const method of ['POST', 'GET'] as const) {
      const url = `https://example.com/json/${method}`;
      const record = await created(h, await shortenReq(h, { method, ...json({ url, retention_days: 3 }) }));
      assert.equal(record.original_url, url);
      assert.equal(record.retention_days, 3);
    }
  }));

test('url and retention_days from a url-encoded form body, by POST and by GET', (t) =>
  withHarness(t, async (h) => {
    for (const method of ['POST', 'GET'] as const) {
      const url = `https://example.com/form/${method}?a=1&b=2`;
      const record = await created(h, await shortenReq(h, { method, ...form({ url, retention_days: '4' }) }));
      assert.equal(record.original_url, url);
      assert.equal(record.retention_days, 4);
    }
  }));

test('a query parameter wins over the body field of the same name, field by field', (t) =>
  withHarness(t, async (h) => {
    const bodies = [json({ url: 'https://body.example/', retention_days: 9 }), form({ url: 'https://body.example/', retention_days: '9' })];
    for (const body of bodies) {
      const both = await created(h, await shortenReq(h, { query: q({ url: 'https://query.example/', retention_days: '5' }), ...body }));
      assert.equal(both.original_url, 'https://query.example/', body.type);
      assert.equal(both.retention_days, 5, body.type);

      // Only url in the query: retention_days still comes from the body.
      const urlOnly = await created(h, await shortenReq(h, { query: q({ url: 'https://query.example/u' }), ...body }));
      assert.equal(urlOnly.original_url, 'https://query.example/u', body.type);
      assert.equal(urlOnly.retention_days, 9, body.type);

      // Only retention_days in the query: url still comes from the body.
      const retentionOnly = await created(h, await shortenReq(h, { query: q({ retention_days: '2' }), ...body }));
      assert.equal(retentionOnly.original_url, 'https://body.example/', body.type);
      assert.equal(retentionOnly.retention_days, 2, body.type);
    }
    // The query wins even when its value is bad: the body's good value does not rescue it.
    rejected(await shortenReq(h, { query: q({ retention_days: 'abc' }), ...json({ url: 'https://body.example/', retention_days: 1 }) }), 'bad query retention');
  }));

test('application/json with parameters, and in any letter case, is JSON', (t) =>
  withHarness(t, async (h) => {
    for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON']) {
      const url = `https://example.com/${encodeURIComponent(type)}`;
      const record = await created(h, await shortenReq(h, { type, body: JSON.stringify({ url }) }));
      assert.equal(record.original_url, url, type);
    }
  }));

test('malformed JSON is 400 "request body is not valid JSON", also when the query has the url (never an empty body)', (t) =>
  withHarness(t, async (h) => {
    const url = 'https://example.com/malformed';
    for (const body of ['{', '{"url": "https://example.com/",}', "{'url': 'https://example.com/'}", 'url=https://example.com/']) {
      assert.equal(rejected(await shortenReq(h, { type: 'application/json', body }), body), 'request body is not valid JSON', body);
      const withQuery = await shortenReq(h, { query: q({ url }), type: 'application/json', body });
      assert.equal(rejected(withQuery, `${body} with ?url`), 'request body is not valid JSON', `${body} with ?url`);
    }
    assert.equal((await h.req(`/api/lookup?${q({ url })}`)).status, 404, 'no link was created');
  }));

test('a JSON body that is not an object is 400 with a detail', (t) =>
  withHarness(t, async (h) => {
    const bodies: unknown[] = [['https://example.com/'], [{ url: 'https://example.com/' }], 'https://example.com/', 42, true, null];
    for (const value of bodies) {
      // The reason names the fix: send an object (an array's `url` would otherwise just be "missing").
      assert.match(rejected(await shortenReq(h, json(value)), JSON.stringify(value)), /object/, JSON.stringify(value));
    }
  }));

test('a url that is not a string is 400 with a detail', (t) =>
  withHarness(t, async (h) => {
    const values: unknown[] = [123, true, ['https://example.com/'], { href: 'https://example.com/' }, null];
    for (const url of values) rejected(await shortenReq(h, json({ url })), JSON.stringify(url));
    // And a missing url, in every input form.
    rejected(await shortenReq(h, {}), 'no input at all');
    rejected(await shortenReq(h, json({ retention_days: 1 })), 'JSON without url');
    rejected(await shortenReq(h, form({ retention_days: '1' })), 'form without url');
    rejected(await shortenReq(h, { query: 'url=' }), 'empty url in the query');
  }));

test('an empty body with any content type is fine when the query has the url', (t) =>
  withHarness(t, async (h) => {
    const types = [
      undefined,
      'text/plain',
      'application/octet-stream',
      'image/png',
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ];
    for (const [i, type] of types.entries()) {
      const url = `https://example.com/empty/${i}`;
      const record = await created(h, await shortenReq(h, { query: q({ url }), body: '', ...(type === undefined ? {} : { type }) }));
      assert.equal(record.original_url, url, String(type));
    }
    // The same content type with a body is refused: the empty body is what makes it fine.
    const r = await shortenReq(h, { query: q({ url: 'https://example.com/x' }), type: 'text/plain', body: 'hello' });
    assert.equal(r.status, 415);
    assert.equal(typeof (JSON.parse(r.body) as { detail?: unknown }).detail, 'string');
  }));

test('every rejected URL class is 400 with a detail, from the body and from the query', (t) =>
  withHarness(
    t,
    async (h) => {
      const base = `http://127.0.0.1:${h.port}`;
      const cases: [string, string][] = [
        ['ftp scheme', 'ftp://example.com/file'],
        ['javascript scheme', 'javascript:alert(1)'],
        ['data scheme', 'data:text/html,<b>hi</b>'],
        ['mailto scheme', 'mailto:a@example.com'],
        ['relative path', '/x'],
        ['bare host', 'example.com'],
        ['no host', 'http://'],
        ['no host, only a query', 'https://?q=1'],
        ['userinfo phishing', 'https://bank.com@evil.example'],
        ['user and password', 'https://u:p@x.example'],
        ['too long as sent', `https://example.com/${'a'.repeat(41)}`],
        // 60 characters as sent, 62 once each space becomes %20.
        ['too long once normalized', `https://example.com/${'a'.repeat(38)} b`],
        // 61 characters as sent, though it normalizes to 56.
        ['too long as sent, short once normalized', `https://example.com/a/../${'b'.repeat(36)}`],
        ['our base URL', base],
        ['our base URL with slash', `${base}/`],
        ['our short link space', `${base}/abc`],
        ['our API', `${base}/api/shorten?url=https://example.com/`],
        // The base host is loopback: every spelling of this machine on our port is us.
        ['our short link as localhost', `http://localhost:${h.port}/x`],
        ['our short link as [::1]', `http://[::1]:${h.port}/x`],
        ['our short link over https', `https://127.0.0.1:${h.port}/x`],
      ];
      for (const [name, url] of cases) {
        rejected(await shortenReq(h, json({ url })), `${name} (JSON)`);
        rejected(await shortenReq(h, { query: q({ url }) }), `${name} (query)`);
      }
      // The boundary itself is accepted: exactly max_url_length characters.
      const exact = `https://example.com/${'a'.repeat(40)}`;
      assert.equal(exact.length, 60);
      assert.equal((await created(h, await shortenReq(h, json({ url: exact })))).original_url, exact);
      // Nothing rejected was stored.
      const list = await h.req('/api/urls', { headers: { 'x-api-key': 'k' } });
      assert.equal(list.headers['x-total-count'], '1');
    },
    { maxUrlLength: 60, apiKeys: ['k'] },
  ));

test('a short link into a base path is refused in every spelling the router accepts (no loops)', async (t) => {
  // Zero randomness: the first code is "1", so the loop candidate is known before it is created.
  const zeros: RandomSource = (buffer) => buffer.fill(0);
  const h = await start(t, { baseUrl: 'http://127.0.0.1:1/s', minShortLength: 1, maxShortLength: 2, random: zeros });
  const origin = 'http://127.0.0.1:1';
  const send = (url: string): Promise<Reply> =>
    h.req('/s/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  for (const url of [`${origin}/s`, `${origin}/s/`, `${origin}/s/1`, `${origin}/s/./1`, `${origin}/S/../s/1`]) {
    rejected(await send(url), url);
  }
  // Outside the base path the same origin is someone else's space.
  const outside = await send(`${origin}/other`);
  assert.equal(outside.status, 201, outside.body);
  // `/%73/1` is routed exactly like `/s/1` (the router percent-decodes segments) …
  const decoded = await h.req('/%73/1');
  assert.equal(decoded.status, 302);
  assert.equal(decoded.headers.location, `${origin}/other`);
  // … so a link to it is a link into our own space: a redirect to itself if accepted.
  rejected(await send(`${origin}/%73/11`), 'percent-encoded base path');
});

test('bad retention_days values are 400 with a detail, from JSON, query and form', (t) =>
  withHarness(t, async (h) => {
    const url = 'https://example.com/r';
    const jsonValues: unknown[] = [-1, 1.5, 'abc', 36501, true, false, {}, [1], '-1', '1.5', ''];
    for (const value of jsonValues) rejected(await shortenReq(h, json({ url, retention_days: value })), `JSON ${JSON.stringify(value)}`);
    const textValues = ['-1', '1.5', 'abc', '36501', '', '+1', '1e2', ' 1', 'true'];
    for (const value of textValues) {
      rejected(await shortenReq(h, { query: q({ url, retention_days: value }) }), `query ${JSON.stringify(value)}`);
      rejected(await shortenReq(h, form({ url, retention_days: value })), `form ${JSON.stringify(value)}`);
    }
  }));

test('a JSON string retention_days is 400: in JSON an integer is a number', (t) =>
  withHarness(t, async (h) => {
    rejected(await shortenReq(h, json({ url: 'https://example.com/', retention_days: '30' })), 'JSON "30"');
  }));

test('retention_days 0 and 36500 are accepted; absent means 0', (t) =>
  withHarness(t, async (h) => {
    const url = 'https://example.com/keep';
    for (const days of [0, 1, 36500]) {
      assert.equal((await created(h, await shortenReq(h, json({ url, retention_days: days })))).retention_days, days);
      assert.equal((await created(h, await shortenReq(h, { query: q({ url, retention_days: String(days) }) }))).retention_days, days);
      assert.equal((await created(h, await shortenReq(h, form({ url, retention_days: String(days) })))).retention_days, days);
    }
    assert.equal((await created(h, await shortenReq(h, json({ url })))).retention_days, 0);
    assert.equal((await created(h, await shortenReq(h, { query: q({ url }) }))).retention_days, 0);
  }));

test('the stored original_url is new URL(input).href, and lookup finds it by the raw input', (t) =>
  withHarness(t, async (h) => {
    const cases: [string, string][] = [
      ['HTTPS://Example.COM/a b', 'https://example.com/a%20b'],
      ['https://example.com', 'https://example.com/'],
      ['http://example.com:80/x', 'http://example.com/x'],
      ['https://example.com/a/./b/../c', 'https://example.com/a/c'],
      ['https://example.com/ü?q=ä', 'https://example.com/%C3%BC?q=%C3%A4'],
      ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ];
    for (const [input, href] of cases) {
      assert.equal(new URL(input).href, href);
      const record = await created(h, await shortenReq(h, json({ url: input })));
      assert.equal(record.original_url, href, input);
      const found = await h.req(`/api/lookup?${q({ url: input })}`);
      assert.equal(found.status, 200, input);
      assert.equal((JSON.parse(found.body) as UrlRecord).short_code, record.short_code, input);
      const hit = await h.req(`/${record.short_code}`, { method: 'HEAD' });
      assert.equal(hit.headers.location, href, input);
    }
  }));

test('the same URL shortened twice gets two codes; lookup returns the newer', (t) =>
  withHarness(t, async (h) => {
    const url = 'https://example.com/twice';
    const first = await created(h, await shortenReq(h, json({ url })));
    const second = await created(h, await shortenReq(h, { query: q({ url }) }));
    assert.notEqual(first.short_code, second.short_code);
    assert.equal(first.original_url, second.original_url);
    for (const record of [first, second]) {
      const r = await h.req(`/${record.short_code}`, { method: 'HEAD' });
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, url);
    }
    const found = await h.req(`/api/lookup?${q({ url })}`);
    assert.equal((JSON.parse(found.body) as UrlRecord).short_code, second.short_code);
  }));
