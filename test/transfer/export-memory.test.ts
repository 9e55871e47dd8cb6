/**
 * Memory stays flat while exporting many links: with 200k links (about 40 MB of JSON Lines), the
 * heap an export keeps alive half-way through — its client not reading — is a small fraction of
 * the export. Measured after a full garbage collection, so it is what the export holds, not how
 * fast anything ran.
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeEntry, HEADER } from '../../src/store/log/format.ts';
import { LOG_FILE } from '../../src/store/log/log-engine.ts';
import { dataDir } from '../support/helpers.ts';

const KEY = 'admin-key';
const LINKS = 200_000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * The links written straight to a data dir's log, 10,000 entries at a time: importing them over
 * HTTP took three quarters of the test, and the import is not what is measured here (its own
 * tests are test/transfer/http-import.test.ts and import-pipeline.test.ts).
 */
function writeLinks(dir: string): void {
  writeFileSync(join(dir, LOG_FILE), HEADER);
  for (let i = 0; i < LINKS; i += 10_000) {
    const piece: Buffer[] = [];
    for (let j = i; j < i + 10_000; j++)
      piece.push(
        encodeEntry({
          op: 'C',
          code: `m${String(j).padStart(7, '0')}`,
          url: `https://example.com/memory/test/${j}?padding=${'x'.repeat(60)}`,
          createdAt: 1700000000,
          retentionDays: 0,
          visits: 0,
        }),
      );
    appendFileSync(join(dir, LOG_FILE), Buffer.concat(piece));
  }
}

test('exporting 200k links keeps the heap flat', { timeout: 120_000 }, async (t) => {
  const dir = dataDir(t);
  writeLinks(dir.dir);
  const h = await dir.start({ apiKeys: [KEY], fsync: 'off', logLevel: 'warn' });
  for (const code of ['m0000000', `m${String(LINKS - 1).padStart(7, '0')}`]) assert.equal((await h.req(`/api/urls/${code}`)).status, 200, code);

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
