/**
 * SIGTERM on a real server process (SPEC §6 Shutdown): stop accepting, finish in-flight requests,
 * flush visits, fsync, exit 0 — checked by starting a second process on the same data dir.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request, tempDir, type Reply } from './helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'shutdown-admin-key';

/** Settings the parent's environment must not leak into the child (flags win anyway; this is belt and braces). */
const CONFIG_ENV = [
  'BASE_URL', 'HOST', 'PORT', 'PRODUCTION', 'MIN_SHORT_LENGTH', 'MAX_SHORT_LENGTH', 'API_KEYS', 'API_TOKEN',
  'DATA_DIR', 'FSYNC', 'MAX_URL_LENGTH', 'LOG_LEVEL', 'MCP_ALLOWED_ORIGINS',
];

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface ServerProcess {
  proc: ChildProcess;
  port: number;
  lines: Record<string, unknown>[];
  stderr(): string;
  /** Resolves with the first log line with this `msg` (already seen or still to come). */
  waitFor(msg: string): Promise<Record<string, unknown>>;
  exited: Promise<Exit>;
}

function spawnServer(dir: string): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  for (const name of CONFIG_ENV) if (name !== 'LOG_LEVEL') delete env[name];
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/server.ts', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir, '--fsync', 'off', '--api-keys', KEY],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: Record<string, unknown>[] = [];
  const waiters: { msg: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = '';
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));

  createInterface({ input: proc.stdout! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    lines.push(line);
    for (const w of waiters.filter((x) => x.msg === line['msg'])) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });

  const waitFor = (msg: string): Promise<Record<string, unknown>> => {
    const seen = lines.find((l) => l['msg'] === msg);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ msg, resolve }));
  };

  return new Promise<ServerProcess>((resolve, reject) => {
    void exited.then((e) => reject(new Error(`server exited before listening (${e.code ?? e.signal}): ${stderr}`)));
    void waitFor('listening').then((line) => {
      const port = Number(new URL(String(line['url'])).port);
      resolve({ proc, port, lines, stderr: () => stderr, waitFor, exited });
    });
  });
}

/** Kills a child that is still running (a failed test), and waits for it. */
async function stop(server: ServerProcess | undefined): Promise<void> {
  if (!server) return;
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
  await server.exited;
}

const codeOf = (r: Reply): string => r.body.slice(r.body.lastIndexOf('/') + 1);

test('SIGTERM right after visits flushes them: exit 0, and a second process sees the link and visit_count 5', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  try {
    first = await spawnServer(dir);
    const created = await request(first.port, '/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/signal' }),
    });
    assert.equal(created.status, 201, created.body);
    const code = codeOf(created);
    for (let i = 0; i < 5; i++) {
      const r = await request(first.port, `/${code}`);
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, 'https://example.com/signal');
    }
    // Well before the 1 s visit flush.
    first.proc.kill('SIGTERM');
    const exit = await first.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, first.stderr());
    assert.ok(first.lines.some((l) => l['msg'] === 'stopped'), 'the shutdown ran to its end');

    second = await spawnServer(dir);
    assert.equal(second.lines.find((l) => l['msg'] === 'listening')?.['records'], 1);
    const meta = await request(second.port, `/api/urls/${code}`);
    assert.equal(meta.status, 200);
    const record = JSON.parse(meta.body) as { visit_count: number; original_url: string };
    assert.equal(record.visit_count, 5);
    assert.equal(record.original_url, 'https://example.com/signal');
    const listed = await request(second.port, '/api/urls', { headers: { 'x-api-key': KEY } });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (JSON.parse(listed.body) as { urls: { short_code: string }[] }).urls.map((u) => u.short_code),
      [code],
    );
    assert.equal(second.lines.some((l) => l['level'] === 'warn' && /torn/.test(String(l['msg']))), false, 'the log was left whole');

    second.proc.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null }, second.stderr());
  } finally {
    await stop(first);
    await stop(second);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a request in flight at SIGTERM (a slow upload) completes with 201 before the process exits 0', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  try {
    first = await spawnServer(dir);
    const server = first;
    const body = Buffer.from(JSON.stringify({ url: 'https://example.com/slow-upload' }));
    const half = Math.floor(body.length / 2);

    let exitedEarly = false;
    void server.exited.then(() => (exitedEarly = true));
    const reply = await new Promise<Reply>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/api/shorten',
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            // The 100 Continue tells us the server has read the headers: the request is in flight.
            expect: '100-continue',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.once('continue', () => {
        req.write(body.subarray(0, half), () => {
          server.proc.kill('SIGTERM');
          void server.waitFor('shutting down').then(async () => {
            // Give the server time to act on the signal before the upload ends.
            await new Promise((r) => setTimeout(r, 200));
            try {
              assert.equal(exitedEarly, false, 'the process waits for the request in flight');
            } catch (err) {
              reject(err as Error);
              return;
            }
            req.end(body.subarray(half));
          });
        });
      });
    });

    assert.equal(reply.status, 201, reply.body);
    const code = codeOf(reply);
    assert.match(code, /^[1-9A-HJ-NP-Za-km-z]+$/);
    const exit = await server.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());

    second = await spawnServer(dir);
    const meta = await request(second.port, `/api/urls/${code}`);
    assert.equal(meta.status, 200, 'the link answered 201 during shutdown is on disk');
    assert.equal((JSON.parse(meta.body) as { original_url: string }).original_url, 'https://example.com/slow-upload');
    second.proc.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null }, second.stderr());
  } finally {
    await stop(first);
    await stop(second);
    rmSync(dir, { recursive: true, force: true });
  }
});
