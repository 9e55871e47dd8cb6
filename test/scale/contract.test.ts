/**
 * The HTTP contract (docs/api.md) over three instances on one PostgreSQL database, behind a
 * round-robin proxy: each request of a test goes to the next instance in turn, so every change is
 * made by one process and read back by the others. Statuses, bodies, content types and headers are
 * checked exactly, as a client behind a load balancer sees them.
 *
 * Left out here, because they are about one process's own state and stay per process by design
 * (docs/scale-out.md): log lines, the first-use warning of a deprecated usage, the data dir's
 * lock, and shutdown. Those are tested on one process in test/app, test/cli and test/store.
 *
 * Then the races across instances: one winner among concurrent creates of one code and among
 * concurrent deletes, exact visit limits and exact visit counts.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { qrSvg } from '../../src/qr/svg.ts';
import { CORS_HEADERS, SECURITY_HEADERS } from '../../src/http/headers.ts';
import { codeOf, request, type Reply, type RequestOptions } from '../support/helpers.ts';
import { startInstances, type Instances } from '../support/instances.ts';
import { pgServer } from '../support/pg.ts';
import type { UrlRecord as LinkRecord } from '../../src/links/record.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const TOKEN = 'scale-token';
const KEY = 'scale-admin';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const ADMIN = { ...AUTH, 'x-api-key': KEY };
const JSON_TYPE = 'application/json';
const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

const server = await pgServer();
/** The three instances, started once for the file (each test uses its own URLs and codes). */
const deployment =
  server === undefined
    ? undefined
    : await startInstances(
        { after },
        {
          databaseUrl: await server.createDatabase(),
          count: 3,
          env: { API_TOKEN: TOKEN, API_KEYS: KEY, PUBLIC_REDIRECTS: 'true', LOG_LEVEL: 'info' },
        },
      );

const skip = server === undefined ? 'PostgreSQL is not installed' : false;

/** One request through the proxy: it lands on the next instance. */
function via(d: Instances, path: string, options: RequestOptions = {}): Promise<Reply> {
  return request(d.proxy.port, path, options);
}

function create(d: Instances, body: Record<string, unknown>): Promise<Reply> {
  return via(d, '/api/shorten', { method: 'POST', headers: { ...AUTH, 'content-type': JSON_TYPE }, body: JSON.stringify(body) });
}

async function created(d: Instances, body: Record<string, unknown>): Promise<string> {
  const r = await create(d, body);
  assert.equal(r.status, 201, r.body);
  return codeOf(r);
}

async function recordOf(d: Instances, code: string): Promise<LinkRecord> {
  const r = await via(d, `/api/urls/${code}`, { headers: AUTH });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], JSON_TYPE);
  return JSON.parse(r.body) as LinkRecord;
}

/** Every response carries the CORS and security headers (docs/security.md), through any instance. */
function assertBaseHeaders(r: Reply, what: string): void {
  for (const [name, value] of [...CORS_HEADERS, ...SECURITY_HEADERS]) assert.equal(r.headers[name.toLowerCase()], value, `${what}: ${name}`);
}

/**
 * Visit counts may reach the database in batches (docs/scale-out.md): wait until `code` shows
 * `expected` visits, failing if it ever shows more, or has not reached it within 5 s.
 */
