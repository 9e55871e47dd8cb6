/**
 * The MCP tools with keys of every role (docs/mcp.md, keys and roles): each tool asks the
 * service's roles table for what it does — `shorten_url` a create as `create_access` says,
 * `list_urls` a list (an editor's holds its own links), `get_stats` a read, `update_url` and
 * `delete_url` an edit, `get_url` and `lookup_url` nothing — with the key of the `X-API-Key`
 * header or of the `api_key` argument. A role too low is an `isError` result with the service's
 * sentence; a missing, wrong, revoked or expired key the one bad-key sentence. A link made with a
 * stored key is that key's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BAD_KEY } from '../../src/mcp/tool-access.ts';
import { TOOLS as DECLARED } from '../../src/mcp/tools.ts';
import { start, type Harness } from '../support/helpers.ts';
import { ADMIN, ONE, ROLES, type Role, type MadeKey, makeKey, denied, CREATE, READ, LIST, EDIT } from '../support/keys.ts';

interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: true;
}

let nextId = 1;

/** One `tools/call` over HTTP, with `headers` (the `X-API-Key` one, say). */
async function callTool(h: Harness, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ToolResult> {
  const res = await h.req('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200, res.body);
  const message = JSON.parse(res.body) as { result?: ToolResult };
  assert.ok(message.result, res.body);
  return message.result;
}

/** The text of an `isError` result, or `ok` for a success. */
const verdict = (r: ToolResult): string => (r.isError ? r.content[0]!.text : 'ok');

/** Every tool, its arguments (`{code}`: a live link of the test), and what each role gets. */
const TOOLS: { name: string; args: Record<string, unknown>; want: Record<Role, string> }[] = [
  { name: 'shorten_url', args: { url: 'https://example.com/made' }, want: { creator: 'ok', viewer: denied('viewer', CREATE), editor: 'ok', admin: 'ok' } },
  { name: 'get_url', args: { code: '{code}' }, want: { creator: 'ok', viewer: 'ok', editor: 'ok', admin: 'ok' } },
  { name: 'lookup_url', args: { url: 'https://example.com/own' }, want: { creator: 'ok', viewer: 'ok', editor: 'ok', admin: 'ok' } },
  { name: 'list_urls', args: {}, want: { creator: denied('creator', LIST), viewer: 'ok', editor: 'ok', admin: 'ok' } },
  { name: 'get_stats', args: { code: '{code}' }, want: { creator: denied('creator', READ), viewer: 'ok', editor: 'ok', admin: 'ok' } },
  {
    name: 'update_url',
    args: { code: '{code}', title: 't' },
    want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 'ok', admin: 'ok' },
  },
  { name: 'delete_url', args: { code: '{code}' }, want: { creator: denied('creator', EDIT), viewer: denied('viewer', EDIT), editor: 'ok', admin: 'ok' } },
];

/** `args` with `{code}` replaced. */
const withCode = (args: Record<string, unknown>, code: string) => Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v === '{code}' ? code : v]));

test('every tool answers each role as the roles table says, with the key in X-API-Key or in api_key', ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], logLevel: 'info' });
  const keys = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await makeKey(h, role)] as const))) as Record<Role, MadeKey>;
  for (const via of ['header', 'argument'] as const) {
    for (const tool of TOOLS) {
      for (const role of ROLES) {
        // The link is the role's own where it may create (an editor edits its own links), else the admin's.
        const maker = role === 'viewer' ? ADMIN : keys[role].key;
        const made = await callTool(h, 'shorten_url', { url: 'https://example.com/own' }, { 'x-api-key': maker });
        const code = made.structuredContent!['short_code'] as string;
        const args = withCode(tool.args, code);
        const key = keys[role].key;
        // get_url and lookup_url take no api_key (they need none); the header is ignored.
        const takesKey = 'api_key' in (DECLARED.find((d) => d.name === tool.name)!.inputSchema.properties ?? {});
        const r =
          via === 'header' || !takesKey ? await callTool(h, tool.name, args, { 'x-api-key': key }) : await callTool(h, tool.name, { ...args, api_key: key });
        const label = `${tool.name} as ${role} (key in the ${via})`;
        assert.equal(verdict(r), tool.want[role], label);
        if (r.isError) assert.equal(r.structuredContent, undefined, label);
      }
    }
  }
  // The header wins over the argument, as X-API-Key does over ?api_key= on the REST door.
  const both = await callTool(h, 'list_urls', { api_key: keys.admin.key }, { 'x-api-key': keys.creator.key });
  assert.equal(verdict(both), denied('creator', LIST));
  // No secret is ever logged.
  for (const key of Object.values(keys)) assert.ok(!h.logs.raw.includes(key.key), 'a secret in the log');
});

