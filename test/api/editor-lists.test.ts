/**
 * An `editor` key lists, searches and exports only the links it made, on every door (docs/security.md,
 * roles): REST's list and search, the links and visits exports, MCP's `list_urls`, Shlink's list,
 * tags, tag stats and overview, YOURLS' `stats` and `db-stats`. A `viewer` sees every link on the
 * same routes, and the instance's own totals (`/api/stats`) stay the viewer's and admin's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { ADMIN, denied, makeKey, ONE, READ_ALL } from '../support/keys.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

/** Makes a link with `key` (none: the `API_KEYS` admin, which records no author); its code. */
async function made(h: Harness, key: string, url: string, tags: string[] = []): Promise<string> {
  const res = await h.req('/api/shorten', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': key }, body: JSON.stringify({ url, tags }) });
  assert.equal(res.status, 201, res.body);
  return new URL(res.body).pathname.slice(1);
}

const codesOf = (jsonl: string): string[] =>
  jsonl
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { short_code: string }).short_code);

test("an editor's lists, searches, exports, tags and totals hold its own links on every door; a viewer's hold every link", ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], shlinkApi: true, yourlsApi: true, logLevel: 'silent' });
  const editor = await makeKey(h, 'editor');
  const other = await makeKey(h, 'editor');
  const viewer = await makeKey(h, 'viewer');
  const mine = [await made(h, editor.key, 'https://example.com/mine-1', ['news']), await made(h, editor.key, 'https://example.com/mine-2')];
  const theirs = [await made(h, other.key, 'https://example.com/theirs', ['news']), await made(h, ADMIN, 'https://example.com/admins', ['news', 'admin'])];
  // Visits: two of the editor's first link, three of another author's.
  for (const code of [mine[0]!, mine[0]!, theirs[0]!, theirs[0]!, theirs[1]!]) assert.equal((await h.req(`/${code}`)).status, 302);
  const newestFirst = (codes: string[]): string[] => [...codes].reverse();
  const all = newestFirst([...mine, ...theirs]);
  const as = (key: string, path: string, init: { method?: string; body?: string } = {}) =>
    h.req(path, { ...init, headers: { ...JSON_TYPE, 'x-api-key': key } });

  for (const [who, key, expected] of [
    ['editor', editor.key, newestFirst(mine)],
    ['viewer', viewer.key, all],
  ] as const) {
    // REST: the list, its total, a search and the tag filter.
    const list = await as(key, '/api/urls');
    assert.equal(list.status, 200, `${who}: ${list.body}`);
    assert.deepEqual(
      (JSON.parse(list.body) as { urls: { short_code: string }[] }).urls.map((u) => u.short_code),
      expected,
      `${who}: the list`,
    );
    assert.equal(list.headers['x-total-count'], String(expected.length), `${who}: the total`);
    const search = JSON.parse((await as(key, '/api/urls?q=example.com&tag=news')).body) as { urls: { short_code: string }[] };
    assert.deepEqual(
      search.urls.map((u) => u.short_code),
      expected.filter((c) => c === mine[0] || theirs.includes(c)),
      `${who}: a search with a tag`,
    );
    // The exports: links, and visits (the editor's two visits, or all five).
    const exported = await as(key, '/api/export');
    assert.equal(exported.status, 200);
    assert.deepEqual(codesOf(exported.body), [...expected].reverse(), `${who}: the links export, oldest first`);
    const visits = await as(key, '/api/visits/export');
    assert.equal(visits.status, 200);
    assert.deepEqual(
      codesOf(visits.body.replaceAll('"code"', '"short_code"')).sort(),
      who === 'editor' ? [mine[0]!, mine[0]!] : [mine[0]!, mine[0]!, theirs[0]!, theirs[0]!, theirs[1]!].sort(),
    );
    const ofTheirs = await as(key, `/api/visits/export?code=${theirs[0]}`);
    assert.equal(codesOf(ofTheirs.body.replaceAll('"code"', '"short_code"')).length, who === 'editor' ? 0 : 2, `${who}: another author's code exports nothing`);

    // MCP.
    const mcp = await h.req('/mcp', {
      method: 'POST',
      headers: { ...JSON_TYPE, accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_urls', arguments: {} } }),
    });
    const result = (JSON.parse(mcp.body) as { result: { structuredContent: { total: number; urls: { short_code: string }[] } } }).result;
    assert.deepEqual(
      result.structuredContent.urls.map((u) => u.short_code),
      expected,
      `${who}: list_urls`,
    );
    assert.equal(result.structuredContent.total, expected.length);

    // Shlink: the list, the tags with their counts, the overview.
    const shlink = (path: string) => h.req(`/rest/v3${path}`, { headers: { 'x-api-key': key } });
    const shortUrls = JSON.parse((await shlink('/short-urls')).body) as { shortUrls: { data: { shortCode: string }[] } };
    assert.deepEqual(
      shortUrls.shortUrls.data.map((u) => u.shortCode),
      expected,
      `${who}: Shlink's list`,
    );
    const tags = JSON.parse((await shlink('/tags/stats')).body) as {
      tags: { data: { tag: string; shortUrlsCount: number; visitsSummary: { total: number } }[] };
    };
    assert.deepEqual(
      tags.tags.data.map((d) => [d.tag, d.shortUrlsCount, d.visitsSummary.total]),
      who === 'editor'
        ? [['news', 1, 2]]
        : [
            ['admin', 1, 1],
            ['news', 3, 5],
          ],
      `${who}: Shlink's tag stats`,
    );
    const overview = JSON.parse((await shlink('/visits')).body) as { visits: { nonOrphanVisits: { total: number } } };
    assert.equal(overview.visits.nonOrphanVisits.total, who === 'editor' ? 2 : 5, `${who}: Shlink's overview`);

    // YOURLS: the totals and the top list.
    const yourls = (params: Record<string, string>) => h.req(`/yourls-api.php?${new URLSearchParams({ ...params, format: 'json', signature: key })}`);
    const db = JSON.parse((await yourls({ action: 'db-stats' })).body) as { 'db-stats': { total_links: number; total_clicks: number } };
    assert.deepEqual(db['db-stats'], { total_links: expected.length, total_clicks: who === 'editor' ? 2 : 5 }, `${who}: YOURLS' db-stats`);
    const stats = JSON.parse((await yourls({ action: 'stats', filter: 'top', limit: '10' })).body) as { links: Record<string, { shorturl: string }> };
    assert.deepEqual(
      Object.values(stats.links)
        .map((l) => new URL(l.shorturl).pathname.slice(1))
        .sort(),
      [...expected].sort(),
      `${who}: YOURLS' stats`,
    );
  }

  // The instance's totals count every author's visits: not an editor's to read.
  const totals = await as(editor.key, '/api/stats');
  assert.equal(totals.status, 403);
  assert.deepEqual(JSON.parse(totals.body), { detail: denied('editor', READ_ALL) });
  assert.equal((await as(viewer.key, '/api/stats')).status, 200);
});
