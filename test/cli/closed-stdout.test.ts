/**
 * Regression: a closed stdout killed the server (docs/operations.md, logs). With
 * `node dist/server.js | head -1` the reader goes away after one line, the next log line fails
 * with EPIPE, and the unhandled 'error' event crashed the process. Now the lines nobody can read
 * are dropped and the server goes on.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { ignoreClosedPipe } from '../../src/log.ts';
import { request, ROOT, tempDir } from '../support/helpers.ts';
import { serverBundle } from '../support/server-entry.ts';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`write ${code}`), { code });

test('ignoreClosedPipe: EPIPE on the stream is dropped; any other error still throws', () => {
  const stream = new PassThrough();
  ignoreClosedPipe(stream);
  stream.emit('error', errno('EPIPE'));
  stream.emit('error', errno('EPIPE'));
  assert.throws(() => stream.emit('error', errno('EIO')), /write EIO/);
});

test('regression: with its stdout closed after the first line the server keeps answering requests that log and stops cleanly', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir();
  // LOG_LEVEL=debug: every request writes an access line to the closed pipe.
  const env = { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir, FSYNC: 'off', LOG_LEVEL: 'debug' };
  const child = spawn(process.execPath, [serverBundle()], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });

  // Read the first line, then close the pipe, as `| head -1` does.
  const first = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      text += c;
      const nl = text.indexOf('\n');
      if (nl !== -1) resolve(text.slice(0, nl));
    });
    void exited.then(() => reject(new Error(`exited before its first line: ${stderr}`)));
  });
  child.stdout.destroy();
  const listening = JSON.parse(first) as Record<string, unknown>;
  assert.equal(listening['msg'], 'listening');
  const port = Number(new URL(String(listening['url'])).port);

  for (let i = 0; i < 5; i++) {
    const r = await request(port, '/healthz');
    assert.equal(r.status, 200, `request ${i}`);
    // Time for the access line's failed write to come back as an error.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const created = await request(port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/after-epipe"}',
  });
  assert.equal(created.status, 201);
  assert.equal(child.exitCode, null, `still running; stderr: ${stderr}`);

  child.kill('SIGTERM');
  assert.deepEqual(await exited, { code: 0, signal: null }, stderr);
  assert.equal(stderr, '', 'no crash report');
});
