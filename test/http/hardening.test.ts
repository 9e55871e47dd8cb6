/**
 * The limits of the self-hosting server (`node dist/server.js`; see http-options.ts), on a real
 * child process with short timeouts: slow headers and endless bodies are cut off near their
 * timeouts while other clients are served, oversized headers are 431, at the connection cap the
 * connection idle the longest makes room (or, with a request in flight on each, the new one is
 * closed at once), idle kept-alive connections are closed. Time windows are generous on purpose:
 * these are behaviour tests (does the cut-off happen, and not long after the limit), not benchmarks.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { checkingInterval } from '../../src/cli/http-options.ts';
import { request, serverProcessOn, type ServerProcess } from '../support/helpers.ts';
import { openRaw, parseResponses, sendRaw, type RawConnection, type RawResponse } from '../support/raw-http.ts';

/** Scheduling slack on a loaded 2-core machine, on top of Node's own checking interval. */
const SLACK_MS = 3000;

async function withServer(t: TestContext, env: Record<string, string>, body: (s: ServerProcess) => Promise<void>): Promise<void> {
  const server = await serverProcessOn(t, { FSYNC: 'off', LOG_LEVEL: 'info', API_KEYS: 'k1', ...env });
  await body(server);
  // Whatever the clients did, nothing went wrong inside, and the server still answers.
  assert.equal((await request(server.port, '/healthz')).status, 200);
  assert.deepEqual(
    server.lines.filter((l) => l['level'] === 'error'),
    [],
    'no error logged',
  );
  assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.stderr());
}

/** Sends `head` at once, then `drip` every `everyMs` until the server closes the connection. */
function trickle(port: number, head: string, drip: string, everyMs = 50): RawConnection {
  const raw = openRaw(port, head);
  const timer = setInterval(() => raw.socket.writable && raw.socket.write(drip), everyMs);
  void raw.closed.then(() => clearInterval(timer));
  return raw;
}

