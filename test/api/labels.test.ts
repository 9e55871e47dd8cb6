/**
 * Titles and tags over HTTP (docs/api.md, titles and tags): on a create through every door (a JSON
 * body, a form, the query string), past each limit a 400 naming the field, on an edit (null and []
 * clear), and in the list (the `tag` filter, `q` over titles, and a body of any Unicode with the
 * right Content-Length).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlList, UrlRecord } from '../../src/links/record.ts';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';

const KEY = 'k1';
const ADMIN = { 'x-api-key': KEY };
const JSON_TYPE = { 'content-type': 'application/json' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

/** A create; a 201 gives the record the API then answers for the new code. */
async function created(h: Harness, r: Reply): Promise<UrlRecord> {
  assert.equal(r.status, 201, r.body);
  const meta = await h.req(`/api/urls/${codeOf(r)}`);
  assert.equal(meta.status, 200);
  return JSON.parse(meta.body) as UrlRecord;
}

const labels = (r: UrlRecord): { title: string | null; tags: string[] } => ({ title: r.title, tags: r.tags });

function postJson(h: Harness, body: unknown, query = ''): Promise<Reply> {
  return h.req(`/api/shorten${query}`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) });
}

function postForm(h: Harness, form: string, query = ''): Promise<Reply> {
  return h.req(`/api/shorten${query}`, { method: 'POST', headers: FORM_TYPE, body: form });
}

function detail(r: Reply, what: string): string {
  assert.equal(r.status, 400, `${what}: ${r.status} ${r.body}`);
  assert.equal(r.headers['content-type'], 'application/json', what);
  return (JSON.parse(r.body) as { detail: string }).detail;
}

function list(h: Harness, query: string): Promise<Reply> {
  return h.req(`/api/urls${query}`, { headers: ADMIN });
}

function codes(r: Reply): string[] {
  assert.equal(r.status, 200, r.body);
  const page = JSON.parse(r.body) as UrlList;
  assert.equal(page.count, page.urls.length);
  return page.urls.map((u) => u.short_code);
}

test('a create takes a title and tags from a JSON body, a form and the query string; tags are trimmed, de-duplicated and sorted', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const url = 'https://example.com/labelled';
  const json = await created(h, await postJson(h, { url, title: 'Q3 report: Ünïcödé 😀', tags: ['reports', ' 2026 ', 'Reports', 'reports'] }));
  assert.deepEqual(labels(json), { title: 'Q3 report: Ünïcödé 😀', tags: ['2026', 'Reports', 'reports'] });

  // A form: the field repeated, and commas within one value; empty pieces are skipped.
  const form = await created(h, await postForm(h, `url=${encodeURIComponent(url)}&title=Form+title&tags=b,a&tags=c&tags=,`));
  assert.deepEqual(labels(form), { title: 'Form title', tags: ['a', 'b', 'c'] });

  // The query string, the same way (GET too, the deprecated door).
  const query = `?url=${encodeURIComponent(url)}&title=${encodeURIComponent('Query title')}&tags=x&tags=${encodeURIComponent('z, y')}`;
  assert.deepEqual(labels(await created(h, await h.req(`/api/shorten${query}`, { method: 'POST' }))), { title: 'Query title', tags: ['x', 'y', 'z'] });
  assert.deepEqual(labels(await created(h, await h.req(`/api/shorten${query}`))), { title: 'Query title', tags: ['x', 'y', 'z'] });

  // A query parameter wins over the body field of the same name: every tags value, none of the body's.
  const won = await created(h, await postJson(h, { url, title: 'body', tags: ['from-body'] }, '?title=query&tags=q1&tags=q2'));
  assert.deepEqual(labels(won), { title: 'query', tags: ['q1', 'q2'] });
  const wonForm = await created(h, await postForm(h, `url=${encodeURIComponent(url)}&title=body&tags=from-body`, '?tags=q1'));
  assert.deepEqual(labels(wonForm), { title: 'body', tags: ['q1'] });

  // None: absent, null, empty; in every door.
  for (const r of [
    await postJson(h, { url }),
    await postJson(h, { url, title: null, tags: null }),
    await postJson(h, { url, title: '', tags: [] }),
    await postForm(h, `url=${encodeURIComponent(url)}&title=&tags=`),
    await h.req(`/api/shorten?url=${encodeURIComponent(url)}&title=&tags=`, { method: 'POST' }),
  ]) {
    assert.deepEqual(labels(await created(h, r)), { title: null, tags: [] });
  }
});

