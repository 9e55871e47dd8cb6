/**
 * A CSV header row that cannot be used fails the whole import with 400 naming the problem, and
 * nothing is stored (docs/api.md, export and import): the header decides what every other row
 * means, so it is never reported as a row with the next row taken as the header instead.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';

const KEY = 'admin-key';

const BAD_HEADERS: [name: string, body: string, detail: string][] = [
  [
    'an unterminated quote',
    '"url,code\nhttps://example.com/1,abcdef\n',
    'line 1: the header row cannot be read: a quoted field opened on line 1 is never closed',
  ],
  [
    'text after a quoted name',
    '"url"x,code\nurl,code\nhttps://example.com/1,abcdef\n',
    'line 1: the header row cannot be read: a quoted field must be followed by a comma or the end of the line',
  ],
  [
    'after blank lines, its own line',
    '\n\n"url"x\nurl\nhttps://example.com/1\n',
    'line 3: the header row cannot be read: a quoted field must be followed by a comma or the end of the line',
  ],
  [
    'a header over the row limit',
    `url,${'x'.repeat(1 << 20)}\nhttps://example.com/1,y\n`,
    'line 1: the header row cannot be read: the row is longer than 1048576 characters',
  ],
  ['no url column', 'code,title\nabcdef,x\n', 'line 1: the header has no url column (one of original_url, url, long_url, longUrl, Long URL)'],
  [
    'two columns for one field',
    'url,Long URL\nhttps://example.com/1,https://example.com/2\n',
    'line 1: the header names the url column twice ("url" and "Long URL")',
  ],
  ['an empty file', '', 'the file has no header row: a CSV import starts with one naming its columns'],
  ['blank lines only', '\r\n\n\r\n', 'the file has no header row: a CSV import starts with one naming its columns'],
];

for (const [name, body, detail] of BAD_HEADERS) {
  test(`a bad CSV header fails the import: ${name}`, async (t) => {
    const h = await start(t, { apiKeys: [KEY] });
    const r = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'text/csv', 'x-api-key': KEY }, body });
    assert.equal(r.status, 400, r.body);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { detail });
    const exported = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
    assert.equal(exported.body, '', 'nothing stored');
  });
}

test('a malformed row after a good header is still only that row', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const r = await h.req('/api/import', {
    method: 'POST',
    headers: { 'content-type': 'text/csv', 'x-api-key': KEY },
    body: 'url\n"https://example.com/1"x\nhttps://example.com/2\n',
  });
  assert.deepEqual(JSON.parse(r.body), {
    imported: 1,
    skipped: 1,
    errors: [{ line: 2, detail: 'a quoted field must be followed by a comma or the end of the line' }],
  });
});
