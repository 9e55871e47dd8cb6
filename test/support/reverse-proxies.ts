/**
 * Debian's nginx and Caddy as processes of a test, for the tests that run docs/deploy.md's
 * configurations (test/deploy/reverse-proxy.test.ts, test/deploy/several-domains.test.ts): finding
 * the programs, a certificate `openssl` makes, each proxy started in the foreground on free ports of
 * 127.0.0.1 with every file in a temp dir (no system service), and a request to one over http or
 * https. Shared so that both tests run the page's blocks the same way.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { substitute } from './doc-blocks.ts';
import { serverProcess, tempDir, type ServerProcess } from './helpers.ts';
import { missingTool } from './missing-tool.ts';

/** A program from Debian's PATH, also where a non-root PATH lacks `/usr/sbin`. */
function tool(name: string): string | undefined {
  for (const candidate of [name, `/usr/sbin/${name}`]) if (!spawnSync(candidate, ['-v'], { stdio: 'ignore' }).error) return candidate;
  return undefined;
}
export const NGINX = tool('nginx');
export const CADDY = spawnSync('caddy', ['version'], { stdio: 'ignore' }).error ? undefined : 'caddy';
export const OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).error ? undefined : 'openssl';

/**
 * Caddy 2.8 renamed `basicauth` to `basic_auth` and warns about the old name; the older ones know
 * only the old one. The page shows the old one and says to write the new from 2.8 on: so do the tests.
 */
export const CADDY_RENAMED_BASICAUTH = ((): boolean => {
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(CADDY ? spawnSync(CADDY, ['version'], { encoding: 'utf8' }).stdout : '') ?? []).slice(1).map(Number);
  return major > 2 || (major === 2 && minor >= 8);
})();

/** The `skip` of `what` (through missingTool: a failure under CI) when nginx, Caddy or openssl is missing. */
export function proxyToolsMissing(what: string): string | false {
  const missing = [NGINX ? '' : 'nginx', CADDY ? '' : 'caddy', OPENSSL ? '' : 'openssl'].filter(Boolean);
  return missing.length > 0 ? missingTool(what, `${missing.join(', ')} not installed (Debian: apt-get install nginx caddy openssl)`) : false;
}

