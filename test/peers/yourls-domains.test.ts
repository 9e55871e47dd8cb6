/**
 * YOURLS' API on several domains (docs/compat.md): it answers on the domain it was called on. A
 * `shorturl` sent to a domain's host makes the link there (its short URL on that host), the one
 * long URL per domain rule holds per domain, and `expand`, `url-stats`, `stats` and `db-stats`
 * read that domain's links only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness, type Reply } from '../support/helpers.ts';

const KEY = 'yourls-key-1';
const GO = 'go.example';

function call(h: Harness, params: Record<string, string>, host?: string): Promise<Reply> {
  const query = new URLSearchParams({ signature: KEY, format: 'json', ...params });
  return h.req(`/yourls-api.php?${query}`, host === undefined ? {} : { headers: { host } });
}

const body = (r: Reply): Record<string, unknown> => JSON.parse(r.body) as Record<string, unknown>;

test("YOURLS answers on the domain it was called on: creates, expands and counts that domain's links", async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY], domains: [GO], logLevel: 'silent' });
  const base = h.shortener.config.baseUrl;
  const onGo = body(await call(h, { action: 'shorturl', url: 'https://example.com/page', keyword: 'page01' }, GO));
  assert.equal(onGo['shorturl'], `http://${GO}/page01`);
  // The same long URL on the default domain is another short URL there, not the go.example one.
  const onDefault = body(await call(h, { action: 'shorturl', url: 'https://example.com/page', keyword: 'page01' }));
  assert.equal(onDefault['shorturl'], `${base}/page01`);
  // Asked again on go.example, the long URL is already stored there.
  const again = await call(h, { action: 'shorturl', url: 'https://example.com/page' }, GO);
  assert.equal(body(again)['shorturl'], `http://${GO}/page01`);
  assert.equal(body(again)['code'], 'error:url');

  assert.equal((await h.req('/page01', { headers: { host: GO } })).status, 302);
  const expanded = body(await call(h, { action: 'expand', shorturl: `http://${GO}/page01` }, GO));
  assert.deepEqual([expanded['keyword'], expanded['shorturl']], ['page01', `http://${GO}/page01`]);
  const stats = body(await call(h, { action: 'url-stats', shorturl: 'page01' }, GO));
  assert.equal((stats['link'] as { clicks: number }).clicks, 1);
  const defaultStats = body(await call(h, { action: 'url-stats', shorturl: 'page01' }));
  assert.equal((defaultStats['link'] as { clicks: number }).clicks, 0);
  const db = body(await call(h, { action: 'db-stats' }, GO));
  assert.deepEqual(db['db-stats'], { total_links: 1, total_clicks: 1 });
});
