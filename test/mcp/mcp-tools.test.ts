/**
 * The MCP methods and the seven tools, in process (createMcpServer over the real service of a
 * started shortener): declarations, every success, every failure of the work as `isError`, the
 * JSON-RPC errors (-32601, -32602, -32603), and version negotiation.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createLogger } from '../../src/log.ts';
import type { RpcResponse } from '../../src/mcp/jsonrpc.ts';
import { PROTOCOL_VERSIONS, createMcpServer, type McpServer } from '../../src/mcp/protocol.ts';
import { BAD_KEY } from '../../src/mcp/tool-access.ts';
import { TOOLS, type Tool } from '../../src/mcp/tools.ts';
import type { UrlRecord } from '../../src/links/record.ts';
import { LogCapture, start, type Harness } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const KEY = 'admin-key';
const NOW_MS = 1_700_000_000_000;
const NOW_S = 1_700_000_000;

let nextId = 1;

async function rpc(server: McpServer, method: string, params?: Record<string, unknown>): Promise<RpcResponse> {
  const id = nextId++;
  const outcome = await server.handle(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }));
  assert.equal(outcome.status, 200);
  assert.ok('message' in outcome);
  assert.equal(outcome.message.id, id);
  return outcome.message;
}

interface CallResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

async function call(server: McpServer, name: string, args: Record<string, unknown>): Promise<CallResult> {
  const r = await rpc(server, 'tools/call', { name, arguments: args });
  assert.ok('result' in r, JSON.stringify(r));
  return r.result as unknown as CallResult;
}

async function rpcError(server: McpServer, method: string, params?: Record<string, unknown>): Promise<{ code: number; message: string }> {
  const r = await rpc(server, method, params);
  assert.ok('error' in r, JSON.stringify(r));
  return r.error;
}

/** A successful structured result: the JSON text block equals structuredContent. */
function structured(r: CallResult): Record<string, unknown> {
  assert.equal(r.isError, undefined);
  assert.ok(r.structuredContent);
  const last = r.content[r.content.length - 1]!;
  assert.equal(last.type, 'text');
  assert.deepEqual(JSON.parse(last.text), r.structuredContent);
  return r.structuredContent;
}

function toolError(r: CallResult): string {
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent, undefined);
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0]!.type, 'text');
  return r.content[0]!.text;
}

async function withServer(t: TestContext, options: Parameters<typeof start>[1], body: (server: McpServer, h: Harness) => Promise<void>): Promise<void> {
  const h = await start(t, { apiKeys: [KEY], ...options });
  await body(createMcpServer(h.shortener.service, createLogger('silent')), h);
}

test('tools/list declares the eight tools with title, description, schemas and exact annotations', async (t) => {
  await withServer(t, {}, async (server) => {
    const r = await rpc(server, 'tools/list');
    assert.ok('result' in r);
    const tools = r.result['tools'] as Record<string, unknown>[];
    assert.deepEqual(
      tools.map((t) => [t['name'], t['annotations']]),
      [
        ['shorten_url', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }],
        ['get_url', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }],
        ['lookup_url', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }],
        ['list_urls', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }],
        ['delete_url', { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }],
        ['update_url', { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }],
        ['get_stats', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }],
        ['set_rules', { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }],
      ],
    );
    for (const t of tools) {
      assert.deepEqual(Object.keys(t).sort(), ['annotations', 'description', 'inputSchema', 'name', 'outputSchema', 'title']);
      assert.ok((t['title'] as string).length > 0 && (t['description'] as string).length > 40, String(t['name']));
      assert.equal((t['inputSchema'] as { type: string }).type, 'object');
      assert.equal((t['outputSchema'] as { type: string }).type, 'object');
    }
    assert.deepEqual(
      tools.map((t) => (t['inputSchema'] as { required: string[] }).required),
      [['url'], ['code'], ['url'], undefined, ['code'], ['code'], ['code'], ['code', 'rules']],
    );
    // The records every tool but delete_url and get_stats answers declare the limit and the expiry.
    for (const t of tools.filter((t) => !['delete_url', 'list_urls', 'get_stats'].includes(t['name'] as string))) {
      const output = t['outputSchema'] as { properties: Record<string, unknown>; required: string[] };
      assert.deepEqual(output.properties['max_visits'], {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: 2147483647,
        description: 'Counted visits allowed; later GETs are 410. null = unlimited.',
      });
      assert.ok(output.required.includes('max_visits') && output.required.includes('expires_at'), String(t['name']));
    }
    const shorten = tools[0]!['inputSchema'] as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(shorten.properties), [
      'url',
      'retention_days',
      'code',
      'max_visits',
      'title',
      'tags',
      'domain',
      'rules',
      'forward_query',
      'valid_since',
      'valid_until',
      'fallback_url',
      'password',
      'api_key',
    ]);
    const update = tools[5]!['inputSchema'] as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(update.properties), [
      'code',
      'domain',
      'api_key',
      'url',
      'retention_days',
      'max_visits',
      'title',
      'tags',
      'rules',
      'forward_query',
      'valid_since',
      'valid_until',
      'fallback_url',
      'password',
    ]);
    const list = tools[3]!['inputSchema'] as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(list.properties), ['api_key', 'limit', 'offset', 'q', 'tag', 'domain']);
  });
});

