/**
 * Text no store can hold (docs/api.md, "Text every store can hold"): a NUL or a lone UTF-16
 * surrogate in a URL, a search, a lookup or an imported row is a 400 (an `isError` result through
 * MCP) naming the field, and a code holding one names no link, on every store alike: PostgreSQL's
 * `text` cannot hold a NUL, and its answer must not be a 500 with a stack in the log. The cluster
 * pass runs this file against PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unstorableText } from '../../src/links/validate.ts';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';

const KEY = 'k1';
const ADMIN = { 'x-api-key': KEY };
const JSON_TYPE = { 'content-type': 'application/json' };

const NUL_URL = 'url must not contain a NUL character';
const SURROGATE_URL = 'url must not contain a lone UTF-16 surrogate (it is not Unicode text)';

function detail(r: Reply): string {
  assert.equal(r.status, 400, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  return (JSON.parse(r.body) as { detail: string }).detail;
}

interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

async function tool(h: Harness, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const r = await h.req('/mcp', {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(r.status, 200, r.body);
  const message = JSON.parse(r.body) as { id: number; result?: ToolResult; error?: unknown };
  assert.equal(message.error, undefined, `${name}: a result, not a JSON-RPC error: ${r.body}`);
  return message.result!;
}

/** The text of a tool's failure (docs/mcp.md): one text block, `isError: true`, nothing structured. */
function toolFailure(r: ToolResult): string {
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent, undefined);
  assert.equal(r.content.length, 1);
  return r.content[0]!.text;
}

function noErrorLogged(h: Harness): void {
  assert.deepEqual(
    h.logs.lines.filter((l) => l['level'] === 'error'),
    [],
    'nothing unexpected happened',
  );
}

async function live(h: Harness): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ url: 'https://example.com/kept' }) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

test('unstorableText: a NUL or an unpaired surrogate anywhere, named with the field; surrogate pairs are text', () => {
  const cases: [string, string | undefined][] = [
    ['https://example.com/', undefined],
    ['', undefined],
    ['\ud83d\ude00 and \u00e9', undefined],
    ['\u0001\u007f\ufffd\uffff', undefined],
    ['\u0000', NUL_URL],
    ['https://example.com/a\u0000', NUL_URL],
    ['\ud800', SURROGATE_URL],
    ['x\udfff', SURROGATE_URL],
    ['\ude00\ud83d', SURROGATE_URL],
    ['\ud83d\ude00\ud83d', SURROGATE_URL],
    ['\ud800\u0000', SURROGATE_URL],
  ];
  for (const [text, expected] of cases) assert.equal(unstorableText(text, 'url'), expected, JSON.stringify(text));
  assert.equal(unstorableText('a\u0000', 'q'), 'q must not contain a NUL character');
});

test('a NUL in the list search q is a 400 naming q, with a page or without', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  await live(h);
  for (const query of ['q=%00', 'q=ab%00c', 'q=ab%00c&limit=5', 'q=%00&limit=1&offset=1']) {
    assert.equal(detail(await h.req(`/api/urls?${query}`, { headers: ADMIN })), 'q must not contain a NUL character', query);
  }
  // The store still answers: nothing was left half done.
  const listed = await h.req('/api/urls?q=kept', { headers: ADMIN });
  assert.equal(listed.status, 200, listed.body);
  assert.equal((JSON.parse(listed.body) as { count: number }).count, 1);
  noErrorLogged(h);
});

