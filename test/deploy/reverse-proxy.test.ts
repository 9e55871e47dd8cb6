/**
 * docs/deploy.md's nginx and Caddy configurations, run by Debian's nginx and Caddy exactly as the
 * page shows them (read from it, with the ports, the certificate's and password file's paths and
 * the secrets replaced), with a certificate `openssl` makes, in front of the server configured with
 * the page's environment file. Through each: `http` is redirected to `https`; short URLs are
 * `https` under the base path and redirect; exactly one HSTS header; a visit's country comes from
 * the address the client connected from (a country database maps the client's, the proxy's and a
 * spoofed address to three countries); the site's other paths, `/shop` and `/sitemap.xml` among
 * them, stay with the site (static files in a temp dir), password or not; and the private
 * configurations let in only a user with the password, adding the token the server wants. Neither
 * proxy may warn about the blocks as they are (a deprecated directive is a warning).
 *
 * The proxies are processes of the test on free ports of 127.0.0.1, with every file in a temp dir
 * (no system service). A client connects from 127.0.0.5: any 127.x address is the loopback, so the
 * proxy sees an address of the client's that is not its own.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { configBlock, environmentFile, substitute } from '../support/doc-blocks.ts';
import { serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';

const PAGE = 'docs/deploy.md';
const HOSTNAME = 'short.example.com';
const CLIENT = '127.0.0.5';
const TOKEN = 'proxy-added-token-0123456789';
const KEY_FOR_TESTS = 'admin-key-for-the-test';
const USER = 'alice';
const PASSWORD = 'correct horse battery staple';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const HSTS = 'max-age=31536000; includeSubDomains';

/** A program from Debian's PATH, also where a non-root PATH lacks `/usr/sbin`. */
function tool(name: string): string | undefined {
  for (const candidate of [name, `/usr/sbin/${name}`]) if (!spawnSync(candidate, ['-v'], { stdio: 'ignore' }).error) return candidate;
  return undefined;
}
const NGINX = tool('nginx');
const CADDY = spawnSync('caddy', ['version'], { stdio: 'ignore' }).error ? undefined : 'caddy';
/**
 * Caddy 2.8 renamed `basicauth` to `basic_auth` and warns about the old name; the older ones know
 * only the old one. The page shows the old one and says to write the new from 2.8 on: so does this.
 */
const CADDY_RENAMED_BASICAUTH = ((): boolean => {
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(CADDY ? spawnSync(CADDY, ['version'], { encoding: 'utf8' }).stdout : '') ?? []).slice(1).map(Number);
  return major > 2 || (major === 2 && minor >= 8);
})();
const OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).error ? undefined : 'openssl';
const missing = [NGINX ? '' : 'nginx', CADDY ? '' : 'caddy', OPENSSL ? '' : 'openssl'].filter(Boolean);
const skip =
  missing.length > 0 ? missingTool('the reverse proxy tests', `${missing.join(', ')} not installed (Debian: apt-get install nginx caddy openssl)`) : false;

function run(command: string, args: readonly string[], input?: string): string {
  const r = spawnSync(command, args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Caddy's hash of the password (bcrypt, as `caddy hash-password` makes it for the docs' block). */
function hashPassword(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(CADDY!, ['hash-password', '--plaintext', PASSWORD], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`caddy hash-password exited ${code}`))));
  });
}