async function visitCountReaches(d: Instances, code: string, expected: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { visit_count } = await recordOf(d, code);
    assert.ok(visit_count <= expected, `visit_count ${visit_count} passed the ${expected} visits made`);
    if (visit_count === expected) return;
    assert.ok(Date.now() < deadline, `visit_count still ${visit_count}, expected ${expected}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the proxy hands the requests of one client to each instance in turn', { skip }, async () => {
  const d = deployment!;
  const before = d.servers.map((s) => d.proxy.forwarded.get(s.port) ?? 0);
  for (let i = 0; i < 6; i++) assert.equal((await via(d, '/healthz')).status, 200);
  assert.deepEqual(
    d.servers.map((s, i) => (d.proxy.forwarded.get(s.port) ?? 0) - before[i]!),
    [2, 2, 2],
  );
});

test('create on one instance, read on the next, redirect on the third', { skip }, async () => {
  const d = deployment!;
  const r = await create(d, { url: 'https://example.com/scale/a', retention_days: 30 });
  assert.equal(r.status, 201);
  assert.equal(r.headers['content-type'], TEXT);
  assert.equal(r.headers.location, r.body);
  assertBaseHeaders(r, 'create');
  const code = codeOf(r);
  assert.equal(r.body, `${d.url}/${code}`);
  assert.match(code, /^[1-9A-HJ-NP-Za-km-z]{6}$/);

  const record = await recordOf(d, code);
  assert.deepEqual(Object.keys(record), [
    'short_code',
    'domain',
    'short_url',
    'original_url',
    'created_at',
    'visit_count',
    'untracked_visits',
    'retention_days',
    'max_visits',
    'expires_at',
    'title',
    'tags',
    'author',
    'rules',
    'forward_query',
    'valid_since',
    'valid_until',
    'fallback_url',
    'password_protected',
  ]);
  assert.equal(record.short_code, code);
  assert.equal(record.domain, null);
  assert.equal(record.short_url, r.body);
  assert.equal(record.original_url, 'https://example.com/scale/a');
  assert.ok(Math.abs(record.created_at - Date.now() / 1000) < 60);
  assert.equal(record.visit_count, 0);
  assert.equal(record.retention_days, 30);
  assert.equal(record.max_visits, null);
  assert.equal(record.expires_at, record.created_at + 30 * 86400);

  const hop = await via(d, `/${code}`);
  assert.equal(hop.status, 302);
  assert.equal(hop.headers.location, 'https://example.com/scale/a');
  assert.equal(hop.headers['cache-control'], 'private, no-store');
  assert.equal(hop.body, '');
  assertBaseHeaders(hop, 'redirect');

  // HEAD answers as a GET would and counts nothing, on every instance.
  for (let i = 0; i < 3; i++) {
    const head = await via(d, `/${code}`, { method: 'HEAD' });
    assert.equal(head.status, 302);
    assert.equal(head.headers.location, 'https://example.com/scale/a');
  }
  await visitCountReaches(d, code, 1);
});

test('the three ways of sending a create, and the deprecated GET, through different instances', { skip }, async () => {
  const d = deployment!;
  const form = await via(d, '/api/shorten', {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' },
    body: `url=${encodeURIComponent('https://example.com/scale/form')}&retention_days=2`,
  });
  assert.equal(form.status, 201, form.body);
  assert.equal((await recordOf(d, codeOf(form))).retention_days, 2);
  const query = await via(d, `/api/shorten?url=${encodeURIComponent('https://example.com/scale/query')}`, { method: 'POST', headers: AUTH });
  assert.equal(query.status, 201, query.body);
  assert.equal((await recordOf(d, codeOf(query))).original_url, 'https://example.com/scale/query');
  const viaGet = await via(d, `/api/shorten?url=${encodeURIComponent('https://example.com/scale/get')}`, { headers: AUTH });
  assert.equal(viaGet.status, 201, viaGet.body);
  assert.equal(viaGet.headers.deprecation, '@1795219200');
  assert.equal(viaGet.headers.link, `<${d.url}/docs#deprecations>; rel="deprecation"`);
  assert.equal((await recordOf(d, codeOf(viaGet))).original_url, 'https://example.com/scale/get');
});

