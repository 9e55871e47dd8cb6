/**
 * Export, then import into an empty instance: the same records, in the same order, byte for byte
 * in both formats (the links, then their visits: a link's visits with events come back as events);
 * and a re-import of the same file stores nothing twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const KEY = 'admin-key';
const NOW = 1714564800_000;
const BASE = 'https://s.example/go';

async function exported(h: Harness, format: 'jsonl' | 'csv'): Promise<string> {
  const r = await h.req(`/go/api/export?format=${format}`, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  return r.body;
}

/** The visits of `from` moved into `to` (docs/analytics.md, moving history). */
async function movedVisits(from: Harness, to: Harness): Promise<void> {
  const file = await from.req('/go/api/visits/export', { headers: { 'x-api-key': KEY } });
  assert.equal(file.status, 200);
  const r = await to.req('/go/api/visits/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY }, body: file.body });
  assert.equal(r.status, 200, r.body);
}

async function imported(h: Harness, type: string, body: string): Promise<{ imported: number; skipped: number; errors: { line: number; detail: string }[] }> {
  const r = await h.req('/go/api/import', { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
}

/** A title CSV must quote (a comma, a quote, a line break) in scripts beyond ASCII. */
const TITLE = 'Ünïcödé, "quoted"\r\nline 2 😀 标题';

/** An instance holding links made every way: shortened, visited, with custom codes, retention and limits, titles and tags, imported. */
async function source(t: Parameters<typeof start>[0]): Promise<Harness> {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW, baseUrl: BASE });
  const made = await h.req('/go/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/shortened', title: TITLE, tags: ['b', ' with space ', 'a', 'Ä'] }),
  });
  assert.equal(made.status, 201, made.body);
  const a = made.body.slice(made.body.lastIndexOf('/') + 1);
  const b = await h.shorten('https://example.com/kept-a-while', 30);
  for (let i = 0; i < 3; i++) assert.equal((await h.req(`/go/${a}`)).status, 302);
  await h.req(`/go/${b}`);
  const lines = [
    {
      short_code: 'Custom-Code_',
      original_url: 'https://example.com/unicode/\u00e9\u00e8?q=a b&x="y"',
      created_at: 1600000000,
      visit_count: 99,
      retention_days: 0,
      title: 'Imported',
      tags: ['Zeta', 'alpha'],
    },
    { short_code: 'limited', original_url: 'https://example.com/limited', created_at: 1714000000, visit_count: 1, retention_days: 10, max_visits: 5 },
    { original_url: 'https://example.com/comma,in,path', created_at: 1714500000 },
  ];
  const report = await imported(h, 'application/x-ndjson', lines.map((l) => JSON.stringify(l)).join('\n'));
  assert.deepEqual(report, { imported: 3, skipped: 0, errors: [] });
  const limited = (await exported(h, 'jsonl')).split('\n').find((l) => l.includes('"limited"'));
  assert.deepEqual(JSON.parse(limited!), {
    short_code: 'limited',
    domain: null,
    short_url: `${BASE}/limited`,
    original_url: 'https://example.com/limited',
    created_at: 1714000000,
    visit_count: 1,
    untracked_visits: 1,
    retention_days: 10,
    max_visits: 5,
    expires_at: 1714000000 + 10 * 86400,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  });
  // The labels as sent (tags trimmed and sorted), so that an identical export below proves they
  // travelled, not that both sides lost them alike.
  const labels = async (code: string): Promise<unknown> => {
    const { title, tags } = JSON.parse((await h.req(`/go/api/urls/${code}`)).body) as { title: unknown; tags: unknown };
    return { title, tags };
  };
  assert.deepEqual(await labels(a), { title: TITLE, tags: ['a', 'b', 'with space', 'Ä'] });
  assert.deepEqual(await labels('Custom-Code_'), { title: 'Imported', tags: ['Zeta', 'alpha'] });
  const csv = await exported(h, 'csv');
  assert.ok(csv.includes(`,Imported,"Zeta,alpha",,,,false,,,,\r\n`), csv);
  assert.ok(csv.includes(`,"${TITLE.replaceAll('"', '""')}","a,b,with space,Ä",,,,false,,,,\r\n`), csv);
  return h;
}

for (const [format, type] of [
  ['jsonl', 'application/x-ndjson'],
  ['csv', 'text/csv'],
] as const) {
  test(`${format}: export → import into an empty instance → the identical export`, async (t) => {
    const from = await source(t);
    const file = await exported(from, format);
    // Counted in JSON Lines, whose strings escape line breaks (a CSV title may hold one).
    assert.equal((await exported(from, 'jsonl')).split('\n').filter(Boolean).length, 5);
    const to = await start(t, { apiKeys: [KEY], now: () => NOW, baseUrl: BASE });
    assert.deepEqual(await imported(to, type, file), { imported: 5, skipped: 0, errors: [] });
    // The links alone carry their counts as untracked visits; their events follow.
    await movedVisits(from, to);
    assert.equal(await exported(to, format), file);
    // The other format agrees as well: the records are the same, not just this rendering of them.
    const other = format === 'csv' ? 'jsonl' : 'csv';
    assert.equal(await exported(to, other), await exported(from, other));
    // Importing the same file again stores nothing twice: every row is a taken code.
    const again = await imported(to, type, file);
    assert.equal(again.imported, 0);
    assert.equal(again.skipped, 5);
    assert.deepEqual(new Set(again.errors.map((e) => e.detail)), new Set(['code already in use']));
    assert.equal(to.shortener.count, 5);
  });
}
