/**
 * `streamBody`, the import's body reader: chunks as they arrive, a hard limit checked while
 * streaming (413 in the middle of an upload, the answer still delivered), and node:http's own
 * answers to other client errors kept by `spareLongUploads`.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { HttpError } from '../../src/errors.ts';
import { spareLongUploads, streamBody } from '../../src/http/body.ts';
import { request } from '../support/helpers.ts';
import { sendRaw } from '../support/raw-http.ts';

async function serve(t: { after(fn: () => unknown): void }, limit: number) {
  const server = createServer(async (req, res) => {
    try {
      let size = 0;
      let chunks = 0;
      for await (const chunk of streamBody(req, limit)) {
        size += chunk.length;
        chunks++;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ size, chunks }));
    } catch (err) {
      const e = err as HttpError;
      res.writeHead(e.status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ detail: e.detail }));
    }
  });
  spareLongUploads(server, 5000);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

test('the body in chunks up to the limit; one byte over is 413, declared or streamed', async (t) => {
  const port = await serve(t, 3 * 1024 * 1024);
  const exact = Buffer.alloc(3 * 1024 * 1024, 'a');
  const ok = await request(port, '/', { method: 'POST', body: exact });
  const got = JSON.parse(ok.body) as { size: number; chunks: number };
  assert.equal(got.size, exact.length);
  assert.ok(got.chunks > 1, 'read in chunks, not whole');
  const over = Buffer.concat([exact, Buffer.from('b')]);
  const declared = await request(port, '/', { method: 'POST', body: over });
  assert.equal(declared.status, 413);
  assert.deepEqual(JSON.parse(declared.body), { detail: 'request body is larger than 3 MiB' });
  const streamed = await request(port, '/', { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, body: over });
  assert.equal(streamed.status, 413);
  assert.deepEqual(JSON.parse(streamed.body), { detail: 'request body is larger than 3 MiB' });
});

test('with the upload guard installed, other client errors get node:http’s own answers', async (t) => {
  const port = await serve(t, 1024);
  const bad = await sendRaw(port, 'NOT A REQUEST\r\n\r\n');
  assert.equal(bad.text, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  const ok = await request(port, '/', { method: 'POST', body: 'abc' });
  assert.deepEqual(JSON.parse(ok.body), { size: 3, chunks: 1 });
});