test('shorten_url answers the short URL as text and the record as structuredContent', async (t) => {
  await withServer(t, { now: () => NOW_MS }, async (server, h) => {
    const r = await call(server, 'shorten_url', { url: 'HTTPS://Example.com/a b', retention_days: 7 });
    const rec = structured(r) as unknown as UrlRecord;
    assert.equal(r.content.length, 2);
    assert.deepEqual(r.content[0], { type: 'text', text: rec.short_url });
    assert.deepEqual(rec, {
      short_code: rec.short_code,
      domain: null,
      short_url: `http://127.0.0.1:${h.port}/${rec.short_code}`,
      original_url: 'https://example.com/a%20b',
      created_at: NOW_S,
      visit_count: 0,
      untracked_visits: 0,
      retention_days: 7,
      max_visits: null,
      expires_at: NOW_S + 7 * 86400,
      title: null,
      tags: [],
      author: null,
      ...NO_ROUTING,
    });
    // The same link the REST API sees.
    assert.deepEqual(JSON.parse((await h.req(`/api/urls/${rec.short_code}`)).body), rec);
    const forever = structured(await call(server, 'shorten_url', { url: 'https://example.com/b' }));
    assert.equal(forever['retention_days'], 0);
  });
});

test('shorten_url reports an unacceptable URL as a tool error with the reason', async (t) => {
  await withServer(t, {}, async (server, h) => {
    const cases: [unknown, string][] = [
      ['not a url', 'url must be an absolute URL such as https://example.com/page'],
      ['ftp://example.com/f', 'url must use http or https, not ftp'],
      ['https://user:pw@example.com/', 'url must not contain a user name or password (user@host URLs are a phishing pattern)'],
      ['', 'url is required'],
      [`http://127.0.0.1:${h.port}/abc`, 'url points at this shortener itself; a short link to a short link would loop'],
    ];
    for (const [url, message] of cases) assert.equal(toolError(await call(server, 'shorten_url', { url })), message, String(url));
  });
});