test('a NUL or a lone surrogate in a URL is a 400 on shorten, lookup and edit', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await live(h);
  const shorten = (body: string): Promise<Reply> => h.req('/api/shorten', { method: 'POST', headers: JSON_TYPE, body });
  assert.equal(detail(await shorten('{"url":"https://example.com/a\\u0000b"}')), NUL_URL);
  assert.equal(detail(await shorten('{"url":"https://example.com/\\ud800"}')), SURROGATE_URL);
  assert.equal(detail(await shorten('{"url":"https://example.com/\\udfff?x"}')), SURROGATE_URL);
  assert.equal(detail(await h.req('/api/shorten?url=https://example.com/%00', { method: 'POST' })), NUL_URL, 'a query parameter decoded to a NUL');
  // A surrogate pair is one character, and welcome.
  const pair = await shorten('{"url":"https://example.com/\\ud83d\\ude00"}');
  assert.equal(pair.status, 201, pair.body);

  assert.equal(detail(await h.req('/api/lookup?url=https://example.com/kept%00')), NUL_URL);
  assert.equal(detail(await h.req(`/api/lookup?url=${encodeURIComponent('https://example.com/\u0000')}`)), NUL_URL);

  const patch = (body: string): Promise<Reply> => h.req(`/api/urls/${code}`, { method: 'PATCH', headers: { ...ADMIN, ...JSON_TYPE }, body });
  assert.equal(detail(await patch('{"url":"https://example.com/\\u0000"}')), NUL_URL);
  assert.equal(detail(await patch('{"url":"https://example.com/\\udc00"}')), SURROGATE_URL);
  const kept = await h.req(`/api/urls/${code}`);
  assert.equal((JSON.parse(kept.body) as { original_url: string }).original_url, 'https://example.com/kept', 'the refused edits changed nothing');
  noErrorLogged(h);
});

test('an imported row with a NUL or a lone surrogate is skipped and reported by its line', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const rows = [
    '{"url":"https://example.com/one"}',
    '{"url":"https://example.com/\\u0000"}',
    '{"url":"https://example.com/\\ud800"}',
    '{"url":"https://example.com/two","code":"ab\\u0000cdef"}',
    '{"url":"https://example.com/three"}',
  ];
  const r = await h.req('/api/import', { method: 'POST', headers: { ...ADMIN, 'content-type': 'application/x-ndjson' }, body: `${rows.join('\n')}\n` });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), {
    imported: 2,
    skipped: 3,
    errors: [
      { line: 2, detail: NUL_URL },
      { line: 3, detail: SURROGATE_URL },
      { line: 4, detail: 'code may only use the letters A-Z and a-z, digits, "-" and "_"' },
    ],
  });
  noErrorLogged(h);
});

test('MCP: a code holding a NUL names no link, and text with one is refused, as isError results', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const code = await live(h);
  const nulCode = 'ab\u0000cdef';
  const unknown = `No short link has the code ${JSON.stringify(nulCode)}.`;
  assert.equal(toolFailure(await tool(h, 'get_url', { code: nulCode })), unknown);
  assert.equal(toolFailure(await tool(h, 'get_url', { code: 'ab\ud800cdef' })), `No short link has the code ${JSON.stringify('ab\ud800cdef')}.`);
  assert.equal(toolFailure(await tool(h, 'delete_url', { code: nulCode, api_key: KEY })), unknown);
  assert.equal(toolFailure(await tool(h, 'update_url', { code: nulCode, api_key: KEY, retention_days: 3 })), unknown);
  assert.equal(toolFailure(await tool(h, 'update_url', { code, api_key: KEY, url: 'https://example.com/\u0000' })), NUL_URL);
  assert.equal(toolFailure(await tool(h, 'shorten_url', { url: 'https://example.com/\u0000' })), NUL_URL);
  assert.equal(toolFailure(await tool(h, 'shorten_url', { url: 'https://example.com/\ud800' })), SURROGATE_URL);
  assert.equal(
    toolFailure(await tool(h, 'shorten_url', { url: 'https://example.com/', code: nulCode })),
    'code may only use the letters A-Z and a-z, digits, "-" and "_"',
  );
  assert.equal(toolFailure(await tool(h, 'lookup_url', { url: 'https://example.com/\u0000' })), NUL_URL);
  assert.equal(toolFailure(await tool(h, 'list_urls', { api_key: KEY, q: 'a\u0000' })), 'q must not contain a NUL character');
  assert.equal(
    toolFailure(await tool(h, 'list_urls', { api_key: KEY, q: '\udfff', limit: 3 })),
    'q must not contain a lone UTF-16 surrogate (it is not Unicode text)',
  );

  // The link the refused calls named is untouched, and the tools still work.
  const got = await tool(h, 'get_url', { code });
  assert.equal(got.isError, undefined, JSON.stringify(got));
  assert.equal(got.structuredContent?.['original_url'], 'https://example.com/kept');
  noErrorLogged(h);
});
