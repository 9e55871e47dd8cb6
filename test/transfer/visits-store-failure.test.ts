/**
 * The store fails part-way through a visits import (a full disk, injected through the store's file
 * layer): 503 with the line of the first row not recorded; every event before it is durable,
 * nothing from it on was written — also when a later, smaller write would have fit on the disk —
 * and `from_line` finishes the job.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataDir, type Harness } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';

const KEY = 'admin-key';
const ROWS = 3000;
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;

/** A header, a blank line, then ROWS events of `link01`, one a second, each its own referrer. */
const FILE = ['short_code,time,referrer,bot', '', ...Array.from({ length: ROWS }, (_, i) => `link01,${NOW - ROWS + i},r${i}.example,false`)].join('\n');
/** The row's index from its event's time; the file line of row i is i + 3. */
const rowOf = (time: number): number => time - (NOW - ROWS);

async function times(h: Harness): Promise<number[]> {
  const r = await h.req('/api/visits/export', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  return r.body
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { time: number }).time);
}

const post = (h: Harness, query = '') =>
  h.req(`/api/visits/import${query}`, { method: 'POST', headers: { 'content-type': 'text/csv', 'x-api-key': KEY }, body: FILE });

for (const [name, fill] of [
  ['the disk is full from the fourth write on', (disk: { writesLeft: number; bytesLeft: number }) => void (disk.writesLeft = 3)],
  // A batch too big for the room left fails; a smaller batch queued behind it would fit, and must
  // not be written: the import's events are one chain.
  ['the disk has room for some writes but not a big one', (disk: { writesLeft: number; bytesLeft: number }) => void (disk.bytesLeft = 60_000)],
] as const) {
  test(
    `503 part-way (${name}): events before the line are durable, none after it; from_line finishes the job`,
    onOneProcess('it fills its disk'),
    async (t) => {
      const dir = dataDir(t);
      const { fs, disk } = fillableDisk();
      let h = await dir.start({ apiKeys: [KEY], fs, now: () => NOW * 1000 });
      assert.equal(
        (
          await h.req('/api/shorten', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"url":"https://example.com/","code":"link01"}',
          })
        ).status,
        201,
      );
      fill(disk);
      const r = await post(h);
      assert.equal(r.status, 503, r.body);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['connection'], 'close');
      const failed = JSON.parse(r.body) as { detail: string; imported: number; line: number; resume: string };
      assert.deepEqual(Object.keys(failed), ['detail', 'imported', 'line', 'resume']);
      assert.equal(failed.resume, `/api/visits/import?from_line=${failed.line}`);
      assert.equal(failed.detail, 'storage is not writable right now (ENOSPC); nothing was changed, try again later');
      // At least the writes that succeeded (more when events share a group commit, as they do unless
      // the machine is very busy), never all.
      assert.ok(failed.imported >= 1 && failed.imported < ROWS, `imported ${failed.imported}`);
      assert.equal(failed.line, failed.imported + 3, 'the first row not recorded comes right after the recorded ones');
      const recorded = await times(h);
      assert.deepEqual(
        recorded.map(rowOf),
        Array.from({ length: failed.imported }, (_, i) => i),
        'every row before the line, none after it',
      );

      // Durable: a restart reads them back, with nothing written after the failure.
      await h.close(true);
      disk.writesLeft = Infinity;
      disk.bytesLeft = Infinity;
      h = await dir.start({ apiKeys: [KEY], fs, now: () => NOW * 1000 });
      assert.deepEqual(await times(h), recorded);
      const resumed = await post(h, `?from_line=${failed.line}`);
      assert.equal(resumed.status, 200, resumed.body);
      assert.deepEqual(JSON.parse(resumed.body), { imported: ROWS - failed.imported, skipped: 0, errors: [] });
      assert.deepEqual(
        (await times(h)).map(rowOf),
        Array.from({ length: ROWS }, (_, i) => i),
        'each event once, in file order',
      );
      const link = JSON.parse((await h.req('/api/export', { headers: { 'x-api-key': KEY } })).body) as { visit_count: number };
      assert.equal(link.visit_count, ROWS, 'each imported event added a visit, once');
    },
  );
}