test('get_url and lookup_url answer records; unknown and expired links are tool errors', async (t) => {
  let clock = NOW_MS;
  await withServer(t, { now: () => clock }, async (server) => {
    const first = structured(await call(server, 'shorten_url', { url: 'https://example.com/x' }));
    const newest = structured(await call(server, 'shorten_url', { url: 'https://example.com/x' }));
    const brief = structured(await call(server, 'shorten_url', { url: 'https://example.com/brief', retention_days: 1 }));

    assert.deepEqual(structured(await call(server, 'get_url', { code: first['short_code'] })), first);
    assert.deepEqual(structured(await call(server, 'lookup_url', { url: 'https://EXAMPLE.com:443/x' })), newest);
    assert.equal(toolError(await call(server, 'get_url', { code: 'zzzzzz' })), 'No short link has the code "zzzzzz".');
    assert.equal(toolError(await call(server, 'get_url', { code: 'not/a code' })), 'No short link has the code "not/a code".');
    assert.equal(toolError(await call(server, 'lookup_url', { url: 'https://example.com/none' })), 'No live short link points to "https://example.com/none".');
    assert.equal(toolError(await call(server, 'lookup_url', { url: 'relative/path' })), 'url must be an absolute URL such as https://example.com/page');

    clock += 2 * 86_400_000;
    assert.equal(toolError(await call(server, 'get_url', { code: brief['short_code'] })), `The short link "${String(brief['short_code'])}" has expired.`);
    assert.equal(
      toolError(await call(server, 'lookup_url', { url: 'https://example.com/brief' })),
      'No live short link points to "https://example.com/brief".',
    );
    assert.equal(
      toolError(await call(server, 'delete_url', { code: brief['short_code'], api_key: KEY })),
      `The short link "${String(brief['short_code'])}" has expired.`,
    );
  });
});

test('list_urls pages newest first with count and total; a wrong key is a tool error', async (t) => {
  await withServer(t, {}, async (server) => {
    const codes: unknown[] = [];
    for (let i = 0; i < 5; i++) codes.push(structured(await call(server, 'shorten_url', { url: `https://example.com/${i}` }))['short_code']);
    const all = structured(await call(server, 'list_urls', { api_key: KEY }));
    assert.equal(all['count'], 5);
    assert.equal(all['total'], 5);
    assert.deepEqual(
      (all['urls'] as UrlRecord[]).map((u) => u.short_code),
      [...codes].reverse(),
    );
    const page = structured(await call(server, 'list_urls', { api_key: KEY, limit: 2, offset: 1 }));
    assert.deepEqual([page['count'], page['total']], [2, 5]);
    assert.deepEqual(
      (page['urls'] as UrlRecord[]).map((u) => u.short_code),
      [codes[3], codes[2]],
    );
    const wrong = BAD_KEY;
    assert.equal(toolError(await call(server, 'list_urls', { api_key: 'guess' })), wrong);
    assert.equal(toolError(await call(server, 'list_urls', { api_key: '' })), wrong);
  });
});

test('list_urls and delete_url refuse every key when the service has none', async (t) => {
  await withServer(t, { apiKeys: [] }, async (server) => {
    const code = structured(await call(server, 'shorten_url', { url: 'https://example.com/k' }))['short_code'];
    assert.match(toolError(await call(server, 'list_urls', { api_key: KEY })), /^api_key is not a key of this service/);
    assert.match(toolError(await call(server, 'delete_url', { code, api_key: KEY })), /^api_key is not a key of this service/);
  });
});

test('delete_url checks the key before the code, deletes, and reports a second delete as unknown', async (t) => {
  await withServer(t, {}, async (server, h) => {
    const code = structured(await call(server, 'shorten_url', { url: 'https://example.com/del' }))['short_code'] as string;
    // A wrong key never reveals whether a code exists.
    assert.match(toolError(await call(server, 'delete_url', { code: 'zzzzzz', api_key: 'guess' })), /^api_key is not/);
    assert.match(toolError(await call(server, 'delete_url', { code, api_key: 'guess' })), /^api_key is not/);
    assert.equal((await h.req(`/api/urls/${code}`)).status, 200);
    assert.deepEqual(structured(await call(server, 'delete_url', { code, api_key: KEY })), { short_code: code, deleted: true });
    assert.equal((await h.req(`/api/urls/${code}`)).status, 404);
    assert.equal(toolError(await call(server, 'delete_url', { code, api_key: KEY })), `No short link has the code "${code}".`);
  });
});

