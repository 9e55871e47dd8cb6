/**
 * Regression: the port opened before the log was replayed (docs/storage.md, how it is kept:
 * start-up). With a big log a client could connect long before any link was loaded and waited,
 * unanswered, through the replay. Now the port opens only once replay is done.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALPHABET } from '../../src/links/codes.ts';
import { encodeEntry } from '../../src/store/log/format.ts';
import { LOG_FILE } from '../../src/store/log/log-engine.ts';
import { serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { parseResponses } from '../support/raw-http.ts';

const LINKS = 300_000;

/** The i-th code: six characters of the code alphabet (i in base 58). */
function codeOf(i: number): string {
  let code = '';
  for (let k = 0; k < 6; k++, i = Math.floor(i / ALPHABET.length)) code = ALPHABET[i % ALPHABET.length]! + code;
  return code;
}

/** A port that was free a moment ago: the server must get a known port to be tried before it listens. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

test('regression: a client trying to connect from the start gets no connection before replay is done, and its first answer sees the last link', {
  timeout: 120_000,
}, async (t) => {
  const dir = tempDir();
  const now = Math.floor(Date.now() / 1000);
  const lines: Buffer[] = [];
  for (let i = 0; i < LINKS; i++)
    lines.push(encodeEntry({ op: 'C', code: codeOf(i), url: `https://example.com/${i}`, createdAt: now, retentionDays: 0, visits: 0 }));
  // A torn last line (a crash mid-append): the store warns about it the moment replay ends, which
  // marks that moment in the log.
  lines.push(encodeEntry({ op: 'C', code: 'torn11', url: 'https://example.com/torn', createdAt: now, retentionDays: 0, visits: 0 }).subarray(0, 20));
  writeFileSync(join(dir, LOG_FILE), Buffer.concat(lines));
  const last = codeOf(LINKS - 1);

  const port = await freePort();
  let server: ServerProcess | undefined;
  let client: Socket | undefined;
  let done = false;
  t.after(async () => {
    done = true;
    client?.destroy();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let refused = 0;
  /** Connects as soon as the port accepts; resolves with the socket and when it connected. */
  async function firstConnection(): Promise<{ socket: Socket; at: number }> {
    while (!done) {
      const attempt = await new Promise<Socket | undefined>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => resolve(socket));
        socket.once('error', () => {
          socket.destroy();
          resolve(undefined);
        });
      });
      if (attempt) return { socket: attempt, at: Date.now() };
      refused++;
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error('gave up');
  }

  const connecting = firstConnection();
  server = await serverProcess({ DATA_DIR: dir, FSYNC: 'off', LOG_LEVEL: 'info', PORT: String(port) });
  const { socket, at } = await connecting;
  client = socket;
  let text = '';
  socket.setEncoding('latin1').on('data', (c: string) => (text += c));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`GET /${last} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  await closed;

  assert.ok(refused > 0, 'the client was trying before the port opened');
  const replayed = server.lines.find((l) => l['level'] === 'warn' && /torn/.test(String(l['msg'])));
  assert.ok(replayed, 'the store reported the torn last line at the end of replay');
  const replayDone = Date.parse(String(replayed['time']));
  assert.ok(at >= replayDone, `connected ${replayDone - at} ms before replay was done`);
  assert.equal(server.lines.find((l) => l['msg'] === 'listening')?.['records'], LINKS);

  const [answer] = parseResponses(text);
  assert.equal(answer?.status, 302, text);
  assert.equal(answer.headers['location'], `https://example.com/${LINKS - 1}`);
});