function freePort(): Promise<number> {
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

interface Files {
  cert: string;
  /** The certificate's directory, with the trailing slash the docs' paths have. */
  certDir: string;
  htpasswd: string;
  caddyHash: string;
  /** The rest of the site: static files the proxy serves itself. */
  site: string;
}

/**
 * The site's own paths beside the shortener's `/s`, each with its file's text. Their names start
 * with `s`, so that a prefix match on `/s` would take them.
 */
const SITE_FILES: Readonly<Record<string, string>> = {
  '/shop': 'the shop of the main site\n',
  '/sitemap.xml': '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>\n',
  '/static/app.css': 'body { margin: 0 }\n',
  '/s.txt': 'a file beside /s\n',
};

/** The certificate, the password file and hash, the site's files, and the two servers (open, gated), made once. */
async function setUp(): Promise<{ files: Files; open: ServerProcess; gated: ServerProcess }> {
  const dir = tempDir('proxy-test-');
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const certDir = `${join(dir, 'tls')}/`;
  mkdirSync(certDir);
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
    `/CN=${HOSTNAME}`,
    '-addext',
    `subjectAltName=DNS:${HOSTNAME}`,
    '-keyout',
    `${certDir}privkey.pem`,
    '-out',
    `${certDir}fullchain.pem`,
  ]);
  const htpasswd = join(dir, 'htpasswd');
  writeFileSync(htpasswd, `${USER}:${run(OPENSSL!, ['passwd', '-6', '-stdin'], PASSWORD).trim()}\n`);
  // bcrypt at Caddy's cost takes a second: while the servers start.
  const caddyHash = hashPassword();
  const site = join(dir, 'www');
  for (const [path, text] of Object.entries(SITE_FILES)) {
    mkdirSync(join(site, path, '..'), { recursive: true });
    writeFileSync(join(site, path), text);
  }
  const files = { cert: readFileSync(`${certDir}fullchain.pem`, 'utf8'), certDir, htpasswd, site };

  // The client's address, the proxy's and one a client could write: three countries.
  const db = join(dir, 'country.mmdb');
  writeFileSync(
    db,
    writeMmdb({
      ipVersion: 6,
      recordSize: 24,
      networks: [
        [`${CLIENT}/32`, { country_code: 'NZ' }],
        ['127.0.0.1/32', { country_code: 'AQ' }],
        ['198.51.100.0/24', { country_code: 'NL' }],
      ],
    }),
  );
  const docs = environmentFile(configBlock(PAGE, 'env'));
  const env = { ...docs, API_KEYS: KEY_FOR_TESTS, GEOIP_DB: db, FSYNC: 'off' };
  assert.equal(docs['BASE_URL'], `https://${HOSTNAME}/s`);
  assert.equal(docs['TRUST_PROXY'], '1');
  mkdirSync(join(dir, 'open'));
  mkdirSync(join(dir, 'gated'));
  const [open, gated] = await Promise.all([
    serverProcess({ ...env, DATA_DIR: join(dir, 'open') }),
    serverProcess({ ...env, DATA_DIR: join(dir, 'gated'), API_TOKEN: TOKEN }),
  ]);
  servers.push(open, gated);
  return { files: { ...files, caddyHash: await caddyHash }, open, gated };
}
// Once for the file: its `after` stops the servers after the last test.
const { files, open, gated } = skip ? ({} as Awaited<ReturnType<typeof setUp>>) : await setUp();

interface Proxy {
  http: number;
  https: number;
}

/** Replaces what only this machine knows in a block of the page: ports, paths, secrets. */
function localized(block: string, backend: number, replacements: Record<string, string>): string {
  return substitute(configBlock(PAGE, block), {
    '127.0.0.1:3000': `127.0.0.1:${backend}`,
    '/etc/ssl/short.example.com/': files.certDir,
    '/var/www/short.example.com': files.site,
    ...replacements,
  });
}

/** nginx, in the foreground as one process, with the page's block `name` as its `http` content. */
async function startNginx(t: TestContext, name: string, backend: number, extra: Record<string, string>): Promise<Proxy> {
  const ports = { http: await freePort(), https: await freePort() };
  const dir = tempDir(t, 'nginx-');
  const site = localized(name, backend, {
    'listen 80;': `listen 127.0.0.1:${ports.http};`,
    'listen 443 ssl;': `listen 127.0.0.1:${ports.https} ssl;`,
    ...extra,
  });
  writeFileSync(join(dir, 'site.conf'), site);
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

/** Caddy, with the page's block `name` after global options that pick ports and a storage dir. */
async function startCaddy(t: TestContext, name: string, backend: number, extra: Record<string, string>): Promise<Proxy> {
  const ports = { http: await freePort(), https: await freePort() };
  const dir = tempDir(t, 'caddy-');
  const site = localized(name, backend, extra);
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
  const env = { PATH: process.env['PATH'] ?? '', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, API_TOKEN: TOKEN };
  const child = spawn(CADDY!, ['run', '--config', file, '--adapter', 'caddyfile'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  // Caddy warns about a Caddyfile not in its own format, and about a deprecated directive.
  return proxyProcess(t, child, ports, /not formatted|deprecated/);
}

/** Stopped after the test `t` (before its temp dir goes); `warning` must not be in its output once it listens. */
async function proxyProcess(t: TestContext, child: ChildProcess, ports: Proxy, warning: RegExp): Promise<Proxy> {
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

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Header names and values as sent, repeats included. */
  raw: string[];
  body: string;
}

interface Ask {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Plain http (the redirect to https, or the server itself) instead of TLS. */
  plain?: boolean;
}

/** A request to `port` on 127.0.0.1 from the client's address, for `short.example.com`. */
function ask(port: number, path: string, { method = 'GET', headers = {}, body, plain = false }: Ask = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method,
      localAddress: CLIENT,
      agent: false as const,
      headers: { Host: HOSTNAME, 'User-Agent': BROWSER, ...headers },
    };
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, raw: res.rawHeaders, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    // The certificate is checked for the name, against the one openssl made: as a browser would.
    const req = plain ? httpRequest(options, onResponse) : httpsRequest({ ...options, ca: files.cert, servername: HOSTNAME }, onResponse);
    req.on('error', reject);
    req.end(body);
  });
}