test('invalid input, the gate, unknown paths and wrong methods answer alike on every instance', { skip }, async () => {
  const d = deployment!;
  for (let i = 0; i < 3; i++) {
    const bad = await create(d, { url: 'ftp://example.com/x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['content-type'], JSON_TYPE);
    assert.ok(typeof (JSON.parse(bad.body) as { detail: unknown }).detail === 'string');

    const loop = await create(d, { url: `${d.url}/abc` });
    assert.equal(loop.status, 400, "a link to the load balancer's own short links loops");

    const noToken = await via(d, '/api/health');
    assert.equal(noToken.status, 401);
    assert.equal(noToken.headers['www-authenticate'], 'Bearer');
    assert.equal(noToken.headers['content-type'], JSON_TYPE);

    const health = await via(d, '/api/health', { headers: AUTH });
    assert.equal(health.status, 200);
    assert.equal(health.body, '{"status":"ok","service":"url-shortener"}');

    const unknown = await via(d, '/api/nothing-here', { headers: AUTH });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body, '');
    assert.equal(unknown.headers['content-length'], '0');

    const head = await via(d, '/api/shorten', { method: 'HEAD', headers: AUTH });
    assert.equal(head.status, 405);
    assert.equal(head.headers.allow, 'GET, POST');

    const ready = await via(d, '/healthz?ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.body, '{"status":"ok"}');
  }
});

test('custom codes: the first create wins, the others see the code taken; codes are case-sensitive', { skip }, async () => {
  const d = deployment!;
  const first = await create(d, { url: 'https://example.com/scale/sale', code: 'scale-Sale' });
  assert.equal(first.status, 201);
  assert.equal(first.body, `${d.url}/scale-Sale`);
  for (let i = 0; i < 3; i++) {
    const again = await create(d, { url: 'https://example.com/scale/other', code: 'scale-Sale' });
    assert.equal(again.status, 409);
    assert.equal(again.headers['content-type'], JSON_TYPE);
    assert.equal(again.body, '{"detail":"code already in use"}');
  }
  const lower = await create(d, { url: 'https://example.com/scale/lower', code: 'scale-sale' });
  assert.equal(lower.status, 201);
  assert.equal((await via(d, '/scale-Sale')).headers.location, 'https://example.com/scale/sale');
  assert.equal((await via(d, '/scale-sale')).headers.location, 'https://example.com/scale/lower');
  const reserved = await create(d, { url: 'https://example.com/scale/r', code: 'static' });
  assert.equal(reserved.status, 400);

  // The code of a deleted link is free again, for any instance.
  assert.equal((await via(d, '/api/urls/scale-sale', { method: 'DELETE', headers: ADMIN })).status, 204);
  const reused = await create(d, { url: 'https://example.com/scale/reused', code: 'scale-sale' });
  assert.equal(reused.status, 201);
  assert.equal((await recordOf(d, 'scale-sale')).original_url, 'https://example.com/scale/reused');
});

test('lookup answers the newest live link of a URL, whichever instance created it', { skip }, async () => {
  const d = deployment!;
  const url = 'https://example.com/scale/lookup?x=1';
  const codes: string[] = [];
  for (let i = 0; i < 3; i++) codes.push(await created(d, { url }));
  for (let i = 0; i < 3; i++) {
    const r = await via(d, `/api/lookup?url=${encodeURIComponent(url)}`, { headers: AUTH });
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body) as LinkRecord).short_code, codes[2]);
  }
  const missing = await via(d, `/api/lookup?url=${encodeURIComponent('https://example.com/scale/never')}`, { headers: AUTH });
  assert.equal(missing.status, 404);
  assert.equal(missing.body, '');
  assert.equal((await via(d, '/api/lookup', { headers: AUTH })).status, 400);
});

test('the list: newest first across instances, paging, the total and the search', { skip }, async () => {
  const d = deployment!;
  const marker = `list-${Date.now()}`;
  const codes: string[] = [];
  for (let i = 0; i < 7; i++) codes.push(await created(d, { url: `https://example.com/${marker}/${i}` }));
  const newestFirst = [...codes].reverse();

  const all = await via(d, `/api/urls?q=${marker}`, { headers: ADMIN });
  assert.equal(all.status, 200);
  assert.equal(all.headers['content-type'], JSON_TYPE);
  assert.equal(all.headers['x-total-count'], '7');
  const list = JSON.parse(all.body) as { count: number; urls: LinkRecord[] };
  assert.equal(list.count, 7);
  assert.deepEqual(
    list.urls.map((u) => u.short_code),
    newestFirst,
  );

  // Pages asked of different instances fit together.
  const pages: string[] = [];
  for (let offset = 0; offset < 7; offset += 3) {
    const page = await via(d, `/api/urls?q=${marker}&limit=3&offset=${offset}`, { headers: ADMIN });
    assert.equal(page.status, 200);
    assert.equal(page.headers['x-total-count'], '7');
    pages.push(...(JSON.parse(page.body) as { urls: LinkRecord[] }).urls.map((u) => u.short_code));
  }
  assert.deepEqual(pages, newestFirst);

  // Case-insensitive search on the code or the URL.
  const one = await via(d, `/api/urls?q=${marker.toUpperCase()}/3`, { headers: ADMIN });
  assert.deepEqual(
    (JSON.parse(one.body) as { urls: LinkRecord[] }).urls.map((u) => u.short_code),
    [codes[3]],
  );
  assert.equal(one.headers['x-total-count'], '1');

  const noKey = await via(d, '/api/urls', { headers: AUTH });
  assert.equal(noKey.status, 403);
  assert.equal(noKey.body, '');
  assert.equal((await via(d, '/api/urls?limit=0', { headers: ADMIN })).status, 400);
  assert.equal((await via(d, '/api/urls?q=', { headers: ADMIN })).status, 400);
});

