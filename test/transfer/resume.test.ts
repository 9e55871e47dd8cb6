/**
 * An import the store stopped part-way resumes exactly (docs/api.md, export and import): the 503
 * names the first line not stored; every row before it is durable and none from it on was written,
 * not even the rows queued behind the failed write that a disk with a little room left would take;
 * and `?from_line=` (the 503's `resume`) finishes the job with each row stored once, rows without
 * codes included, so the rows are compared as a multiset of URLs. The disk fills at a random row,
 * from a list of seeds (a failure names its seed); on PostgreSQL the database refuses one row with
 * its own "disk full" error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCodeSource } from '../../src/links/codes.ts';
import { createLogger } from '../../src/log.ts';
import postgres from 'postgres';
import { openPostgresStore } from '../../src/store/postgres/connect.ts';
import { importLinks } from '../../src/transfer/import.ts';
import { onOneProcess } from '../support/cluster.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { dataDir, type Harness } from '../support/helpers.ts';
import { pgServer } from '../support/pg.ts';
import { prng } from '../support/crash-harness.ts';

const KEY = 'admin-key';
const ROWS = 1500;
const SEEDS = [1, 2, 3, 4, 5, 6];

interface ImportFile {
  body: string;
  /** The URL of each valid row by its line. */
  urls: Map<number, string>;
}

/**
 * `ROWS` rows without codes; the last hundred repeat earlier URLs (a multiset, not a set), one
 * row is invalid and a blank line is in the way, so lines and rows differ.
 */
function importFile(format: 'jsonl' | 'csv'): ImportFile {
  const lines: string[] = format === 'csv' ? ['original_url,visit_count'] : [];
  const urls = new Map<number, string>();
  for (let i = 0; i < ROWS; i++) {
    if (i === 3) lines.push('');
    if (i === 1) {
      lines.push(format === 'csv' ? 'not a url,0' : '{"url":"not a url"}');
      continue;
    }
    const url = `https://example.com/row/${i % (ROWS - 100)}`;
    lines.push(format === 'csv' ? `${url},${i}` : JSON.stringify({ url, visit_count: i }));
    urls.set(lines.length, url);
  }
  return { body: `${lines.join('\n')}\n`, urls };
}

const sorted = (urls: Iterable<string>): string[] => [...urls].sort();
const before = (file: ImportFile, line: number): string[] => sorted([...file.urls].filter(([l]) => l < line).map(([, u]) => u));

async function storedUrls(h: Harness): Promise<string[]> {
  const r = await h.req('/s/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  return sorted(
    r.body
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { original_url: string }).original_url),
  );
}

for (const seed of SEEDS) {
  const format = seed % 2 === 0 ? 'csv' : 'jsonl';
  test(
    `log store, seed ${seed} (${format}): the disk fills at a random row; the 503's resume stores every row exactly once`,
    onOneProcess('it fills its disk'),
    async (t) => {
      const file = importFile(format);
      const type = format === 'csv' ? 'text/csv' : 'application/x-ndjson';
      const dir = dataDir(t);
      const { fs, disk } = fillableDisk();
      let h = await dir.start({ apiKeys: [KEY], fs, basePath: '/s' });
      // Room for about 25 to 1100 of the 1500 rows (an entry is about 80 bytes).
      disk.bytesLeft = 2_000 + Math.floor(prng(seed)() * 86_000);
      const r = await h.req('/s/api/import', { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body: file.body });
      assert.equal(r.status, 503, `seed ${seed}: ${r.body}`);
      assert.equal(r.headers.connection, 'close');
      const failed = JSON.parse(r.body) as { detail: string; imported: number; line: number; resume: string };
      assert.deepEqual(failed, {
        detail: 'storage is not writable right now (ENOSPC); nothing was changed, try again later',
        imported: failed.imported,
        line: failed.line,
        resume: `/s/api/import?from_line=${failed.line}`,
      });
      const expected = before(file, failed.line);
      assert.ok(expected.length > 0 && expected.length < file.urls.size, `seed ${seed}: line ${failed.line}`);
      assert.equal(failed.imported, expected.length, `seed ${seed}: imported counts the rows before the line`);
      assert.ok(file.urls.has(failed.line), `seed ${seed}: line ${failed.line} is a row's`);
      assert.deepEqual(await storedUrls(h), expected, `seed ${seed}: every row before line ${failed.line}, none from it on`);

      // Durable: a restart reads the same back. Then the disk has room again, and the resume finishes.
      await h.close(true);
      disk.bytesLeft = Infinity;
      h = await dir.start({ apiKeys: [KEY], fs, basePath: '/s' });
      assert.deepEqual(await storedUrls(h), expected, `seed ${seed}: after a restart`);
      const resumed = await h.req(failed.resume, { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body: file.body });
      assert.equal(resumed.status, 200, resumed.body);
      // The invalid row (line 2 or 3) lies before the line: neither checked nor reported again.
      assert.deepEqual(JSON.parse(resumed.body), { imported: file.urls.size - failed.imported, skipped: 0, errors: [] });
      assert.deepEqual(await storedUrls(h), sorted(file.urls.values()), `seed ${seed}: each row exactly once`);
    },
  );
}

