/**
 * The one shared test helper: start the handler on port 0 with a fresh data dir, make raw HTTP
 * requests, capture log lines.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createShortener, type Shortener, type ShortenerOptions } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { openCluster, TARGET } from './cluster.ts';
import { serverBundle } from './server-entry.ts';

/** The project root, the working directory of every server child process. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** The JSON log lines written so far. */
  lines: Record<string, unknown>[];
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s; resolves with the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `command` in the project root with only `env` for settings (and PATH, HOST 127.0.0.1,
 * PORT 0, and the coverage directory when running under c8); its stdout is read as JSON log lines.
 */
function launch(
  command: readonly string[],
  env: Record<string, string>,
  onLine: (line: Record<string, unknown>) => void,
): { child: ChildProcess; lines: Record<string, unknown>[]; stderr(): string } {
  const childEnv: Record<string, string> = { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', ...env };
  const coverage = process.env['NODE_V8_COVERAGE'];
  if (coverage !== undefined) childEnv['NODE_V8_COVERAGE'] = coverage;
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let err = '';
  let partial = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      if (!text) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      onLine(line);
    }
  });
  return { child, lines, stderr: () => err };
}

/**
 * Starts the server (bundled from its sources, `server-entry.ts`; or `entry`: node's arguments,
 * e.g. a built file) as a child process on 127.0.0.1, port 0, with only `env` for settings (and
 * PATH, and the coverage directory when running under c8); resolves once it logs `listening`.
 */
export function serverProcess(env: Record<string, string>, entry: readonly string[] = [serverBundle()]): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const { child, lines, stderr } = launch([process.execPath, ...entry], env, (line) => {
      if (line['msg'] !== 'listening') return;
      resolve({
        child,
        port: Number(new URL(String(line['url'])).port),
        lines,
        stderr,
        exited,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            const exit = await exited;
            clearTimeout(timer);
            return exit;
          }
          return exited;
        },
      });
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
    void exited.then((e) => reject(new Error(`server exited before listening (${e.code ?? e.signal}): ${stderr()}`)));
  });
}

/** `serverProcess` on a fresh data dir (`DATA_DIR`); after the test `t` it is stopped and the dir removed. */
export async function serverProcessOn(
  t: Pick<TestContext, 'after'>,
  env: Record<string, string>,
  entry?: readonly string[],
): Promise<ServerProcess & { dir: string }> {
  const dir = tempDir();
  const server = await serverProcess({ DATA_DIR: dir, ...env }, entry).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  t.after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { ...server, dir };
}

