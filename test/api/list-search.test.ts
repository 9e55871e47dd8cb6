/**
 * `q` on GET /api/urls (docs/api.md, list paging): keeps the links whose code or original URL
 * contains it, case-insensitively; pages and X-Total-Count count after the filter; 1–200
 * characters, else 400.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlList } from '../../src/links/record.ts';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';

const KEY = 'k1';

async function create(h: Harness, url: string, code?: string): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, code }) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

function search(h: Harness, query: string): Promise<Reply> {
  return h.req(`/api/urls?${query}`, { headers: { 'x-api-key': KEY } });
}

function codes(r: Reply): string[] {
  assert.equal(r.status, 200, r.body);
  const list = JSON.parse(r.body) as UrlList;
  assert.equal(list.count, list.urls.length);
  return list.urls.map((u) => u.short_code);
}

test('q keeps the links whose code or URL contains it, case-insensitively, newest first', async (t) => {
  const h = await start(t, { apiKeys: [KEY], maxShortLength: 16 });
  const docs = await create(h, 'https://Docs.Example.com/Guide');
  const blog = await create(h, 'https://blog.example.org/post?tag=guide');
  const named = await create(h, 'https://other.example.net/', 'Spring-Sale');
  const plain = await create(h, 'https://unrelated.test/');
  assert.deepEqual(codes(await search(h, 'q=guide')), [blog, docs]);
  assert.deepEqual(codes(await search(h, 'q=GUIDE')), [blog, docs]);
  assert.deepEqual(codes(await search(h, 'q=spring-sale')), [named], 'by code, any case');
  assert.deepEqual(codes(await search(h, 'q=example')), [named, blog, docs]);
  assert.deepEqual(codes(await search(h, `q=${encodeURIComponent('?tag=')}`)), [blog], 'punctuation is literal text');
  assert.deepEqual(codes(await search(h, `q=${encodeURIComponent('.*')}`)), [], 'not a pattern');
  assert.deepEqual(codes(await search(h, 'q=nothing-like-this')), []);
  assert.equal((await search(h, 'q=nothing-like-this')).headers['x-total-count'], '0');
  assert.deepEqual(codes(await search(h, '')), [plain, named, blog, docs], 'without q: every link');
});

test('limit, offset and X-Total-Count apply after the filter', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const kept: string[] = [];
  for (let i = 0; i < 7; i++) {
    kept.push(await create(h, `https://match.example/${i}`));
    await create(h, `https://other.example/${i}`);
  }
  const newestFirst = [...kept].reverse();
  const page = await search(h, 'q=MATCH&limit=3&offset=2');
  assert.deepEqual(codes(page), newestFirst.slice(2, 5));
  assert.equal(page.headers['x-total-count'], '7');
  const tail = await search(h, 'q=match&limit=3&offset=6');
  assert.deepEqual(codes(tail), newestFirst.slice(6));
  assert.equal(tail.headers['x-total-count'], '7');
  assert.equal((await search(h, 'limit=1')).headers['x-total-count'], '14');
});

test('q of 1 to 200 characters; empty or longer is 400; the key still comes first', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  await create(h, 'https://example.com/');
  assert.equal((await search(h, 'q=e')).status, 200);
  assert.equal((await search(h, `q=${'x'.repeat(200)}`)).status, 200);
  // 200 characters, not UTF-16 units.
  assert.equal((await search(h, `q=${encodeURIComponent('😀'.repeat(200))}`)).status, 200);
  for (const [query, length] of [
    ['q=', 0],
    [`q=${'x'.repeat(201)}`, 201],
  ] as const) {
    const r = await search(h, query);
    assert.equal(r.status, 400, query.slice(0, 20));
    assert.equal(r.body, JSON.stringify({ detail: `q must be 1 to 200 characters long, not ${length}` }));
  }
  const noKey = await h.req('/api/urls?q=');
  assert.equal(noKey.status, 403);
  assert.equal(noKey.body, '');
});
