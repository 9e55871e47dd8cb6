/**
 * POST /api/visits/import over HTTP: an export imported into a fresh instance (links first) gives
 * back identical export bytes, events in the same order, and the same visit counts; rows for
 * unknown codes and invalid rows are skipped and reported by line; the refusals (403, 401, 415, 400).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

async function post(h: Harness, type: string, body: string, query = '', headers: Record<string, string> = {}) {
  return h.req(`/api/visits/import${query}`, { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY, ...headers }, body });
}

const get = async (h: Harness, path: string): Promise<string> => {
  const r = await h.req(path, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return r.body;
};

function clocked(t: Parameters<typeof start>[0]) {
  const clock = { ms: NOW * 1000 };
  return { clock, open: () => start(t, { apiKeys: [KEY], now: () => clock.ms, baseUrl: 'https://s.example' }) };
}

test('export, then links and visits imported into a fresh instance: identical export bytes, events in the same order, same counts', async (t) => {
  const { clock, open } = clocked(t);
  const a = await open();
  // A link imported with 3 visits of its own (untracked), then visited; links created here.
  assert.equal(
    (
      await a.req('/api/import', {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
        body: '{"short_code":"old111","url":"https://example.com/old","created_at":1700000000,"visit_count":3}\n',
      })
    ).status,
    200,
  );
  for (const code of ['first1', 'second']) {
    assert.equal(
      (
        await a.req('/api/shorten', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: `https://example.com/${code}`, code }),
        })
      ).status,
      201,
    );
  }
  // Several events in one second, across links and within one: their order must survive.
  const visits: [string, number, Record<string, string>][] = [
    ['second', 0, { 'user-agent': FIREFOX, referer: 'https://a.example/' }],
    ['first1', 0, { 'user-agent': IPHONE }],
    ['second', 0, { 'user-agent': 'curl/8.5.0' }],
    ['old111', 0, { 'user-agent': FIREFOX, referer: 'https://b.example/' }],
    ['first1', 30, { 'user-agent': FIREFOX, 'sec-gpc': '1' }],
    ['second', 3600, { 'user-agent': IPHONE, referer: 'https://a.example/x' }],
    ['first1', 86400, {}],
  ];
  for (const [code, after, headers] of visits) {
    clock.ms = (NOW + after) * 1000;
    assert.equal((await a.req(`/${code}`, { headers })).status, 302);
  }
  clock.ms = (NOW + 2 * 86400) * 1000;
  const links = await get(a, '/api/export');
  const jsonl = await get(a, '/api/visits/export');
  const csv = await get(a, '/api/visits/export?format=csv');
  assert.equal(jsonl.split('\n').filter(Boolean).length, visits.length);

  for (const [format, type, file] of [
    ['jsonl', 'application/x-ndjson', jsonl],
    ['csv', 'text/csv', csv],
  ] as const) {
    const b = await open();
    assert.equal(
      (await b.req('/api/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY }, body: links })).status,
      200,
    );
    const r = await post(b, type, file);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { imported: visits.length, skipped: 0, errors: [] }, format);
    assert.equal(await get(b, '/api/visits/export'), jsonl, `${format}: the same events, in the same order`);
    assert.equal(await get(b, '/api/visits/export?format=csv'), csv, format);
    // Each imported event took the place of one imported untracked visit: the counts are A's.
    assert.equal(await get(b, '/api/export'), links, `${format}: the same links and visit counts`);
    // Imported again: old111 still has untracked visits (its 3 imported ones) for its event to
    // take; the others have none left, so each of their events adds a visit.
    assert.deepEqual(JSON.parse((await post(b, type, file)).body), { imported: visits.length, skipped: 0, errors: [] });
    const counts = Object.fromEntries(
      (await get(b, '/api/export'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { short_code: string; visit_count: number })
        .map((r) => [r.short_code, r.visit_count]),
    );
    assert.deepEqual(counts, { old111: 4, first1: 3 + 3, second: 3 + 3 });
  }
});

test('unknown codes and invalid rows are skipped and reported by line; the others are recorded, in order', async (t) => {
  const { open } = clocked(t);
  const h = await open();
  assert.equal(
    (await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/","code":"known1"}' }))
      .status,
    201,
  );
  const csv = [
    'time,short_code,bot,referrer,extra', // 1: any order, unknown columns ignored, absent ones null
    `${NOW - 10},known1,false,Example.COM,x`, // 2
    `${NOW - 9},nolink,false,,x`, // 3: unknown code
    `${NOW - 8},known1,maybe,,x`, // 4
    '', // 5: blank
    `${NOW - 7},known1,true,a b,x`, // 6
    `${NOW - 6},known1,true`, // 7: too few fields
    `2024-05-01T11:59:55Z,known1,true,,x`, // 8
  ].join('\n');
  const r = await post(h, 'text/csv', csv);
  assert.equal(r.status, 200, r.body);
  const report = JSON.parse(r.body) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
  assert.deepEqual(report, {
    imported: 2,
    skipped: 4,
    errors: [
      { line: 3, detail: 'no live link has this short_code (import the links first)' },
      { line: 4, detail: 'bot must be true or false' },
      {
        line: 6,
        detail:
          'referrer must be a host name as a visit records it (news.example, xn--bcher-kva.example, 192.0.2.1, [2001:db8::1]): ' +
          'letters, digits, - and _ in labels separated by dots, or an IPv6 address in brackets, up to 253 characters; or empty',
      },
      { line: 7, detail: 'the row has 3 fields, the header has 5' },
    ],
  });
  assert.equal(
    await get(h, '/api/visits/export'),
    `{"short_code":"known1","time":${NOW - 10},"referrer":"example.com","country":null,"browser":null,"os":null,"device":null,"bot":false,"domain":null,"rule":null}\n` +
      `{"short_code":"known1","time":${NOW - 5},"referrer":null,"country":null,"browser":null,"os":null,"device":null,"bot":true,"domain":null,"rule":null}\n`,
  );

  const lines = [
    '{"short_code":"known1","time":1}',
    '{nope',
    '[]',
    '{"short_code":"known1","time":2,"short_code ":"x"}',
    '{"short_code":"gone99","time":3}',
  ].join('\r\n');
  assert.deepEqual(JSON.parse((await post(h, 'application/x-ndjson', lines)).body), {
    imported: 1,
    skipped: 4,
    errors: [
      { line: 2, detail: 'not valid JSON' },
      { line: 3, detail: 'a line must hold a JSON object' },
      { line: 4, detail: 'the record names the code field twice ("short_code" and "short_code ")' },
      { line: 5, detail: 'no live link has this short_code (import the links first)' },
    ],
  });
  // from_line: the rows before it are neither recorded nor reported.
  assert.deepEqual(JSON.parse((await post(h, 'application/x-ndjson', lines, '?from_line=4')).body), {
    imported: 0,
    skipped: 2,
    errors: [
      { line: 4, detail: 'the record names the code field twice ("short_code" and "short_code ")' },
      { line: 5, detail: 'no live link has this short_code (import the links first)' },
    ],
  });
});

test('refusals: 403 empty before anything, 401 at the gate, 415 for another type, 400 for a bad header or from_line', async (t) => {
  const h = await start(t, { apiKeys: [KEY], apiToken: 'tok' });
  const bearer = { authorization: 'Bearer tok' };
  for (const key of ['', 'wrong']) {
    const r = await post(h, 'text/plain', 'x', '', { ...bearer, 'x-api-key': key });
    assert.equal(r.status, 403);
    assert.equal(r.body, '');
  }
  const gated = await post(h, 'text/csv', 'short_code,time\n');
  assert.equal(gated.status, 401);
  assert.equal(gated.headers['www-authenticate'], 'Bearer');
  for (const type of ['text/plain', 'application/json']) {
    const r = await post(h, type, '{}', '', bearer);
    assert.equal(r.status, 415, type);
    assert.deepEqual(JSON.parse(r.body), { detail: `unsupported content type ${type}; send application/x-ndjson (JSON Lines) or text/csv` });
  }
  const header = await post(h, 'text/csv', 'short_code,bot\nx,true\n', '', bearer);
  assert.equal(header.status, 400);
  assert.deepEqual(JSON.parse(header.body), {
    detail: 'line 1: the header has no time column (a visits import starts with short_code,time,referrer,country,browser,os,device,bot,domain,rule)',
  });
  const from = await post(h, 'text/csv', 'short_code,time\n', '?from_line=0', bearer);
  assert.equal(from.status, 400);
  assert.deepEqual(JSON.parse(from.body), { detail: 'from_line must be an integer of 1 or more (the line to resume the import from)' });
  const ok = await post(h, 'text/csv', 'short_code,time\n', '', bearer);
  assert.deepEqual(JSON.parse(ok.body), { imported: 0, skipped: 0, errors: [] });
});
