/**
 * Regression: tags are one value whatever Unicode form they are typed in (docs/api.md, titles and
 * tags). `é` sent decomposed (NFD: `e` and a combining accent) used to be stored as sent, so it was
 * a second tag beside the composed `é`, and a filter typed the other way found nothing. Now every
 * door stores NFC (the rule is `checkTags`, under all of them) and every list filter compares in
 * NFC; case is kept (`a` and `A` are two tags) and look-alike letters of other scripts (Cyrillic
 * `а`) stay tags of their own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { UrlList, UrlRecord } from '../../src/links/record.ts';
import { checkTags } from '../../src/links/validate.ts';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'k1';
const ADMIN = { 'x-api-key': KEY };
const NFC = 'caf\u00e9';
const NFD = 'cafe\u0301';

test('the two spellings differ as sent, and are one tag once checked', () => {
  assert.notEqual(NFC, NFD);
  assert.deepEqual(checkTags([NFD]), [NFC]);
  assert.deepEqual(checkTags([NFD, NFC]), [NFC]);
  assert.deepEqual(checkTags(` ${NFD} ,x`, true), [NFC, 'x']);
  // Case and other scripts are kept apart: Latin a, Latin A, Cyrillic а.
  assert.deepEqual(checkTags(['a', 'A', '\u0430']), ['A', 'a', '\u0430']);
});

async function list(h: Harness, query: string): Promise<string[]> {
  const r = await h.req(`/api/urls?${query}`, { headers: ADMIN });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as UrlList).urls.map((u) => u.short_code);
}

async function record(h: Harness, code: string): Promise<UrlRecord> {
  const r = await h.req(`/api/urls/${code}`);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as UrlRecord;
}

test('REST: create, edit and import store NFC; a filter in NFD finds the NFC tag; a and A stay two tags', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const made = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/1', code: 'json-1', tags: [NFD, 'a', 'A'] }),
  });
  assert.equal(made.status, 201, made.body);
  assert.deepEqual((await record(h, 'json-1')).tags, ['A', 'a', NFC]);

  const form = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ url: 'https://example.com/2', code: 'form-1', tags: `${NFD},b` }).toString(),
  });
  assert.equal(form.status, 201, form.body);
  assert.deepEqual((await record(h, 'form-1')).tags, ['b', NFC]);

  const edited = await h.req('/api/urls/form-1', {
    method: 'PATCH',
    headers: { ...ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({ tags: [NFD] }),
  });
  assert.equal(edited.status, 200, edited.body);
  assert.deepEqual((JSON.parse(edited.body) as UrlRecord).tags, [NFC]);

  const imported = await h.req('/api/import', {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'text/csv' },
    body: `url,code,tags\nhttps://example.com/3,csv-01,"${NFD},a"\n`,
  });
  assert.equal(imported.status, 200, imported.body);
  assert.equal((JSON.parse(imported.body) as { imported: number }).imported, 1, imported.body);
  assert.deepEqual((await record(h, 'csv-01')).tags, ['a', NFC]);

  // Newest first.
  assert.deepEqual(await list(h, new URLSearchParams({ tag: NFD }).toString()), ['csv-01', 'form-1', 'json-1']);
  assert.deepEqual(await list(h, new URLSearchParams({ tag: NFC }).toString()), ['csv-01', 'form-1', 'json-1']);
  assert.deepEqual(await list(h, 'tag=a'), ['csv-01', 'json-1']);
  assert.deepEqual(await list(h, 'tag=A'), ['json-1']);
  assert.deepEqual(await list(h, new URLSearchParams({ tag: '\u0430' }).toString()), []);
});

test('MCP: shorten_url stores NFC, list_urls with an NFD tag finds it', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const client = new Client({ name: 'tag-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`)));
  t.after(() => client.close());
  const made = (await client.callTool({ name: 'shorten_url', arguments: { url: 'https://example.com/m', code: 'mcp-01', tags: [NFD] } })) as {
    structuredContent?: UrlRecord;
    isError?: boolean;
  };
  assert.equal(made.isError, undefined, JSON.stringify(made));
  assert.deepEqual(made.structuredContent?.tags, [NFC]);
  const listed = (await client.callTool({ name: 'list_urls', arguments: { api_key: KEY, tag: [NFD] } })) as { structuredContent?: { urls: UrlRecord[] } };
  assert.deepEqual(
    listed.structuredContent?.urls.map((u) => u.short_code),
    ['mcp-01'],
  );
});

test("Shlink's door: a create stores NFC, and its tag filter in NFD finds the NFC tag", async (t) => {
  const h = await start(t, { apiKeys: [KEY], shlinkApi: true });
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const made = await h.req('/rest/v3/short-urls', {
    method: 'POST',
    headers,
    body: JSON.stringify({ longUrl: 'https://example.com/s', customSlug: 'shlink-1', tags: [NFD, 'A'] }),
  });
  assert.equal(made.status, 200, made.body);
  assert.deepEqual((JSON.parse(made.body) as { tags: string[] }).tags, ['A', NFC]);
  const listed = await h.req(`/rest/v3/short-urls?${new URLSearchParams({ 'tags[]': NFD })}`, { headers: { 'x-api-key': KEY } });
  assert.equal(listed.status, 200, listed.body);
  assert.deepEqual(
    (JSON.parse(listed.body) as { shortUrls: { data: { shortCode: string }[] } }).shortUrls.data.map((u) => u.shortCode),
    ['shlink-1'],
  );
  // The filters Shlink's door applies itself: any of several tags, and tags to leave out.
  const other = await h.req('/rest/v3/short-urls', {
    method: 'POST',
    headers,
    body: JSON.stringify({ longUrl: 'https://example.com/o', customSlug: 'shlink-2', tags: ['other'] }),
  });
  assert.equal(other.status, 200, other.body);
  const codes = async (query: string[][]): Promise<string[]> => {
    const r = await h.req(`/rest/v3/short-urls?${new URLSearchParams(query)}`, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 200, r.body);
    return (JSON.parse(r.body) as { shortUrls: { data: { shortCode: string }[] } }).shortUrls.data.map((u) => u.shortCode).sort();
  };
  assert.deepEqual(
    await codes([
      ['tags[]', NFD],
      ['tags[]', 'nothing'],
      ['tagsMode', 'any'],
    ]),
    ['shlink-1'],
  );
  assert.deepEqual(await codes([['excludeTags[]', NFD]]), ['shlink-2']);
  // findIfExists: the same tags, typed the other way, are the same link.
  const again = await h.req('/rest/v3/short-urls', {
    method: 'POST',
    headers,
    body: JSON.stringify({ longUrl: 'https://example.com/s', customSlug: 'shlink-1', tags: [NFD, 'A'], findIfExists: true }),
  });
  assert.equal(again.status, 200, again.body);
  assert.equal((JSON.parse(again.body) as { shortCode: string }).shortCode, 'shlink-1');
});