test('past a limit a create is 400 naming the field, in every door, and nothing is stored', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const url = 'https://example.com/limits';
  const tags21 = Array.from({ length: 21 }, (_, i) => `t${i}`);
  const long = 'x'.repeat(513);
  const tag51 = 'y'.repeat(51);
  const cases: [string, Reply, string][] = [
    ['JSON title 513', await postJson(h, { url, title: long }), 'title must be at most 512 characters long, not 513'],
    ['form title 513', await postForm(h, `url=${encodeURIComponent(url)}&title=${long}`), 'title must be at most 512 characters long, not 513'],
    [
      'query title 513',
      await h.req(`/api/shorten?url=${encodeURIComponent(url)}&title=${long}`, { method: 'POST' }),
      'title must be at most 512 characters long, not 513',
    ],
    ['JSON title number', await postJson(h, { url, title: 5 }), 'title must be a string of at most 512 characters, or null'],
    ['JSON 21 tags', await postJson(h, { url, tags: tags21 }), 'a link may have at most 20 distinct tags, not 21'],
    [
      'form 21 tags, repeated',
      await postForm(h, `url=${encodeURIComponent(url)}&${tags21.map((tag) => `tags=${tag}`).join('&')}`),
      'a link may have at most 20 distinct tags, not 21',
    ],
    [
      'query 21 tags, comma-separated',
      await h.req(`/api/shorten?url=${encodeURIComponent(url)}&tags=${tags21.join(',')}`, { method: 'POST' }),
      'a link may have at most 20 distinct tags, not 21',
    ],
    ['JSON 51-character tag', await postJson(h, { url, tags: [tag51] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51'],
    [
      'form 51-character tag',
      await postForm(h, `url=${encodeURIComponent(url)}&tags=ok,${tag51}`),
      'a tag must be 1 to 50 characters long (after trimming spaces), not 51',
    ],
    ['JSON empty tag', await postJson(h, { url, tags: ['  '] }), 'a tag must be 1 to 50 characters long (after trimming spaces), not 0'],
    ['JSON comma in a tag', await postJson(h, { url, tags: ['a,b'] }), 'a tag must not contain a comma: "a,b"'],
    ['JSON tags as a string', await postJson(h, { url, tags: 'a,b' }), 'tags must be an array of at most 20 strings'],
    ['JSON tag not a string', await postJson(h, { url, tags: ['a', 1] }), 'tags must be strings'],
    ['JSON NUL in a title', await postJson(h, { url, title: 'a\u0000b' }), 'title must not contain a NUL character'],
  ];
  for (const [what, r, expected] of cases) assert.equal(detail(r, what), expected, what);
  assert.deepEqual(codes(await list(h, '')), []);
  // The limits themselves are fine: 512 characters (astral ones count once), 20 tags of 50.
  const atLimits = await created(h, await postJson(h, { url, title: '😀'.repeat(512), tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(50, '-')) }));
  assert.equal([...atLimits.title!].length, 512);
  assert.equal(atLimits.tags.length, 20);
});

test('PATCH sets and clears title and tags; null clears the title, [] the tags; null tags and bad values are 400', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = codeOf(await postJson(h, { url: 'https://example.com/edit', title: 'Old', tags: ['old'] }));
  const patch = (body: unknown): Promise<Reply> =>
    h.req(`/api/urls/${code}`, { method: 'PATCH', headers: { ...ADMIN, ...JSON_TYPE }, body: JSON.stringify(body) });
  const edited = async (body: unknown): Promise<UrlRecord> => {
    const r = await patch(body);
    assert.equal(r.status, 200, r.body);
    const record = JSON.parse(r.body) as UrlRecord;
    assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}`)).body), record, 'what the edit answered is what is stored');
    return record;
  };
  assert.deepEqual(labels(await edited({ title: 'New title', tags: ['b', 'a', 'a'] })), { title: 'New title', tags: ['a', 'b'] });
  // One field alone leaves the other as it is.
  assert.deepEqual(labels(await edited({ tags: ['c'] })), { title: 'New title', tags: ['c'] });
  assert.deepEqual(labels(await edited({ title: 'Newer' })), { title: 'Newer', tags: ['c'] });
  assert.deepEqual(labels(await edited({ url: 'https://example.com/moved' })), { title: 'Newer', tags: ['c'] });
  assert.deepEqual(labels(await edited({ title: null })), { title: null, tags: ['c'] });
  assert.deepEqual(labels(await edited({ tags: [] })), { title: null, tags: [] });
  assert.deepEqual(labels(await edited({ title: 'Again' })), { title: 'Again', tags: [] });
  assert.deepEqual(labels(await edited({ title: '' })), { title: null, tags: [] }, 'an empty title is no title');

  for (const [body, expected] of [
    [{ tags: null }, 'tags must be an array; [] clears them'],
    [{ tags: 'a' }, 'tags must be an array of at most 20 strings'],
    [{ tags: ['a,b'] }, 'a tag must not contain a comma: "a,b"'],
    [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'a link may have at most 20 distinct tags, not 21'],
    [{ tags: ['z'.repeat(51)] }, 'a tag must be 1 to 50 characters long (after trimming spaces), not 51'],
    [{ title: 'x'.repeat(513) }, 'title must be at most 512 characters long, not 513'],
    [{ title: ['x'] }, 'title must be a string of at most 512 characters, or null'],
  ] as const) {
    assert.equal(detail(await patch(body), JSON.stringify(body).slice(0, 40)), expected);
  }
  assert.deepEqual(labels(JSON.parse((await h.req(`/api/urls/${code}`)).body) as UrlRecord), { title: null, tags: [] }, 'a refused edit changed nothing');
});

test('the list: tag keeps the links having every tag named (exactly, case-sensitively); q also matches titles; both combine with paging', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const make = async (url: string, title: string | null, tags: string[]): Promise<string> => codeOf(await postJson(h, { url, title, tags }));
  const a = await make('https://example.com/a', 'Quarterly Report', ['work', 'reports']);
  const b = await make('https://example.com/b', null, ['work']);
  const c = await make('https://example.com/c', 'Holiday photos', ['Work', 'family']);
  const d = await make('https://example.com/d', 'Für später', []);
  assert.deepEqual(codes(await list(h, '?tag=work')), [b, a]);
  assert.deepEqual(codes(await list(h, '?tag=Work')), [c], 'case-sensitive');
  assert.deepEqual(codes(await list(h, '?tag=work&tag=reports')), [a], 'repeated: every tag');
  assert.deepEqual(codes(await list(h, `?tag=${encodeURIComponent('reports, work')}`)), [a], 'commas separate, spaces are trimmed');
  assert.deepEqual(codes(await list(h, '?tag=wor')), [], 'a tag is compared whole');
  assert.deepEqual(codes(await list(h, '?tag=nothing')), []);
  assert.deepEqual(codes(await list(h, '?tag=')), [d, c, b, a], 'an empty filter filters nothing');
  // q: code, URL or title, case-insensitively.
  assert.deepEqual(codes(await list(h, '?q=report')), [a]);
  assert.deepEqual(codes(await list(h, '?q=PHOTOS')), [c]);
  assert.deepEqual(codes(await list(h, `?q=${encodeURIComponent('später')}`)), [d]);
  assert.deepEqual(codes(await list(h, '?q=example.com%2Fb')), [b]);
  // Together, and paged: X-Total-Count counts what the filters keep.
  assert.deepEqual(codes(await list(h, '?q=example&tag=work')), [b, a]);
  const page = await list(h, '?tag=work&limit=1&offset=1');
  assert.deepEqual(codes(page), [a]);
  assert.equal(page.headers['x-total-count'], '2');
  // A filter tag past the limits is 400 naming it; the key still comes first.
  assert.equal(detail(await list(h, `?tag=${'x'.repeat(51)}`), 'tag 51'), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51');
  assert.equal(
    detail(await list(h, `?${Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&')}`), '21 tags'),
    'a link may have at most 20 distinct tags, not 21',
  );
  const noKey = await h.req(`/api/urls?tag=${'x'.repeat(51)}`);
  assert.equal(noKey.status, 403);
  assert.equal(noKey.body, '');
});