test('an edit made on one instance is what the others answer and redirect to', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/before' });
  const created_at = (await recordOf(d, code)).created_at;
  const edit = await via(d, `/api/urls/${code}`, {
    method: 'PATCH',
    headers: { ...ADMIN, 'content-type': JSON_TYPE },
    body: JSON.stringify({ url: 'https://example.com/scale/after', max_visits: 5, retention_days: 7 }),
  });
  assert.equal(edit.status, 200, edit.body);
  assert.equal(edit.headers['content-type'], JSON_TYPE);
  const edited = JSON.parse(edit.body) as LinkRecord;
  assert.deepEqual(edited, {
    short_code: code,
    domain: null,
    short_url: `${d.url}/${code}`,
    original_url: 'https://example.com/scale/after',
    created_at,
    visit_count: 0,
    untracked_visits: 0,
    retention_days: 7,
    max_visits: 5,
    expires_at: created_at + 7 * 86400,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  });
  for (let i = 0; i < 2; i++) assert.deepEqual(await recordOf(d, code), edited);
  assert.equal((await via(d, `/${code}`, { method: 'HEAD' })).headers.location, 'https://example.com/scale/after');
  const found = await via(d, `/api/lookup?url=${encodeURIComponent('https://example.com/scale/after')}`, { headers: AUTH });
  assert.equal((JSON.parse(found.body) as LinkRecord).short_code, code);

  const unknownField = await via(d, `/api/urls/${code}`, { method: 'PATCH', headers: { ...ADMIN, 'content-type': JSON_TYPE }, body: '{"code":"x"}' });
  assert.equal(unknownField.status, 400);
  const noKey = await via(d, `/api/urls/${code}`, { method: 'PATCH', headers: { ...AUTH, 'content-type': JSON_TYPE }, body: '{}' });
  assert.equal(noKey.status, 403);
  const unknown = await via(d, '/api/urls/NoSuchCode9', { method: 'PATCH', headers: { ...ADMIN, 'content-type': JSON_TYPE }, body: '{"max_visits":1}' });
  assert.equal(unknown.status, 404);

  // A shorter retention expires a link at once: a created time two days back, imported.
  const old = Math.floor(Date.now() / 1000) - 2 * 86400;
  const imported = await via(d, '/api/import', {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'application/x-ndjson' },
    body: `${JSON.stringify({ short_code: 'scale-old', original_url: 'https://example.com/scale/old', created_at: old, retention_days: 30 })}\n`,
  });
  assert.equal(imported.body, '{"imported":1,"skipped":0,"errors":[]}');
  const shorter = await via(d, '/api/urls/scale-old', { method: 'PATCH', headers: { ...ADMIN, 'content-type': JSON_TYPE }, body: '{"retention_days":1}' });
  assert.equal(shorter.status, 200);
  assert.equal((JSON.parse(shorter.body) as LinkRecord).expires_at, old + 86400);
  for (let i = 0; i < 3; i++) {
    const gone = await via(d, '/scale-old');
    assert.equal(gone.status, 410);
    assert.equal(gone.headers['content-type'], HTML);
    assert.equal(gone.headers['cache-control'], 'private, no-store');
    assert.match(gone.body, /This link has expired/);
    assert.equal((await via(d, '/api/urls/scale-old', { headers: AUTH })).status, 404);
  }
});