test('shorten_url takes a custom code and a visit limit; a taken code is a tool error', async (t) => {
  await withServer(t, { now: () => NOW_MS }, async (server, h) => {
    const rec = structured(await call(server, 'shorten_url', { url: 'https://example.com/once', code: 'Once_1', max_visits: 1 }));
    assert.equal(rec['short_code'], 'Once_1');
    assert.equal(rec['short_url'], `http://127.0.0.1:${h.port}/Once_1`);
    assert.equal(rec['max_visits'], 1);
    assert.equal(rec['expires_at'], null);
    assert.equal(toolError(await call(server, 'shorten_url', { url: 'https://example.com/again', code: 'Once_1' })), 'code already in use');
    assert.match(toolError(await call(server, 'shorten_url', { url: 'https://example.com/x', code: 'no.dots' })), /^code may only use the letters A-Z and a-z/);
    assert.match(toolError(await call(server, 'shorten_url', { url: 'https://example.com/x', code: 'Healthz' })), /reserved/);
    assert.equal(structured(await call(server, 'shorten_url', { url: 'https://example.com/x', max_visits: null }))['max_visits'], null);
    // The limit is the REST API's: one redirect, then 410.
    assert.equal((await h.req('/Once_1')).status, 302);
    assert.equal((await h.req('/Once_1')).status, 410);
    assert.equal(structured(await call(server, 'get_url', { code: 'Once_1' }))['visit_count'], 1);
  });
});

