/**
 * A link's author across export and import (docs/api.md, export and import): a JSON Lines record
 * carries it, the CSV export's last column holds it (empty for none), and an import keeps it, so
 * export → import into a fresh instance gives every link back with its author, in both formats, on
 * the log store and on PostgreSQL. An author that is no key id is a row error; an empty one, `null`
 * or none is no author. The offline commands share the rows: the export of a log store's data dir
 * (a hot backup, `log-snapshot.ts`) yields the author, and `import FILE` keeps it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import type { LinkRecord } from '../../src/store/link-store.ts';
import { readLogSnapshot } from '../../src/transfer/log-snapshot.ts';
import { codeOf, runCli, start, tempDir, type Harness } from '../support/helpers.ts';
import { ADMIN, makeKey, ONE } from '../support/keys.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';

type Door = Pick<Harness, 'req'>;
type Format = 'jsonl' | 'csv';

const SETTINGS = { apiKeys: [ADMIN], logLevel: 'silent' } as const;
const TYPES: Readonly<Record<Format, string>> = { jsonl: 'application/x-ndjson', csv: 'text/csv' };
const BAD_AUTHOR = 'author must be a key id: 1 to 64 characters of A-Z a-z 0-9 - _, or empty or null for none';

/** Started once for the file when PostgreSQL is installed (a loud message and skipped tests when not). */
const pg = await pgServer();

interface Report {
  imported: number;
  skipped: number;
  errors: { line: number; detail: string }[];
}

async function imported(door: Door, format: Format, body: string): Promise<Report> {
  const r = await door.req('/api/import', { method: 'POST', headers: { 'content-type': TYPES[format], 'x-api-key': ADMIN }, body });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as Report;
}

async function exported(door: Door, format: Format): Promise<string> {
  const r = await door.req(`/api/export?format=${format}`, { headers: { 'x-api-key': ADMIN } });
  assert.equal(r.status, 200, r.body);
  return r.body;
}

/** The records of a JSON Lines export by code, without `short_url` (each instance has its own base URL). */
function byCode(jsonl: string): Map<string, Omit<UrlRecord, 'short_url'>> {
  const records = jsonl
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as UrlRecord);
  return new Map(records.map(({ short_url: _, ...rest }) => [rest.short_code, rest]));
}

const authors = (jsonl: string): Map<string, string | null> => new Map([...byCode(jsonl)].map(([code, r]) => [code, r.author]));

/**
 * Links with and without authors: one made with a stored editor key, and imported ones whose
 * author is another instance's id (starting with `-`, as a base64url id may, which CSV escapes
 * for spreadsheets), `null`, empty and absent. The author each must have, by code.
 */
async function seed(door: Door): Promise<Map<string, string | null>> {
  const editor = await makeKey(door, 'editor');
  const made = await door.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': editor.key },
    body: '{"url":"https://example.com/by-editor","title":"Mine, \\"quoted\\"","tags":["b","a"]}',
  });
  assert.equal(made.status, 201, made.body);
  const rows = [
    { short_code: 'other1', original_url: 'https://example.com/other', created_at: 1714000000, visit_count: 4, author: '-Other_inst1' },
    { short_code: 'nulled', original_url: 'https://example.com/null', created_at: 1714000001, author: null },
    { short_code: 'empty1', original_url: 'https://example.com/empty', created_at: 1714000002, author: '' },
    { short_code: 'absent', original_url: 'https://example.com/absent', created_at: 1714000003 },
  ];
  assert.deepEqual(await imported(door, 'jsonl', rows.map((r) => JSON.stringify(r)).join('\n')), { imported: 4, skipped: 0, errors: [] });
  return new Map([
    [codeOf(made), editor.id],
    ['other1', '-Other_inst1'],
    ['nulled', null],
    ['empty1', null],
    ['absent', null],
  ]);
}

/** The stores a test runs on: each opens a fresh instance. */
const STORES: { name: string; options: { skip?: string; timeout?: number }; open(t: TestContext): Promise<Door> }[] = [
  { name: 'log store', options: ONE, open: (t) => start(t, SETTINGS) },
  {
    name: 'PostgreSQL',
    options: pg ? { timeout: 60_000 } : { skip: NO_POSTGRES },
    async open(t) {
      const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
      t.after(() => app.close());
      return app;
    },
  },
];