test('a delete on one instance is a 404 on the others', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/delete' });
  const del = await via(d, `/api/urls/${code}`, { method: 'DELETE', headers: ADMIN });
  assert.equal(del.status, 204);
  assert.equal(del.body, '');
  assert.equal(del.headers['content-length'], undefined);
  for (let i = 0; i < 3; i++) {
    const meta = await via(d, `/api/urls/${code}`, { headers: AUTH });
    assert.equal(meta.status, 404);
    assert.equal(meta.body, '');
    const hop = await via(d, `/${code}`);
    assert.equal(hop.status, 404);
    assert.equal(hop.headers['content-type'], HTML);
    assert.match(hop.body, /Link not found/);
    assert.equal((await via(d, `/api/urls/${code}`, { method: 'DELETE', headers: ADMIN })).status, 404);
  }
});

test('a visit limit holds across instances; HEAD tells what the next GET would get', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/limited', max_visits: 2 });
  assert.equal((await recordOf(d, code)).max_visits, 2);
  assert.equal((await via(d, `/${code}`)).status, 302);
  assert.equal((await via(d, `/${code}`, { method: 'HEAD' })).status, 302);
  assert.equal((await via(d, `/${code}`)).status, 302);
  for (let i = 0; i < 3; i++) {
    const head = await via(d, `/${code}`, { method: 'HEAD' });
    assert.equal(head.status, 410);
    const used = await via(d, `/${code}`);
    assert.equal(used.status, 410);
    assert.equal(used.headers['content-type'], HTML);
    assert.match(used.body, /This link has reached its visit limit/);
  }
  // A used-up link stays visible, its count never past the limit.
  assert.equal((await recordOf(d, code)).visit_count, 2);
});

test('the QR code of a link is the same from every instance; unknown codes are 404', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/qr' });
  for (let i = 0; i < 3; i++) {
    const r = await via(d, `/api/urls/${code}/qr`, { headers: AUTH });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/svg+xml');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(r.body, qrSvg(`${d.url}/${code}`));
  }
  const missing = await via(d, '/api/urls/NoSuchCode9/qr', { headers: AUTH });
  assert.equal(missing.status, 404);
  assert.equal(missing.body, '');
});

test('import through one instance, export through another: the same records, oldest first', { skip }, async () => {
  const d = deployment!;
  const marker = `xfer${Date.now() % 1_000_000}`;
  const rows = [
    { short_code: `${marker}a`, original_url: `https://example.com/${marker}/a`, created_at: 1_700_000_000, visit_count: 3 },
    { short_code: `${marker}b`, original_url: `https://example.com/${marker}/b`, created_at: 1_700_000_100, max_visits: 9 },
    { short_code: 'bad code!', original_url: 'https://example.com/bad' },
  ];
  const imported = await via(d, '/api/import', {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'application/x-ndjson' },
    body: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`,
  });
  assert.equal(imported.status, 200);
  assert.equal(imported.headers['content-type'], JSON_TYPE);
  const report = JSON.parse(imported.body) as { imported: number; skipped: number; errors: { line: number }[] };
  assert.deepEqual([report.imported, report.skipped, report.errors.map((e) => e.line)], [2, 1, [3]]);

  // Taken codes are reported by whichever instance gets the second import.
  const again = await via(d, '/api/import', {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'application/x-ndjson' },
    body: `${JSON.stringify(rows[0])}\n`,
  });
  assert.equal(again.body, '{"imported":0,"skipped":1,"errors":[{"line":1,"detail":"code already in use"}]}');

  for (let i = 0; i < 3; i++) {
    const exported = await via(d, '/api/export', { headers: ADMIN });
    assert.equal(exported.status, 200);
    assert.equal(exported.headers['content-type'], 'application/x-ndjson');
    assert.match(String(exported.headers['content-disposition']), /^attachment; filename="urls-\d{4}-\d{2}-\d{2}\.jsonl"$/);
    const mine = exported.body
      .split('\n')
      .filter((l) => l.includes(marker))
      .map((l) => JSON.parse(l) as LinkRecord);
    assert.deepEqual(mine, [
      {
        short_code: `${marker}a`,
        domain: null,
        short_url: `${d.url}/${marker}a`,
        original_url: `https://example.com/${marker}/a`,
        created_at: 1_700_000_000,
        visit_count: 3,
        untracked_visits: 3,
        retention_days: 0,
        max_visits: null,
        expires_at: null,
        title: null,
        tags: [],
        author: null,
        ...NO_ROUTING,
      },
      {
        short_code: `${marker}b`,
        domain: null,
        short_url: `${d.url}/${marker}b`,
        original_url: `https://example.com/${marker}/b`,
        created_at: 1_700_000_100,
        visit_count: 0,
        untracked_visits: 0,
        retention_days: 0,
        max_visits: 9,
        expires_at: null,
        title: null,
        tags: [],
        author: null,
        ...NO_ROUTING,
      },
    ]);
    const csv = await via(d, '/api/export?format=csv', { headers: ADMIN });
    assert.equal(csv.headers['content-type'], 'text/csv');
    assert.ok(
      csv.body.startsWith(
        'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash\r\n',
      ),
    );
    assert.ok(csv.body.includes(`${marker}b,${d.url}/${marker}b,https://example.com/${marker}/b,1700000100,0,0,9,,,,,,false,,,,\r\n`));
  }
  assert.equal((await via(d, '/api/export', { headers: AUTH })).status, 403);
});

