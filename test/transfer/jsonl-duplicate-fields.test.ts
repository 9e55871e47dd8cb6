/**
 * A JSON Lines record with two keys for one field (`url` and `long_url`) is skipped and reported
 * with its line, naming both keys, as a CSV header with two columns for one field is refused
 * (docs/api.md, export and import): which one to trust is the sender's call, not a guess.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../support/helpers.ts';

const KEY = 'admin-key';

test('two keys for one field: the row is skipped and reported by line with both keys; the others are stored', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  const body = [
    '{"url":"https://example.com/a","long_url":"https://example.com/b"}', // 1
    '{"original_url":"https://example.com/c","code":"abcdef","short_code":"ghijkl"}', // 2
    '{"URL":"https://example.com/d","url":"https://example.com/d"}', // 3: the same value, still two keys
    '{"url":"https://example.com/e","visits":1,"clicks":null}', // 4
    '{"longUrl":"https://example.com/f","created_at":1700000000,"timestamp":1700000000}', // 5
    '{"url":"https://example.com/ok","title":"ignored","tags":["x"]}', // 6
  ].join('\n');
  const r = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY }, body });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), {
    imported: 1,
    skipped: 5,
    errors: [
      { line: 1, detail: 'the record names the url field twice ("url" and "long_url")' },
      { line: 2, detail: 'the record names the code field twice ("code" and "short_code")' },
      { line: 3, detail: 'the record names the url field twice ("URL" and "url")' },
      { line: 4, detail: 'the record names the visits field twice ("visits" and "clicks")' },
      { line: 5, detail: 'the record names the created field twice ("created_at" and "timestamp")' },
    ],
  });
  const exported = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  assert.deepEqual(
    exported.body
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { original_url: string }).original_url),
    ['https://example.com/ok'],
  );
});
