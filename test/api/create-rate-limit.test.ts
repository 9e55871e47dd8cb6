/**
 * `create_rate_limit` through every door that creates a link (docs/security.md), on a real server
 * with a fake clock: REST (`POST` and `GET /api/shorten`), MCP's `shorten_url`, YOURLS' `shorturl`
 * and Shlink's create share one count per client address and refuse past it with 429, the exact
 * `Retry-After`, and the door's own error body. Redirects are never limited, imports (an admin
 * key's) are not, and with the setting off nothing is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

/** The limit is counted by each instance on its own (docs/security.md): across a round-robin proxy the count splits. */
const PER_INSTANCE = onOneProcess('the create rate limit is counted per instance, and the cluster target spreads requests over three');

const KEY = 'admin-key-1';
const JSON_HEADERS = { 'content-type': 'application/json' };
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

interface Clocked {
  h: Harness;
  clock: { t: number };
}

async function clocked(t: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<Clocked> {
  const clock = { t: T0 };
  const h = await start(t, { apiKeys: [KEY], now: () => clock.t, logLevel: 'silent', ...options });
  return { h, clock };
}

function create(h: Harness, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return h.req('/api/shorten', { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify({ url }) });
}

function assertRestRefusal(r: Reply, seconds: number): void {
  assert.equal(r.status, 429, r.body);
  assert.equal(r.headers['retry-after'], String(seconds));
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(r.body), { detail: `too many links created from this address: try again in ${seconds} second${seconds === 1 ? '' : 's'}` });
  assert.equal(r.headers.location, undefined);
}

