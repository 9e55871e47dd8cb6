/**
 * Regression: an imported `visit_count` of 16 digits left a data dir no command could open (the
 * writer wrote 16 digits, start-up read at most 15). Every number has one limit now
 * (docs/storage.md): counts run to 2^53 − 1, every reader reads them, counting stops there, and a
 * log an older build wrote with such counts, or with a count it carried past the limit, starts as
 * it is, with no repair.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { HEADER } from '../../../src/store/log/format.ts';
import { LOG_FILE } from '../../../src/store/log/log-engine.ts';
import { runCli, serverProcess, tempDir, type ServerProcess } from '../../support/helpers.ts';
import { checksummedLine } from '../../support/log-entries.ts';

const KEY = 'k'.repeat(32);
const MAX = 9007199254740991;
const T = 1_790_000_000;

async function started(t: { after: (f: () => Promise<unknown>) => void }, dir: string): Promise<ServerProcess> {
  const server = await serverProcess({ DATA_DIR: dir, API_KEYS: KEY, FSYNC: 'off', BASE_URL: 'http://s.test' });
  t.after(() => server.stop());
  return server;
}

async function get(port: number, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, { redirect: 'manual', ...init, headers: { 'X-API-Key': KEY, ...init.headers } });
}

test('a log written with 16-digit counts, and a count past 2^53 − 1, starts without repair; the count stays at the limit', async (t) => {
  const dir = tempDir(t);
  writeFileSync(
    join(dir, LOG_FILE),
    Buffer.concat([
      HEADER,
      checksummedLine(`C\tsixteen\t${T}\t0\t1234567890123456\thttps://example.com/a`),
      checksummedLine(`C\tatmax1\t${T}\t0\t${MAX}\thttps://example.com/b`),
      // What an older build appended after one more visit of `atmax1`: 2^53.
      checksummedLine(`V\tatmax1\t${MAX + 1}`),
    ]),
  );
  const server = await started(t, dir);
  const record = async (code: string): Promise<unknown> =>
    ((await (await get(server.port, `/api/urls/${code}`)).json()) as { visit_count: unknown }).visit_count;
  assert.equal(await record('sixteen'), 1234567890123456);
  assert.equal(await record('atmax1'), MAX);
  assert.equal((await get(server.port, '/atmax1')).status, 302);
  assert.equal(await record('atmax1'), MAX, 'counting stops at the limit');
  await server.stop();

  // The offline export reads the same log as start-up does.
  const exported = await runCli(['export', '--data-dir', dir]);
  assert.equal(exported.code, 0, exported.err);
  assert.deepEqual(
    exported.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { short_code: string; visit_count: number })
      .map((r) => [r.short_code, r.visit_count]),
    [
      ['sixteen', 1234567890123456],
      ['atmax1', MAX],
    ],
  );
});

test('an imported count of 2^53 − 1 survives a restart and its CSV export imports back; one more is refused by every format', async (t) => {
  const dir = tempDir(t);
  let server = await started(t, dir);
  const jsonl = `{"url":"https://example.com/j","code":"jsonl1","visit_count":${MAX}}\n{"url":"https://example.com/k","code":"jsonl2","visit_count":${MAX + 1}}\n`;
  const imported = await get(server.port, '/api/import', { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: jsonl });
  assert.deepEqual(await imported.json(), { imported: 1, skipped: 1, errors: [{ line: 2, detail: `visit_count must be an integer from 0 to ${MAX}` }] });
  const csv = `code,url,visits\ncsv001,https://example.com/c,${MAX}\ncsv002,https://example.com/d,${MAX + 1}\ncsv003,https://example.com/e,99999999999999999\n`;
  const fromCsv = await get(server.port, '/api/import', { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: csv });
  assert.deepEqual(await fromCsv.json(), {
    imported: 1,
    skipped: 2,
    errors: [
      { line: 3, detail: `visit_count must be an integer from 0 to ${MAX}` },
      { line: 4, detail: `visit_count must be an integer from 0 to ${MAX}` },
    ],
  });
  await server.stop();

  server = await started(t, dir);
  const exported = await (await get(server.port, '/api/export?format=csv')).text();
  assert.match(exported, new RegExp(`^jsonl1,http://s.test/jsonl1,https://example.com/j,\\d+,${MAX},0,,,,,,,false,,,,$`, 'm'));

  const other = await started(t, tempDir(t));
  const back = await get(other.port, '/api/import', { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: exported });
  assert.deepEqual(await back.json(), { imported: 2, skipped: 0, errors: [] });
  assert.equal(await (await get(other.port, '/api/export?format=csv')).text(), exported);
});
