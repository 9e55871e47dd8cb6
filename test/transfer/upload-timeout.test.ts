/**
 * The import's exception to request_timeout_ms, in a real server process: an import whose body
 * keeps arriving runs past the request timeout; one whose body stops is cut with node:http's 408
 * once no byte came for the request timeout; any other request is still cut at the timeout.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverProcessOn } from '../support/helpers.ts';
import { openRaw } from '../support/raw-http.ts';

const KEY = 'admin-key';
const REQUEST_MS = 1000;

interface Upload {
  send(text: string): void;
  /** Everything the server sent, once it closed the connection or `timeoutMs` passed. */
  closed: Promise<{ text: string; ms: number }>;
}

function upload(port: number, head: string, timeoutMs = 15_000): Upload {
  const { socket, closed } = openRaw(port, head, timeoutMs);
  return { send: (s) => void (socket.destroyed || socket.write(s)), closed };
}

const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('an import whose body keeps arriving is not cut at request_timeout_ms; one that stops is, with 408', { timeout: 60_000 }, async (t) => {
  const s = await serverProcessOn(t, { API_KEYS: KEY, REQUEST_TIMEOUT_MS: String(REQUEST_MS), HEADERS_TIMEOUT_MS: '500', FSYNC: 'off' });
  const head = `POST /api/import HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;

  // Three times the request timeout, a row every 150 ms.
  const steady = upload(s.port, head);
  // Sends its header row, then nothing.
  const stalled = upload(s.port, head);
  // Sends for a while, then stops: cut once silent for the timeout, not at the timeout.
  const tiring = upload(s.port, head);
  // Any other request keeps the request timeout.
  const other = upload(s.port, `POST /api/shorten HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
  steady.send(chunk('code,url\n'));
  stalled.send(chunk('code,url\n'));
  tiring.send(chunk('code,url\n'));
  const rows = Math.ceil((3 * REQUEST_MS) / 150);
  for (let i = 0; i < rows; i++) {
    await sleep(150);
    steady.send(chunk(`slow${String(i).padStart(3, '0')},https://example.com/${i}\n`));
    if (i * 150 < 1.5 * REQUEST_MS) tiring.send(chunk(`tire${String(i).padStart(3, '0')},https://example.com/${i}\n`));
  }
  steady.send('0\r\n\r\n');

  const done = await steady.closed;
  assert.ok(done.ms > 3 * REQUEST_MS, `ran ${done.ms} ms`);
  assert.match(done.text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.ok(done.text.endsWith(`{"imported":${rows},"skipped":0,"errors":[]}`), done.text.slice(-200));

  const timeout = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
  const cut = await stalled.closed;
  assert.equal(cut.text, timeout);
  assert.ok(cut.ms >= REQUEST_MS - 100 && cut.ms < 2.5 * REQUEST_MS, `stalled import cut after ${cut.ms} ms`);
  const tired = await tiring.closed;
  assert.equal(tired.text, timeout);
  assert.ok(tired.ms >= 2.4 * REQUEST_MS && tired.ms < 4.5 * REQUEST_MS, `tiring import cut after ${tired.ms} ms`);
  const short = await other.closed;
  assert.equal(short.text, timeout);
  assert.ok(short.ms < 2 * REQUEST_MS, `a shorten cut after ${short.ms} ms`);
  assert.deepEqual(
    s.lines.filter((l) => l['level'] === 'error'),
    [],
    'nothing logged as an error',
  );
});
