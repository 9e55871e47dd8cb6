/**
 * Memory stays flat while exporting many links: with 200k links (about 40 MB of JSON Lines), the
 * heap an export keeps alive half-way through — its client not reading — is a small fraction of
 * the export. Measured after a full garbage collection, so it is what the export holds, not how
 * fast anything ran.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { start } from '../support/helpers.ts';

const KEY = 'admin-key';
const LINKS = 200_000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test('exporting 200k links keeps the heap flat', { timeout: 120_000 }, async (t) => {
  const h = await start(t, { apiKeys: [KEY], fsync: 'off', logLevel: 'warn' });
  // Sent in pieces: the test holds no copy of the file that could blur the measure.
  const upload = httpRequest({
    host: '127.0.0.1',
    port: h.port,
    path: '/api/import',
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
  });
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    upload.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    upload.on('error', reject);
  });
  for (let i = 0; i < LINKS; i += 1000) {
    let piece = '';
    for (let j = i; j < i + 1000; j++)
      piece += `{"code":"m${String(j).padStart(7, '0')}","url":"https://example.com/memory/test/${j}?padding=${'x'.repeat(60)}","created_at":1700000000}\n`;
    if (!upload.write(piece)) await once(upload, 'drain');
  }
  upload.end();
  const r = await answered;
  assert.equal(r.status, 200);
  assert.equal((JSON.parse(r.body) as { imported: number }).imported, LINKS);

  const baseline = heapAfterGc();
  const socket = connect(h.port, '127.0.0.1');
  socket.write(`GET /api/export HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nConnection: close\r\n\r\n`);
  let received = 0;
  let lines = 0;
  let paused: (() => void) | undefined;
  const half = new Promise<void>((resolve) => (paused = resolve));
  const total = LINKS * 190;
  socket.on('data', (c: Buffer) => {
    received += c.length;
    for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
    if (paused && received > total / 2) {
      socket.pause();
      paused();
      paused = undefined;
    }
  });
  const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
  await half;
  await new Promise((r) => setTimeout(r, 200));
  const held = heapAfterGc() - baseline;
  assert.ok(held < 8 * 1024 * 1024, `the export holds ${(held / 1048576).toFixed(1)} MB of heap half-way through ${(received / 1048576).toFixed(0)} MB sent`);
  socket.resume();
  await ended;
  assert.ok(received > total, `${received} bytes`);
  // The response head and the chunked framing add lines of their own; every record is one more.
  assert.ok(lines >= LINKS, `${lines} lines`);
});
