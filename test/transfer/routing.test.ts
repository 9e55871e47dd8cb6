/**
 * A move keeps every link's routing (docs/api.md, export and import): the export's routing columns
 * (`rules` as JSON, `forward_query`, `valid_since`, `valid_until`, `fallback_url`, `password_hash`),
 * the import reading them back through the routing check of every door, the refusals naming their
 * field, and a protected link still asking for the same password on the instance it moved to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDomains } from '../../src/links/domains.ts';
import { hashPassword } from '../../src/links/link-password.ts';
import type { LinkRecord, LinkStore, Routing } from '../../src/store/link-store.ts';
import { columnsOf, fieldOf } from '../../src/transfer/columns.ts';
import { CSV_COLUMNS, exportText } from '../../src/transfer/export.ts';
import { importLinks, type ImportResult } from '../../src/transfer/import.ts';
import { checkRow, type RowValues } from '../../src/transfer/row.ts';
import { codeOf, start, type Harness, type Reply } from '../support/helpers.ts';

const RULES = { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 };
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;
const KEY = 'routing-move-key';
const PASSWORD = 'correct horse battery';
const HASH_FORM = /^scrypt\$N=16384,r=8,p=1\$[\w-]{22}\$[\w-]{43}$/;

/** Rules whose CSV cell a spreadsheet must not run: one value starts a formula. */
const STORED_RULES = [
  { url: 'https://example.com/ios', conditions: [{ type: 'device', key: null, value: 'ios' }] },
  { url: 'https://example.com/campaign', conditions: [{ type: 'query-param', key: 'ref', value: '=HYPERLINK("x")' }] },
];

async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

const checked = (values: RowValues, textual: boolean) => checkRow(values, RULES, NOW, textual);

function routingOf(values: RowValues, textual: boolean): Routing | undefined {
  const row = checked(values, textual);
  assert.ok(row.ok, row.ok ? '' : row.detail);
  return row.record.routing ?? undefined;
}

function refusal(values: RowValues, textual: boolean): string {
  const row = checked(values, textual);
  assert.equal(row.ok, false, `refused: ${JSON.stringify(values)}`);
  return row.ok ? '' : row.detail;
}

test('the import reads every routing column: CSV text (rules as JSON, words, digits, ISO 8601) and JSON values', async () => {
  const hash = await hashPassword(PASSWORD);
  const expected: Routing = {
    rules: STORED_RULES,
    forwardQuery: true,
    validSince: 1700000000,
    validUntil: Date.UTC(2030, 0, 1) / 1000,
    fallbackUrl: 'https://example.com/later',
    passwordHash: hash,
  };
  const csv = routingOf(
    {
      url: 'https://example.com/',
      rules: JSON.stringify(STORED_RULES),
      forwardQuery: 'true',
      validSince: '1700000000',
      validUntil: '2030-01-01T00:00:00Z',
      fallbackUrl: 'https://example.com/later',
      passwordHash: hash,
    },
    true,
  );
  assert.deepEqual(csv, expected);
  const json = routingOf(
    {
      url: 'https://example.com/',
      rules: STORED_RULES,
      forwardQuery: true,
      validSince: 1700000000,
      validUntil: Date.UTC(2030, 0, 1) / 1000,
      fallbackUrl: 'https://example.com/later',
      passwordHash: hash,
      passwordProtected: true,
    },
    false,
  );
  assert.deepEqual(json, expected);
  // The none of each field, as the export writes it: no routing at all on the record.
  const noneCsv = checked(
    { url: 'https://example.com/', rules: '', forwardQuery: 'false', validSince: '', validUntil: '', fallbackUrl: '', passwordHash: '' },
    true,
  );
  assert.ok(noneCsv.ok);
  assert.equal(Object.hasOwn(noneCsv.record, 'routing'), false);
  const noneJson = checked(
    { url: 'https://example.com/', rules: [], forwardQuery: false, validSince: null, validUntil: null, fallbackUrl: null, passwordProtected: false },
    false,
  );
  assert.ok(noneJson.ok);
  assert.equal(Object.hasOwn(noneJson.record, 'routing'), false);
});

