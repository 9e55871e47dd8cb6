/**
 * MCP's tools on several domains (docs/mcp.md): each tool of one link takes `domain`, the list
 * filters by it, and a domain that is not the instance's is an `isError` result with the REST
 * API's sentence.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'k1';
const GO = 'go.example';

interface ToolResult {
  structuredContent?: Record<string, unknown>;
  isError?: true;
  content: { type: string; text: string }[];
}

let id = 1;

async function call(h: Harness, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const res = await h.req('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { result: ToolResult }).result;
}

test('every MCP tool of one link takes domain, and list_urls filters by it', async (t) => {
  const h = await start(t, { apiKeys: [KEY], domains: [GO], logLevel: 'silent' });
  const made = await call(h, 'shorten_url', { url: 'https://example.com/go', code: 'tool01', domain: GO });
  assert.equal(made.content[0]!.text, `http://${GO}/tool01`);
  assert.equal(made.structuredContent!['domain'], GO);
  assert.equal((await call(h, 'shorten_url', { url: 'https://example.com/default', code: 'tool01' })).structuredContent!['domain'], null);

  assert.equal((await call(h, 'get_url', { code: 'tool01', domain: GO })).structuredContent!['original_url'], 'https://example.com/go');
  assert.equal((await call(h, 'get_url', { code: 'tool01' })).structuredContent!['original_url'], 'https://example.com/default');
  const edited = await call(h, 'update_url', { code: 'tool01', domain: GO, title: 'On go' });
  assert.deepEqual([edited.structuredContent!['title'], edited.structuredContent!['domain']], ['On go', GO]);
  const stats = await call(h, 'get_stats', { code: 'tool01', domain: GO });
  assert.equal(stats.structuredContent!['short_code'], 'tool01');

  const listed = await call(h, 'list_urls', { domain: GO });
  assert.deepEqual(
    (listed.structuredContent!['urls'] as { short_code: string; domain: string | null }[]).map((u) => [u.short_code, u.domain]),
    [['tool01', GO]],
  );
  assert.equal(((await call(h, 'list_urls', {})).structuredContent!['urls'] as unknown[]).length, 2);

  const refused = await call(h, 'get_url', { code: 'tool01', domain: 'x.example' });
  assert.equal(refused.isError, true);
  assert.equal(refused.content[0]!.text, `domain must be one of this service's domains (127.0.0.1:${h.port}, ${GO}), or absent for the default one`);
  assert.deepEqual((await call(h, 'delete_url', { code: 'tool01', domain: GO })).structuredContent, { short_code: 'tool01', deleted: true });
  const gone = await call(h, 'get_url', { code: 'tool01', domain: GO });
  assert.deepEqual([gone.isError, gone.content[0]!.text], [true, 'No short link has the code "tool01".']);
  assert.equal((await call(h, 'get_url', { code: 'tool01' })).isError, undefined);
});
