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
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { configBlock, environmentFile, substitute } from '../support/doc-blocks.ts';
import type { ServerProcess } from '../support/helpers.ts';
import { writeMmdb } from '../support/mmdb-writer.ts';
import {
  type Answer,
  type Exchange,
  type ProxyPorts,
  CADDY_RENAMED_BASICAUTH,
  exchange,
  headerValues,
  proxySetUp,
  proxyToolsMissing,
  startCaddy,
  startNginx,
} from '../support/reverse-proxies.ts';

const PAGE = 'docs/deploy.md';
const HOSTNAME = 'short.example.com';
const CLIENT = '127.0.0.5';
const TOKEN = 'proxy-added-token-0123456789';
const KEY_FOR_TESTS = 'admin-key-for-the-test';
const USER = 'alice';
const PASSWORD = 'correct horse battery staple';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const HSTS = 'max-age=31536000; includeSubDomains';

const skip = proxyToolsMissing('the reverse proxy tests');

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

/** The certificate, the password file and hash, the site's files, the country database and the two servers (open, gated), made once. */
async function setUp(): Promise<{ files: Files; open: ServerProcess; gated: ServerProcess }> {
  const docs = environmentFile(configBlock(PAGE, 'env'));
  assert.equal(docs['BASE_URL'], `https://${HOSTNAME}/s`);
  assert.equal(docs['TRUST_PROXY'], '1');
  const set = await proxySetUp('proxy-test-', {
    names: [HOSTNAME],
    user: USER,
    password: PASSWORD,
    token: TOKEN,
    env: (dir) => {
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
      return { ...docs, API_KEYS: KEY_FOR_TESTS, GEOIP_DB: db, FSYNC: 'off' };
    },
  });
  const site = join(set.dir, 'www');
  for (const [path, text] of Object.entries(SITE_FILES)) {
    mkdirSync(join(site, path, '..'), { recursive: true });
    writeFileSync(join(site, path), text);
  }
  const { cert, certDir, htpasswd, caddyHash, open, gated } = set;
  return { files: { cert, certDir, htpasswd, site, caddyHash }, open, gated };
}
// Once for the file: its `after` stops the servers after the last test.
const { files, open, gated } = skip ? ({} as Awaited<ReturnType<typeof setUp>>) : await setUp();

/** Replaces what only this machine knows in a block of the page: ports, paths, secrets. */
function localized(block: string, backend: number, replacements: Record<string, string>): string {
  return substitute(configBlock(PAGE, block), {
    '127.0.0.1:3000': `127.0.0.1:${backend}`,
    '/etc/ssl/short.example.com/': files.certDir,
    '/var/www/short.example.com': files.site,
    ...replacements,
  });
}

/** The page's nginx block `name`, made local, run by nginx. */
function startNginxBlock(t: TestContext, name: string, backend: number, extra: Record<string, string>): Promise<ProxyPorts> {
  return startNginx(t, localized(name, backend, extra));
}

/** The page's Caddy block `name`, made local, run by Caddy with the token in its environment. */
function startCaddyBlock(t: TestContext, name: string, backend: number, extra: Record<string, string>): Promise<ProxyPorts> {
  return startCaddy(t, localized(name, backend, extra), { API_TOKEN: TOKEN });
}

interface Ask {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Plain http (the redirect to https, or the server itself) instead of TLS. */
  plain?: boolean;
}

/** A request to `port` on 127.0.0.1 from the client's address, for `short.example.com`. */
function ask(port: number, path: string, { headers = {}, plain = false, ...rest }: Ask = {}): Promise<Answer> {
  const exchanged: Exchange = { ...rest, host: HOSTNAME, localAddress: CLIENT, headers: { 'User-Agent': BROWSER, ...headers } };
  return exchange(port, path, plain ? exchanged : { ...exchanged, ca: files.cert });
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
async function assertTheSiteKeepsItsPaths(proxy: ProxyPorts): Promise<void> {
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
async function assertRedirectToHttps(proxy: ProxyPorts, status: number): Promise<void> {
  const r = await ask(proxy.http, '/s/abc123?x=1', { plain: true });
  assert.equal(r.status, status, r.body);
  assert.equal(r.headers.location, `https://${HOSTNAME}/s/abc123?x=1`);
}

async function shorten(proxy: ProxyPorts, target: string, headers: Record<string, string> = {}): Promise<string> {
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
async function countries(proxy: ProxyPorts, code: string, count: number, headers: Record<string, string> = {}): Promise<(string | null)[]> {
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
  start: (t: TestContext, block: string, backend: number, extra: Record<string, string>) => Promise<ProxyPorts>;
  /** The status of the redirect from `http` to `https`. */
  redirect: number;
  /** The password file's or hash's placeholder → this test's. */
  credentials: () => Record<string, string>;
}

const KINDS: Kind[] = [
  {
    name: 'nginx',
    start: startNginxBlock,
    redirect: 301,
    credentials: () => ({ '/etc/nginx/url-shortener.htpasswd': files.htpasswd, 'replace-with-the-API_TOKEN': TOKEN }),
  },
  {
    name: 'caddy',
    start: startCaddyBlock,
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
