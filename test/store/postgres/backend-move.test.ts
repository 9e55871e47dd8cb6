/**
 * Moving between backends with the commands (docs/postgres.md): 10,000 links of a log store
 * exported, imported into PostgreSQL, exported from there and imported into a new log store come
 * back record by record as they were: codes, URLs, creation times, visit counts, retentions, limits,
 * and the order.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempDir } from '../../support/helpers.ts';
import { pgServer } from '../../support/pg.ts';

const server = await pgServer();
const N = 10_000;
const BASE = ['--base-url', 'https://s.example'];

function records(jsonl: string): Record<string, unknown>[] {
  return jsonl
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('10,000 links: log store → PostgreSQL → log store with url-shortener export/import, record by record', { skip: !server, timeout: 300_000 }, async (t) => {
  const dir = tempDir(t);
  const now = Math.floor(Date.now() / 1000);
  const lines = Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      short_code: `mv${String(i).padStart(5, '0')}`,
      original_url: `https://example.com/move/${i}?q=${i % 7}`,
      created_at: now - 86400 + i,
      visit_count: i % 13,
      retention_days: i % 3 === 0 ? 0 : 30 + (i % 5),
      max_visits: i % 4 === 0 ? 100 + i : null,
    }),
  );
  const source = join(dir, 'source.jsonl');
  writeFileSync(source, `${lines.join('\n')}\n`);
  const first = join(dir, 'first');
  const loaded = await runCli(['import', source, '--data-dir', first, '--fsync', 'off', ...BASE]);
  assert.equal(loaded.code, 0, loaded.err);

  const fromLog = await runCli(['export', '--data-dir', first, ...BASE]);
  assert.equal(fromLog.code, 0, fromLog.err);
  const original = records(fromLog.out);
  assert.equal(original.length, N);

  const db = await server!.createDatabase();
  const exportFile = join(dir, 'from-log.jsonl');
  writeFileSync(exportFile, fromLog.out);
  const intoPg = await runCli(['import', exportFile, '--database-url', db, ...BASE]);
  assert.equal(intoPg.code, 0, intoPg.err);
  assert.match(intoPg.err, new RegExp(`"msg":"imported".*"imported":${N},"skipped":0`));

  const fromPg = await runCli(['export', '--database-url', db, ...BASE]);
  assert.equal(fromPg.code, 0, fromPg.err);
  assert.match(fromPg.err, new RegExp(`"msg":"exported","database":"${new URL(db).pathname.slice(1)}","database_host":"127\\.0\\.0\\.1:\\d+","records":${N}`));
  const throughPg = records(fromPg.out);
  assert.equal(throughPg.length, N);
  for (let i = 0; i < N; i++) assert.deepEqual(throughPg[i], original[i], `record ${i}`);

  const pgFile = join(dir, 'from-pg.jsonl');
  writeFileSync(pgFile, fromPg.out);
  const second = join(dir, 'second');
  const back = await runCli(['import', pgFile, '--data-dir', second, '--fsync', 'off', ...BASE]);
  assert.equal(back.code, 0, back.err);
  const roundTrip = records((await runCli(['export', '--data-dir', second, ...BASE])).out);
  assert.equal(roundTrip.length, N);
  for (let i = 0; i < N; i++) assert.deepEqual(roundTrip[i], original[i], `record ${i}`);
  // The export is not a relabelled copy: the fields vary as the source did.
  assert.equal(original[4]!['max_visits'], 104);
  assert.equal(original[5]!['max_visits'], null);
  assert.equal(original[12]!['visit_count'], 12);
  assert.equal(original[1]!['retention_days'], 31);
});
