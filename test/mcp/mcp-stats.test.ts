/**
 * The MCP tool `get_stats` (docs/mcp.md) through the official SDK client: the same stats object as
 * `GET /api/urls/<code>/stats` with the same parameters, as `structuredContent` that matches its
 * declared `outputSchema` (checked by the SDK and by ajv here); a wrong key, an unknown code and a
 * bad parameter are `isError` results that say which, and an argument of the wrong type never
 * reaches the tool.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { start } from '../support/helpers.ts';

const KEY = 'stats-key';
const NOW_MS = Date.UTC(2026, 9, 25, 12);
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

interface Result {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

test('get_stats answers what the stats route answers, and its failures say what went wrong', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW_MS });
  const code = await h.shorten('https://example.com/stats');
  for (const headers of [{ 'user-agent': CHROME, referer: 'https://news.example/a' }, { 'user-agent': 'curl/8.5.0' }, {}]) {
    assert.equal((await h.req(`/${code}`, { headers })).status, 302);
  }
  const client = new Client({ name: 'stats-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`)));
  t.after(() => client.close());
  const tool = (await client.listTools()).tools.find((x) => x.name === 'get_stats');
  assert.ok(tool?.outputSchema);
  assert.deepEqual(tool.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(tool.outputSchema);
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'get_stats', arguments: args })) as Result;

  // The Berlin day the clocks go back: 25 hours.
  const params = { from: '2026-10-25', to: '2026-10-26', interval: 'hour', tz: 'Europe/Berlin', bots: 'include' };
  const result = await call({ code, api_key: KEY, ...params });
  assert.equal(result.isError, undefined, JSON.stringify(result));
  const stats = result.structuredContent!;
  assert.ok(validate(stats), JSON.stringify(validate.errors));
  const rest = await h.req(`/api/urls/${code}/stats?${new URLSearchParams(params)}`, { headers: { 'x-api-key': KEY } });
  assert.equal(rest.status, 200);
  assert.deepEqual(stats, JSON.parse(rest.body));
  assert.equal(result.content.at(-1)?.text, JSON.stringify(stats));
  assert.equal((stats['series'] as unknown[]).length, 25);
  assert.deepEqual([stats['short_code'], stats['visits'], stats['bots'], stats['visit_count']], [code, 3, 1, 3]);

  // Defaults: the last 30 days, bots left out.
  const defaults = (await call({ code, api_key: KEY })).structuredContent!;
  assert.ok(validate(defaults), JSON.stringify(validate.errors));
  assert.deepEqual([defaults['interval'], defaults['tz'], defaults['visits']], ['day', 'UTC', 2]);

  const failure = async (args: Record<string, unknown>): Promise<string> => {
    const r = await call(args);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent, undefined);
    return r.content[0]!.text!;
  };
  assert.match(await failure({ code, api_key: 'guess' }), /^api_key is not/);
  assert.equal(await failure({ code: 'zzzzzz', api_key: KEY }), 'No short link has the code "zzzzzz".');
  assert.match(await failure({ code, api_key: KEY, tz: 'Mars/Olympus' }), /^tz must be an IANA time zone/);
  assert.match(await failure({ code, api_key: KEY, from: 'last week' }), /^from must be/);
  assert.match(await failure({ code, api_key: KEY, interval: 'hour', from: '2020-01-01' }), /1000 hour buckets/);
  // A wrong type is refused by the input schema before the tool runs: a protocol error (-32602).
  await assert.rejects(call({ code, api_key: KEY, from: 1_700_000_000 }), /-32602.*from must be a string/);
});