for (const store of STORES) {
  for (const format of ['jsonl', 'csv'] as const) {
    test(`${format}: export → import into a fresh instance keeps each link's author (${store.name})`, store.options, async (t) => {
      const from = await store.open(t);
      const expected = await seed(from);
      const source = await exported(from, 'jsonl');
      assert.deepEqual(authors(source), expected, 'the export shows each author');
      const file = await exported(from, format);
      if (format === 'csv') {
        assert.equal(
          file.slice(0, file.indexOf('\r\n')),
          'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash',
        );
        assert.ok(file.includes(",https://example.com/other,1714000000,4,0,,,,'-Other_inst1,,,false,,,,\r\n"), file);
        assert.ok(file.includes(',https://example.com/absent,1714000003,0,0,,,,,,,false,,,,\r\n'), file);
      }
      const to = await store.open(t);
      assert.deepEqual(await imported(to, format, file), { imported: 5, skipped: 0, errors: [] });
      const moved = await exported(to, 'jsonl');
      assert.deepEqual(authors(moved), expected);
      assert.deepEqual(byCode(moved), byCode(source), 'every field came back, the author with the others');
    });
  }
}

test('an author that is no key id is a row error naming it; an empty one or null is no author (JSON Lines and CSV)', async (t) => {
  const h = await start(t, SETTINGS);
  const jsonl = [
    { url: 'https://example.com/1', code: 'jgood1', author: 'AbC-12_z' },
    { url: 'https://example.com/2', code: 'jbad01', author: 'has space' },
    { url: 'https://example.com/3', code: 'jbad02', author: 'x'.repeat(65) },
    { url: 'https://example.com/4', code: 'jbad03', author: 5 },
    { url: 'https://example.com/5', code: 'jbad04', author: 'ünï' },
    { url: 'https://example.com/6', code: 'jnone1', author: '' },
    { url: 'https://example.com/7', code: 'jnone2', author: null },
    { url: 'https://example.com/8', code: 'jlong1', author: 'y'.repeat(64) },
  ];
  assert.deepEqual(await imported(h, 'jsonl', jsonl.map((r) => JSON.stringify(r)).join('\n')), {
    imported: 4,
    skipped: 4,
    errors: [2, 3, 4, 5].map((line) => ({ line, detail: BAD_AUTHOR })),
  });
  const csv = [
    'URL,Code,Author',
    'https://example.com/a,cgood1,k3y_Id-9',
    'https://example.com/b,cbad01,a/b',
    'https://example.com/c,cnone1,',
    'https://example.com/d,cbad02,"x,y"',
  ];
  assert.deepEqual(await imported(h, 'csv', `${csv.join('\r\n')}\r\n`), {
    imported: 2,
    skipped: 2,
    errors: [3, 5].map((line) => ({ line, detail: BAD_AUTHOR })),
  });
  assert.deepEqual(
    authors(await exported(h, 'jsonl')),
    new Map([
      ['jgood1', 'AbC-12_z'],
      ['jnone1', null],
      ['jnone2', null],
      ['jlong1', 'y'.repeat(64)],
      ['cgood1', 'k3y_Id-9'],
      ['cnone1', null],
    ]),
  );
});

test("offline: the export of a log store's data dir yields each author, and import FILE keeps it", { ...ONE, timeout: 60_000 }, async (t) => {
  const h = await start(t, SETTINGS);
  const expected = await seed(h);
  // The hot backup reads the log a server holds: the creates carry their authors.
  const records: LinkRecord[] = [];
  for await (const rec of readLogSnapshot(h.dir, Math.floor(Date.now() / 1000))) records.push(rec);
  assert.deepEqual(new Map(records.map((r) => [r.code, r.author ?? null])), expected);
  const base = h.shortener.config.baseUrl;
  const http = await exported(h, 'jsonl');
  const backup = await runCli(['export', '--data-dir', h.dir, '--base-url', base]);
  assert.equal(backup.code, 0, backup.err);
  assert.equal(backup.out, http, 'the offline export is the HTTP export, authors included');

  const dir = tempDir(t);
  const file = join(dir, 'links.jsonl');
  writeFileSync(file, http);
  const into = join(dir, 'data');
  const done = await runCli(['import', file, '--data-dir', into]);
  assert.equal(done.code, 0, done.err);
  const back = await runCli(['export', '--data-dir', into, '--base-url', base]);
  assert.equal(back.code, 0, back.err);
  assert.deepEqual(authors(back.out), expected);
});