test('update_url checks the key, edits the record it returns, and reports unknown codes and bad values', async (t) => {
  let now = NOW_MS;
  await withServer(t, { now: () => now }, async (server, h) => {
    const code = String(structured(await call(server, 'shorten_url', { url: 'https://example.com/old' }))['short_code']);
    assert.match(toolError(await call(server, 'update_url', { code, api_key: 'guess', url: 'https://example.com/new' })), /^api_key is not/);
    const updated = structured(await call(server, 'update_url', { code, api_key: KEY, url: 'HTTPS://EXAMPLE.COM/new', retention_days: 3, max_visits: 10 }));
    assert.deepEqual(updated, {
      short_code: code,
      domain: null,
      short_url: `http://127.0.0.1:${h.port}/${code}`,
      original_url: 'https://example.com/new',
      created_at: NOW_S,
      visit_count: 0,
      untracked_visits: 0,
      retention_days: 3,
      max_visits: 10,
      expires_at: NOW_S + 3 * 86400,
      title: null,
      tags: [],
      author: null,
      ...NO_ROUTING,
    });
    assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}`)).body), updated, 'the REST API sees the edit');
    assert.equal(structured(await call(server, 'update_url', { code, api_key: KEY, max_visits: null }))['max_visits'], null);
    assert.deepEqual(
      structured(await call(server, 'update_url', { code, api_key: KEY })),
      { ...updated, max_visits: null },
      'nothing to change: the record as it is',
    );
    assert.match(toolError(await call(server, 'update_url', { code, api_key: KEY, url: 'javascript:alert(1)' })), /http or https/);
    assert.equal(toolError(await call(server, 'update_url', { code: 'zzzzzz', api_key: KEY, max_visits: 2 })), 'No short link has the code "zzzzzz".');
    now += 4 * 86_400_000;
    assert.equal(toolError(await call(server, 'update_url', { code, api_key: KEY, retention_days: 0 })), `The short link "${code}" has expired.`);
  });
});

test('a storage failure is a tool error carrying the 503 detail, and nothing is created', onOneProcess('it fills its disk'), async (t) => {
  const { fs, disk } = fillableDisk();
  await withServer(t, { fs }, async (server) => {
    disk.full = true;
    const message = toolError(await call(server, 'shorten_url', { url: 'https://example.com/full-disk' }));
    assert.equal(message, 'storage is not writable right now (ENOSPC); nothing was changed, try again later');
    disk.full = false;
    assert.equal(
      toolError(await call(server, 'lookup_url', { url: 'https://example.com/full-disk' })),
      'No live short link points to "https://example.com/full-disk".',
    );
  });
});

test('arguments that break the inputSchema, an unknown tool or a missing name are -32602', async (t) => {
  await withServer(t, {}, async (server) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'nope', arguments: {} }, 'Unknown tool: "nope"; tools/list names the tools'],
      [{ arguments: {} }, 'Invalid params: name must be the name of a tool'],
      [{ name: 5 }, 'Invalid params: name must be the name of a tool'],
      [{ name: 'shorten_url' }, 'Invalid arguments for shorten_url: url is required'],
      [{ name: 'shorten_url', arguments: [] }, 'Invalid arguments for shorten_url: arguments must be an object'],
      [
        { name: 'shorten_url', arguments: { url: 'https://e.com/', retention_days: '3' } },
        'Invalid arguments for shorten_url: retention_days must be an integer',
      ],
      [{ name: 'shorten_url', arguments: { url: 'https://e.com/', label: 'x' } }, 'Invalid arguments for shorten_url: label is not allowed'],
      [{ name: 'shorten_url', arguments: { url: 'https://e.com/', title: 5 } }, 'Invalid arguments for shorten_url: title must be a string or null'],
      [{ name: 'shorten_url', arguments: { url: 'https://e.com/', tags: 'a,b' } }, 'Invalid arguments for shorten_url: tags must be an array'],
      [{ name: 'shorten_url', arguments: { url: 'https://e.com/', tags: ['a', 1] } }, 'Invalid arguments for shorten_url: tags[1] must be a string'],
      [{ name: 'update_url', arguments: { code: 'abc', api_key: KEY, tags: null } }, 'Invalid arguments for update_url: tags must be an array'],
      [{ name: 'list_urls', arguments: { api_key: KEY, tag: 'a' } }, 'Invalid arguments for list_urls: tag must be an array'],
      [{ name: 'list_urls', arguments: { api_key: KEY, limit: 1.5 } }, 'Invalid arguments for list_urls: limit must be an integer'],
      [{ name: 'get_url', arguments: { code: 5 } }, 'Invalid arguments for get_url: code must be a string'],
      [{ name: 'delete_url', arguments: { api_key: KEY } }, 'Invalid arguments for delete_url: code is required'],
      [
        { name: 'shorten_url', arguments: { url: 'https://e.com/', max_visits: '5' } },
        'Invalid arguments for shorten_url: max_visits must be an integer or null',
      ],
      [{ name: 'update_url', arguments: { code: 'abc', api_key: KEY, visit_count: 0 } }, 'Invalid arguments for update_url: visit_count is not allowed'],
    ];
    for (const [params, message] of cases) {
      assert.deepEqual(await rpcError(server, 'tools/call', params), { code: -32602, message }, JSON.stringify(params));
    }
  });
});

test("values of the right type past the service's limits are isError results with the REST API's sentence, not protocol errors", async (t) => {
  await withServer(t, {}, async (server) => {
    const code = (structured(await call(server, 'shorten_url', { url: 'https://e.com/kept' })) as { short_code: string }).short_code;
    const cases: [string, Record<string, unknown>, string][] = [
      ['shorten_url', { url: 'https://e.com/', retention_days: 36501 }, 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)'],
      ['shorten_url', { url: 'https://e.com/', retention_days: -1 }, 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)'],
      ['shorten_url', { url: 'https://e.com/', max_visits: 0 }, 'max_visits must be an integer from 1 to 2147483647, or null for no limit'],
      ['shorten_url', { url: 'https://e.com/', title: 'x'.repeat(513) }, 'title must be at most 512 characters long, not 513'],
      ['shorten_url', { url: 'https://e.com/', code: 'x'.repeat(65) }, 'code must be 6 to 12 characters long, not 65'],
      ['update_url', { code, api_key: KEY, max_visits: 2147483648 }, 'max_visits must be an integer from 1 to 2147483647, or null for no limit'],
      ['list_urls', { api_key: KEY, limit: 0 }, 'limit must be an integer from 1 to 1000'],
      ['list_urls', { api_key: KEY, limit: 1001 }, 'limit must be an integer from 1 to 1000'],
      ['list_urls', { api_key: KEY, offset: -1 }, 'offset must be an integer of 0 or more'],
      ['list_urls', { api_key: KEY, q: '' }, 'q must be 1 to 200 characters long, not 0'],
      ['list_urls', { api_key: KEY, q: '\u{1F600}'.repeat(201) }, 'q must be 1 to 200 characters long, not 201'],
    ];
    for (const [name, args, detail] of cases) assert.equal(toolError(await call(server, name, args)), detail, `${name} ${JSON.stringify(args)}`);
    // A code no code can be is unknown, as through the REST API.
    assert.equal(toolError(await call(server, 'get_url', { code: '' })), 'No short link has the code "".');
    // At the limits, in characters: 200 emoji (400 UTF-16 units) are a search.
    assert.equal(structured(await call(server, 'list_urls', { api_key: KEY, q: '\u{1F600}'.repeat(200) }))['total'], 0);
    assert.equal(structured(await call(server, 'list_urls', { api_key: KEY, limit: 1000, offset: 0 }))['total'], 1);
  });
});

test('ping is {}, unknown methods are -32601, initialize negotiates the version', async (t) => {
  await withServer(t, {}, async (server) => {
    const ping = await rpc(server, 'ping');
    assert.ok('result' in ping);
    assert.deepEqual(ping.result, {});
    for (const method of ['resources/list', 'prompts/list', 'notifications/initialized', 'tools/listed']) {
      assert.deepEqual(await rpcError(server, method), { code: -32601, message: `Method not found: ${method}` });
    }
    const negotiations: [unknown, string][] = [
      ['2025-11-25', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['2024-11-05', '2025-11-25'],
      ['2099-01-01', '2025-11-25'],
      [undefined, '2025-11-25'],
      [20251125, '2025-11-25'],
    ];
    assert.deepEqual(PROTOCOL_VERSIONS, ['2025-11-25', '2025-06-18', '2025-03-26']);
    for (const [requested, answered] of negotiations) {
      const params = { capabilities: {}, clientInfo: { name: 't', version: '1' }, ...(requested === undefined ? {} : { protocolVersion: requested }) };
      const r = await rpc(server, 'initialize', params);
      assert.ok('result' in r);
      assert.equal(r.result['protocolVersion'], answered, String(requested));
      assert.deepEqual(r.result['capabilities'], { tools: { listChanged: false } });
      assert.deepEqual(Object.keys(r.result['serverInfo'] as object), ['name', 'title', 'version']);
    }
  });
});

test('a tool that fails unexpectedly is -32603 with nothing internal in the message, and the stack is logged', async (t) => {
  const h = await start(t);
  const broken: Tool = {
    ...TOOLS[1]!,
    run: () => {
      throw new TypeError('secret internals');
    },
  };
  const logs = new LogCapture();
  const server = createMcpServer(h.shortener.service, createLogger('error', logs), [broken]);
  assert.deepEqual(await rpcError(server, 'tools/call', { name: 'get_url', arguments: { code: 'abc' } }), { code: -32603, message: 'Internal error' });
  const line = logs.find('unexpected error');
  assert.equal(line?.['level'], 'error');
  assert.equal(line?.['rpc_method'], 'tools/call');
  assert.match(String(line?.['error']), /TypeError: secret internals/);
});

test('notifications and responses are accepted without an answer; invalid input is 400 with the JSON-RPC error', async (t) => {
  await withServer(t, {}, async (server) => {
    assert.deepEqual(await server.handle('{"jsonrpc":"2.0","method":"notifications/initialized"}'), { status: 202 });
    assert.deepEqual(await server.handle('{"jsonrpc":"2.0","method":"no/such/notification"}'), { status: 202 });
    assert.deepEqual(await server.handle('{"jsonrpc":"2.0","id":9,"result":{}}'), { status: 202 });
    assert.deepEqual(await server.handle('{nope'), {
      status: 400,
      message: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } },
    });
  });
});
