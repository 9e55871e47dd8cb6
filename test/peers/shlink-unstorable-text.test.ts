/**
 * Regression (issue 43): text no store can hold (docs/api.md, "Text every store can hold") in a
 * Shlink list's `searchTerm`, `tags[]` or `excludeTags[]` is Shlink's `invalid-data` naming the
 * parameter, on the log store and on PostgreSQL alike. It was a 500 on PostgreSQL (its `text`
 * cannot hold a NUL) and an empty list on the log store. The rules are the service's (issue 45):
 * the reason is the REST list's, the parameter Shlink's, and the lengths are counted in characters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { TARGET } from '../support/cluster.ts';
import { LogCapture, start, type Reply, type RequestOptions } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { pgServer } from '../support/pg.ts';

const KEY = 'k1';
const SETTINGS = { shlinkApi: true, apiKeys: [KEY] };

const refusal = (name: string, detail: string): string =>
  JSON.stringify({ type: 'https://shlink.io/api/error/invalid-data', title: 'Invalid data', detail, status: 400, invalidElements: [name] });

const NUL_IN_SEARCH = 'searchTerm must not contain a NUL character';
const NUL_IN_TAG = 'a tag must not contain a NUL character';
/** 201 characters of 2 UTF-16 units each. */
const EMOJI = encodeURIComponent('\u{1F600}');

/** Each request, the parameter its refusal names, and the reason. */
const REFUSED: readonly [path: string, name: string, detail: string][] = [
  ['/rest/v3/short-urls?searchTerm=a%00b', 'searchTerm', NUL_IN_SEARCH],
  ['/rest/v3/short-urls?searchTerm=%00', 'searchTerm', NUL_IN_SEARCH],
  [`/rest/v3/short-urls?searchTerm=${EMOJI.repeat(201)}`, 'searchTerm', 'searchTerm must be 1 to 200 characters long, not 201'],
  ['/rest/v3/short-urls?tags[]=a%00b', 'tags', NUL_IN_TAG],
  ['/rest/v3/short-urls?tags%5B%5D=a%00b', 'tags', NUL_IN_TAG],
  ['/rest/v3/short-urls?tags=a%00b', 'tags', NUL_IN_TAG],
  ['/rest/v3/short-urls?tags[]=news&tags[]=a%00b&tagsMode=all', 'tags', NUL_IN_TAG],
  ['/rest/v3/short-urls?tags[]=news&tags[]=%00&tagsMode=any', 'tags', NUL_IN_TAG],
  [`/rest/v3/short-urls?tags[]=${'t'.repeat(51)}`, 'tags', 'a tag must be 1 to 50 characters long (after trimming spaces), not 51'],
  ['/rest/v3/short-urls?excludeTags[]=a%00b', 'excludeTags', NUL_IN_TAG],
  ['/rest/v3/short-urls?searchTerm=news&orderBy=title-ASC&tags[]=%00', 'tags', NUL_IN_TAG],
  ['/rest/v3/tags?searchTerm=a%00b', 'searchTerm', NUL_IN_SEARCH],
  ['/rest/v3/tags/stats?searchTerm=a%00b', 'searchTerm', NUL_IN_SEARCH],
];

type Req = (path: string, options?: RequestOptions) => Promise<Reply>;

async function assertRefusals(req: Req, logs: LogCapture, store: string): Promise<void> {
  const created = await req('/rest/v3/short-urls', {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: JSON.stringify({ longUrl: 'https://example.com/news', tags: ['news'], title: 'news' }),
  });
  assert.equal(created.status, 200, created.body);
  for (const [path, name, detail] of REFUSED) {
    const r = await req(path, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 400, `${store} ${path}: ${r.body}`);
    assert.equal(r.headers['content-type'], 'application/problem+json', `${store} ${path}`);
    assert.equal(r.body, refusal(name, detail), `${store} ${path}`);
  }
  // At the limits, in characters: 200 emoji (400 UTF-16 units) are a search, 50 an accepted tag.
  for (const path of [`/rest/v3/short-urls?searchTerm=${EMOJI.repeat(200)}`, `/rest/v3/short-urls?tags[]=${EMOJI.repeat(50)}`]) {
    const r = await req(path, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 200, `${store} ${path}: ${r.body}`);
    assert.equal((JSON.parse(r.body) as { shortUrls: { data: unknown[] } }).shortUrls.data.length, 0, `${store} ${path}`);
  }
  // A surrogate's UTF-8 is no UTF-8: the query decodes it as U+FFFD, which is text, and matches nothing.
  const replaced = await req('/rest/v3/short-urls?searchTerm=%ED%A0%80', { headers: { 'x-api-key': KEY } });
  assert.equal(replaced.status, 200, `${store}: ${replaced.body}`);
  assert.deepEqual(JSON.parse(replaced.body), {
    shortUrls: { data: [], pagination: { currentPage: 1, pagesCount: 1, itemsPerPage: 10, itemsInCurrentPage: 0, totalItems: 0 } },
  });
  assert.deepEqual(
    logs.lines.filter((l) => l['level'] === 'error'),
    [],
    `${store}: nothing unexpected logged`,
  );
}

test('a NUL in searchTerm, tags[] or excludeTags[] is invalid-data naming it (the log store; PostgreSQL in the cluster pass)', async (t) => {
  const h = await start(t, { ...SETTINGS, logLevel: 'warn' });
  await assertRefusals(h.req, h.logs, TARGET === 'cluster' ? 'cluster' : 'log store');
});

// The cluster pass runs the test above on PostgreSQL already.
const ON_ITS_OWN_DATABASE = TARGET === 'cluster' ? { skip: "the test above runs on the cluster's PostgreSQL in this pass" } : {};

test('PostgreSQL: the same refusals, never a 500', { ...ON_ITS_OWN_DATABASE, timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const logs = new LogCapture();
  const app = await openOnDatabase({ ...SETTINGS, logger: createLogger('warn', logs) }, await pg.createDatabase());
  t.after(() => app.close());
  await assertRefusals(app.req, logs, 'PostgreSQL');
});
