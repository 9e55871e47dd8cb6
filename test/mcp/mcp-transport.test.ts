/**
 * The Streamable HTTP transport rules of /mcp (docs/mcp.md, transport rules) over real sockets, raw
 * HTTP: methods, statuses, media types, the protocol-version header, the Origin check, JSON-RPC
 * errors with their ids, the body limit — and never an Mcp-Session-Id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { open, start, type Harness, type Reply } from '../support/helpers.ts';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

/** Every reply of this file passes through here: none may carry a session id. */
function noSession(r: Reply): Reply {
  assert.equal(r.headers['mcp-session-id'], undefined);
  return r;
}

function post(h: Harness, body: string, headers: Record<string, string> = JSON_HEADERS, path = '/mcp'): Promise<Reply> {
  return h.req(path, { method: 'POST', headers, body }).then(noSession);
}

function assertJson(r: Reply, status: number, body: unknown): void {
  assert.equal(r.status, status, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(r.body), body);
  // The project's headers ride along on every answer.
  assert.equal(r.headers['access-control-allow-origin'], '*');
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.match(String(r.headers['content-security-policy']), /^default-src 'self'/);
}

describe('/mcp transport', () => {
  let h: Harness;
  before(async () => {
    h = await open({ mcpAllowedOrigins: ['https://agent.example'], apiKeys: ['k'] });
  });
  after(() => h.close());

  test('GET, DELETE, PUT and HEAD are 405 with exactly Allow: POST; OPTIONS is the usual 204 preflight', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const r = noSession(await h.req('/mcp', { method, headers: { accept: 'text/event-stream' } }));
      assertJson(r, 405, { detail: `${method} is not allowed here` });
      assert.equal(r.headers.allow, 'POST', method);
    }
    const head = noSession(await h.req('/mcp', { method: 'HEAD' }));
    assert.equal(head.status, 405);
    assert.equal(head.headers.allow, 'POST');
    assert.equal(head.body, '');
    const preflight = noSession(await h.req('/mcp', { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example' } }));
    assert.equal(preflight.status, 204);
    assert.equal(preflight.body, '');
  });

  test('a request is answered with one JSON object, trailing slash included', async () => {
    assertJson(await post(h, PING), 200, { jsonrpc: '2.0', id: 1, result: {} });
    assertJson(await post(h, PING, JSON_HEADERS, '/mcp/'), 200, { jsonrpc: '2.0', id: 1, result: {} });
  });

  test('notifications and client responses are 202 with no body and no content type', async () => {
    for (const body of [
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}',
      '{"jsonrpc":"2.0","id":"srv-1","result":{}}',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}',
    ]) {
      const r = await post(h, body);
      assert.equal(r.status, 202, body);
      assert.equal(r.body, '');
      assert.equal(r.headers['content-length'], '0');
      assert.equal(r.headers['content-type'], undefined);
      assert.equal(r.headers['access-control-allow-origin'], '*');
    }
  });

  test('request ids are echoed exactly: 0, negative, large and string ids', async () => {
    for (const id of [0, -5, 9007199254740991, 'abc', '', '0']) {
      const r = await post(h, JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
      assertJson(r, 200, { jsonrpc: '2.0', id, result: {} });
    }
  });

  test('JSON-RPC errors: -32700 and -32600 are 400, -32601 and -32602 are 200, ids echoed where readable', async () => {
    const cases: [body: string, status: number, id: string | number | null, code: number, message: string][] = [
      ['{"jsonrpc":"2.0","id":1,', 400, null, -32700, 'Parse error: the body is not valid JSON'],
      ['', 400, null, -32700, 'Parse error: the body is not valid JSON'],
      ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', 400, null, -32600, 'Invalid Request: batches are not supported; send one JSON-RPC message per POST'],
      ['"ping"', 400, null, -32600, 'Invalid Request: a JSON-RPC message is a JSON object'],
      ['{"id":0,"method":"ping"}', 400, 0, -32600, 'Invalid Request: jsonrpc must be "2.0"'],
      ['{"jsonrpc":"2.0","id":"q","method":7}', 400, 'q', -32600, 'Invalid Request: method must be a non-empty string'],
      ['{"jsonrpc":"2.0","id":null,"method":"ping"}', 400, null, -32600, 'Invalid Request: id must be a string or an integer'],
      ['{"jsonrpc":"2.0","id":2,"method":"ping","params":[]}', 400, 2, -32600, 'Invalid Request: params must be an object'],
      ['{"jsonrpc":"2.0","id":0,"method":"resources/list"}', 200, 0, -32601, 'Method not found: resources/list'],
      ['{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"nope"}}', 200, 'u', -32602, 'Unknown tool: "nope"; tools/list names the tools'],
      [
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_url","arguments":{"code":1}}}',
        200,
        3,
        -32602,
        'Invalid arguments for get_url: code must be a string',
      ],
    ];
    for (const [body, status, id, code, message] of cases) {
      assertJson(await post(h, body), status, { jsonrpc: '2.0', id, error: { code, message } });
    }
  });

  test('an MCP-Protocol-Version header naming an unsupported version is 400; supported ones pass', async () => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      assertJson(await post(h, PING, { ...JSON_HEADERS, 'mcp-protocol-version': version }), 200, { jsonrpc: '2.0', id: 1, result: {} });
    }
    for (const version of ['2024-11-05', '2026-01-01', 'latest', '']) {
      assertJson(await post(h, PING, { ...JSON_HEADERS, 'mcp-protocol-version': version }), 400, {
        detail: `unsupported MCP-Protocol-Version ${JSON.stringify(version)}; this server speaks 2025-11-25, 2025-06-18, 2025-03-26`,
      });
    }
  });

  test("Origin: absent, base_url's origin and an allowed one pass; anything else is 403", async () => {
    const own = `http://127.0.0.1:${h.port}`;
    for (const origin of [own, 'https://agent.example']) {
      assertJson(await post(h, PING, { ...JSON_HEADERS, origin }), 200, { jsonrpc: '2.0', id: 1, result: {} });
    }
    const refused = [
      'https://evil.example',
      'null',
      `http://localhost:${h.port}`,
      `http://127.0.0.1:${h.port + 1}`,
      `https://127.0.0.1:${h.port}`,
      `${own}/`,
      'http://agent.example',
      'https://agent.example:8443',
      'HTTPS://AGENT.EXAMPLE',
    ];
    for (const origin of refused) {
      const r = await post(h, PING, { ...JSON_HEADERS, origin });
      assertJson(r, 403, { detail: 'this Origin may not call /mcp; add it to MCP_ALLOWED_ORIGINS to allow it' });
    }
    // The Origin is checked first: a foreign page learns nothing else about the endpoint.
    assertJson(await post(h, 'x', { 'content-type': 'text/plain', origin: 'https://evil.example', 'mcp-protocol-version': 'bad' }), 403, {
      detail: 'this Origin may not call /mcp; add it to MCP_ALLOWED_ORIGINS to allow it',
    });
  });

  test('POST needs Content-Type application/json (415 otherwise)', async () => {
    assertJson(await post(h, PING, { 'content-type': 'application/json; charset=utf-8' }), 200, { jsonrpc: '2.0', id: 1, result: {} });
    for (const headers of [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json-seq' },
    ]) {
      assertJson(await post(h, PING, headers), 415, { detail: 'POST /mcp takes one JSON-RPC message with Content-Type: application/json' });
    }
  });

  test('Accept: missing, JSON or both media types pass; one that excludes JSON is 406', async () => {
    for (const accept of [
      undefined,
      'application/json',
      'application/json, text/event-stream',
      'text/event-stream, application/json',
      '*/*',
      'application/*',
      'text/event-stream, */*;q=0.1',
    ]) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) };
      assertJson(await post(h, PING, headers), 200, { jsonrpc: '2.0', id: 1, result: {} });
    }
    for (const accept of ['text/event-stream', 'text/html', 'application/json;q=0, text/event-stream', 'application/json; q=0.000']) {
      assertJson(await post(h, PING, { 'content-type': 'application/json', accept }), 406, {
        detail: 'POST /mcp answers in application/json; send Accept: application/json, text/event-stream',
      });
    }
  });

  test('a body over 64 KiB is 413 and closes the connection', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(64 * 1024) } });
    const r = await post(h, big);
    assertJson(r, 413, { detail: 'request body is larger than 64 KiB' });
    assert.equal(r.headers.connection, 'close');
  });

  test('tools work end to end over HTTP', async () => {
    const created = await post(
      h,
      JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'shorten_url', arguments: { url: 'https://example.com/http' } } }),
    );
    assert.equal(created.status, 200);
    const result = (JSON.parse(created.body) as { result: { structuredContent: { short_code: string; short_url: string } } }).result;
    const redirect = await h.req(`/${result.structuredContent.short_code}`);
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.location, 'https://example.com/http');
  });
});

test("under a base path /mcp lives below it, and the allowed origin is base_url's origin (not the Host)", async (t) => {
  const h = await start(t, { baseUrl: 'https://short.example/s' });
  assertJson(await post(h, PING, { ...JSON_HEADERS, origin: 'https://short.example' }, '/s/mcp'), 200, { jsonrpc: '2.0', id: 1, result: {} });
  for (const origin of [`http://127.0.0.1:${h.port}`, 'https://short.example/s']) {
    assert.equal((await post(h, PING, { ...JSON_HEADERS, origin }, '/s/mcp')).status, 403, origin);
  }
  assert.equal((await post(h, PING, JSON_HEADERS, '/mcp')).status, 404);
});
