/**
 * Regression: connections that hold a slot without sending a complete request locked every new
 * client out (docs/operations.md, server limits). With node:http's `maxConnections`, 1,024 silent
 * sockets from one address kept the cap full and every new connection was closed unanswered until
 * the header timeout. Now the oldest such connection is closed to admit the new one.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { defaults } from '../../src/config/settings.ts';
import { serverProcess, tempDir } from '../support/helpers.ts';
import { sendRaw } from '../support/raw-http.ts';

const SILENT = 2000;
const HALF_SENT = 2000;
/** Connections opened at once while filling up: well within the listen backlog. */
const BATCH = 100;

test('2,000 silent and 2,000 half-sent connections from one address never keep another client from an answer within a second', {
  timeout: 180_000,
}, async (t) => {
  const dir = tempDir();
  // Header and request timeouts far beyond the test, so that no slot is freed by a timeout: only
  // the cap's own rule can let the new clients in. max_connections stays at its default.
  const server = await serverProcess({ DATA_DIR: dir, FSYNC: 'off', LOG_LEVEL: 'info', HEADERS_TIMEOUT_MS: '300000', REQUEST_TIMEOUT_MS: '300000' });
  const held: Socket[] = [];
  t.after(async () => {
    for (const s of held) s.destroy();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let closedByServer = 0;
  const hold = (halfSent: boolean): Promise<void> =>
    new Promise((resolve) => {
      const socket = connect({ port: server.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      held.push(socket);
      socket.on('error', () => {});
      socket.once('connect', () => {
        if (halfSent) socket.write('GET /heal');
        resolve();
      });
      socket.once('close', () => {
        closedByServer++;
        resolve();
      });
    });
  const kinds = [...Array<boolean>(SILENT).fill(false), ...Array<boolean>(HALF_SENT).fill(true)];
  for (let i = 0; i < kinds.length; i += BATCH) await Promise.all(kinds.slice(i, i + BATCH).map(hold));

  // Every one of them has reached the server once all but a full cap of them have been closed.
  const cap = defaults().maxConnections;
  const all = SILENT + HALF_SENT;
  for (let waited = 0; closedByServer < all - cap; waited += 50) {
    assert.ok(waited < 60_000, `the server closed only ${closedByServer} of ${all} connections`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(closedByServer, all - cap, 'the server still holds a full cap of them');

  for (let i = 0; i < 5; i++) {
    const r = await sendRaw(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', { timeoutMs: 1000, halfCloseAfterMs: 1000 });
    const what = r.end === 'timeout' ? 'no answer within a second' : r.text === '' ? 'closed without an answer' : r.text;
    assert.equal(r.end, 'closed', `client ${i}: ${what}`);
    assert.equal(r.responses[0]?.status, 200, `client ${i}: ${what}`);
    assert.equal(r.responses[0]?.body, '{"status":"ok"}');
  }
  assert.ok(closedByServer > all - cap, 'held connections were closed to admit them');
});
