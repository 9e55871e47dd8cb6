/**
 * A shutdown cuts a long import at SHUTDOWN_TIMEOUT_MS: what it stored is durable (a restart reads
 * it back) and a re-import of the file reports it as taken and stores the rest.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { request, serverProcess, serverProcessOn } from '../support/helpers.ts';

const KEY = 'admin-key';
const row = (i: number): string => `cut${String(i).padStart(4, '0')},https://example.com/${i}\n`;

async function exportedCodes(port: number): Promise<string[]> {
  const r = await request(port, '/api/export', { headers: { 'x-api-key': KEY } });
  return r.body
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { short_code: string }).short_code);
}

test('a shutdown cuts a long import; what it stored is durable, and a re-import finishes the job', { timeout: 60_000 }, async (t) => {
  const s = await serverProcessOn(t, { API_KEYS: KEY, SHUTDOWN_TIMEOUT_MS: '300' });
  const socket = connect(s.port, '127.0.0.1');
  socket.on('error', () => {});
  const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  socket.write(`POST /api/import HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n`);
  socket.write(chunk(`code,url\n${Array.from({ length: 40 }, (_, i) => row(i)).join('')}`));
  // The rows sent so far are stored while the upload goes on.
  while ((await exportedCodes(s.port)).length < 40) await new Promise((r) => setTimeout(r, 20));
  const stopped = await s.stop();
  assert.deepEqual(stopped, { code: 0, signal: null });
  assert.ok(
    s.lines.some((l) => l['msg'] === 'shutdown timeout: closing connections with requests still in flight'),
    'the import was in flight and cut',
  );
  socket.destroy();
  assert.deepEqual(
    s.lines.filter((l) => l['level'] === 'error'),
    [],
    'the cut is no error',
  );

  const again = await serverProcess({ DATA_DIR: s.dir, API_KEYS: KEY });
  t.after(() => again.stop());
  const stored = await exportedCodes(again.port);
  assert.deepEqual(
    stored,
    Array.from({ length: 40 }, (_, i) => row(i).split(',')[0]),
  );
  const file = `code,url\n${Array.from({ length: 100 }, (_, i) => row(i)).join('')}`;
  const r = await request(again.port, '/api/import', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'text/csv' }, body: file });
  const report = JSON.parse(r.body) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
  assert.equal(report.imported, 60);
  assert.equal(report.skipped, 40);
  assert.deepEqual(report.errors[0], { line: 2, detail: 'code already in use' });
  assert.equal((await exportedCodes(again.port)).length, 100);
});