test('a list holding non-ASCII titles and tags: Content-Length counts UTF-8 bytes, and a streamed list carries them whole', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const title = 'Ünïcödé 😀 标题 — «ok»';
  const code = codeOf(await postJson(h, { url: 'https://example.com/u', title, tags: ['ключ', '標籤'] }));
  const r = await list(h, '');
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], undefined);
  assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
  assert.notEqual(Buffer.byteLength(r.body), r.body.length, 'the body is not ASCII');
  const page = JSON.parse(r.body) as UrlList;
  assert.deepEqual(
    page.urls.map((u) => [u.short_code, u.title, u.tags]),
    [[code, title, ['ключ', '標籤']]],
  );

  // Long enough to be streamed (over 64 Ki characters): chunked, every character intact.
  const long = '標'.repeat(500);
  for (let i = 0; i < 150; i++) assert.equal((await postJson(h, { url: `https://example.com/${i}`, title: `${long}${i}` })).status, 201);
  const streamed = await list(h, '');
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers['transfer-encoding'], 'chunked');
  assert.equal(streamed.headers['content-length'], undefined);
  const all = JSON.parse(streamed.body) as UrlList;
  assert.equal(all.count, 151);
  assert.deepEqual(
    all.urls.slice(0, 2).map((u) => u.title),
    [`${long}149`, `${long}148`],
  );
  assert.equal(all.urls.at(-1)!.title, title);
  assert.equal(streamed.body, JSON.stringify(all));
});