/** Every value of the header `name` (lower case) as sent, repeats included. */
function headerValues(answer: Answer, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < answer.raw.length; i += 2) if (answer.raw[i]!.toLowerCase() === name) values.push(answer.raw[i + 1]!);
  return values;
}

/** The HSTS header, exactly once, as the server sends it (a proxy adding its own would repeat it). */
function assertOneHsts(answer: Answer): void {
  assert.deepEqual(headerValues(answer, 'strict-transport-security'), [HSTS]);
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The site's other paths are the site's, through the proxy: its files, without the service's HSTS
 * (or its 404). A prefix match on `/s` would hand `/shop` and the others to the service.
 */
async function assertTheSiteKeepsItsPaths(proxy: Proxy): Promise<void> {
  for (const [path, text] of Object.entries(SITE_FILES)) {
    const r = await ask(proxy.https, path);
    assert.deepEqual([r.status, r.body], [200, text], path);
    assert.deepEqual(headerValues(r, 'strict-transport-security'), [], `${path}: not the service's answer`);
  }
}

/**
 * `http://…/path` is redirected to the same path and query on `https://short.example.com` (port
 * 443: neither proxy names the port it was configured with here).
 */
async function assertRedirectToHttps(proxy: Proxy, status: number): Promise<void> {
  const r = await ask(proxy.http, '/s/abc123?x=1', { plain: true });
  assert.equal(r.status, status, r.body);
  assert.equal(r.headers.location, `https://${HOSTNAME}/s/abc123?x=1`);
}

async function shorten(proxy: Proxy, target: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await ask(proxy.https, '/s/api/shorten', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ url: target }),
  });
  assert.equal(r.status, 201, r.body);
  assert.match(r.body, /^https:\/\/short\.example\.com\/s\/[A-Za-z0-9]{6,12}$/);
  assert.equal(r.headers.location, r.body);
  assertOneHsts(r);
  return r.body.slice(r.body.lastIndexOf('/') + 1);
}

