/**
 * Export and import of links on several domains (docs/api.md, export and import; domains): the
 * `domain` column comes last in CSV (empty for the default domain) and is a field of each JSON
 * line; an import puts each row on its domain (a host the instance does not serve, as another
 * shortener's export names its own, on the default one), and an export imported into a fresh
 * instance exports the same. On the log store and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';

type Door = Pick<Harness, 'req'>;

const KEY = 'admin-key';
const SETTINGS = { apiKeys: [KEY], domains: ['go.example'], logLevel: 'silent', baseUrl: 'https://s.example' } as const;
const HEADER =
  'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash';

const pg = await pgServer();

async function importText(door: Door, type: string, body: string): Promise<{ imported: number; skipped: number; errors: { line: number; detail: string }[] }> {
  const r = await door.req('/api/import', { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}

async function exported(door: Door, format: 'csv' | 'jsonl'): Promise<string> {
  const r = await door.req(`/api/export?format=${format}`, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, r.body);
  return r.body;
}

/** Rows of one code on two domains, and one on a domain the instance does not have. */
const LINES = [
  { code: 'same01', url: 'https://example.com/default', created_at: 1714000000, visit_count: 2 },
  { code: 'same01', url: 'https://example.com/go', created_at: 1714000001, domain: 'GO.example' },
  { code: 'other1', url: 'https://example.com/x', created_at: 1714000002, domain: 'x.example' },
  { code: 'same01', url: 'https://example.com/again', created_at: 1714000003, domain: 'go.example' },
];

async function assertImportByDomain(door: Door, shortBase: string): Promise<void> {
  const report = await importText(door, 'application/x-ndjson', LINES.map((l) => JSON.stringify(l)).join('\n'));
  assert.deepEqual(report, { imported: 3, skipped: 1, errors: [{ line: 4, detail: 'code already in use' }] });
  assert.equal(
    await exported(door, 'csv'),
    `${HEADER}\r\n` +
      `same01,${shortBase}/same01,https://example.com/default,1714000000,2,0,,,,,,,false,,,,\r\n` +
      'same01,https://go.example/same01,https://example.com/go,1714000001,0,0,,,,,go.example,,false,,,,\r\n' +
      `other1,${shortBase}/other1,https://example.com/x,1714000002,0,0,,,,,,,false,,,,\r\n`,
  );
  const lines = (await exported(door, 'jsonl'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { short_code: string; domain: string | null });
  assert.deepEqual(
    lines.map((l) => [l.short_code, l.domain]),
    [
      ['same01', null],
      ['same01', 'go.example'],
      ['other1', null],
    ],
  );
  // Each redirects on its own host.
  const goHit = await door.req('/same01', { headers: { host: 'go.example' } });
  assert.equal(goHit.headers.location, 'https://example.com/go');
}

test("an import puts each row on its domain, another's on the default one; the export carries the domain (log store)", async (t) => {
  await assertImportByDomain(await start(t, SETTINGS), 'https://s.example');
});

test("an import puts each row on its domain, another's on the default one; the export carries the domain (PostgreSQL)", {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
  t.after(() => app.close());
  // openOnDatabase sets the base URL to the server's own address.
  const report = await importText(app, 'application/x-ndjson', LINES.map((l) => JSON.stringify(l)).join('\n'));
  assert.deepEqual([report.imported, report.skipped], [3, 1]);
  const csv = (await exported(app, 'csv')).split('\r\n');
  assert.equal(csv[0], HEADER);
  assert.deepEqual(
    csv.slice(1, -1).map((row) => row.split(',')[HEADER.split(',').indexOf('domain')]),
    ['', 'go.example', ''],
    'the domain cell of each row (the last piece is the end of the text)',
  );
});

test('an export of several domains imported into a fresh instance exports the same, in both formats', async (t) => {
  const first = await start(t, SETTINGS);
  await importText(first, 'application/x-ndjson', LINES.map((l) => JSON.stringify(l)).join('\n'));
  for (const format of ['csv', 'jsonl'] as const) {
    const text = await exported(first, format);
    const fresh = await start(t, SETTINGS);
    const report = await importText(fresh, format === 'csv' ? 'text/csv' : 'application/x-ndjson', text);
    assert.deepEqual(report, { imported: 3, skipped: 0, errors: [] }, format);
    assert.equal(await exported(fresh, format), text, format);
  }
});