/** Runs `command` to its end; its stdout, or a failed assertion with its stderr. */
export function run(command: string, args: readonly string[], input?: string): string {
  const r = spawnSync(command, args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * A self-signed certificate for `names` (its subject the first, its SANs all of them), written as
 * `fullchain.pem` and `privkey.pem` into `certDir` (ending in `/`, as the page's paths do). Returns
 * the certificate, for a client to trust as its CA: then a name it does not cover is refused.
 */
export function makeCertificate(certDir: string, names: readonly string[]): string {
  run(OPENSSL!, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${names[0]}`,
    '-addext',
    `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`,
    '-keyout',
    `${certDir}privkey.pem`,
    '-out',
    `${certDir}fullchain.pem`,
  ]);
  return readFileSync(`${certDir}fullchain.pem`, 'utf8');
}

/** What a proxy test sets up once (`proxySetUp`). */
export interface ProxySetUp {
  /** Its temp dir, removed after the file's last test. */
  dir: string;
  cert: string;
  certDir: string;
  htpasswd: string;
  caddyHash: string;
  /** The server on `env`, and the same with `API_TOKEN` set to the gated configuration's token. */
  open: ServerProcess;
  gated: ServerProcess;
}

/**
 * A certificate for `names`, the password file and Caddy's hash of `user`'s `password`, and two
 * servers on what `env` gives (it may write files into the dir first; open, and gated with
 * `token`), each in a data dir of its own: made once for a test file, stopped and removed after
 * its last test.
 */
export async function proxySetUp(
  prefix: string,
  {
    names,
    user,
    password,
    env,
    token,
  }: { names: readonly string[]; user: string; password: string; env: (dir: string) => Record<string, string>; token: string },
): Promise<ProxySetUp> {
  const dir = tempDir(prefix);
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const certDir = `${join(dir, 'tls')}/`;
  mkdirSync(certDir);
  const cert = makeCertificate(certDir, names);
  const htpasswd = join(dir, 'htpasswd');
  writeFileSync(htpasswd, `${user}:${run(OPENSSL!, ['passwd', '-6', '-stdin'], password).trim()}\n`);
  // bcrypt at Caddy's cost takes a second: while the servers start.
  const caddyHash = caddyPasswordHash(password);
  const settings = env(dir);
  mkdirSync(join(dir, 'open'));
  mkdirSync(join(dir, 'gated'));
  const [open, gated] = await Promise.all([
    serverProcess({ ...settings, DATA_DIR: join(dir, 'open') }),
    serverProcess({ ...settings, DATA_DIR: join(dir, 'gated'), API_TOKEN: token }),
  ]);
  servers.push(open, gated);
  return { dir, cert, certDir, htpasswd, caddyHash: await caddyHash, open, gated };
}

/** Caddy's hash of `password` (bcrypt, as `caddy hash-password` makes it for the page's block): a second at Caddy's cost. */
export function caddyPasswordHash(password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(CADDY!, ['hash-password', '--plaintext', password], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`caddy hash-password exited ${code}`))));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Resolves once `port` accepts a connection; rejects if `child` exits first or 10 s pass. */
async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before listening: ${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`port ${port} never opened: ${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface ProxyPorts {
  http: number;
  https: number;
}

/**
 * nginx, in the foreground as one process, with `site` (a page's block, everything but its ports
 * made local) as its `http` content; its `listen 80;` and `listen 443 ssl;` become free ports.
 */
export async function startNginx(t: TestContext, site: string): Promise<ProxyPorts> {
  const ports = { http: await freePort(), https: await freePort() };
  const dir = tempDir(t, 'nginx-');
  const text = substitute(site, { 'listen 80;': `listen 127.0.0.1:${ports.http};`, 'listen 443 ssl;': `listen 127.0.0.1:${ports.https} ssl;` });
  writeFileSync(join(dir, 'site.conf'), text);
  // What a system's nginx.conf gives around a site: here its files stay in the temp dir.
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${dir}/nginx.pid;`,
      'events { worker_connections 64; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`),
      `  include ${dir}/site.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(NGINX!, ['-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  // nginx writes a deprecated directive (`listen … http2` from 1.25.1 on) as a [warn] line.
  return proxyProcess(t, child, ports, /\[(warn|emerg|alert|crit)\]/);
}

/**
 * Caddy, with `site` (a page's block, made local) after global options that pick ports and a
 * storage dir; `env` is Caddy's environment beside what keeps its files in the temp dir.
 */
export async function startCaddy(t: TestContext, site: string, env: Record<string, string> = {}): Promise<ProxyPorts> {
  const ports = { http: await freePort(), https: await freePort() };
  const dir = tempDir(t, 'caddy-');
  const global = [
    '{',
    '\tadmin off',
    `\thttp_port ${ports.http}`,
    `\thttps_port ${ports.https}`,
    '\tdefault_bind 127.0.0.1',
    `\tstorage file_system ${dir}/data`,
    '\tskip_install_trust',
    '}',
    '',
  ].join('\n');
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, `${global}\n${site}`);
  const environment = { PATH: process.env['PATH'] ?? '', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env };
  const child = spawn(CADDY!, ['run', '--config', file, '--adapter', 'caddyfile'], { env: environment, stdio: ['ignore', 'ignore', 'pipe'] });
  // Caddy warns about a Caddyfile not in its own format, and about a deprecated directive.
  return proxyProcess(t, child, ports, /not formatted|deprecated/);
}

/** Stopped after the test `t` (before its temp dir goes); `warning` must not be in its output once it listens. */
async function proxyProcess(t: TestContext, child: ChildProcess, ports: ProxyPorts, warning: RegExp): Promise<ProxyPorts> {
  let output = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise((done) => child.once('exit', done));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  await Promise.all([listening(ports.http, child, () => output), listening(ports.https, child, () => output)]);
  assert.doesNotMatch(output, warning);
  return ports;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Header names and values as sent, repeats included. */
  raw: string[];
  body: string;
}

export interface Exchange {
  /** The `Host` header, and over TLS the name the certificate is checked for (SNI). */
  host: string;
  /** Over TLS: the certificate trusted as the CA. Absent: plain http. */
  ca?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The client's address (any 127.x is the loopback). */
  localAddress?: string;
}

/** A request to `port` on 127.0.0.1 for `host`; over https the certificate must be good for `host`. */
export function exchange(port: number, path: string, { host, ca, method = 'GET', headers = {}, body, localAddress }: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method,
      agent: false as const,
      headers: { Host: host, ...headers },
      ...(localAddress ? { localAddress } : {}),
    };
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, raw: res.rawHeaders, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    // The certificate is checked for the name, against the one openssl made: as a browser would.
    const req = ca === undefined ? httpRequest(options, onResponse) : httpsRequest({ ...options, ca, servername: host }, onResponse);
    req.on('error', reject);
    req.end(body);
  });
}

/** Every value of the header `name` (lower case) as sent, repeats included. */
export function headerValues(answer: Answer, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < answer.raw.length; i += 2) if (answer.raw[i]!.toLowerCase() === name) values.push(answer.raw[i + 1]!);
  return values;
}
