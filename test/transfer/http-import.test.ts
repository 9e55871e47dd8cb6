/**
 * POST /api/import over HTTP: both formats, the exports of other shorteners, malformed rows
 * reported by line, and the refusals (403, 415, 413, a bad header).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800_000;

async function post(h: Harness, type: string, body: string | Buffer, key = KEY) {
  return h.req('/api/import', { method: 'POST', headers: { 'content-type': type, 'x-api-key': key }, body });
}

async function records(h: Harness): Promise<Record<string, unknown>[]> {
  const r = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  return r.body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('JSON Lines: records are stored as given, in file order, and reported', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW, baseUrl: 'https://s.example' });
  const lines = [
    { short_code: 'first1', original_url: 'https://example.com/a', created_at: 1700000000, visit_count: 7, retention_days: 0, max_visits: null },
    { short_code: 'second', original_url: 'https://example.com/b', created_at: 1700000100, visit_count: 0, retention_days: 3650 },
    { original_url: 'https://example.com/c' },
  ];
  const r = await post(h, 'application/x-ndjson', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(r.body), { imported: 3, skipped: 0, errors: [] });
  const got = await records(h);
  assert.deepEqual(got.slice(0, 2), [
    {
      short_code: 'first1',
      domain: null,
      short_url: 'https://s.example/first1',
      original_url: 'https://example.com/a',
      created_at: 1700000000,
      visit_count: 7,
      untracked_visits: 7,
      retention_days: 0,
      max_visits: null,
      expires_at: null,
      title: null,
      tags: [],
      author: null,
      ...NO_ROUTING,
    },
    {
      short_code: 'second',
      domain: null,
      short_url: 'https://s.example/second',
      original_url: 'https://example.com/b',
      created_at: 1700000100,
      visit_count: 0,
      untracked_visits: 0,
      retention_days: 3650,
      max_visits: null,
      expires_at: 1700000100 + 3650 * 86400,
      title: null,
      tags: [],
      author: null,
      ...NO_ROUTING,
    },
  ]);
  const third = got[2]!;
  assert.match(String(third['short_code']), /^[1-9A-HJ-NP-Za-km-z]{6}$/, 'a generated code');
  assert.equal(third['created_at'], NOW / 1000, 'absent created_at is now');
  assert.equal(third['visit_count'], 0);
});

test('a CSV in the Shlink web client export shape loads as it is', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const csv =
    'createdAt,title,shortUrl,domain,shortCode,longUrl,tags,visits\r\n' +
    '2023-11-02T10:15:30+01:00,"Docs, the ""good"" ones",https://s.test/docs01,s.test,docs01,https://example.com/docs?a=1&b=2,"a,b",12\r\n' +
    '2024-01-05T00:00:00Z,,https://s.test/Blog-x,s.test,Blog-x,https://example.com/blog,,0\r\n';
  const r = await post(h, 'text/csv', csv);
  assert.deepEqual(JSON.parse(r.body), { imported: 2, skipped: 0, errors: [] });
  const got = await records(h);
  assert.deepEqual(
    got.map((g) => [g['short_code'], g['original_url'], g['created_at'], g['visit_count']]),
    [
      ['docs01', 'https://example.com/docs?a=1&b=2', Date.UTC(2023, 10, 2, 9, 15, 30) / 1000, 12],
      ['Blog-x', 'https://example.com/blog', Date.UTC(2024, 0, 5) / 1000, 0],
    ],
  );
});

test('a CSV in the YOURLS export shape loads as it is (timestamps read as UTC)', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const csv =
    'keyword,url,title,timestamp,ip,clicks\n' +
    'ozh001,http://ozh.org/,Ozh,2009-09-25 15:04:05,127.0.0.1,42\n' +
    'yourls,https://yourls.org/docs,"YOURLS\nDocs",2020-02-29 23:59:59,::1,0\n';
  const r = await post(h, 'text/csv; charset=utf-8', csv);
  assert.deepEqual(JSON.parse(r.body), { imported: 2, skipped: 0, errors: [] });
  const got = await records(h);
  assert.deepEqual(
    got.map((g) => [g['short_code'], g['original_url'], g['created_at'], g['visit_count']]),
    [
      ['ozh001', 'http://ozh.org/', Date.UTC(2009, 8, 25, 15, 4, 5) / 1000, 42],
      ['yourls', 'https://yourls.org/docs', Date.UTC(2020, 1, 29, 23, 59, 59) / 1000, 0],
    ],
  );
});

test('malformed rows are skipped and reported by their line; every other row is stored', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW, baseUrl: 'https://s.example' });
  await post(h, 'application/x-ndjson', JSON.stringify({ short_code: 'taken1', original_url: 'https://example.com/t' }));
  const csv = [
    'short_code,original_url,created_at,visit_count,retention_days,max_visits', // 1
    'good01,https://example.com/1,1700000000,1,0,', // 2
    'bad url,https://example.com/2,,,,', // 3
    'good02,ftp://example.com/3,,,,', // 4
    'taken1,https://example.com/4,,,,', // 5
    'good03,"https://example.com/5', // 6: a quoted field over two lines
    'x",1700000000,0,0,', // 7
    'old001,https://example.com/6,1600000000,0,1,', // 8: expired
    'good04,https://s.example/abcdef,,,,', // 9: a link to this service
    'good05,https://example.com/7,yesterday,,,', // 10
    'good06,https://example.com/8,,-1,,', // 11
    'good07,https://example.com/9,,,40000,', // 12
    'good08,https://example.com/10,,,,0', // 13
    'good09,https://example.com/11', // 14: too few fields
    'good10,"https://example.com/12"x,,,,', // 15
    'good11,https://example.com/13,,,,5', // 16
  ].join('\n');
  const r = await post(h, 'text/csv', csv);
  assert.equal(r.status, 200);
  const report = JSON.parse(r.body) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
  assert.deepEqual(
    report.errors.map((e) => e.line),
    [3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15],
  );
  assert.equal(report.imported, 3);
  assert.equal(report.skipped, 11);
  const byLine = new Map(report.errors.map((e) => [e.line, e.detail]));
  assert.equal(byLine.get(5), 'code already in use');
  assert.equal(byLine.get(8), 'the link has already expired (created_at + retention_days is past)');
  assert.equal(byLine.get(9), 'url points at this shortener itself; a short link to a short link would loop');
  assert.equal(byLine.get(14), 'the row has 2 fields, the header has 6');
  assert.equal(byLine.get(15), 'a quoted field must be followed by a comma or the end of the line');
  assert.deepEqual(
    (await records(h)).map((g) => [g['short_code'], g['original_url']]),
    [
      ['taken1', 'https://example.com/t'],
      ['good01', 'https://example.com/1'],
      ['good03', 'https://example.com/5x'], // the WHATWG parser drops a newline
      ['good11', 'https://example.com/13'],
    ],
  );
});

test('JSON Lines: a bad line is reported by its line number, blank lines count', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const body = [
    '{"code":"aaaaaa","url":"https://example.com/1"}',
    '',
    '{not json',
    '[1]',
    '{"url":"https://example.com/2","retention_days":"3"}',
    '{"url":"https://example.com/3","shortCode":"bbbbbb","clicks":2}',
  ].join('\r\n');
  const r = await post(h, 'application/x-ndjson', body);
  assert.deepEqual(JSON.parse(r.body), {
    imported: 2,
    skipped: 3,
    errors: [
      { line: 3, detail: 'not valid JSON' },
      { line: 4, detail: 'a line must hold a JSON object' },
      { line: 5, detail: 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)' },
    ],
  });
  assert.deepEqual(
    (await records(h)).map((g) => [g['short_code'], g['visit_count']]),
    [
      ['aaaaaa', 0],
      ['bbbbbb', 2],
    ],
  );
});

test('only the first 100 errors are listed; skipped counts them all', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const body = Array.from({ length: 250 }, (_, i) => `{"url":"nope-${i}"}`).join('\n');
  const report = JSON.parse((await post(h, 'application/x-ndjson', body)).body) as { skipped: number; errors: { line: number }[] };
  assert.equal(report.skipped, 250);
  assert.deepEqual(
    report.errors.map((e) => e.line),
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
});

test('refusals: 403 empty before anything, 415 for another type, 413 over 256 MiB, 400 for a CSV without a url column', async (t) => {
  const h = await start(t, { apiKeys: [KEY] });
  for (const key of ['', 'wrong']) {
    const r = await post(h, 'text/plain', 'x', key);
    assert.equal(r.status, 403);
    assert.equal(r.body, '');
  }
  const noKeys = await start(t, {});
  assert.equal((await post(noKeys, 'text/csv', 'url\nhttps://example.com/', KEY)).status, 403);

  for (const type of ['text/plain', 'application/json', '']) {
    const r = await h.req('/api/import', { method: 'POST', headers: type ? { 'content-type': type, 'x-api-key': KEY } : { 'x-api-key': KEY }, body: '{}' });
    assert.equal(r.status, 415, type);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.match((JSON.parse(r.body) as { detail: string }).detail, /send application\/x-ndjson \(JSON Lines\) or text\/csv$/);
  }
  const big = await h
    .req('/api/import', {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'x-api-key': KEY, 'content-length': String(256 * 1024 * 1024 + 1) },
      body: 'url\n',
    })
    .catch((err: unknown) => err as Error);
  assert.ok(!(big instanceof Error), 'answered');
  assert.equal(big.status, 413);
  assert.deepEqual(JSON.parse(big.body), { detail: 'request body is larger than 256 MiB' });
  assert.equal(big.headers.connection, 'close');

  const header = await post(h, 'text/csv', 'name,title\nx,y\n');
  assert.equal(header.status, 400);
  assert.deepEqual(JSON.parse(header.body), { detail: 'line 1: the header has no url column (one of original_url, url, long_url, longUrl, Long URL)' });
  assert.equal(h.shortener.count, 0);
});