test('REST: N creates, the next is 429 with the exact Retry-After, and one more is allowed once the window ended', PER_INSTANCE, async (t) => {
  const { h, clock } = await clocked(t, { createRateLimit: '3/min' });
  assert.equal((await create(h, 'https://example.com/1')).status, 201);
  clock.t += 20_250;
  // The deprecated GET create is the same door: it counts too.
  assert.equal((await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/2')}`)).status, 201);
  // An invalid create counts as well (every create request does).
  assert.equal((await create(h, 'not a url')).status, 400);
  // 20.25 s into the window: 39.75 s left, said as 40.
  assertRestRefusal(await create(h, 'https://example.com/3'), 40);
  const refusedGet = await h.req(`/api/shorten?url=${encodeURIComponent('https://example.com/3')}`);
  assert.equal(refusedGet.status, 429);
  assert.equal(refusedGet.headers['retry-after'], '40');
  assert.ok(refusedGet.headers['deprecation'], 'the deprecated GET says so on its 429 too');
  clock.t += 39_749;
  assertRestRefusal(await create(h, 'https://example.com/3'), 1);
  clock.t += 1;
  const again = await create(h, 'https://example.com/3');
  assert.equal(again.status, 201, again.body);
  // Nothing refused was stored: the two created, then this one.
  const list = await h.req('/api/urls', { headers: { 'x-api-key': KEY } });
  assert.deepEqual(
    (JSON.parse(list.body) as { urls: { original_url: string }[] }).urls.map((u) => u.original_url),
    ['https://example.com/3', 'https://example.com/2', 'https://example.com/1'],
  );
});

test('redirects are never limited, on either path, once the creates are used up', PER_INSTANCE, async (t) => {
  const { h } = await clocked(t, { createRateLimit: '1/h' });
  const code = codeOf(await create(h, 'https://example.com/target'));
  assert.equal((await create(h, 'https://example.com/other')).status, 429);
  for (let i = 0; i < 20; i++) {
    const fast = await h.req(`/${code}`);
    assert.equal(fast.status, 302, `visit ${i + 1}`);
    assert.equal(fast.headers.location, 'https://example.com/target');
    assert.equal(fast.headers['retry-after'], undefined);
  }
  // The router's path (a trailing slash), and HEAD.
  assert.equal((await h.req(`/${code}/`)).status, 302);
  assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
  // Reads are not creates either.
  assert.equal((await h.req(`/api/urls/${code}`)).status, 200);
  assert.equal((await create(h, 'https://example.com/other')).status, 429, 'still refused: the visits used nothing');
});

test('two client addresses are counted apart behind trust_proxy 1; a forged entry in front changes nothing', PER_INSTANCE, async (t) => {
  const { h } = await clocked(t, { createRateLimit: '2/min', trustProxy: 1 });
  const a = { 'x-forwarded-for': '198.51.100.1' };
  const b = { 'x-forwarded-for': '198.51.100.2' };
  assert.equal((await create(h, 'https://example.com/a1', a)).status, 201);
  assert.equal((await create(h, 'https://example.com/a2', a)).status, 201);
  assert.equal((await create(h, 'https://example.com/a3', a)).status, 429);
  assert.equal((await create(h, 'https://example.com/b1', b)).status, 201, 'another client has its own count');
  // The proxy appends the address it saw; what the client wrote before it is never read.
  assert.equal((await create(h, 'https://example.com/b2', { 'x-forwarded-for': '203.0.113.50, 198.51.100.2' })).status, 201);
  assert.equal((await create(h, 'https://example.com/b3', { 'x-forwarded-for': '203.0.113.51, 198.51.100.2' })).status, 429);
  // A request without the header came round the proxy: its socket (127.0.0.1) is the client.
  assert.equal((await create(h, 'https://example.com/direct')).status, 201);
});

test('trust_proxy 0: X-Forwarded-For is ignored, so changing it makes no new client', PER_INSTANCE, async (t) => {
  const { h } = await clocked(t, { createRateLimit: '2/min' });
  assert.equal((await create(h, 'https://example.com/1', { 'x-forwarded-for': '198.51.100.1' })).status, 201);
  assert.equal((await create(h, 'https://example.com/2', { 'x-forwarded-for': '198.51.100.2' })).status, 201);
  const third = await create(h, 'https://example.com/3', { 'x-forwarded-for': '198.51.100.3' });
  assertRestRefusal(third, 60);
});

test('the setting off (the default): no create is ever refused', async (t) => {
  const { h } = await clocked(t);
  assert.equal(h.shortener.config.createRateLimit, '');
  for (let i = 0; i < 40; i++) assert.equal((await create(h, `https://example.com/${i}`)).status, 201, `create ${i + 1}`);
});

test('every door shares the one count, and each refuses in its own shape', PER_INSTANCE, async (t) => {
  const { h, clock } = await clocked(t, { createRateLimit: '4/min', shlinkApi: true, yourlsApi: true });
  // One create through each door: REST, MCP, YOURLS, Shlink.
  assert.equal((await create(h, 'https://example.com/rest')).status, 201);
  const mcp = (id: number, url: string) =>
    h.req('/mcp', {
      method: 'POST',
      headers: { ...JSON_HEADERS, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'shorten_url', arguments: { url } } }),
    });
  const made = await mcp(1, 'https://example.com/mcp');
  assert.equal(made.status, 200, made.body);
  assert.equal((JSON.parse(made.body) as { result: { isError?: boolean } }).result.isError, undefined);
  const yourls = (url: string) => h.req(`/yourls-api.php?${new URLSearchParams({ action: 'shorturl', url, signature: KEY, format: 'json' })}`);
  assert.equal((await yourls('https://example.com/yourls')).status, 200);
  const shlink = (url: string) =>
    h.req('/rest/v3/short-urls', { method: 'POST', headers: { ...JSON_HEADERS, 'x-api-key': KEY }, body: JSON.stringify({ longUrl: url }) });
  assert.equal((await shlink('https://example.com/shlink')).status, 200);

  clock.t += 15_000;
  // The fifth, through any door: refused, 45 s before the window ends.
  assertRestRefusal(await create(h, 'https://example.com/rest2'), 45);

  const mcpRefused = await mcp(2, 'https://example.com/mcp2');
  assert.equal(mcpRefused.status, 429);
  assert.equal(mcpRefused.headers['retry-after'], '45');
  assert.equal(mcpRefused.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(mcpRefused.body), {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32029, message: 'too many links created from this address: try again in 45 seconds', data: { retry_after: 45 } },
  });

  const yourlsRefused = await yourls('https://example.com/yourls2');
  assert.equal(yourlsRefused.status, 429);
  assert.equal(yourlsRefused.headers['retry-after'], '45');
  assert.equal(yourlsRefused.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(
    yourlsRefused.body,
    '{"status":"fail","code":"error:flood","message":"Too many URLs added too fast. Slow down please.","errorCode":"429","statusCode":"429"}',
  );
  // YOURLS' other formats carry the same status and header.
  const yourlsXml = await h.req(
    `/yourls-api.php?${new URLSearchParams({ action: 'shorturl', url: 'https://example.com/yourls2', signature: KEY, format: 'xml' })}`,
  );
  assert.equal(yourlsXml.status, 429);
  assert.equal(yourlsXml.headers['retry-after'], '45');
  assert.match(yourlsXml.body, /<code>error:flood<\/code>/);

  const shlinkRefused = await shlink('https://example.com/shlink2');
  assert.equal(shlinkRefused.status, 429);
  assert.equal(shlinkRefused.headers['retry-after'], '45');
  assert.equal(shlinkRefused.headers['content-type'], 'application/problem+json');
  assert.deepEqual(JSON.parse(shlinkRefused.body), {
    type: 'about:blank',
    title: 'Too Many Requests',
    detail: 'too many links created from this address: try again in 45 seconds',
    status: 429,
  });

  // An answer that creates nothing is not a create: YOURLS' answer for a URL it has already.
  const known = await yourls('https://example.com/yourls');
  assert.equal(known.status, 400);
  assert.match(known.body, /already exists in database/);

  // An import is an admin key's bulk operation: never limited.
  const lines = `${['https://example.com/i1', 'https://example.com/i2', 'https://example.com/i3'].map((u) => JSON.stringify({ original_url: u })).join('\n')}\n`;
  const imported = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY }, body: lines });
  assert.equal(imported.status, 200, imported.body);
  assert.deepEqual(JSON.parse(imported.body), { imported: 3, skipped: 0, errors: [] });

  // The refusals show in the metrics, by route (docs/security.md).
  const metrics = (await h.req('/metrics')).body;
  for (const [route, method, count] of [
    ['/api/shorten', 'POST', 1],
    ['/mcp', 'POST', 1],
    ['/yourls-api.php', 'GET', 2],
    ['/rest/v3/short-urls', 'POST', 1],
  ] as const) {
    assert.ok(
      metrics.includes(`shortener_http_requests_total{route="${route}",method="${method}",status="429"} ${count}\n`),
      `${route}: ${count} refusal(s) counted`,
    );
  }

  // The window over, every door creates again.
  clock.t += 45_000;
  assert.equal((await shlink('https://example.com/shlink2')).status, 200);
  assert.equal((await mcp(3, 'https://example.com/mcp2')).status, 200);
});