/** Runs the server (bundled, `server-entry.ts`) with `args` to its exit; collects stdout and stderr. */
export function runCli(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [serverBundle(), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

/** A fresh directory under the system's temp dir; given the test `t`, removed after it. */
export function tempDir(prefix?: string): string;
export function tempDir(t: Pick<TestContext, 'after'>, prefix?: string): string;
export function tempDir(first?: string | Pick<TestContext, 'after'>, prefix = 'shortener-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), typeof first === 'string' ? first : prefix));
  if (typeof first === 'object') first.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Collects JSON log lines written by the service. */
export class LogCapture {
  lines: Record<string, unknown>[] = [];
  raw = '';
  write(chunk: string): boolean {
    this.raw += chunk;
    for (const line of chunk.split('\n')) if (line) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  }
  find(msg: string): Record<string, unknown> | undefined {
    return this.lines.find((l) => l['msg'] === msg);
  }
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** The short code at the end of a short URL: a 201's body, or the URL itself. */
export function codeOf(created: Reply | string): string {
  const url = typeof created === 'string' ? created : created.body;
  return url.slice(url.lastIndexOf('/') + 1);
}

/** The short codes GET /api/urls lists (newest first), asked with the admin `key`. */
export async function listedCodes(port: number, key: string): Promise<string[]> {
  const r = await request(port, '/api/urls', { headers: { 'x-api-key': key } });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { urls: { short_code: string }[] }).urls.map((u) => u.short_code);
}

/** A raw HTTP request: the path is sent exactly as given (no normalization by a client library). */
export function request(port: number, path: string, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A shortener mounted in a node:http server of the test's own, as a user's app would mount it. */
export interface App {
  server: Server;
  port: number;
  shortener: Shortener;
  dir: string;
  /**
   * Closes the server (kept-alive connections too) and the store; removes the data dir unless `keep`.
   * Only the first call does anything (the later ones wait for it), so a test may close mid-way
   * while its `t.after` closes again.
   */
  close(keep?: boolean): Promise<void>;
}

/** `mount` with a captured log and request helpers. */
export interface Harness extends App {
  logs: LogCapture;
  /** `request` bound to this server's port. */
  req(path: string, options?: RequestOptions): Promise<Reply>;
  /** POST /api/shorten with a JSON body; returns the short code. */
  shorten(url: string, retentionDays?: number): Promise<string>;
}

/**
 * Listens on 127.0.0.1:0 first (the base URL needs the port), then creates the shortener with
 * `create` (the package entry's, say) and lets `route` attach it to the server. Defaults: a fresh
 * data dir, `fsync: 'off'`, and the base URL of the real port plus `basePath`. The app is closed
 * after the test `t` (closing it sooner is allowed).
 */
export async function mount(t: Pick<TestContext, 'after'>, ...args: Parameters<typeof listen>): Promise<App> {
  const app = await listen(...args);
  t.after(() => app.close());
  return app;
}

/** `mount` without the test: the caller closes the app. */
async function listen(
  basePath: string,
  route: (shortener: Shortener) => (req: IncomingMessage, res: ServerResponse) => void,
  options: ShortenerOptions = {},
  { serverOptions = {}, create = createShortener }: { serverOptions?: ServerOptions; create?: typeof createShortener } = {},
): Promise<App> {
  const dir = options.dataDir ?? tempDir();
  const server = createServer(serverOptions);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const shortener = create({ fsync: 'off', ...options, dataDir: dir, baseUrl: options.baseUrl ?? `http://127.0.0.1:${port}${basePath}` });
  server.on('request', route(shortener));
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    shortener,
    dir,
    close(keep = false) {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await shortener.close();
        if (!keep) rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

/** What the host app of `mountInHostApp` answers (200, text/plain) to a request the shortener passed on. */
export const HOST_APP_BODY = 'host app';

/**
 * `mount` at `basePath` Express-style, in a host app that answers what the shortener passes to
 * `next()` with 200 `HOST_APP_BODY`; `passed` lists the URLs of those requests.
 */
export async function mountInHostApp(
  t: Pick<TestContext, 'after'>,
  basePath: string,
  options: ShortenerOptions = {},
  extra: { serverOptions?: ServerOptions } = {},
): Promise<App & { passed: string[] }> {
  const passed: string[] = [];
  const app = await mount(
    t,
    basePath,
    (shortener) => (req, res) =>
      shortener.handler(req, res, () => {
        passed.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(HOST_APP_BODY);
      }),
    options,
    extra,
  );
  return { ...app, passed };
}

/**
 * Starts `createShortener(options)` on 127.0.0.1:0 and closes it after the test `t` (a test may
 * close it sooner: closing again does nothing). Defaults: those of `mount`, and `logLevel: 'debug'`
 * into a capture. `serverOptions` go to `http.createServer` (the server limits of `server.ts`, for
 * instance).
 */
export async function start(
  t: Pick<TestContext, 'after'>,
  options: ShortenerOptions & { basePath?: string } = {},
  serverOptions: ServerOptions = {},
): Promise<Harness> {
  const h = await open(options, serverOptions);
  t.after(() => h.close());
  return h;
}

/** `start` without the test: the caller closes it (a harness that outlives one test). */
export async function open(options: ShortenerOptions & { basePath?: string } = {}, serverOptions: ServerOptions = {}): Promise<Harness> {
  return harness(options, serverOptions);
}

/**
 * `open`, in the target of this run (`cluster.ts`): one process on the log store, or three
 * instances over one database behind a proxy. `databaseUrl` is the database a cluster harness
 * reopens (`dataDir`).
 */
async function harness(
  options: ShortenerOptions & { basePath?: string },
  serverOptions: ServerOptions,
  databaseUrl?: string,
): Promise<Harness & { databaseUrl?: string }> {
  const { basePath = '', ...settings } = options;
  const logs = new LogCapture();
  const app: App & { databaseUrl?: string } =
    TARGET === 'cluster'
      ? await clusterApp(basePath, settings, serverOptions, logs, databaseUrl)
      : await listen(basePath, (shortener) => shortener.handler, { logger: createLogger(settings.logLevel ?? 'debug', logs), ...settings }, { serverOptions });
  const { shortener, port } = app;
  const req = (path: string, o?: RequestOptions): Promise<Reply> => request(port, path, o);
  return {
    ...app,
    logs,
    req,
    async shorten(url, retentionDays) {
      const basePath = new URL(shortener.config.baseUrl).pathname.replace(/\/$/, '');
      const body = JSON.stringify(retentionDays === undefined ? { url } : { url, retention_days: retentionDays });
      const r = await req(`${basePath}/api/shorten`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (r.status !== 201) throw new Error(`shorten failed: ${r.status} ${r.body}`);
      return codeOf(r);
    },
  };
}

/** `listen` in the cluster target: the log store's data dir is a database there. */
async function clusterApp(
  basePath: string,
  settings: ShortenerOptions,
  serverOptions: ServerOptions,
  logs: LogCapture,
  databaseUrl?: string,
): Promise<App & { databaseUrl: string }> {
  const dir = tempDir();
  const app = await openCluster(basePath, settings, serverOptions, (line) => logs.write(line), databaseUrl);
  return {
    server: app.proxy.server,
    port: app.port,
    shortener: app.shortener,
    dir,
    databaseUrl: app.databaseUrl,
    async close(keep = false) {
      await app.close(keep);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A data dir that outlives one harness: for tests that restart the service on it. */
export interface DataDir {
  dir: string;
  /** Starts the service on this dir; the harness started before must be closed first (`close(true)` keeps the dir). */
  start(options?: ShortenerOptions & { basePath?: string }, serverOptions?: ServerOptions): Promise<Harness>;
}

/** A fresh data dir; after the test `t` the harness started last on it is closed, then the dir removed. */
export function dataDir(t: Pick<TestContext, 'after'>): DataDir {
  const dir = tempDir();
  let last: Harness | undefined;
  let database: string | undefined;
  t.after(async () => {
    await last?.close(TARGET !== 'cluster');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    async start(options = {}, serverOptions = {}) {
      // In the cluster target the links outlive a restart in the database instead.
      const started = await harness({ ...options, dataDir: dir }, serverOptions, database);
      database = started.databaseUrl;
      last = started;
      return last;
    },
  };
}

/** A server child process that may never listen: for start-up races, where most must refuse. */
export interface SpawnedServer {
  child: ChildProcess;
  /** The JSON log lines written so far. */
  lines: Record<string, unknown>[];
  stderr(): string;
  /** True once it logs `listening`, false if it exits first. */
  listening: Promise<boolean>;
  /** Once it exited and its output is all read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the server like `serverProcess` but returns at once. `wrapper` runs it under another
 * command (`unshare …`); `nodeArgs` go to node before the script (a preload, of JavaScript: with
 * the TypeScript loader a start took about 0.07 s more of CPU, and lock-race.test.ts starts 96).
 */
export function spawnServer(env: Record<string, string>, { wrapper = [], nodeArgs = [] }: { wrapper?: string[]; nodeArgs?: string[] } = {}): SpawnedServer {
  let listened = (_: boolean): void => undefined;
  const listening = new Promise<boolean>((resolve) => (listened = resolve));
  const { child, lines, stderr } = launch([...wrapper, process.execPath, ...nodeArgs, serverBundle()], env, (line) => {
    if (line['msg'] === 'listening') listened(true);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  void exited.then(() => listened(false));
  return { child, lines, stderr, listening, exited };
}

/** `text` matched literally inside a RegExp. */
/** The visit count of a live link, read through the service; undefined when there is none. */
export async function visitsOf(shortener: Shortener, code: string): Promise<number | undefined> {
  const outcome = await shortener.service.get(code);
  return outcome.ok ? outcome.record.visit_count : undefined;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A PID that certainly belongs to no running process: one that just exited. */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}
