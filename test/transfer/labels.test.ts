/**
 * Titles and tags through export and import (docs/api.md, export and import), without a store:
 * the CSV columns `title,tags` come last, `tags` one cell joined with commas and quoted as CSV
 * requires; JSON Lines carry both as the record does; the import reads them from this service's
 * files, from YOURLS' and Shlink's columns, checks them like a create, and stores them as given.
 */
import { createDomains } from '../../src/links/domains.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LinkRecord, LinkStore } from '../../src/store/link-store.ts';
import { CSV_COLUMNS, exportText } from '../../src/transfer/export.ts';
import { importLinks, type ImportResult } from '../../src/transfer/import.ts';

const RULES = { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 };
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;

/** A title CSV must quote: a comma, a quote and a line break, in scripts beyond ASCII. */
const TITLE = 'Ünïcödé, "quoted"\r\nline 2 😀 标题';

const RECORDS: LinkRecord[] = [
  {
    code: 'titled',
    url: 'https://example.com/1',
    createdAt: 1714000000,
    retentionDays: 0,
    visits: 2,
    untracked: 2,
    maxVisits: null,
    title: TITLE,
    tags: ['a', 'with space', 'Ä'],
  },
  { code: 'onetag', url: 'https://example.com/2', createdAt: 1714000001, retentionDays: 0, visits: 0, untracked: 0, maxVisits: 3, tags: ['solo'] },
  { code: 'bare01', url: 'https://example.com/3', createdAt: 1714000002, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null },
];

async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

async function exported(records: readonly LinkRecord[], format: 'csv' | 'jsonl'): Promise<string> {
  let text = '';
  for await (const piece of exportText(each(records), format, createDomains(RULES.baseUrl))) text += piece;
  return text;
}

/** Imports `body` into a store that keeps what it is given. */
async function imported(body: string, format: 'csv' | 'jsonl'): Promise<{ result: ImportResult; stored: LinkRecord[] }> {
  const stored: LinkRecord[] = [];
  const store = { insert: (rec: LinkRecord) => (stored.push(rec), true) } as unknown as LinkStore;
  const result = await importLinks(each([body]), format, { store, rules: RULES, now: () => NOW * 1000, randomCode: () => `gen${stored.length}xxx` });
  return { result, stored };
}

test('CSV export: title and tags follow max_visits; tags one cell joined with commas; empty when there are none', async () => {
  assert.deepEqual(CSV_COLUMNS, [
    'short_code',
    'short_url',
    'original_url',
    'created_at',
    'visit_count',
    'retention_days',
    'max_visits',
    'title',
    'tags',
    'author',
    'domain',
    'rules',
    'forward_query',
    'valid_since',
    'valid_until',
    'fallback_url',
    'password_hash',
  ]);
  assert.equal(
    await exported(RECORDS, 'csv'),
    'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash\r\n' +
      'titled,https://s.example/titled,https://example.com/1,1714000000,2,0,,"Ünïcödé, ""quoted""\r\nline 2 😀 标题","a,with space,Ä",,,,false,,,,\r\n' +
      'onetag,https://s.example/onetag,https://example.com/2,1714000001,0,0,3,,solo,,,,false,,,,\r\n' +
      'bare01,https://s.example/bare01,https://example.com/3,1714000002,0,0,,,,,,,false,,,,\r\n',
  );
});

test('JSON Lines export: each record carries title and tags, null and [] when it has none', async () => {
  const lines = (await exported(RECORDS, 'jsonl')).split('\n');
  assert.equal(lines.pop(), '');
  assert.deepEqual(
    lines
      .map((l) => JSON.parse(l) as { short_code: string; title: unknown; tags: unknown })
      .map(({ short_code, title, tags }) => ({ short_code, title, tags })),
    [
      { short_code: 'titled', title: TITLE, tags: ['a', 'with space', 'Ä'] },
      { short_code: 'onetag', title: null, tags: ['solo'] },
      { short_code: 'bare01', title: null, tags: [] },
    ],
  );
  // Non-ASCII stays as it is (JSON.stringify escapes none of it), line breaks inside strings are escaped.
  assert.ok(lines[0]!.includes('"title":"Ünïcödé, \\"quoted\\"\\r\\nline 2 😀 标题"'), lines[0]);
});

for (const format of ['csv', 'jsonl'] as const) {
  test(`${format}: export, then import, stores the same titles and tags (a record without them stores neither field)`, async () => {
    const { result, stored } = await imported(await exported(RECORDS, format), format);
    assert.deepEqual(result, { ok: true, imported: 3, skipped: 0, errors: [] });
    assert.deepEqual(stored, RECORDS);
    // Absent, not null or []: a link without labels costs the stores nothing for them.
    assert.equal(Object.hasOwn(stored[2]!, 'title') || Object.hasOwn(stored[2]!, 'tags'), false);
    assert.equal(Object.hasOwn(stored[1]!, 'title'), false);
  });
}

