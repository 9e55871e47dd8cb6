/**
 * List paging (docs/api.md, reading, listing; docs/security.md, admin keys): `limit` 1–1000 and
 * `offset` ≥ 0; `count` is the page, `X-Total-Count` the total, newest first; the key is checked
 * before the paging parameters.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { UrlList } from '../../src/links/record.ts';
import { start, type Harness, type Reply } from '../support/helpers.ts';
import { BAD_PAGING } from '../support/paging-cases.ts';

const KEY = 'list-key';
const TOTAL = 7;

/** A harness holding TOTAL links; `urls[i]` is the original URL of the i-th created (oldest first). */
async function withLinks(t: TestContext, fn: (h: Harness, urls: string[]) => Promise<void>): Promise<void> {
  const h = await start(t, { apiKeys: [KEY] });
  const urls: string[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const url = `https://example.com/item/${i}`;
    await h.shorten(url);
    urls.push(url);
  }
  await fn(h, urls);
}

/** GET /api/urls with `key` in X-API-Key; `null` sends no key at all. */
function list(h: Harness, query: string, key: string | null = KEY): Promise<Reply> {
  return h.req(`/api/urls${query ? `?${query}` : ''}`, { headers: key === null ? {} : { 'x-api-key': key } });
}

/** Asserts a 200 page; returns its original URLs in order. */
function page(r: Reply, total: number): string[] {
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['x-total-count'], String(total));
  const body = JSON.parse(r.body) as UrlList;
  assert.deepEqual(Object.keys(body).sort(), ['count', 'urls']);
  assert.equal(body.count, body.urls.length);
  return body.urls.map((u) => u.original_url);
}

test('without paging parameters the whole list is returned, newest first', (t) =>
  withLinks(t, async (h, urls) => {
    const newestFirst = [...urls].reverse();
    assert.deepEqual(page(await list(h, ''), TOTAL), newestFirst);
    // The trailing-slash spelling and the api_key query parameter behave the same.
    assert.deepEqual(page(await h.req(`/api/urls/?api_key=${KEY}`), TOTAL), newestFirst);
  }));

test('limit and offset select a window of the newest-first list', (t) =>
  withLinks(t, async (h, urls) => {
    const newestFirst = [...urls].reverse();
    const cases: [string, string[]][] = [
      ['limit=1', newestFirst.slice(0, 1)],
      ['limit=3', newestFirst.slice(0, 3)],
      ['limit=3&offset=0', newestFirst.slice(0, 3)],
      ['limit=3&offset=3', newestFirst.slice(3, 6)],
      ['limit=3&offset=6', newestFirst.slice(6, 7)],
      ['offset=2', newestFirst.slice(2)],
      ['offset=0', newestFirst],
      [`limit=${TOTAL}`, newestFirst],
      ['limit=1000', newestFirst],
      ['offset=6', [urls[0]!]],
    ];
    for (const [query, expected] of cases) assert.deepEqual(page(await list(h, query), TOTAL), expected, query);

    // Pages of two walk the whole list once, in order, without gaps or repeats.
    const walked: string[] = [];
    for (let offset = 0; offset < TOTAL; offset += 2) walked.push(...page(await list(h, `limit=2&offset=${offset}`), TOTAL));
    assert.deepEqual(walked, newestFirst);
  }));

test('an offset at or past the end gives an empty list with the total still counted', (t) =>
  withLinks(t, async (h) => {
    for (const query of [`offset=${TOTAL}`, `offset=${TOTAL + 1}`, 'limit=5&offset=100', 'offset=999999999']) {
      const r = await list(h, query);
      assert.deepEqual(page(r, TOTAL), [], query);
      assert.deepEqual(JSON.parse(r.body), { count: 0, urls: [] }, query);
    }
  }));

test('an empty store lists nothing with X-Total-Count 0', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  assert.deepEqual(page(await list(h, ''), 0), []);
  assert.deepEqual(page(await list(h, 'limit=10&offset=0'), 0), []);
});

test('bad limit or offset values are 400 with a detail', (t) =>
  withLinks(t, async (h) => {
    for (const [query, names] of BAD_PAGING) {
      const r = await list(h, query);
      assert.equal(r.status, 400, query);
      assert.equal(r.headers['content-type'], 'application/json', query);
      const detail = (JSON.parse(r.body) as { detail?: unknown }).detail;
      assert.equal(typeof detail, 'string', query);
      assert.match(detail as string, names, query);
      assert.equal(r.headers['x-total-count'], undefined, query);
    }
  }));

test('a missing or wrong key is 403 with an empty body even when the paging is bad (key first)', (t) =>
  withLinks(t, async (h) => {
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc&offset=1.5', 'limit=5']) {
      for (const key of [null, 'wrong', '', `${KEY}x`, KEY.toUpperCase()]) {
        const r = await list(h, query, key);
        assert.equal(r.status, 403, `${query} key=${String(key)}`);
        assert.equal(r.body, '', `${query} key=${String(key)}`);
        assert.equal(r.headers['x-total-count'], undefined);
      }
      const viaQuery = await h.req(`/api/urls?api_key=wrong&${query}`);
      assert.equal(viaQuery.status, 403, query);
      assert.equal(viaQuery.body, '');
    }
  }));

test('without configured keys the list is always 403, paging or not', async (t) => {
  const h = await start(t);
  await h.shorten('https://example.com/');
  for (const query of ['', 'limit=1', 'limit=0']) {
    const r = await list(h, query, 'anything');
    assert.equal(r.status, 403, query);
    assert.equal(r.body, '');
  }
});