test("an editor's key reaches only the links it made: another author's link is unknown to get_stats, update_url and delete_url", ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], logLevel: 'silent' });
  const editor = await makeKey(h, 'editor');
  const other = await makeKey(h, 'editor');
  const theirs = (await callTool(h, 'shorten_url', { url: 'https://example.com/theirs' }, { 'x-api-key': other.key })).structuredContent![
    'short_code'
  ] as string;
  const anonymous = await h.shorten('https://example.com/anonymous');
  for (const code of [theirs, anonymous]) {
    for (const tool of TOOLS.filter((tool) => ['get_stats', 'update_url', 'delete_url'].includes(tool.name))) {
      const r = await callTool(h, tool.name, withCode(tool.args, code), { 'x-api-key': editor.key });
      assert.equal(verdict(r), `No short link has the code "${code}".`, `${tool.name} of ${code}`);
    }
  }
  assert.equal(verdict(await callTool(h, 'get_stats', { code: theirs }, { 'x-api-key': other.key })), 'ok', "its author's key reaches it");
  assert.equal((await h.req(`/api/urls/${theirs}`)).status, 200, 'nothing was deleted');
  assert.equal((await h.req(`/api/urls/${anonymous}`)).status, 200, 'nothing was deleted');
});

test('a missing, wrong, revoked or expired key is the one bad-key result on every tool that needs a key; a create with one makes nothing', ONE, async (t) => {
  let now = 1_800_000_000_000;
  const h = await start(t, { apiKeys: [ADMIN], now: () => now, logLevel: 'silent' });
  const code = await h.shorten('https://example.com/kept');
  const expiring = await makeKey(h, 'admin', { expires_at: 1_800_000_000 + 60 });
  const revoked = await makeKey(h, 'admin');
  assert.equal((await h.req(`/api/keys/${revoked.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } })).status, 204);
  assert.equal(verdict(await callTool(h, 'list_urls', {}, { 'x-api-key': expiring.key })), 'ok', 'the key works until it expires');
  now = (1_800_000_000 + 60) * 1000;
  const before = h.shortener.count;
  const needing = TOOLS.filter((tool) => !['get_url', 'lookup_url'].includes(tool.name));
  for (const [why, headers, extra] of [
    ['revoked', { 'x-api-key': revoked.key }, {}],
    ['expired', { 'x-api-key': expiring.key }, {}],
    ['expired, as api_key', {}, { api_key: expiring.key }],
    ['wrong', { 'x-api-key': 'us_wrong' }, {}],
  ] as const) {
    for (const tool of needing)
      assert.equal(verdict(await callTool(h, tool.name, { ...withCode(tool.args, code), ...extra }, headers)), BAD_KEY, `${tool.name}: ${why}`);
  }
  // No key, or an empty one, is no key: where one is needed (an open create needs none), the same result.
  for (const tool of needing.filter((tool) => tool.name !== 'shorten_url')) {
    assert.equal(verdict(await callTool(h, tool.name, withCode(tool.args, code))), BAD_KEY, `${tool.name}: no key`);
    assert.equal(verdict(await callTool(h, tool.name, { ...withCode(tool.args, code), api_key: '' })), BAD_KEY, `${tool.name}: an empty key`);
  }
  assert.equal(h.shortener.count, before, 'nothing was made, edited away or deleted');
  assert.equal((await h.req(`/api/urls/${code}`)).status, 200);
});

test('create_access=key: shorten_url needs a key whose role may create; open, it needs none', ONE, async (t) => {
  const closed = await start(t, { apiKeys: [ADMIN], createAccess: 'key', logLevel: 'silent' });
  const url = { url: 'https://example.com/k' };
  assert.equal(verdict(await callTool(closed, 'shorten_url', url)), BAD_KEY);
  const creator = await makeKey(closed, 'creator');
  const viewer = await makeKey(closed, 'viewer');
  assert.equal(verdict(await callTool(closed, 'shorten_url', { ...url, api_key: creator.key })), 'ok');
  assert.equal(verdict(await callTool(closed, 'shorten_url', url, { 'x-api-key': ADMIN })), 'ok');
  assert.equal(verdict(await callTool(closed, 'shorten_url', url, { 'x-api-key': viewer.key })), denied('viewer', CREATE));
  assert.equal(closed.shortener.count, 2);

  const open = await start(t, { apiKeys: [ADMIN], logLevel: 'silent' });
  assert.equal(verdict(await callTool(open, 'shorten_url', url)), 'ok');
});

test('a link made by shorten_url with a stored key has that key as its author; with an API_KEYS key or none, no author', ONE, async (t) => {
  const h = await start(t, { apiKeys: [ADMIN], logLevel: 'silent' });
  const creator = await makeKey(h, 'creator');
  const editor = await makeKey(h, 'editor');
  const url = { url: 'https://example.com/authored' };
  const authors: unknown[] = [];
  for (const [args, headers] of [
    [url, { 'x-api-key': creator.key }],
    [{ ...url, api_key: editor.key }, {}],
    [url, { 'x-api-key': ADMIN }],
    [url, {}],
  ] as const) {
    const made = await callTool(h, 'shorten_url', args, headers);
    assert.equal(verdict(made), 'ok');
    // The stored record, as the REST API reads it back: the author is kept, not only answered.
    const code = made.structuredContent!['short_code'] as string;
    const stored = await h.req(`/api/urls/${code}`);
    assert.equal(stored.status, 200, stored.body);
    const record = JSON.parse(stored.body) as { author: unknown };
    assert.equal(made.structuredContent!['author'], record.author, "the tool's answer shows the stored author");
    authors.push(record.author);
  }
  assert.deepEqual(authors, [creator.id, editor.id, null, null]);
});
