/**
 * The handler as a library (docs/operations.md, use it as a library): mounted in a user's own
 * node:http server beside other routes, used as Express-style middleware under a base path
 * (`next()`, `req.originalUrl`), and validated like the CLI.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener, type ShortenerOptions } from '../../src/app.ts';
import { ConfigError } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import { nodeFs } from '../../src/store/log/fs.ts';
import * as entry from '../../src/index.ts';
import { codeOf, mount as mountApp, request, tempDir, type Reply } from '../support/helpers.ts';

/** What Express adds to a request: the target before the mount path was stripped. */
type ExpressRequest = IncomingMessage & { originalUrl?: string };

/** `mount` with the log silenced: these tests read responses, not log lines. */
const mount: typeof mountApp = (t, basePath, route, options = {}, how) => mountApp(t, basePath, route, { logLevel: 'silent', ...options }, how);

function shorten(port: number, path: string, url: string): Promise<Reply> {
  return request(port, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
}

test("mounted in a plain node:http server beside the user's own route, on one port", async (t) => {
  const app = await mount(
    t,
    '',
    (shortener) =>
      function userApp(req, res) {
        if (req.url === '/hello') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('hello from the app');
          return;
        }
        shortener.handler(req, res);
      },
  );
  const hello = await request(app.port, '/hello');
  assert.equal(hello.status, 200);
  assert.equal(hello.body, 'hello from the app');
  assert.equal(hello.headers['access-control-allow-origin'], undefined, 'the user route is not touched');

  const created = await shorten(app.port, '/api/shorten', 'https://example.com/library');
  assert.equal(created.status, 201);
  assert.equal(created.headers['content-type'], 'text/plain; charset=utf-8');
  assert.match(created.body, new RegExp(`^http://127\\.0\\.0\\.1:${app.port}/[1-9A-HJ-NP-Za-km-z]{6}$`));
  assert.equal(created.headers.location, created.body);
  const code = codeOf(created.body);

  const redirect = await request(app.port, `/${code}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.location, 'https://example.com/library');

  const meta = await request(app.port, `/api/urls/${code}`);
  assert.equal(meta.status, 200);
  assert.equal((JSON.parse(meta.body) as { visit_count: number }).visit_count, 1);

  // Everything the user does not serve is the shortener's: an unknown code is its 404 page.
  const missing = await request(app.port, '/zzzzzz');
  assert.equal(missing.status, 404);
  assert.match(missing.body, /Link not found/);

  // Still the user's route after the shortener has served requests.
  assert.equal((await request(app.port, '/hello')).body, 'hello from the app');
});

test('http.createServer(shortener.handler) from the package entry', async (t) => {
  const app = await mount(t, '', (shortener) => shortener.handler, {}, { create: entry.createShortener });
  const health = await request(app.port, '/api/health');
  assert.equal(health.status, 200);
  assert.deepEqual(JSON.parse(health.body), { status: 'ok', service: 'url-shortener' });
  const unknown = await request(app.port, '/api/nothing-here');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body, '');
});

test('Express-style: base path /s, next() for everything outside it', async (t) => {
  const nextCalls: { url: string | undefined; err: unknown }[] = [];
  const app = await mount(
    t,
    '/s',
    (shortener) =>
      function middleware(req, res) {
        shortener.handler(req, res, (err?: unknown) => {
          nextCalls.push({ url: req.url, err });
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`next: ${req.url}`);
        });
      },
  );
  const other = await request(app.port, '/other');
  assert.equal(other.status, 200);
  assert.equal(other.body, 'next: /other');
  assert.deepEqual(nextCalls, [{ url: '/other', err: undefined }]);

  // A path that only starts with the same letters is outside the base path too.
  assert.equal((await request(app.port, '/sx/api/health')).body, 'next: /sx/api/health');
  assert.equal((await request(app.port, '/')).body, 'next: /');
  assert.equal(nextCalls.length, 3);

  const health = await request(app.port, '/s/api/health');
  assert.equal(health.status, 200);
  assert.deepEqual(JSON.parse(health.body), { status: 'ok', service: 'url-shortener' });

  const created = await shorten(app.port, '/s/api/shorten', 'https://example.com/express');
  assert.equal(created.status, 201);
  assert.ok(created.body.startsWith(`http://127.0.0.1:${app.port}/s/`), created.body);
  const redirect = await request(app.port, `/s/${codeOf(created.body)}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.location, 'https://example.com/express');

  // Inside the base path the shortener answers, also with its own 404 and 301.
  assert.equal((await request(app.port, '/s/api/nothing-here')).status, 404);
  const bare = await request(app.port, '/s?x=1');
  assert.equal(bare.status, 301);
  assert.equal(bare.headers.location, '/s/?x=1');
  assert.equal(nextCalls.length, 3, 'next() only for requests outside the base path');
});

test('without next, a request outside the base path is 404 (docs/security.md, base path)', async (t) => {
  const app = await mount(t, '/s', (shortener) => (req, res) => shortener.handler(req, res));
  const other = await request(app.port, '/other');
  assert.equal(other.status, 404);
  assert.equal(other.body, '');
  assert.equal((await request(app.port, '/s/api/health')).status, 200);
});

test('Express mounting: req.originalUrl is routed when req.url has the mount path stripped', async (t) => {
  let nextCalls = 0;
  const app = await mount(
    t,
    '/s',
    (shortener) =>
      function expressLike(req: ExpressRequest, res) {
        const next = (): void => {
          nextCalls++;
          res.writeHead(418);
          res.end('next');
        };
        const url = req.url ?? '/';
        const mounted = url === '/s' || url.startsWith('/s/') || url.startsWith('/s?');
        if (!mounted) return next();
        // What `app.use('/s', shortener.handler)` does to the request.
        req.originalUrl = url;
        req.url = url.slice('/s'.length) || '/';
        if (!req.url.startsWith('/')) req.url = `/${req.url}`;
        shortener.handler(req, res, next);
      },
  );
  const health = await request(app.port, '/s/api/health');
  assert.equal(health.status, 200);
  assert.deepEqual(JSON.parse(health.body), { status: 'ok', service: 'url-shortener' });

  const created = await shorten(app.port, '/s/api/shorten', 'https://example.com/mounted');
  assert.equal(created.status, 201);
  assert.ok(created.body.startsWith(`http://127.0.0.1:${app.port}/s/`), created.body);
  const code = codeOf(created.body);

  const redirect = await request(app.port, `/s/${code}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.location, 'https://example.com/mounted');

  const meta = await request(app.port, `/s/api/urls/${code}/?unused=1`);
  assert.equal(meta.status, 200);
  assert.equal((JSON.parse(meta.body) as { short_url: string }).short_url, created.body);

  const bare = await request(app.port, '/s');
  assert.equal(bare.status, 301);
  assert.equal(bare.headers.location, '/s/');
  assert.equal(nextCalls, 0);
});

test('control: the stripped req.url alone lies outside the base path (so originalUrl is what routes)', async (t) => {
  let nextCalls = 0;
  const app = await mount(
    t,
    '/s',
    (shortener) =>
      function strippedOnly(req, res) {
        req.url = (req.url ?? '/').slice('/s'.length) || '/';
        shortener.handler(req, res, () => {
          nextCalls++;
          res.writeHead(418);
          res.end();
        });
      },
  );
  assert.equal((await request(app.port, '/s/api/health')).status, 418);
  assert.equal(nextCalls, 1);
});

test('library options are validated like the CLI, before anything touches the disk', (t) => {
  const parent = tempDir(t);
  const dataDir = join(parent, 'data');
  const cases: [string, ShortenerOptions, RegExp][] = [
    ['min > max', { minShortLength: 9, maxShortLength: 3 }, /max_?short_?length/i],
    ['port 70000', { port: 70000 }, /\bport\b/],
    ['base URL not http(s)', { baseUrl: 'ftp://x' }, /baseUrl/],
    ['base URL with a query', { baseUrl: 'https://s.example/?q=1' }, /baseUrl/],
    ['max URL length 0', { maxUrlLength: 0 }, /maxUrlLength/],
    ['bad MCP origin', { mcpAllowedOrigins: ['not an origin'] }, /mcpAllowedOrigins/],
    ['empty data dir', { dataDir: '' }, /dataDir/],
  ];
  for (const [name, options, names] of cases) {
    assert.throws(
      () => createShortener({ dataDir, logLevel: 'silent', ...options }),
      (err: unknown) => err instanceof ConfigError && names.test(err.message),
      name,
    );
  }
  assert.equal(existsSync(dataDir), false, 'no data dir created by a rejected configuration');

  // A plain JavaScript caller gets the same checks for values TypeScript would have refused.
  const untyped = { dataDir, fsync: 'sometimes', logLevel: 'loud' } as unknown as ShortenerOptions;
  assert.throws(() => createShortener(untyped), ConfigError);
  assert.equal(existsSync(dataDir), false);
});

test('an unknown option name is a TypeError naming it (and the name it was meant to be); nothing starts', (t) => {
  const parent = tempDir(t);
  const dataDir = join(parent, 'data');
  const cases: [options: Record<string, unknown>, message: string][] = [
    [{ apiKey: 'k' }, 'unknown option "apiKey": did you mean "apiKeys"?'],
    [{ apiKey: undefined }, 'unknown option "apiKey": did you mean "apiKeys"?'],
    [{ api_keys: ['k'] }, 'unknown option "api_keys": did you mean "apiKeys"?'],
    [{ API_TOKEN: 't' }, 'unknown option "API_TOKEN": did you mean "apiToken"?'],
    [{ apitoken: 't' }, 'unknown option "apitoken": did you mean "apiToken"?'],
    [{ publicRedirect: true }, 'unknown option "publicRedirect": did you mean "publicRedirects"?'],
    [{ baseURL: 'https://s.example' }, 'unknown option "baseURL": did you mean "baseUrl"?'],
    [{ prot: 3000 }, 'unknown option "prot": did you mean "port"?'],
    [{ loger: console }, 'unknown option "loger": did you mean "logger"?'],
    [{ staticDirectory: '.' }, 'unknown option "staticDirectory"'],
    [{ token: 't' }, 'unknown option "token"'],
    [{ basePath: '/s' }, 'unknown option "basePath"'],
  ];
  for (const [options, message] of cases) {
    assert.throws(
      () => createShortener({ dataDir, logLevel: 'silent', ...options } as ShortenerOptions),
      (err: unknown) => err instanceof TypeError && !(err instanceof ConfigError) && err.message === message,
      message,
    );
  }
  assert.equal(existsSync(dataDir), false, 'no data dir created');
});

test('every setting and every library option is accepted by its name', async (t) => {
  const dir = tempDir();
  const shortener = createShortener({
    baseUrl: 'https://s.example',
    host: '0.0.0.0',
    port: 1,
    production: true,
    minShortLength: 5,
    maxShortLength: 9,
    apiKeys: ['k'],
    apiToken: 't',
    publicRedirects: true,
    dataDir: dir,
    fsync: 'off',
    maxUrlLength: 100,
    logLevel: 'silent',
    mcpAllowedOrigins: [],
    maxBodyBytes: 2048,
    headersTimeoutMs: 1000,
    requestTimeoutMs: 2000,
    keepAliveTimeoutMs: 1000,
    maxHeaderBytes: 2048,
    maxConnections: 10,
    logger: createLogger('silent'),
    logStream: { write: () => true },
    fs: nodeFs,
    now: Date.now,
    random: (b) => b.fill(7),
    visitFlushMs: 500,
    staticDir: join(dir, 'no-ui'),
  });
  t.after(async () => {
    await shortener.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal(shortener.config.publicRedirects, true);
  assert.equal(shortener.config.apiKeys[0], 'k');
});

test('library options are normalized like the CLI', async (t) => {
  const dir = tempDir();
  const shortener = createShortener({ baseUrl: 'https://s.example/x/', dataDir: dir, fsync: 'off', logLevel: 'silent' });
  t.after(async () => {
    await shortener.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal(shortener.config.baseUrl, 'https://s.example/x');
  assert.equal(shortener.service.shortUrl('abc123'), 'https://s.example/x/abc123');
  assert.equal(shortener.dataFile, join(dir, 'urls.log'));
});

test('the package entry src/index.ts exports createShortener', () => {
  assert.equal(typeof entry.createShortener, 'function');
  assert.equal(entry.createShortener, createShortener);
  // package.json points at the compiled entry (tsconfig.build.json: src/ → dist/lib/).
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    main: string;
    exports: { '.': { default: string; types: string } };
  };
  assert.equal(pkg.main, './dist/lib/index.js');
  assert.equal(pkg.exports['.'].default, './dist/lib/index.js');
  assert.equal(pkg.exports['.'].types, './dist/lib/index.d.ts');
});