/** The countries of `code`'s visit events, newest first, once `count` are recorded. */
async function countries(proxy: Proxy, code: string, count: number, headers: Record<string, string> = {}): Promise<(string | null)[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const r = await ask(proxy.https, `/s/api/urls/${code}/visits`, { headers: { 'X-API-Key': KEY_FOR_TESTS, ...headers } });
    assert.equal(r.status, 200, r.body);
    const { count: n, visits } = JSON.parse(r.body) as { count: number; visits: { country: string | null }[] };
    if (n >= count || Date.now() > deadline) return visits.map((v) => v.country);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Kind {
  name: string;
  start: (t: TestContext, block: string, backend: number, extra: Record<string, string>) => Promise<Proxy>;
  /** The status of the redirect from `http` to `https`. */
  redirect: number;
  /** The password file's or hash's placeholder → this test's. */
  credentials: () => Record<string, string>;
}

const KINDS: Kind[] = [
  {
    name: 'nginx',
    start: startNginx,
    redirect: 301,
    credentials: () => ({ '/etc/nginx/url-shortener.htpasswd': files.htpasswd, 'replace-with-the-API_TOKEN': TOKEN }),
  },
  {
    name: 'caddy',
    start: startCaddy,
    redirect: 308,
    credentials: () => ({
      'replace-with-the-hash-from-caddy-hash-password': files.caddyHash,
      ...(CADDY_RENAMED_BASICAUTH ? { '\tbasicauth {': '\tbasic_auth {' } : {}),
    }),
  },
];

for (const kind of KINDS) {
  test(`${kind.name}, open: https, the redirects, the base path, HSTS, the client's address`, { skip }, async (t) => {
    const proxy = await kind.start(t, `${kind.name}-open`, open.port, {});
    await assertRedirectToHttps(proxy, kind.redirect);

    const code = await shorten(proxy, 'https://example.org/landing?from=proxy');
    const meta = await ask(proxy.https, `/s/api/urls/${code}`);
    assert.equal(meta.status, 200, meta.body);
    assert.equal((JSON.parse(meta.body) as { short_url: string }).short_url, `https://${HOSTNAME}/s/${code}`);

    // A visit, with an address the client wrote itself in front of the proxy's entry.
    const visit = await ask(proxy.https, `/s/${code}`, { headers: { 'X-Forwarded-For': '198.51.100.7' } });
    assert.equal(visit.status, 302, visit.body);
    assert.equal(visit.headers.location, 'https://example.org/landing?from=proxy');
    assertOneHsts(visit);
    // NZ is 127.0.0.5's: not the proxy's (AQ, TRUST_PROXY unread) nor the spoofed one (NL).
    assert.deepEqual(await countries(proxy, code, 1), ['NZ']);

    // The base path: the bare /s goes to /s/, a path outside it is not the service's.
    const bare = await ask(proxy.https, '/s');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.location, '/s/');
    assertOneHsts(bare);
    const health = await ask(proxy.https, '/s/healthz?ready');
    assert.deepEqual([health.status, health.body], [200, '{"status":"ok"}']);
    // Outside /s the paths are the site's: its files, and its own 404 for a code, never the
    // service's redirect with its HSTS.
    await assertTheSiteKeepsItsPaths(proxy);
    const outside = await ask(proxy.https, `/${code}`);
    assert.equal(outside.status, 404);
    assert.deepEqual(headerValues(outside, 'strict-transport-security'), []);
  });

  test(`${kind.name}, gated: only a user with the password, and the proxy adds the token`, { skip }, async (t) => {
    const proxy = await kind.start(t, `${kind.name}-gated`, gated.port, kind.credentials());
    await assertRedirectToHttps(proxy, kind.redirect);
    const user = { Authorization: basic(USER, PASSWORD) };

    for (const headers of [{}, { Authorization: basic(USER, 'wrong') }, { Authorization: `Bearer ${TOKEN}` }]) {
      const refused = await ask(proxy.https, '/s/api/shorten', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: '{"url":"https://example.org/"}',
      });
      assert.equal(refused.status, 401, `${JSON.stringify(headers)}: ${refused.body}`);
      assert.match(String(refused.headers['www-authenticate']), /^Basic /, 'the proxy refused, before the service');
    }

    // The bare /s too is behind the password; the site's other paths are not.
    assert.equal((await ask(proxy.https, '/s')).status, 401);
    const bare = await ask(proxy.https, '/s', { headers: user });
    assert.deepEqual([bare.status, bare.headers.location], [301, '/s/']);
    assertOneHsts(bare);
    await assertTheSiteKeepsItsPaths(proxy);

    const code = await shorten(proxy, 'https://example.org/private', user);
    const visit = await ask(proxy.https, `/s/${code}`, { headers: user });
    assert.equal(visit.status, 302, visit.body);
    assert.equal(visit.headers.location, 'https://example.org/private');
    assertOneHsts(visit);
    assert.deepEqual(await countries(proxy, code, 1, user), ['NZ']);
    assert.equal((await ask(proxy.https, `/s/${code}`)).status, 401);

    // Round the proxy the service itself wants the token, and a user's password is not it.
    for (const headers of [{}, user]) {
      const direct = await ask(gated.port, `/s/${code}`, { plain: true, headers });
      assert.equal(direct.status, 401, direct.body);
      assert.equal(direct.headers['www-authenticate'], 'Bearer');
    }
  });
}

test("the nginx blocks leave HTTP/2 out: Debian 12's nginx (1.22) knows no `http2 on`, and 1.25.1 and newer warn about `listen … http2`", () => {
  for (const block of ['nginx-open', 'nginx-gated']) {
    const text = configBlock(PAGE, block);
    assert.doesNotMatch(text, /http2/, block);
    // The shortener's paths exactly: `/s/…` and `/s`, never a bare prefix `/s` that takes `/shop`.
    assert.match(text, /^ {4}location \/s\/ \{$/m, block);
    assert.match(text, /^ {4}location = \/s \{$/m, block);
    assert.doesNotMatch(text, /location \/s \{/, block);
  }
});
