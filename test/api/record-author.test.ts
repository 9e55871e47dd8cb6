/**
 * The record's `author` (docs/api.md, the record; docs/security.md, roles): a link made with a
 * stored key shows that key's `id` on every door that shows the record — REST's create answer
 * aside (a short URL), its get, lookup, list and edit answer, and MCP's tools — and a link made
 * with a key of `API_KEYS` or with no key shows `null`. An edit never changes it. On the log
 * store, and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { validateValue } from '../../src/published/json-schema.ts';
import { RECORD_SCHEMA } from '../../src/published/schemas.ts';
import { codeOf, start, type Harness } from '../support/helpers.ts';
import { ADMIN, makeKey, ONE } from '../support/keys.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';

type Door = Pick<Harness, 'req'>;

const SETTINGS = { apiKeys: [ADMIN], logLevel: 'silent' } as const;
const JSON_TYPE = { 'content-type': 'application/json' };

/** Started once for the file when PostgreSQL is installed (a loud message and skipped tests when not). */
const pg = await pgServer();

interface ToolResult {
  structuredContent?: Record<string, unknown>;
  isError?: true;
  content: { type: string; text: string }[];
}

let nextId = 1;

/** One MCP `tools/call`; the key, when given, in `X-API-Key`. */
async function callTool(door: Door, name: string, args: Record<string, unknown>, key?: string): Promise<Record<string, unknown>> {
  const res = await door.req('/mcp', {
    method: 'POST',
    headers: { ...JSON_TYPE, accept: 'application/json, text/event-stream', ...(key === undefined ? {} : { 'x-api-key': key }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  assert.equal(res.status, 200, res.body);
  const result = (JSON.parse(res.body) as { result: ToolResult }).result;
  assert.ok(!result.isError && result.structuredContent, `${name}: ${JSON.stringify(result)}`);
  return result.structuredContent;
}

/** A REST create of `url`, with `key` in `X-API-Key` when given; its code. */
async function shorten(door: Door, url: string, key?: string): Promise<string> {
  const r = await door.req('/api/shorten', {
    method: 'POST',
    headers: { ...JSON_TYPE, ...(key === undefined ? {} : { 'x-api-key': key }) },
    body: JSON.stringify({ url }),
  });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

/** The JSON answer of a `GET`, with `key` in `X-API-Key` when given. */
async function got<T = UrlRecord>(door: Door, path: string, key?: string): Promise<T> {
  const r = await door.req(path, key === undefined ? {} : { headers: { 'x-api-key': key } });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return JSON.parse(r.body) as T;
}

/** Every door that shows a record shows each link's author, and the record stays valid against its schema. */
async function assertAuthors(door: Door): Promise<void> {
  const editor = await makeKey(door, 'editor');
  const creator = await makeKey(door, 'creator');
  assert.match(editor.id, /^[A-Za-z0-9_-]{8}$/);
  // Each link, and the author it must show.
  const made: [code: string, author: string | null, how: string][] = [
    [await shorten(door, 'https://example.com/by-editor', editor.key), editor.id, 'REST, an editor key'],
    [await shorten(door, 'https://example.com/by-creator', creator.key), creator.id, 'REST, a creator key'],
    [await shorten(door, 'https://example.com/by-admin', ADMIN), null, 'REST, a key of API_KEYS'],
    [await shorten(door, 'https://example.com/by-nobody'), null, 'REST, no key'],
  ];
  const viaMcp = async (url: string, key: string | undefined, author: string | null, how: string): Promise<void> => {
    const rec = await callTool(door, 'shorten_url', { url }, key);
    assert.equal(rec['author'], author, `${how}: the create's record`);
    made.push([String(rec['short_code']), author, how]);
  };
  await viaMcp('https://example.com/mcp-editor', editor.key, editor.id, 'MCP, an editor key');
  await viaMcp('https://example.com/mcp-creator', creator.key, creator.id, 'MCP, a creator key');
  await viaMcp('https://example.com/mcp-admin', ADMIN, null, 'MCP, a key of API_KEYS');
  await viaMcp('https://example.com/mcp-nobody', undefined, null, 'MCP, no key');

  for (const [code, author, how] of made) {
    const rec = await got(door, `/api/urls/${code}`);
    assert.equal(rec.author, author, `${how}: GET /api/urls/<code>`);
    assert.deepEqual(validateValue(RECORD_SCHEMA, rec), [], how);
    assert.deepEqual(await callTool(door, 'get_url', { code }), { ...rec }, `${how}: get_url shows the REST record`);
    const found = await got(door, `/api/lookup?url=${encodeURIComponent(rec.original_url)}`);
    assert.equal(found.author, author, `${how}: lookup`);
  }
  const listed = await got<{ urls: UrlRecord[] }>(door, '/api/urls', ADMIN);
  const byCode = new Map(listed.urls.map((r) => [r.short_code, r.author]));
  assert.deepEqual(
    made.map(([code]) => byCode.get(code)),
    made.map(([, author]) => author),
    'the list',
  );
  const mcpListed = (await callTool(door, 'list_urls', {}, ADMIN))['urls'] as UrlRecord[];
  assert.deepEqual(new Map(mcpListed.map((r) => [r.short_code, r.author])), byCode, 'list_urls');

  // An edit answers the record with its author unchanged, whoever edits it.
  const [editorsLink] = made[0]!;
  const edited = await door.req(`/api/urls/${editorsLink}`, { method: 'PATCH', headers: { ...JSON_TYPE, 'x-api-key': editor.key }, body: '{"title":"mine"}' });
  assert.equal(edited.status, 200, edited.body);
  assert.equal((JSON.parse(edited.body) as UrlRecord).author, editor.id, 'REST edit');
  const mcpEdited = await callTool(door, 'update_url', { code: editorsLink, title: 'again' }, ADMIN);
  assert.equal(mcpEdited['author'], editor.id, 'update_url by an admin');
  assert.equal((await got(door, `/api/urls/${editorsLink}`)).author, editor.id, 'kept after both edits');
}

test('the record shows the author: the stored key that made the link, null for API_KEYS or no key (log store)', ONE, async (t) => {
  await assertAuthors(await start(t, SETTINGS));
});

test('the record shows the author: the stored key that made the link, null for API_KEYS or no key (PostgreSQL)', {
  ...(pg ? {} : { skip: NO_POSTGRES }),
  timeout: 60_000,
}, async (t) => {
  const app = await openOnDatabase(SETTINGS, await pg!.createDatabase());
  t.after(() => app.close());
  await assertAuthors(app);
});
