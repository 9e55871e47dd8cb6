/**
 * docs/deploy.md's "Several short domains", run by Debian's nginx and Caddy: the page's open and
 * private configurations (read from it as test/deploy/reverse-proxy.test.ts reads them), changed as
 * that section says (nginx's `server_name` line and Caddy's site address, both read from the
 * section's blocks), with one certificate for both names, in front of the server configured with
 * the page's environment file and the section's `DOMAINS=…`. Through each proxy, over https to each
 * name (the name as the TLS server name and as `Host`): the certificate presented is good for that
 * name; `http` goes to `https` on the same name; one code created on both domains redirects on each
 * host to that domain's own target, and the other domain's short URL names its host; the web UI is
 * served on the default domain only (`404` from the service on the other). The proxies pass the
 * client's `Host` on (nginx's `proxy_set_header Host $host`, Caddy by itself): without it every
 * request would be the default domain's, and the other host's redirect would go to the wrong target.
 *
 * nginx gets a catch-all server in front of the page's (as Debian's `sites-enabled/default` is on a
 * real server): a name the page's `server_name` does not list lands there and is refused, so the
 * section's `server_name` line is what lets the second name in, not nginx's default server.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { checkServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { configBlock, environmentFile, substitute } from '../support/doc-blocks.ts';
import type { ServerProcess } from '../support/helpers.ts';
import {
  type Answer,
  type ProxyPorts,
  type ProxySetUp,
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
const TOKEN = 'proxy-added-token-0123456789';
const USER = 'alice';
const PASSWORD = 'correct horse battery staple';
const HSTS = 'max-age=31536000; includeSubDomains';

/** The text of the page's section under `heading`, up to the next section. */
function section(heading: string): string {
  const text = readFileSync(new URL(`../../${PAGE}`, import.meta.url), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${PAGE} has the section ${heading}`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

// What the section says to add, read from it: the environment line and each proxy's one change.
const SECTION = section('## Several short domains');
const DOMAINS = environmentFile(/`(DOMAINS=[^`]*)`/.exec(SECTION)?.[1] ?? 'the section names no DOMAINS=');
const OTHER = DOMAINS['DOMAINS']!;
assert.match(OTHER, /^[a-z0-9.-]+$/, 'one other domain, a host name');
const NGINX_SERVER_NAME = configBlock(PAGE, 'nginx-domains').trim();
const CADDY_SITE_ADDRESS = configBlock(PAGE, 'caddy-domains').split('\n')[0]!;
assert.ok(SECTION.includes(NGINX_SERVER_NAME) && SECTION.includes(CADDY_SITE_ADDRESS), 'the blocks are the section’s');
assert.match(CADDY_SITE_ADDRESS, / \{$/, "the caddy-domains block opens with the site's address");

const skip = proxyToolsMissing('the several short domains proxy tests');

type Setup = ProxySetUp & {
  /** An empty dir for the site's `root`: nothing here asks for the site's own files. */
  site: string;
};

/** The certificate for both names, the password file and hash, and the two servers (open, gated), made once. */
async function setUp(): Promise<Setup> {
  const docs = environmentFile(configBlock(PAGE, 'env'));
  assert.equal(docs['BASE_URL'], `https://${HOSTNAME}/s`);
  // One certificate whose names are both hosts: the section's "a certificate for both".
  const set = await proxySetUp('domains-proxy-test-', {
    names: [HOSTNAME, OTHER],
    user: USER,
    password: PASSWORD,
    token: TOKEN,
    env: () => ({ ...docs, ...DOMAINS, FSYNC: 'off' }),
  });
  const site = join(set.dir, 'www');
  mkdirSync(site);
  return { ...set, site };
}
// Once for the file: its `after` stops the servers after the last test.
const setup = skip ? ({} as Setup) : await setUp();

/**
 * Debian's default site, first in the file so that it is the default server of both ports: a name
 * no other `server_name` lists gets no certificate and no answer. Written with the page's `listen`
 * lines, which startNginx gives the test's ports.
 */
const NGINX_CATCH_ALL = [
  'server {',
  '    listen 80;',
  '    server_name _;',
  '    return 444;',
  '}',
  '',
  'server {',
  '    listen 443 ssl;',
  '    server_name _;',
  '    ssl_reject_handshake on;',
  '}',
  '',
  '',
].join('\n');

interface Kind {
  name: string;
  /** The section's change to the page's block. */
  twoNames: () => Record<string, string>;
  start: (t: TestContext, site: string) => Promise<ProxyPorts>;
  /** The status of the redirect from `http` to `https`. */
  redirect: number;
  /** The password file's or hash's placeholder → this test's. */
  credentials: () => Record<string, string>;
}

const KINDS: Kind[] = [
  {
    name: 'nginx',
    // Both server blocks, the `http` one and the `https` one, name both hosts.
    twoNames: () => ({ 'server_name short.example.com;': NGINX_SERVER_NAME }),
    start: (t, site) => startNginx(t, `${NGINX_CATCH_ALL}${site}`),
    redirect: 301,
    credentials: () => ({ '/etc/nginx/url-shortener.htpasswd': setup.htpasswd, 'replace-with-the-API_TOKEN': TOKEN }),
  },
  {
    name: 'caddy',
    twoNames: () => ({ [`${HOSTNAME} {`]: CADDY_SITE_ADDRESS }),
    start: (t, site) => startCaddy(t, site, { API_TOKEN: TOKEN }),
    redirect: 308,
    credentials: () => ({
      'replace-with-the-hash-from-caddy-hash-password': setup.caddyHash,
      ...(CADDY_RENAMED_BASICAUTH ? { '\tbasicauth {': '\tbasic_auth {' } : {}),
    }),
  },
];

interface Config {
  name: 'open' | 'gated';
  server: () => ServerProcess;
  /** What a user sends: the password in the private configuration. */
  headers: Record<string, string>;
}

const CONFIGS: Config[] = [
  { name: 'open', server: () => setup.open, headers: {} },
  { name: 'gated', server: () => setup.gated, headers: { Authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` } },
];

/** The page's block for `kind` and `config`, with both names, made local (ports, paths, secrets). */
function siteOf(kind: Kind, config: Config): string {
  return substitute(configBlock(PAGE, `${kind.name}-${config.name}`), {
    '127.0.0.1:3000': `127.0.0.1:${config.server().port}`,
    '/etc/ssl/short.example.com/': setup.certDir,
    '/var/www/short.example.com': setup.site,
    ...kind.twoNames(),
    ...(config.name === 'gated' ? kind.credentials() : {}),
  });
}

interface Ask {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Plain http (the redirect to https) instead of TLS. */
  plain?: boolean;
}

/** A request to the proxy for `host`: its `Host`, and over TLS its server name, checked against the certificate. */
function ask(proxy: ProxyPorts, host: string, path: string, { plain = false, ...rest }: Ask = {}): Promise<Answer> {
  return plain ? exchange(proxy.http, path, { ...rest, host }) : exchange(proxy.https, path, { ...rest, host, ca: setup.cert });
}

/** The certificate the proxy presents for the server name `name`, refused unless good for it. */
function presented(proxy: ProxyPorts, name: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: proxy.https, servername: name, ca: setup.cert, rejectUnauthorized: true }, () => {
      resolve(socket.getPeerCertificate());
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

/** Creates `code` → `target` through the proxy on `host`, for `domain` (absent: the default one); its short URL. */
async function shorten(proxy: ProxyPorts, host: string, config: Config, link: { url: string; code: string; domain?: string }): Promise<string> {
  const r = await ask(proxy, host, '/s/api/shorten', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...config.headers },
    body: JSON.stringify(link),
  });
  assert.equal(r.status, 201, r.body);
  assert.equal(r.headers.location, r.body);
  return r.body;
}

/** Each name: its certificate, and `http` sent to `https` on the same name. */
async function assertEachNameIsServed(proxy: ProxyPorts, kind: Kind): Promise<void> {
  for (const host of [HOSTNAME, OTHER]) {
    const cert = await presented(proxy, host);
    assert.equal(checkServerIdentity(host, cert), undefined, host);
    const r = await ask(proxy, host, '/s/abc123?x=1', { plain: true });
    assert.equal(r.status, kind.redirect, `${host}: ${r.body}`);
    assert.equal(r.headers.location, `https://${host}/s/abc123?x=1`);
  }
}

/** One code on both domains, each with its own target, each redirected on its own host. */
async function assertOneCodeOnEachDomain(proxy: ProxyPorts, kind: Kind, config: Config): Promise<void> {
  const code = `sale-${kind.name}`;
  const targets = { [HOSTNAME]: `https://example.org/${kind.name}/default`, [OTHER]: `https://example.org/${kind.name}/other` };
  assert.equal(await shorten(proxy, HOSTNAME, config, { url: targets[HOSTNAME]!, code }), `https://${HOSTNAME}/s/${code}`);
  assert.equal(await shorten(proxy, OTHER, config, { url: targets[OTHER]!, code, domain: OTHER }), `https://${OTHER}/s/${code}`);
  for (const [host, target] of Object.entries(targets)) {
    const visit = await ask(proxy, host, `/s/${code}`, { headers: config.headers });
    assert.equal(visit.status, 302, `${host}: ${visit.body}`);
    assert.equal(visit.headers.location, target, host);
  }
}

/** The UI on the default host (its page naming both domains); on the other the service's empty 404. */
async function assertUiOnTheDefaultDomainOnly(proxy: ProxyPorts, config: Config): Promise<void> {
  const ui = await ask(proxy, HOSTNAME, '/s/', { headers: config.headers });
  assert.equal(ui.status, 200, ui.body);
  assert.match(String(ui.headers['content-type']), /^text\/html/);
  assert.ok(ui.body.includes(`<meta name="domains" content="${HOSTNAME} ${OTHER}">`), 'the UI knows both domains');
  const none = await ask(proxy, OTHER, '/s/', { headers: config.headers });
  assert.deepEqual([none.status, none.body], [404, '']);
  // The service's answer (its HSTS), not a 404 of the proxy's own.
  assert.deepEqual(headerValues(none, 'strict-transport-security'), [HSTS]);
}

for (const kind of KINDS) {
  for (const config of CONFIGS) {
    test(`${kind.name}, ${config.name}, two short domains: each name's certificate, its own links, the UI on the default one`, { skip }, async (t) => {
      const proxy = await kind.start(t, siteOf(kind, config));
      await assertEachNameIsServed(proxy, kind);
      if (config.name === 'gated') {
        // The second name is behind the password too.
        const refused = await ask(proxy, OTHER, '/s/');
        assert.equal(refused.status, 401, refused.body);
        assert.match(String(refused.headers['www-authenticate']), /^Basic /);
      }
      await assertOneCodeOnEachDomain(proxy, kind, config);
      await assertUiOnTheDefaultDomainOnly(proxy, config);
    });
  }
}
