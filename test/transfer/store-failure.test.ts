/**
 * The store fails part-way through an import (a full disk, injected through the store's file
 * layer): 503 with the line of the first row not stored; every row before it is durable, nothing
 * from it on was written, and importing the same file again finishes the job.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataDir, type Harness } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'admin-key';
const ROWS = 3000;

async function codes(h: Harness): Promise<string[]> {
  const r = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  return r.body
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { short_code: string }).short_code);
}

test('503 part-way: rows before the reported line are durable, none after it; a re-import finishes the job', onOneProcess('it fills its disk'), async (t) => {
  // A header line and a blank line: file lines and row numbers differ, the report speaks of lines.
  const rows = Array.from({ length: ROWS }, (_, i) => `imp${String(i).padStart(5, '0')},https://example.com/${i}`);
  const file = ['short_code,original_url', '', ...rows].join('\n');
  const lineOf = (code: string): number => Number(code.slice(3)) + 3;
  const dir = dataDir(t);
  const { fs, disk } = fillableDisk();
  let h = await dir.start({ apiKeys: [KEY], fs });
  disk.writesLeft = 3;
  const r = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'text/csv', 'x-api-key': KEY }, body: file });
  assert.equal(r.status, 503, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  const failed = JSON.parse(r.body) as { detail: string; imported: number; line: number; resume: string };
  assert.deepEqual(Object.keys(failed), ['detail', 'imported', 'line', 'resume']);
  assert.equal(failed.resume, `/api/import?from_line=${failed.line}`);
  assert.equal(failed.detail, 'storage is not writable right now (ENOSPC); nothing was changed, try again later');
  // Three writes store three rows or more: more when inserts share a group commit, which depends on
  // how fast the body arrives (a loaded machine may give each write one row).
  assert.ok(failed.imported >= 3 && failed.imported < ROWS, `imported ${failed.imported}`);
  assert.equal(failed.line, failed.imported + 3, 'the first row not stored comes right after the stored ones');
  const stored = await codes(h);
  assert.equal(stored.length, failed.imported);
  assert.deepEqual(
    stored.map(lineOf),
    Array.from({ length: failed.imported }, (_, i) => i + 3),
    'every row before the line, none after it',
  );

  // Durable: a restart on the same data dir reads them all back.
  await h.close(true);
  disk.writesLeft = Infinity;
  h = await dir.start({ apiKeys: [KEY], fs });
  assert.deepEqual(await codes(h), stored);

  // The same file again: the rows already there are reported as taken, the rest stored, in order.
  const again = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'text/csv', 'x-api-key': KEY }, body: file });
  assert.equal(again.status, 200);
  const report = JSON.parse(again.body) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
  assert.equal(report.imported, ROWS - failed.imported);
  assert.equal(report.skipped, failed.imported);
  assert.deepEqual(
    report.errors.slice(0, 3),
    [3, 4, 5].map((line) => ({ line, detail: 'code already in use' })),
  );
  const all = await codes(h);
  assert.deepEqual(
    all.map(lineOf),
    Array.from({ length: ROWS }, (_, i) => i + 3),
  );
});
