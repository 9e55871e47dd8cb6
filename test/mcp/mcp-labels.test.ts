/**
 * Titles and tags through MCP (docs/mcp.md), driven by the official TypeScript SDK client over HTTP:
 * shorten_url and update_url take them, list_urls filters by tag and searches titles with q, every
 * record carries them (the SDK and ajv check each against the declared outputSchema), and the REST
 * API sees the same values. A refusal is an isError result with the REST API's sentence.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { UrlRecord } from '../../src/links/record.ts';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'mcp-key';

interface Result {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface Session {
  h: Harness;
  /** A call whose structured result is checked against the tool's outputSchema here too. */
  call(name: string, args: Record<string, unknown>): Promise<Result>;
  client: Client;
}

async function connect(t: TestContext): Promise<Session> {
  const h = await start(t, { apiKeys: [KEY] });
  const client = new Client({ name: 'labels-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`)));
  t.after(() => client.close());
  // The SDK validates structured results only for tools it has listed.
  const listed: Tool[] = (await client.listTools()).tools;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  return {
    h,
    client,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as Result;
      if (result.structuredContent !== undefined) {
        const validate = ajv.compile(listed.find((tool) => tool.name === name)!.outputSchema!);
        assert.ok(validate(result.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`);
      }
      return result;
    },
  };
}

function record(r: Result): UrlRecord {
  assert.equal(r.isError, undefined, JSON.stringify(r.content));
  return r.structuredContent as unknown as UrlRecord;
}

function failed(r: Result): string {
  assert.equal(r.isError, true, JSON.stringify(r));
  return r.content[0]!.text!;
}

const labels = (r: UrlRecord): { title: string | null; tags: string[] } => ({ title: r.title, tags: r.tags });

test('shorten_url and update_url take title and tags; the records carry them, as the REST API reads them', async (t) => {
  const { h, call } = await connect(t);
  const made = record(await call('shorten_url', { url: 'https://example.com/m', title: 'Märchen 📚', tags: ['books', ' de ', 'books'] }));
  assert.deepEqual(labels(made), { title: 'Märchen 📚', tags: ['books', 'de'] });
  assert.deepEqual(JSON.parse((await h.req(`/api/urls/${made.short_code}`)).body), made);
  assert.deepEqual(record(await call('get_url', { code: made.short_code })), made);

  const plain = record(await call('shorten_url', { url: 'https://example.com/plain' }));
  assert.deepEqual(labels(plain), { title: null, tags: [] });

  const edited = record(await call('update_url', { code: made.short_code, api_key: KEY, title: 'Fairy tales', tags: ['books', 'en'] }));
  assert.deepEqual(edited, { ...made, title: 'Fairy tales', tags: ['books', 'en'] });
  assert.deepEqual(labels(record(await call('update_url', { code: made.short_code, api_key: KEY, tags: [] }))), { title: 'Fairy tales', tags: [] });
  assert.deepEqual(labels(record(await call('update_url', { code: made.short_code, api_key: KEY, title: null }))), { title: null, tags: [] });
  assert.deepEqual(labels(JSON.parse((await h.req(`/api/urls/${made.short_code}`)).body) as UrlRecord), { title: null, tags: [] });
});

test('list_urls filters by every tag named and searches titles with q', async (t) => {
  const { call } = await connect(t);
  const a = record(await call('shorten_url', { url: 'https://example.com/a', title: 'Annual review', tags: ['work', 'reports'] })).short_code;
  const b = record(await call('shorten_url', { url: 'https://example.com/b', tags: ['work'] })).short_code;
  const c = record(await call('shorten_url', { url: 'https://example.com/c', title: 'Garden', tags: ['Work'] })).short_code;
  const listed = async (args: Record<string, unknown>): Promise<{ total: unknown; codes: string[] }> => {
    const r = await call('list_urls', { api_key: KEY, ...args });
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    return { total: r.structuredContent!['total'], codes: (r.structuredContent!['urls'] as UrlRecord[]).map((u) => u.short_code) };
  };
  assert.deepEqual(await listed({ tag: ['work'] }), { total: 2, codes: [b, a] });
  assert.deepEqual(await listed({ tag: ['Work'] }), { total: 1, codes: [c] }, 'case-sensitive');
  assert.deepEqual(await listed({ tag: ['work', 'reports'] }), { total: 1, codes: [a] });
  assert.deepEqual(await listed({ tag: ['work'], limit: 1, offset: 1 }), { total: 2, codes: [a] });
  assert.deepEqual(await listed({ q: 'garden' }), { total: 1, codes: [c] });
  assert.deepEqual(await listed({ q: 'review', tag: ['reports'] }), { total: 1, codes: [a] });
  assert.deepEqual(await listed({ tag: [] }), { total: 3, codes: [c, b, a] });
  // The records in the list carry the labels too.
  const page = await call('list_urls', { api_key: KEY, tag: ['reports'] });
  assert.deepEqual((page.structuredContent!['urls'] as UrlRecord[]).map(labels), [{ title: 'Annual review', tags: ['reports', 'work'] }]);
});

test("labels past the limits are isError results with the REST API's sentence; a wrong type breaks the inputSchema", async (t) => {
  const { call, client } = await connect(t);
  const url = 'https://example.com/x';
  assert.equal(
    failed(await call('shorten_url', { url, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) })),
    'a link may have at most 20 distinct tags, not 21',
  );
  assert.equal(failed(await call('shorten_url', { url, tags: ['z'.repeat(51)] })), 'a tag must be 1 to 50 characters long (after trimming spaces), not 51');
  assert.equal(failed(await call('shorten_url', { url, tags: ['a,b'] })), 'a tag must not contain a comma: "a,b"');
  assert.equal(failed(await call('shorten_url', { url, title: 'x'.repeat(513) })), 'title must be at most 512 characters long, not 513');
  const code = record(await call('shorten_url', { url })).short_code;
  assert.equal(failed(await call('update_url', { code, api_key: KEY, tags: ['a,b'] })), 'a tag must not contain a comma: "a,b"');
  assert.equal(
    failed(await call('list_urls', { api_key: KEY, tag: ['y'.repeat(51)] })),
    'a tag must be 1 to 50 characters long (after trimming spaces), not 51',
  );
  const rejects = async (name: string, args: Record<string, unknown>, message: string): Promise<void> => {
    await assert.rejects(
      client.callTool({ name, arguments: args }),
      (err: unknown) => err instanceof McpError && err.code === -32602 && err.message === `MCP error -32602: ${message}`,
    );
  };
  await rejects('shorten_url', { url, tags: 'a,b' }, 'Invalid arguments for shorten_url: tags must be an array');
  await rejects('update_url', { code, api_key: KEY, tags: null }, 'Invalid arguments for update_url: tags must be an array');
  await rejects('list_urls', { api_key: KEY, tag: 'work' }, 'Invalid arguments for list_urls: tag must be an array');
  // Nothing refused was stored.
  const all = await call('list_urls', { api_key: KEY });
  assert.equal(all.structuredContent!['total'], 1);
});