test('from_line must be an integer of 1 or more: 400 naming it, nothing stored', onOneProcess('it reads its own store'), async (t) => {
  const h = await dataDir(t).start({ apiKeys: [KEY] });
  for (const bad of ['0', '-1', '1.5', 'x', '', '01', '1e3', '9999999999999999']) {
    const r = await h.req(`/api/import?from_line=${encodeURIComponent(bad)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
      body: '{"url":"https://example.com/x"}\n',
    });
    assert.equal(r.status, 400, bad);
    assert.deepEqual(JSON.parse(r.body), { detail: 'from_line must be an integer of 1 or more (the line to resume the import from)' }, bad);
  }
  assert.equal(h.shortener.count, 0);
  // A CSV header is read wherever from_line points: the rows after it keep their meaning.
  const r = await h.req('/api/import?from_line=3', {
    method: 'POST',
    headers: { 'content-type': 'text/csv', 'x-api-key': KEY },
    body: 'visits,url\n1,https://example.com/1\n2,https://example.com/2\n',
  });
  assert.deepEqual(JSON.parse(r.body), { imported: 1, skipped: 0, errors: [] });
  const exported = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  assert.deepEqual(
    exported.body
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const rec = JSON.parse(l) as { original_url: string; visit_count: number };
        return [rec.original_url, rec.visit_count];
      }),
    [['https://example.com/2', 2]],
  );
});

const pg = await pgServer();

test('PostgreSQL: the database refuses a random row (disk full); nothing from its batch on is committed, and the resume stores each row once', {
  skip: !pg,
  timeout: 60_000,
}, async (t) => {
  const url = await pg!.createDatabase();
  const store = await openPostgresStore({ url, poolSize: 2, log: createLogger('silent') });
  t.after(() => store.close());
  const rows = 3000;
  const lines = Array.from({ length: rows }, (_, i) => JSON.stringify({ url: `https://example.com/pg/${i}` }));
  const body = `${lines.join('\n')}\n`;
  async function* chunks(): AsyncGenerator<string> {
    for (let i = 0; i < body.length; i += 4096) yield body.slice(i, i + 4096);
  }
  const deps = {
    store,
    rules: { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 },
    now: () => 1714564800_000,
    randomCode: createCodeSource(),
  };
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(() => db.end({ timeout: 1 }));
  for (const seed of [11, 12, 13]) {
    await db`DELETE FROM links`;
    const failAt = 600 + Math.floor(prng(seed)() * 1800);
    // A disk-full error of the database's own (SQLSTATE 53100) for one row: its statement fails.
    await db.unsafe(`
      CREATE OR REPLACE FUNCTION fill_up() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.url = 'https://example.com/pg/${failAt}' THEN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END IF;
        RETURN NEW;
      END $$`);
    await db.unsafe(`CREATE TRIGGER fill_up BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION fill_up()`);
    const result = await importLinks(chunks(), 'jsonl', deps);
    assert.equal(result.ok, false, `seed ${seed}`);
    if (result.ok) return;
    assert.equal(result.detail, 'database unavailable');
    assert.ok(result.line <= failAt + 1 && result.line >= 1, `seed ${seed}: line ${result.line}, the refused row is on ${failAt + 1}`);
    const landed = (await db<{ url: string }[]>`SELECT url FROM links ORDER BY seq`).map((r) => r.url);
    assert.deepEqual(
      landed,
      lines.slice(0, result.line - 1).map((l) => (JSON.parse(l) as { url: string }).url),
      `seed ${seed}: every row before line ${result.line}, in order, none from it on`,
    );
    assert.equal(result.imported, landed.length);

    await db.unsafe(`DROP TRIGGER fill_up ON links`);
    const resumed = await importLinks(chunks(), 'jsonl', deps, result.line);
    assert.deepEqual(resumed, { ok: true, imported: rows - landed.length, skipped: 0, errors: [] });
    const all = (await db<{ url: string }[]>`SELECT url FROM links ORDER BY seq`).map((r) => r.url);
    assert.deepEqual(
      all,
      lines.map((l) => (JSON.parse(l) as { url: string }).url),
      `seed ${seed}: each row once, in file order`,
    );
  }
});