/** A kept-alive connection sending one request at a time. */
class Connection {
  readonly socket: Socket;
  private text = '';
  private waiting: (() => void) | undefined;
  readonly closed: Promise<number>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1').on('data', (c: string) => {
      this.text += c;
      this.waiting?.();
    });
    this.socket.on('error', () => {});
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve(Date.now())));
  }

  /** Sends a GET and resolves with its response (parsed from everything received so far). */
  get(path: string): Promise<RawResponse> {
    return this.send(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  }

  /** Sends `bytes` (the rest of a request) and resolves with the next response. */
  async send(bytes: string): Promise<RawResponse> {
    const before = parseResponses(this.text).length;
    this.socket.write(bytes);
    for (;;) {
      const all = parseResponses(this.text);
      if (all.length > before && all[before]!.body.length >= Number(all[before]!.headers['content-length'] ?? 0)) return all[before]!;
      if (this.socket.destroyed) throw new Error(`connection closed; received: ${this.text}`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
  }
}

test('slowloris: clients dripping header bytes get 408 near headers_timeout_ms; a normal client is served meanwhile', { timeout: 60_000 }, async (t) => {
  const headersMs = 1000;
  await withServer(t, { HEADERS_TIMEOUT_MS: String(headersMs), REQUEST_TIMEOUT_MS: '5000' }, async (s) => {
    const slow = Array.from({ length: 20 }, () => trickle(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a'));
    await new Promise((r) => setTimeout(r, 200));
    // A normal client is not held up: answered while every slow one is still connected.
    const client = new Connection(s.port);
    const normal = await client.get('/healthz');
    assert.equal(normal.status, 200);
    assert.equal(normal.headers['keep-alive'], 'timeout=5', 'the default keep-alive timeout, in seconds');
    client.socket.destroy();
    assert.ok(
      slow.every((t) => !t.socket.destroyed),
      'the slow clients were still connected',
    );
    for (const t of slow) {
      const { text, ms } = await t.closed;
      assert.equal(text, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      assert.ok(ms >= headersMs - 100, `cut off after ${ms} ms, not before the timeout`);
      assert.ok(ms <= headersMs + checkingInterval({ headersTimeoutMs: headersMs, requestTimeoutMs: 5000 }) + SLACK_MS, `cut off after ${ms} ms`);
    }
    // A connection that never sends a byte is cut off the same way.
    const silent = await sendRaw(s.port, '', { halfCloseAfterMs: 60_000, timeoutMs: 30_000 });
    assert.equal(silent.end, 'closed');
    assert.equal(silent.text, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    assert.ok(silent.ms <= headersMs + 100 + SLACK_MS, `silent connection cut off after ${silent.ms} ms`);
  });
});

test('a body that never ends is cut off near request_timeout_ms, read by a handler or not', { timeout: 60_000 }, async (t) => {
  const requestMs = 1500;
  await withServer(t, { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: String(requestMs), API_TOKEN: 'tok' }, async (s) => {
    const auth = 'Authorization: Bearer tok\r\n';
    const cases: { name: string; head: string; drip: string; first?: number }[] = [
      {
        name: 'Content-Length body, read by the shorten handler',
        head: `POST /api/shorten HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n`,
        drip: 'a',
      },
      {
        name: 'chunked body, read by the shorten handler',
        head: `POST /api/shorten HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        drip: '1\r\na\r\n',
      },
      // Answered at once (401 / 405) without reading the body: Node discards the rest, up to the timeout.
      { name: 'after a 401', head: 'POST /api/shorten HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n', drip: 'a', first: 401 },
      { name: 'after a 405', head: 'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n', drip: 'a', first: 405 },
    ];
    const running = cases.map((c) => ({ c, t: trickle(s.port, c.head, c.drip) }));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await request(s.port, '/healthz')).status, 200, 'a normal client is served meanwhile');
    assert.ok(
      running.every(({ t }) => !t.socket.destroyed),
      'the slow uploads were still connected',
    );
    for (const { c, t } of running) {
      const { text, ms } = await t.closed;
      const statuses = parseResponses(text).map((r) => r.status);
      assert.deepEqual(statuses, c.first === undefined ? [408] : [c.first, 408], `${c.name}: ${text}`);
      assert.ok(ms >= requestMs - 100, `${c.name}: cut off after ${ms} ms, not before the timeout`);
      assert.ok(ms <= requestMs + 50 + SLACK_MS, `${c.name}: cut off after ${ms} ms`);
    }
    const shorten = await request(s.port, '/api/shorten', {
      method: 'POST',
      headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
      body: '{"url":"https://example.com/after"}',
    });
    assert.equal(shorten.status, 201, 'writes still work');
  });
});

test('headers past max_header_bytes are 431; below it they are served', { timeout: 60_000 }, async (t) => {
  await withServer(t, { MAX_HEADER_BYTES: '4096' }, async (s) => {
    assert.equal((await request(s.port, '/healthz', { headers: { 'x-pad': 'a'.repeat(3000) } })).status, 200);
    const cases = [
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(5000)}\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 300 }, (_, i) => `X-${i}: aaaaaaaaaa\r\n`).join('')}\r\n`,
      `GET /healthz?${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(5000)}\r\n\r\n`,
    ];
    for (const raw of cases) {
      const r = await sendRaw(s.port, raw);
      assert.equal(r.text, 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', raw.slice(0, 60));
    }
  });
});

/** A `POST /api/shorten` in flight: its head is in (the server answered 100 Continue), its body not yet. */
function upload(port: number): { continued: Promise<void>; finish(): Promise<RawResponse[]>; socket: Socket } {
  const body = '{"url":"https://example.com/in-flight"}';
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let seen: (() => void) | undefined;
  const continued = new Promise<void>((resolve) => (seen = resolve));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.setEncoding('latin1').on('data', (c: string) => {
    text += c;
    if (text.includes('100 Continue')) seen?.();
  });
  socket.on('error', () => {});
  socket.write(
    `POST /api/shorten HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
  );
  return {
    continued,
    socket,
    async finish() {
      socket.write(body);
      await closed;
      return parseResponses(text);
    },
  };
}

test('at max_connections the connection idle the longest is closed to admit a new one; the others keep working', { timeout: 60_000 }, async (t) => {
  await withServer(t, { MAX_CONNECTIONS: '4', KEEP_ALIVE_TIMEOUT_MS: '30000' }, async (s) => {
    const open = Array.from({ length: 4 }, () => new Connection(s.port));
    for (const c of open) assert.equal((await c.get('/healthz')).status, 200);

    const fifth = await sendRaw(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', { halfCloseAfterMs: 10_000 });
    assert.equal(fifth.responses[0]?.status, 200, 'a new client is served at the cap');
    await open[0]!.closed;
    for (const c of open.slice(1)) assert.equal((await c.get('/auth-check')).status, 200, 'the open connections still work');
    for (const c of open.slice(1)) c.socket.destroy();
  });
});

test('at max_connections with a request in flight on every connection, new connections are closed at once; the requests complete', {
  timeout: 60_000,
}, async (t) => {
  await withServer(t, { MAX_CONNECTIONS: '4' }, async (s) => {
    const uploads = Array.from({ length: 4 }, () => upload(s.port));
    await Promise.all(uploads.map((u) => u.continued));

    for (let i = 0; i < 3; i++) {
      const refused = await sendRaw(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', { halfCloseAfterMs: 10_000 });
      assert.equal(refused.end, 'closed', 'closed by the server, not left hanging');
      assert.equal(refused.text, '', 'no answer past the cap');
    }
    for (const u of uploads)
      assert.deepEqual(
        (await u.finish()).map((r) => r.status),
        [100, 201],
        'each request in flight completes',
      );
  });
});

test('an idle kept-alive connection is closed after keep_alive_timeout_ms and a second of grace, as Node closed it', { timeout: 60_000 }, async (t) => {
  const keepAliveMs = 1000;
  await withServer(t, { KEEP_ALIVE_TIMEOUT_MS: String(keepAliveMs) }, async (s) => {
    const c = new Connection(s.port);
    const r = await c.get('/healthz');
    assert.equal(r.headers['connection'], 'keep-alive');
    assert.equal(r.headers['keep-alive'], 'timeout=1');
    const answered = Date.now();
    const idle = (await c.closed) - answered;
    assert.ok(idle >= keepAliveMs - 100, `closed after ${idle} ms idle, not before the timeout`);
    assert.ok(idle <= keepAliveMs + 1000 + SLACK_MS, `closed after ${idle} ms idle`);
  });
});

test('keep-alive: bytes of a next request start the wait again, as they do in node:http; the request then completes', { timeout: 60_000 }, async (t) => {
  // The server keeps the timeout itself (keep-alive.ts): a connection is idle only while nothing
  // arrives on it. A request head dripped for twice the timeout and its grace is not cut.
  const keepAliveMs = 1000;
  await withServer(t, { KEEP_ALIVE_TIMEOUT_MS: String(keepAliveMs), HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '30000' }, async (s) => {
    const c = new Connection(s.port);
    assert.equal((await c.get('/healthz')).status, 200);
    let open = true;
    void c.closed.then(() => (open = false));
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const until = Date.now() + 2 * (keepAliveMs + 1000);
    while (Date.now() < until && open) {
      c.socket.write('X-Drip: y\r\n');
      // A byte every quarter of the timeout: far inside the grace, even on a loaded machine.
      await new Promise((r) => setTimeout(r, keepAliveMs / 4));
    }
    assert.equal(open, true, 'a connection receiving bytes is not idle');
    assert.equal((await c.send('\r\n')).status, 200, 'and its request is answered');
    // Then idle again: closed, not before the timeout.
    const answered = Date.now();
    const idle = (await c.closed) - answered;
    assert.ok(idle >= keepAliveMs, `closed after ${idle} ms idle`);
  });
});
