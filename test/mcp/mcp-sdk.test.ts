/**
 * The official MCP TypeScript SDK client — a client we did not write — against the running handler:
 * it connects over Streamable HTTP, negotiates 2025-11-25, lists the seven tools and calls each one,
 * successes (whose structuredContent the SDK validates against the declared outputSchema, and so
 * does ajv here) and failures. Its GET probe for a server stream gets the 405 it expects, and no session appears.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { BAD_KEY } from '../../src/mcp/tool-access.ts';
import { VERSION } from '../../src/version.ts';
import { open, type Harness } from '../support/helpers.ts';

const KEY = 'sdk-key';

interface Result {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

describe('MCP SDK client', () => {
  let h: Harness;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const errors: Error[] = [];

  let listed: Tool[] = [];
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  /**
   * A call through the SDK; a structured result is also checked here against the outputSchema the
   * tool declared, so the check does not rest on the SDK's own validation alone.
   */
  const callTool = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const result = (await client.callTool({ name, arguments: args })) as Result;
    if (result.structuredContent !== undefined) {
      const tool = listed.find((t) => t.name === name);
      assert.ok(tool?.outputSchema, `${name} declares an outputSchema`);
      const validate = ajv.compile(tool.outputSchema);
      assert.ok(validate(result.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`);
    }
    return result;
  };

  function failed(r: Result): string {
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.content[0]?.type, 'text');
    return r.content[0]!.text!;
  }

  before(async () => {
    h = await open({ apiKeys: [KEY] });
    client = new Client({ name: 'sdk-test', version: '1.0.0' });
    client.onerror = (err) => errors.push(err);
    transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`));
    await client.connect(transport);
    listed = (await client.listTools()).tools;
  });

  after(async () => {
    await client.close();
    await h.close();
  });

  test('connects and negotiates 2025-11-25 without a session', () => {
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.equal(transport.sessionId, undefined);
    assert.deepEqual(client.getServerVersion(), { name: 'url-shortener', title: 'URL shortener', version: VERSION });
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    assert.match(client.getInstructions() ?? '', /shorten_url/);
  });

  test('ping and tools/list', async () => {
    assert.deepEqual(await client.ping(), {});
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['shorten_url', 'get_url', 'lookup_url', 'list_urls', 'delete_url', 'update_url', 'get_stats', 'set_rules'],
    );
    for (const tool of tools) {
      assert.ok(tool.title && tool.description && tool.outputSchema, tool.name);
      assert.equal(tool.annotations?.openWorldHint, false, tool.name);
    }
    assert.equal(tools.find((t) => t.name === 'delete_url')?.annotations?.destructiveHint, true);
    assert.deepEqual(tools.find((t) => t.name === 'update_url')?.annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    const record = tools.find((t) => t.name === 'get_url')?.outputSchema as { required: string[] };
    assert.ok(record.required.includes('max_visits') && record.required.includes('expires_at'));
  });

  test('every tool succeeds, and the SDK accepts each structuredContent against its outputSchema', async () => {
    await client.listTools(); // the SDK validates structured results only for tools it has listed
    // WHATWG keeps `|` in paths (and Node 20 `^`; newer URL parsers escape it): the schemas must not
    // claim a stricter URI format. The stored URL is whatever this runtime's URL parser serializes.
    const input = 'https://example.com/a|b^c?q=1';
    const shortened = await callTool('shorten_url', { url: input, retention_days: 30 });
    assert.equal(shortened.isError, undefined);
    const record = shortened.structuredContent!;
    assert.equal(record['original_url'], new URL(input).href);
    assert.match(String(record['original_url']), /\|/);
    assert.equal(record['retention_days'], 30);
    assert.equal(record['max_visits'], null);
    assert.equal(record['expires_at'], (record['created_at'] as number) + 30 * 86400);
    assert.deepEqual(shortened.content[0], { type: 'text', text: record['short_url'] });
    assert.equal(shortened.content[1]?.text, JSON.stringify(record));
    const code = record['short_code'] as string;

    assert.deepEqual((await callTool('get_url', { code })).structuredContent, record);
    assert.deepEqual((await callTool('lookup_url', { url: 'https://EXAMPLE.com/a|b^c?q=1' })).structuredContent, record);
    const list = await callTool('list_urls', { api_key: KEY, limit: 10 });
    assert.equal(list.structuredContent?.['count'], 1);
    assert.equal(list.structuredContent?.['total'], 1);
    assert.deepEqual(list.structuredContent?.['urls'], [record]);

    const custom = await callTool('shorten_url', { url: 'https://example.com/custom', code: 'sdk-Link_1', max_visits: 5 });
    assert.equal(custom.isError, undefined);
    assert.equal(custom.structuredContent?.['short_code'], 'sdk-Link_1');
    assert.equal(custom.structuredContent?.['max_visits'], 5);
    const updated = await callTool('update_url', { code: 'sdk-Link_1', api_key: KEY, url: 'https://example.com/edited', retention_days: 2, max_visits: null });
    assert.equal(updated.isError, undefined, JSON.stringify(updated));
    assert.deepEqual(updated.structuredContent, {
      ...custom.structuredContent,
      original_url: 'https://example.com/edited',
      retention_days: 2,
      max_visits: null,
      expires_at: (custom.structuredContent?.['created_at'] as number) + 2 * 86400,
    });
    assert.deepEqual((await callTool('lookup_url', { url: 'https://example.com/edited' })).structuredContent, updated.structuredContent);
    const searched = await callTool('list_urls', { api_key: KEY, q: 'SDK-link' });
    assert.deepEqual(searched.structuredContent, { count: 1, total: 1, urls: [updated.structuredContent] });
    assert.deepEqual((await callTool('delete_url', { code: 'sdk-Link_1', api_key: KEY })).structuredContent, { short_code: 'sdk-Link_1', deleted: true });

    const deleted = await callTool('delete_url', { code, api_key: KEY });
    assert.deepEqual(deleted.structuredContent, { short_code: code, deleted: true });
    assert.equal(deleted.content[0]?.text, JSON.stringify({ short_code: code, deleted: true }));
  });

  test('every tool reports a failed job as isError with a clear message', async () => {
    await client.listTools();
    assert.equal(failed(await callTool('shorten_url', { url: 'javascript:alert(1)' })), 'url must use http or https, not javascript');
    assert.equal(failed(await callTool('get_url', { code: 'zzzzzz' })), 'No short link has the code "zzzzzz".');
    assert.equal(failed(await callTool('lookup_url', { url: 'https://example.com/never' })), 'No live short link points to "https://example.com/never".');
    assert.equal(failed(await callTool('list_urls', { api_key: 'wrong' })), BAD_KEY);
    assert.equal(failed(await callTool('delete_url', { code: 'zzzzzz', api_key: KEY })), 'No short link has the code "zzzzzz".');
    assert.equal(failed(await callTool('update_url', { code: 'zzzzzz', api_key: KEY, max_visits: 3 })), 'No short link has the code "zzzzzz".');
    assert.equal(failed(await callTool('update_url', { code: 'zzzzzz', api_key: 'wrong' })), BAD_KEY);
    await callTool('shorten_url', { url: 'https://example.com/taken', code: 'taken-code' });
    assert.equal(failed(await callTool('shorten_url', { url: 'https://example.com/other', code: 'taken-code' })), 'code already in use');
  });

  test('an unknown tool and arguments that break the schema reject with McpError -32602', async () => {
    const rejects = async (name: string, args: Record<string, unknown>, message: string): Promise<void> => {
      await assert.rejects(client.callTool({ name, arguments: args }), (err: unknown) => {
        assert.ok(err instanceof McpError);
        assert.equal(err.code, -32602);
        assert.equal(err.message, `MCP error -32602: ${message}`);
        return true;
      });
    };
    await rejects('no_such_tool', {}, 'Unknown tool: "no_such_tool"; tools/list names the tools');
    await rejects('shorten_url', { url: 'https://example.com/', retention_days: '1' }, 'Invalid arguments for shorten_url: retention_days must be an integer');
    await rejects('list_urls', { api_key: 1 }, 'Invalid arguments for list_urls: api_key must be a string');
    await rejects('update_url', { code: 'abc', api_key: KEY, max_visits: 1.5 }, 'Invalid arguments for update_url: max_visits must be an integer or null');
  });

  test('the session saw no transport error (the GET probe got its 405)', () => {
    assert.deepEqual(
      errors.map((e) => e.message),
      [],
    );
  });
});