test("YOURLS' and Shlink's exports: their title and tags columns are read", async () => {
  // A YOURLS export (its plugins write keyword,url,title,timestamp,ip,clicks).
  const yourls = await imported(
    'keyword,url,title,timestamp,ip,clicks\r\nyour01,https://example.com/y,YOURLS title,2024-04-01 10:00:00,127.0.0.1,5\r\n',
    'csv',
  );
  assert.deepEqual(yourls.result, { ok: true, imported: 1, skipped: 0, errors: [] });
  assert.deepEqual([yourls.stored[0]!.title, yourls.stored[0]!.tags], ['YOURLS title', undefined]);
  // Shlink's web client up to 2.x: createdAt,shortUrl,longUrl,title,tags,visits, the tags joined
  // with commas (no code column: a code is generated).
  const shlink2 = await imported(
    'createdAt,shortUrl,longUrl,title,tags,visits\n2024-04-01T10:00:00+00:00,https://s.test/abc,https://example.com/s,Shlink title,"news, tech ,news",4\n',
    'csv',
  );
  assert.deepEqual(shlink2.result, { ok: true, imported: 1, skipped: 0, errors: [] });
  assert.deepEqual([shlink2.stored[0]!.title, shlink2.stored[0]!.tags, shlink2.stored[0]!.visits], ['Shlink title', ['news', 'tech'], 4]);
  // Its later versions add domain and shortCode and join the tags with "|", which is a character a
  // tag may hold: the cell is one tag (docs/api.md says to replace the bars first).
  const shlink3 = await imported(
    'createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n2024-04-01T10:00:00+00:00,s.test,shl001,https://s.test/shl001,https://example.com/s,,news|tech,4\n',
    'csv',
  );
  assert.deepEqual([shlink3.stored[0]!.code, shlink3.stored[0]!.title, shlink3.stored[0]!.tags], ['shl001', undefined, ['news|tech']]);
  // Header names compare case-insensitively, as for every column.
  const upper = await imported('URL,TITLE,TAGS\nhttps://example.com/u,Upper,x\n', 'csv');
  assert.deepEqual([upper.stored[0]!.title, upper.stored[0]!.tags], ['Upper', ['x']]);
});

test('an imported row is checked like a create: labels past the limits are skipped and reported by line', async () => {
  const tags21 = Array.from({ length: 21 }, (_, i) => `t${String(i).padStart(2, '0')}`);
  const csv = [
    'url,title,tags',
    `https://example.com/1,${'x'.repeat(513)},`,
    `https://example.com/2,,"${tags21.join(',')}"`,
    `https://example.com/3,,${'y'.repeat(51)}`,
    // 20 distinct tags out of 21 given: one is a duplicate, so the row is good.
    `https://example.com/4,${'z'.repeat(512)},"${[...tags21.slice(0, 20), 't00'].join(',')}"`,
  ].join('\n');
  const { result, stored } = await imported(csv, 'csv');
  assert.deepEqual(result, {
    ok: true,
    imported: 1,
    skipped: 3,
    errors: [
      { line: 2, detail: 'title must be at most 512 characters long, not 513' },
      { line: 3, detail: 'a link may have at most 20 distinct tags, not 21' },
      { line: 4, detail: 'a tag must be 1 to 50 characters long (after trimming spaces), not 51' },
    ],
  });
  assert.deepEqual(
    stored.map((r) => [r.url, r.tags?.length]),
    [['https://example.com/4', 20]],
  );

  // JSON Lines are typed: tags is an array, and a comma inside one of its tags is refused.
  const jsonl = await imported(
    [
      { url: 'https://example.com/a', tags: ['a,b'] },
      { url: 'https://example.com/b', tags: 'a,b' },
      { url: 'https://example.com/c', title: 5 },
      { url: 'https://example.com/d', title: '', tags: null },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n'),
    'jsonl',
  );
  assert.deepEqual(jsonl.result, {
    ok: true,
    imported: 1,
    skipped: 3,
    errors: [
      { line: 1, detail: 'a tag must not contain a comma: "a,b"' },
      { line: 2, detail: 'tags must be an array of at most 20 strings' },
      { line: 3, detail: 'title must be a string of at most 512 characters, or null' },
    ],
  });
  // An empty title is no title, null tags none.
  assert.deepEqual(jsonl.stored, [
    { code: 'gen0xxx', url: 'https://example.com/d', createdAt: NOW, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null },
  ]);
});