test('a refused routing value refuses the row, with a reason naming the field', async () => {
  const url = 'https://example.com/';
  const cases: [RowValues, boolean, RegExp][] = [
    [{ url, rules: '[{"url":' }, true, /^rules: must be the rules as JSON text/],
    [{ url, rules: '{"url":"https://example.com/"}' }, true, /^rules: must be an array/],
    [
      { url, rules: [{ url: 'https://example.com/x', conditions: [{ type: 'planet', key: null, value: 'mars' }] }] },
      false,
      /^rules\[0\]\.conditions\[0\]\.type/,
    ],
    [{ url, rules: [{ url: 'ftp://example.com/x', conditions: [{ type: 'device', key: null, value: 'ios' }] }] }, false, /^rules\[0\]\.url/],
    [{ url, forwardQuery: 'maybe' }, true, /^forward_query must be true or false/],
    [{ url, forwardQuery: 'true' }, false, /^forward_query must be true or false/],
    [{ url, validSince: 'soon' }, true, /^valid_since must be Unix seconds, an ISO 8601 time/],
    [{ url, validUntil: -5 }, false, /^valid_until must be an instant/],
    [{ url, validSince: '1800000000', validUntil: '1700000000' }, true, /^valid_since must be before valid_until/],
    [{ url, fallbackUrl: 'javascript:alert(1)' }, true, /^fallback_url: /],
    [{ url, fallbackUrl: 'https://s.example/loop01' }, true, /^fallback_url: /],
    [{ url, passwordHash: 'secret-password' }, true, /^password_hash must be a hash this service wrote/],
    [
      { url, passwordHash: 'scrypt$N=1048576,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      false,
      /^password_hash must be a hash/,
    ],
    [{ url, password: 'correct horse' }, true, /^password: an import takes only password_hash/],
    [{ url, password: 'correct horse', passwordHash: await hashPassword(PASSWORD) }, false, /^password: an import takes only password_hash/],
    [{ url, passwordProtected: true }, false, /^password_protected is true but password_hash is missing/],
    [{ url, passwordProtected: 'TRUE' }, true, /^password_protected is true but password_hash is missing/],
  ];
  for (const [values, textual, detail] of cases) {
    const got = refusal(values, textual);
    assert.match(got, detail, JSON.stringify(values));
    assert.ok(!got.includes('correct horse'), 'a refusal never repeats a password');
  }
  // An empty or null password is none, not a refusal.
  assert.ok(checked({ url, password: '' }, true).ok);
  assert.ok(checked({ url, password: null }, false).ok);
});

test('the routing columns by name: the names the export writes, and Shlink’s for three; two columns for one field are refused', () => {
  for (const [name, field] of [
    ['rules', 'rules'],
    ['forward_query', 'forwardQuery'],
    ['forwardQuery', 'forwardQuery'],
    ['valid_since', 'validSince'],
    ['validSince', 'validSince'],
    ['VALID_UNTIL', 'validUntil'],
    ['validUntil', 'validUntil'],
    ['fallback_url', 'fallbackUrl'],
    ['password_hash', 'passwordHash'],
    ['password', 'password'],
    ['password_protected', 'passwordProtected'],
  ] as const) {
    assert.equal(fieldOf(name), field, name);
  }
  assert.equal(columnsOf(['url', 'valid_since', 'validSince']), 'the header names the validSince column twice ("valid_since" and "validSince")');
  // Every column the export writes is read back by the import, except the ones that follow from others.
  const derived = new Set(['short_url']);
  assert.deepEqual(
    CSV_COLUMNS.filter((c) => fieldOf(c) === undefined),
    [...derived],
  );
});

const RECORDS: LinkRecord[] = [
  {
    code: 'routed',
    url: 'https://example.com/plain',
    createdAt: 1714000000,
    retentionDays: 0,
    visits: 0,
    untracked: 0,
    maxVisits: null,
    routing: { rules: STORED_RULES, forwardQuery: true, validSince: 1714000000, validUntil: 1800000000, fallbackUrl: 'https://example.com/later' },
  },
  { code: 'bare01', url: 'https://example.com/bare', createdAt: 1714000001, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null },
];

async function exported(records: readonly LinkRecord[], format: 'csv' | 'jsonl'): Promise<string> {
  let text = '';
  for await (const piece of exportText(each(records), format, createDomains(RULES.baseUrl))) text += piece;
  return text;
}

async function imported(body: string, format: 'csv' | 'jsonl'): Promise<{ result: ImportResult; stored: LinkRecord[] }> {
  const stored: LinkRecord[] = [];
  const store = { insert: (rec: LinkRecord) => (stored.push(rec), true) } as unknown as LinkStore;
  const result = await importLinks(each([body]), format, { store, rules: RULES, now: () => NOW * 1000, randomCode: () => 'unused' });
  return { result, stored };
}

test('the export writes the routing columns last; CSV rules are one JSON cell, never taken for a formula', async () => {
  const hash = await hashPassword(PASSWORD);
  const records: LinkRecord[] = [...RECORDS, { ...RECORDS[1]!, code: 'locked', routing: { passwordHash: hash } }];
  assert.deepEqual(CSV_COLUMNS.slice(-6), ['rules', 'forward_query', 'valid_since', 'valid_until', 'fallback_url', 'password_hash']);
  const csv = (await exported(records, 'csv')).split('\r\n');
  assert.equal(csv[0], CSV_COLUMNS.join(','));
  const rulesCell = `"${JSON.stringify(STORED_RULES).replaceAll('"', '""')}"`;
  assert.equal(
    csv[1],
    `routed,https://s.example/routed,https://example.com/plain,1714000000,0,0,,,,,,${rulesCell},true,1714000000,1800000000,https://example.com/later,`,
  );
  assert.equal(csv[2], 'bare01,https://s.example/bare01,https://example.com/bare,1714000001,0,0,,,,,,,false,,,,');
  // The hash holds commas (`N=…,r=…,p=…`), so its cell is quoted.
  assert.equal(csv[3], `locked,https://s.example/locked,https://example.com/bare,1714000001,0,0,,,,,,,false,,,,"${hash}"`);
  const lines = (await exported(records, 'jsonl'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(lines[0]!['rules'], STORED_RULES);
  assert.equal(lines[0]!['forward_query'], true);
  assert.equal(Object.hasOwn(lines[0]!, 'password_hash'), false, 'a line of a link without a password is exactly its record');
  assert.deepEqual([lines[2]!['password_protected'], lines[2]!['password_hash']], [true, hash]);
  assert.deepEqual(Object.keys(lines[2]!).slice(-2), ['password_protected', 'password_hash']);
  for (const format of ['csv', 'jsonl'] as const) {
    const { result, stored } = await imported(await exported(records, format), format);
    assert.deepEqual(result, { ok: true, imported: 3, skipped: 0, errors: [] }, format);
    assert.deepEqual(stored, records, `${format}: every routing field came back as it was`);
  }
});

// Over HTTP: two instances, the link moved with the export and import routes.

const HEADERS = { 'content-type': 'application/json', 'x-api-key': KEY };

async function create(h: Harness, body: Record<string, unknown>): Promise<string> {
  const r = await h.req('/api/shorten', { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

async function exportOf(h: Harness, format: 'jsonl' | 'csv'): Promise<string> {
  const r = await h.req(`/api/export?format=${format}`, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, r.body);
  return r.body;
}

async function importInto(h: Harness, format: 'jsonl' | 'csv', body: string): Promise<unknown> {
  const type = format === 'csv' ? 'text/csv' : 'application/x-ndjson';
  const r = await h.req('/api/import', { method: 'POST', headers: { 'content-type': type, 'x-api-key': KEY }, body });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}

const ROUTING_VIEW = ['rules', 'forward_query', 'valid_since', 'valid_until', 'fallback_url', 'password_protected'] as const;

async function routingShown(h: Harness, code: string): Promise<Record<string, unknown>> {
  const r = await h.req(`/api/urls/${code}`, { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200, r.body);
  const rec = JSON.parse(r.body) as Record<string, unknown>;
  return Object.fromEntries(ROUTING_VIEW.map((f) => [f, rec[f]]));
}

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

/** Where `GET /<path>` sends a visitor: its status and Location. */
async function answer(h: Harness, path: string, headers: Record<string, string> = {}): Promise<[number, string | undefined]> {
  const r: Reply = await h.req(path, { headers });
  return [r.status, r.headers.location];
}

/** An instance with a routed link, a password-protected one and a plain one. */
async function source(t: Parameters<typeof start>[0]): Promise<{ h: Harness; codes: { routed: string; locked: string; plain: string } }> {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW * 1000, baseUrl: 'https://s.example', logLevel: 'silent' });
  const routed = await create(h, {
    url: 'https://example.com/plain',
    code: 'routed',
    rules: STORED_RULES,
    forward_query: true,
    valid_since: NOW - 3600,
    valid_until: NOW + 86400,
    fallback_url: 'https://example.com/later',
  });
  const locked = await create(h, { url: 'https://example.com/secret', code: 'locked', password: PASSWORD });
  const plain = await create(h, { url: 'https://example.com/open' });
  return { h, codes: { routed, locked, plain } };
}

for (const format of ['jsonl', 'csv'] as const) {
  test(`${format}: export → import into a fresh instance keeps every routing field, and the password asks for the same password`, async (t) => {
    const { h: from, codes } = await source(t);
    const file = await exportOf(from, format);
    assert.ok(!file.includes(PASSWORD), 'an export carries the hash, never the password');
    const hashes = file.match(/scrypt\$N=\d+,r=\d+,p=\d+\$[\w-]+\$[\w-]+/g) ?? [];
    assert.equal(hashes.length, 1, file);
    assert.match(hashes[0]!, HASH_FORM);
    const to = await start(t, { apiKeys: [KEY], now: () => NOW * 1000, baseUrl: 'https://s.example', logLevel: 'silent' });
    assert.deepEqual(await importInto(to, format, file), { imported: 3, skipped: 0, errors: [] });
    // The same file again, byte for byte, in both formats: the hash included.
    assert.equal(await exportOf(to, format), file);
    assert.equal(await exportOf(to, format === 'csv' ? 'jsonl' : 'csv'), await exportOf(from, format === 'csv' ? 'jsonl' : 'csv'));
    for (const code of Object.values(codes)) assert.deepEqual(await routingShown(to, code), await routingShown(from, code), code);
    assert.deepEqual(await routingShown(to, codes.routed), {
      rules: STORED_RULES,
      forward_query: true,
      valid_since: NOW - 3600,
      valid_until: NOW + 86400,
      fallback_url: 'https://example.com/later',
      password_protected: false,
    });
    assert.equal((await routingShown(to, codes.locked))['password_protected'], true);
    // The moved links behave as they did: the password, the rules, the forwarded query.
    assert.deepEqual(await answer(to, `/${codes.locked}`, { 'x-link-password': PASSWORD }), [302, 'https://example.com/secret']);
    assert.equal((await answer(to, `/${codes.locked}`, { 'x-link-password': 'not the password' }))[0], 401);
    assert.equal((await answer(to, `/${codes.locked}`))[0], 200, 'without the password: the form');
    const iphone = await answer(to, `/${codes.routed}?a=1`, { 'user-agent': IPHONE });
    assert.equal(iphone[0], 302);
    assert.match(String(iphone[1]), /^https:\/\/example\.com\/ios\?(.*&)?a=1/);
    assert.deepEqual(await answer(to, `/${codes.routed}?a=1`, { 'user-agent': IPHONE }), await answer(from, `/${codes.routed}?a=1`, { 'user-agent': IPHONE }));
    const campaign = `/${codes.routed}?ref=${encodeURIComponent('=HYPERLINK("x")')}`;
    const there = await answer(to, campaign);
    assert.equal(there[0], 302);
    assert.match(String(there[1]), /^https:\/\/example\.com\/campaign\?/);
    assert.deepEqual(there, await answer(from, campaign));
    assert.deepEqual(await answer(to, `/${codes.plain}`), [302, 'https://example.com/open']);
  });
}

test('an import refuses a plain password, a protected record without its hash, and a hash not of this service, each on its line', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW * 1000, baseUrl: 'https://s.example', logLevel: 'silent' });
  const csv = [
    'url,code,password,password_hash,rules', // 1
    'https://example.com/1,plain1,hunter2hunter2,,', // 2
    'https://example.com/2,hashed,,not-a-hash,', // 3
    'https://example.com/3,badrul,,,"[{""url"":"', // 4: not JSON
    `https://example.com/4,rules1,,,"${JSON.stringify([{ url: 'https://example.com/x', conditions: [{ type: 'device', key: null, value: 'mars' }] }]).replaceAll('"', '""')}"`, // 5
    'https://example.com/5,good01,,,', // 6
  ].join('\r\n');
  const report = (await importInto(h, 'csv', csv)) as { imported: number; skipped: number; errors: { line: number; detail: string }[] };
  assert.equal(report.imported, 1);
  assert.equal(report.skipped, 4);
  assert.deepEqual(
    report.errors.map((e) => [e.line, e.detail.slice(0, e.detail.search(/[ :]/))]),
    [
      [2, 'password'],
      [3, 'password_hash'],
      [4, 'rules'],
      [5, 'rules[0].conditions[0].value'],
    ],
  );
  assert.ok(!JSON.stringify(report).includes('hunter2'), 'the report never repeats a password');
  const jsonl = [
    { url: 'https://example.com/6', code: 'prot01', password_protected: true },
    { url: 'https://example.com/7', code: 'prot02', password_protected: true, password_hash: await hashPassword(PASSWORD) },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
  const second = (await importInto(h, 'jsonl', jsonl)) as { imported: number; errors: { line: number; detail: string }[] };
  assert.equal(second.imported, 1);
  assert.deepEqual(
    second.errors.map((e) => e.line),
    [1],
  );
  assert.match(second.errors[0]!.detail, /^password_protected is true but password_hash is missing/);
  assert.deepEqual(await answer(h, '/prot02', { 'x-link-password': PASSWORD }), [302, 'https://example.com/7']);
  assert.equal((await h.req('/api/urls/plain1', { headers: { 'x-api-key': KEY } })).status, 404, 'the row with a password was not stored');
});
