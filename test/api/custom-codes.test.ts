/**
 * Custom codes (docs/api.md, managing links): where `code` comes from, what is refused, the 409 of
 * a taken code with exactly one winner among concurrent creates, codes freed by a delete or by
 * expiry, and redirects of every character of the custom-code alphabet, on the fast path and off it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { codeOf, listedCodes, request, start, type Harness, type Reply } from '../support/helpers.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
const KEY = 'k1';

function create(h: Harness, body: Record<string, unknown>, query = ''): Promise<Reply> {
  return h.req(`/api/shorten${query}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

function record(r: Reply): UrlRecord {
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as UrlRecord;
}

test('a custom code from a JSON body, the query or a form is the code of the link, kept as given', async (t) => {
  const h = await start(t);
  const base = `http://127.0.0.1:${h.port}`;
  const fromJson = await create(h, { url: 'https://example.com/json', code: 'My-Link_1' });
  assert.equal(fromJson.status, 201, fromJson.body);
  assert.equal(fromJson.body, `${base}/My-Link_1`);
  assert.equal(fromJson.headers.location, `${base}/My-Link_1`);
  assert.equal(record(await h.req('/api/urls/My-Link_1')).original_url, 'https://example.com/json');

  const fromQuery = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/q')}&code=from_query`, { method: 'POST' });
  assert.equal(fromQuery.status, 201, fromQuery.body);
  assert.equal(codeOf(fromQuery), 'from_query');

  const form = new URLSearchParams({ url: 'https://example.com/form', code: 'from-form' }).toString();
  const fromForm = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  assert.equal(fromForm.status, 201, fromForm.body);
  assert.equal(codeOf(fromForm), 'from-form');

  // A query parameter wins over the body field of the same name.
  const both = await create(h, { url: 'https://example.com/both', code: 'body-code' }, '?code=query-code');
  assert.equal(codeOf(both), 'query-code');
  assert.equal((await h.req('/api/urls/body-code')).status, 404);

  // Empty or null: a generated code, as without the field.
  for (const code of ['', null]) {
    const generated = await create(h, { url: 'https://example.com/gen', code });
    assert.equal(generated.status, 201, generated.body);
    assert.match(codeOf(generated), /^[1-9A-HJ-NP-Za-km-z]{6}$/);
  }

  // Codes are case-sensitive: another case is another link.
  const lower = await create(h, { url: 'https://example.com/lower', code: 'my-link_1' });
  assert.equal(lower.status, 201, lower.body);
  assert.equal(record(await h.req('/api/urls/my-link_1')).original_url, 'https://example.com/lower');
  assert.equal(record(await h.req('/api/urls/My-Link_1')).original_url, 'https://example.com/json');
});

test('a code held by a live link is 409 {"detail":"code already in use"}, and nothing is stored', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  assert.equal((await create(h, { url: 'https://example.com/first', code: 'taken1' })).status, 201);
  const before = h.shortener.count;
  for (const r of [
    await create(h, { url: 'https://example.com/second', code: 'taken1' }),
    await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/third')}&code=taken1`),
  ]) {
    assert.equal(r.status, 409);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body, '{"detail":"code already in use"}');
    assert.equal(r.headers.location, undefined);
  }
  assert.equal(h.shortener.count, before);
  assert.equal(record(await h.req('/api/urls/taken1')).original_url, 'https://example.com/first');
});

test('invalid codes are 400 with the reason: characters, length, reserved words in any case, type', async (t) => {
  const h = await start(t, { minShortLength: 4, maxShortLength: 12 });
  const cases: [unknown, RegExp][] = [
    ['has.dot', /letters A-Z and a-z, digits, "-" and "_"/],
    ['has space', /letters A-Z and a-z/],
    ['slash/es', /letters A-Z and a-z/],
    ['ünïcode', /letters A-Z and a-z/],
    ['abc', /4 to 12 characters .*not 3/],
    ['a'.repeat(13), /4 to 12 characters .*not 13/],
    ['static', /reserved/],
    ['METRICS', /reserved/],
    ['Auth-Check', /reserved/],
    ['healthz', /reserved/],
    [12345, /code must be a string/],
    [['abcd'], /code must be a string/],
  ];
  for (const [code, reason] of cases) {
    const r = await create(h, { url: 'https://example.com/', code });
    assert.equal(r.status, 400, `${JSON.stringify(code)}: ${r.body}`);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.match((JSON.parse(r.body) as { detail: string }).detail, reason, JSON.stringify(code));
  }
  assert.equal(h.shortener.count, 0);
});

test('with max_short_length raised to 64 a 64-character custom code works; generation still starts at the minimum', async (t) => {
  const h = await start(t, { maxShortLength: 64 });
  const long = `${'a-'.repeat(31)}_Z`;
  assert.equal(long.length, 64);
  const r = await create(h, { url: 'https://example.com/long', code: long });
  assert.equal(r.status, 201, r.body);
  const hit = await h.req(`/${long}`);
  assert.equal(hit.status, 302);
  assert.equal(hit.headers.location, 'https://example.com/long');
  assert.equal(codeOf(await create(h, { url: 'https://example.com/gen' })).length, 6);
});

test('of 50 concurrent creates of one code exactly one wins; the others are 409', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      request(h.port, '/api/shorten', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ url: `https://example.com/race/${i}`, code: 'race-code' }),
      }),
    ),
  );
  const winners = replies.filter((r) => r.status === 201);
  const losers = replies.filter((r) => r.status === 409);
  assert.equal(winners.length, 1, replies.map((r) => r.status).join(' '));
  assert.equal(losers.length, 49);
  for (const r of losers) assert.equal(r.body, '{"detail":"code already in use"}');
  const winner = replies.indexOf(winners[0]!);
  assert.equal(record(await h.req('/api/urls/race-code')).original_url, `https://example.com/race/${winner}`);
  assert.deepEqual(await listedCodes(h.port, KEY), ['race-code']);
});

test('a code is unique per domain: of 50 concurrent creates of one code on each of two domains, exactly one wins on each', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent', domains: ['go.example'] });
  const domains = [null, 'go.example'];
  const replies = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      request(h.port, '/api/shorten', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ url: `https://example.com/race/${i}`, code: 'race-code', domain: domains[i % 2] }),
      }),
    ),
  );
  for (const [d, domain] of domains.entries()) {
    const mine = replies.filter((_, i) => i % 2 === d);
    const winners = mine.filter((r) => r.status === 201);
    assert.equal(winners.length, 1, `${domain}: ${mine.map((r) => r.status).join(' ')}`);
    assert.equal(mine.filter((r) => r.status === 409).length, 49);
    const winner = replies.indexOf(winners[0]!);
    const query = domain === null ? '' : `?domain=${domain}`;
    assert.equal(record(await h.req(`/api/urls/race-code${query}`)).original_url, `https://example.com/race/${winner}`, String(domain));
  }
  const listed = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  const urls = (JSON.parse(listed.body) as { urls: UrlRecord[] }).urls;
  assert.deepEqual(urls.map((r) => `${r.domain}/${r.short_code}`).sort(), ['go.example/race-code', 'null/race-code']);
});

test('a deleted or expired link gives its code back', async (t) => {
  let now = Date.UTC(2026, 0, 1);
  const h = await start(t, { apiKeys: [KEY], now: () => now });
  assert.equal((await create(h, { url: 'https://example.com/one', code: 'reused' })).status, 201);
  assert.equal((await h.req('/api/urls/reused', { method: 'DELETE', headers: { 'x-api-key': KEY } })).status, 204);
  assert.equal((await create(h, { url: 'https://example.com/two', code: 'reused', retention_days: 1 })).status, 201);
  assert.equal((await create(h, { url: 'https://example.com/three', code: 'reused' })).status, 409, 'live again');
  now += 86_400_000;
  assert.equal((await h.req('/reused')).status, 410, 'expired');
  const third = await create(h, { url: 'https://example.com/three', code: 'reused' });
  assert.equal(third.status, 201, third.body);
  const hit = await h.req('/reused');
  assert.equal(hit.status, 302);
  assert.equal(hit.headers.location, 'https://example.com/three');
});

test('redirect paths take every character of the custom-code alphabet, on the fast path and off it', async (t) => {
  const h = await start(t, { maxShortLength: 16 });
  // Characters the generator never uses (0 O I l), and - and _.
  const codes = ['0OIl-_', '-leads', 'trail_', 'Mixed-Case_09'];
  for (const code of codes) assert.equal((await create(h, { url: `https://example.com/${code}`, code })).status, 201, code);
  for (const code of codes) {
    for (const path of [`/${code}`, `/${code}/`, `/${code}?utm=1`]) {
      const r = await h.req(path);
      assert.equal(r.status, 302, path);
      assert.equal(r.headers.location, `https://example.com/${code}`, path);
    }
  }
  assert.equal(record(await h.req('/api/urls/0OIl-_')).visit_count, 3);
});

test('a path segment with characters outside the custom-code alphabet, or longer than 64, is 404', async (t) => {
  const h = await start(t);
  for (const path of ['/a.b', '/a~b', '/a+b', '/a%2Bb', '/ab%20c', '/%C3%A9t%C3%A9', `/${'a'.repeat(65)}`, '/zzzzzz', '/no-such_code']) {
    const r = await h.req(path);
    assert.equal(r.status, 404, path);
    assert.match(r.body, /Link not found/, path);
  }
});