// ---- races across instances -----------------------------------------------------------------------

test('30 simultaneous creates of one custom code across the instances: exactly one 201', { skip }, async () => {
  const d = deployment!;
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => create(d, { url: `https://example.com/scale/race/${i}`, code: 'scale-race' })));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, ...Array<number>(29).fill(409)]);
  const winner = answers.find((r) => r.status === 201)!;
  assert.equal(winner.body, `${d.url}/scale-race`);
  for (const r of answers.filter((a) => a.status === 409)) assert.equal(r.body, '{"detail":"code already in use"}');
  // The link is the winner's, on every instance.
  const winnerUrl = `https://example.com/scale/race/${answers.indexOf(winner)}`;
  for (let i = 0; i < 3; i++) assert.equal((await recordOf(d, 'scale-race')).original_url, winnerUrl);
});

test('10 simultaneous deletes of one code across the instances: exactly one 204', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/delete-race' });
  const answers = await Promise.all(Array.from({ length: 10 }, () => via(d, `/api/urls/${code}`, { method: 'DELETE', headers: ADMIN })));
  assert.deepEqual(answers.map((r) => r.status).sort(), [204, ...Array<number>(9).fill(404)]);
});

test('500 simultaneous redirects of a link with max_visits 50 across the instances: exactly 50 are 302', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/fifty', max_visits: 50 });
  const answers = await Promise.all(Array.from({ length: 500 }, () => via(d, `/${code}`)));
  const count = (s: number): number => answers.filter((r) => r.status === s).length;
  // Any other answer is named, with its body: a failure then says what the 500th request met.
  const others = answers.filter((r) => r.status !== 302 && r.status !== 410).map((r) => `${r.status} ${r.body.slice(0, 200)}`);
  assert.deepEqual([count(302), count(410), answers.length], [50, 450, 500], others.join('\n'));
  assert.equal((await recordOf(d, code)).visit_count, 50);
});

test('500 simultaneous redirects of a link with max_visits 20 and a fallback_url across the instances: exactly 20 visits, the rest its fallback', {
  skip,
}, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/twenty', max_visits: 20, fallback_url: 'https://example.com/scale/sold-out' });
  const answers = await Promise.all(Array.from({ length: 500 }, () => via(d, `/${code}`)));
  const to = (location: string): number => answers.filter((r) => r.status === 302 && r.headers.location === location).length;
  const others = answers.filter((r) => r.status !== 302).map((r) => `${r.status} ${r.body.slice(0, 200)}`);
  assert.deepEqual([to('https://example.com/scale/twenty'), to('https://example.com/scale/sold-out'), others.length], [20, 480, 0], others.join('\n'));
  assert.equal((await recordOf(d, code)).visit_count, 20, 'a fallback is no visit');
});

test('visit counts are exact across instances: N GETs make visit_count N', { skip }, async () => {
  const d = deployment!;
  const code = await created(d, { url: 'https://example.com/scale/counted' });
  const N = 300;
  const answers = await Promise.all(Array.from({ length: N }, () => via(d, `/${code}`)));
  assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([302]));
  await visitCountReaches(d, code, N);
});
