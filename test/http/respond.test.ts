/**
 * The responder's `send` over real sockets: a body's head and bytes go out in one write (never a
 * writev of them and an empty chunk), and that changes nothing a client sees: the status, the
 * headers, the body, a HEAD's missing body, and pipelined answers in their order.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { createResponder, HTML_TYPE } from '../../src/http/respond.ts';
import { sendRaw } from '../support/raw-http.ts';

const PAGE = '<!doctype html><title>é</title>'.repeat(20);

interface Writes {
  write: number;
  writev: number;
}

/** A server whose every answer is `send(200, page of the path)`, counting its sockets' writes by kind. */
async function pageServer(): Promise<{ server: Server; port: number; writes: Writes }> {
  const reply = createResponder(['X-Test', 'yes']);
  const writes: Writes = { write: 0, writev: 0 };
  const server = createServer((req, res) => reply.send(res, 200, HTML_TYPE, `${req.url}:${PAGE}`, ['Cache-Control', 'no-store']));
  // The stream methods a socket's writes end in: `_write` for one chunk, `_writev` for several.
  server.on('connection', (socket: Socket) => {
    const own = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    for (const kind of ['_write', '_writev'] as const) {
      const original = own[kind];
      own[kind] = function (this: unknown, ...args: unknown[]) {
        writes[kind === '_write' ? 'write' : 'writev']++;
        return original.apply(this, args);
      };
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, writes };
}

test('send: the head and the body go out in one write, and the client reads them whole', async (t) => {
  const { server, port, writes } = await pageServer();
  t.after(() => server.close());
  const reply = await sendRaw(port, 'GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assert.equal(reply.responses.length, 1);
  const [res] = reply.responses;
  assert.equal(res!.status, 200);
  assert.equal(res!.headers['content-type'], HTML_TYPE);
  assert.equal(res!.headers['x-test'], 'yes');
  assert.equal(res!.headers['cache-control'], 'no-store');
  assert.equal(Number(res!.headers['content-length']), Buffer.byteLength(`/a:${PAGE}`));
  assert.equal(Buffer.from(res!.body, 'latin1').toString('utf8'), `/a:${PAGE}`);
  assert.deepEqual(writes, { write: 1, writev: 0 });
});

test('send: a HEAD gets the length and no body', async (t) => {
  const { server, port } = await pageServer();
  t.after(() => server.close());
  const reply = await sendRaw(port, 'HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', { head: true });
  assert.equal(reply.responses.length, 1);
  assert.equal(Number(reply.responses[0]!.headers['content-length']), Buffer.byteLength(`/a:${PAGE}`));
  assert.equal(reply.responses[0]!.body, '');
  assert.ok(reply.text.endsWith('\r\n\r\n'), 'nothing after the head');
});

test('send: pipelined requests are answered whole and in order', async (t) => {
  const { server, port } = await pageServer();
  t.after(() => server.close());
  const paths = ['/1', '/2', '/3', '/4'];
  const requests = paths.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`);
  const reply = await sendRaw(port, requests.join(''));
  assert.deepEqual(
    reply.responses.map((r) => Buffer.from(r.body, 'latin1').toString('utf8')),
    paths.map((p) => `${p}:${PAGE}`),
  );
});
