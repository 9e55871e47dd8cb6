/**
 * Where a link sends each visitor, through MCP (docs/mcp.md) with the official SDK's client:
 * `shorten_url` and `update_url` take the routing arguments, `set_rules` replaces the rules, the
 * structured record shows them (never the password), and the redirect obeys them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { start } from '../support/helpers.ts';

const KEY = 'mcp-routing-key';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

interface Result {
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  content: { type: string; text: string }[];
}

test('shorten_url, update_url and set_rules set where a link sends each visitor; the redirect obeys', async (t) => {
  const h = await start(t, { apiKeys: [KEY], logLevel: 'silent' });
  const client = new Client({ name: 'routing-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`), { requestInit: { headers: { 'x-api-key': KEY } } }));
  t.after(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;

  const { tools } = await client.listTools();
  const setRules = tools.find((tool) => tool.name === 'set_rules');
  assert.ok(setRules, 'set_rules is listed');
  assert.deepEqual(setRules.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });

  const made = await call('shorten_url', {
    url: 'https://example.com/home',
    forward_query: true,
    password: 'tool password',
    fallback_url: 'https://example.com/fb',
  });
  assert.equal(made.isError, undefined, made.content[0]?.text);
  const record = made.structuredContent!;
  assert.deepEqual([record['forward_query'], record['password_protected'], record['fallback_url']], [true, true, 'https://example.com/fb']);
  assert.ok(!JSON.stringify(made).includes('tool password'), 'the password is in no answer');
  const code = record['short_code'] as string;

  const rules = [{ url: 'https://apps.apple.com/x', conditions: [{ type: 'device', key: null, value: 'ios' }] }];
  const set = await call('set_rules', { code, rules });
  assert.equal(set.isError, undefined, set.content[0]?.text);
  assert.deepEqual(set.structuredContent!['rules'], rules);
  const passed = await h.req(`/${code}?utm=1`, { headers: { 'user-agent': IPHONE, 'x-link-password': 'tool password' } });
  assert.equal(passed.status, 302);
  assert.equal(passed.headers.location, 'https://apps.apple.com/x?utm=1', 'the rule, with the query forwarded');

  const edited = await call('update_url', { code, password: null, forward_query: false });
  assert.deepEqual([edited.structuredContent!['password_protected'], edited.structuredContent!['forward_query']], [false, false]);
  assert.equal((await h.req(`/${code}?utm=1`, { headers: { 'user-agent': IPHONE } })).headers.location, 'https://apps.apple.com/x');

  const refused = await call('set_rules', { code, rules: [{ url: 'https://example.com/x', conditions: [{ type: 'device', key: null, value: 'toaster' }] }] });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0]!.text, /^rules\[0\]\.conditions\[0\]\.value: must be one of android, ios/);
  const unknown = await call('set_rules', { code: 'nosuch', rules: [] });
  assert.equal(unknown.isError, true);
  assert.deepEqual((await call('get_url', { code })).structuredContent!['rules'], rules, 'a refused set changed nothing');
});
