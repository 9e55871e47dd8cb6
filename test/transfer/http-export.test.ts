/**
 * GET /api/export over HTTP: both formats with their headers, oldest first, the refusals, and a
 * slow reader: the export is pulled only as fast as the client reads, and a client that leaves
 * ends it.
 */
import { createDomains } from '../../src/links/domains.ts';
import { createKeys } from '../../src/links/keys.ts';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { transferRoutes } from '../../src/api/transfer-routes.ts';
import { createDeprecations } from '../../src/published/deprecations.ts';
import { createResponder } from '../../src/http/respond.ts';
import { createLogger } from '../../src/log.ts';
import type { Transfer } from '../../src/transfer/transfer.ts';
import { start, type Harness } from '../support/helpers.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800_000;

async function load(h: Harness, lines: object[], base = ''): Promise<void> {
  const r = await h.req(`${base}/api/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
    body: lines.map((l) => JSON.stringify(l)).join('\n'),
  });
  assert.equal(r.status, 200, r.body);
  assert.equal((JSON.parse(r.body) as { skipped: number }).skipped, 0, r.body);
}

test('JSON Lines: every live record oldest first, one per line, as a download', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW, baseUrl: 'https://s.example/x' });
  await load(
    h,
    [
      { code: 'oldest', url: 'https://example.com/1', created_at: 1714000000, visit_count: 3 },
      { code: 'expire', url: 'https://example.com/2', created_at: 1600000000, retention_days: 36500 },
      { code: 'newest', url: 'https://example.com/3?q="x",y', created_at: 1714500000, retention_days: 10 },
    ],
    '/x',
  );
  const r = await h.req('/x/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/x-ndjson');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="urls-2024-05-01.jsonl"');
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.equal(r.headers['deprecation'], undefined);
  assert.equal(
    r.body,
    '{"short_code":"oldest","domain":null,"short_url":"https://s.example/x/oldest","original_url":"https://example.com/1","created_at":1714000000,"visit_count":3,"untracked_visits":3,"retention_days":0,"max_visits":null,"expires_at":null,"title":null,"tags":[],"author":null,"rules":[],"forward_query":false,"valid_since":null,"valid_until":null,"fallback_url":null,"password_protected":false}\n' +
      '{"short_code":"expire","domain":null,"short_url":"https://s.example/x/expire","original_url":"https://example.com/2","created_at":1600000000,"visit_count":0,"untracked_visits":0,"retention_days":36500,"max_visits":null,"expires_at":4753600000,"title":null,"tags":[],"author":null,"rules":[],"forward_query":false,"valid_since":null,"valid_until":null,"fallback_url":null,"password_protected":false}\n' +
      '{"short_code":"newest","domain":null,"short_url":"https://s.example/x/newest","original_url":"https://example.com/3?q=%22x%22,y","created_at":1714500000,"visit_count":0,"untracked_visits":0,"retention_days":10,"max_visits":null,"expires_at":1715364000,"title":null,"tags":[],"author":null,"rules":[],"forward_query":false,"valid_since":null,"valid_until":null,"fallback_url":null,"password_protected":false}\n',
  );
});

test('CSV: the header, fields quoted only when needed, CRLF rows; an expired link is left out', async (t) => {
  let now = NOW;
  const h = await start(t, { apiKeys: [KEY], now: () => now, baseUrl: 'https://s.example' });
  await load(h, [
    { code: 'plain1', url: 'https://example.com/a,b', created_at: 1714000000, visit_count: 2 },
    { code: 'soonex', url: 'https://example.com/x', created_at: 1714564000, retention_days: 1 },
  ]);
  now += 86400 * 1000;
  const r = await h.req('/api/export?format=csv', { headers: { 'x-api-key': KEY } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/csv');
  assert.equal(r.headers['content-disposition'], 'attachment; filename="urls-2024-05-02.csv"');
  assert.equal(
    r.body,
    'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash\r\n' +
      'plain1,https://s.example/plain1,"https://example.com/a,b",1714000000,2,0,,,,,,,false,,,,\r\n',
  );
});

test('an empty store exports nothing (CSV: the header alone); the key comes first; a bad format is 400', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const jsonl = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  assert.equal(jsonl.status, 200);
  assert.equal(jsonl.body, '');
  const csv = await h.req('/api/export?format=csv', { headers: { 'x-api-key': KEY } });
  assert.equal(
    csv.body,
    'short_code,short_url,original_url,created_at,visit_count,retention_days,max_visits,title,tags,author,domain,rules,forward_query,valid_since,valid_until,fallback_url,password_hash\r\n',
  );
  for (const headers of [{}, { 'x-api-key': 'nope' }]) {
    const r = await h.req('/api/export?format=nope', { headers });
    assert.equal(r.status, 403);
    assert.equal(r.body, '');
  }
  const bad = await h.req('/api/export?format=xml', { headers: { 'x-api-key': KEY } });
  assert.equal(bad.status, 400);
  assert.deepEqual(JSON.parse(bad.body), { detail: 'format must be jsonl or csv' });
  const query = await h.req(`/api/export?api_key=${KEY}`);
  assert.equal(query.status, 200);
  assert.match(String(query.headers['deprecation']), /^@\d+$/, 'the deprecated api_key still works, and says so');
  assert.equal((await h.req('/api/export', { method: 'POST', headers: { 'x-api-key': KEY } })).status, 405);
});

test('a slow reader: the export is pulled only as fast as the client reads; a client that leaves ends it', async (t) => {
  let pulled = 0;
  let ended!: () => void;
  const exportEnded = new Promise<void>((resolve) => (ended = resolve));
  const piece = `${'x'.repeat(64 * 1024 - 1)}\n`;
  const transfer: Transfer = {
    async *exportText() {
      try {
        for (;;) {
          pulled++;
          yield piece;
        }
      } finally {
        ended();
      }
    },
    importLinks: () => Promise.reject(new Error('not used')),
    exportVisits: () => {
      throw new Error('not used');
    },
    importVisits: () => Promise.reject(new Error('not used')),
    now: () => NOW,
  };
  const reply = createResponder([]);
  const [route] = transferRoutes({
    service: {
      mayTouch: async () => true as const,
      domains: createDomains('http://x'),
      keys: createKeys({ keyStore: undefined, apiKeys: [KEY], seconds: () => NOW / 1000, log: createLogger('silent') }),
    },
    reply,
    deprecations: createDeprecations('http://x', createLogger('silent')),
    transfer,
    baseUrl: 'http://x',
  });
  let answer: ServerResponse | undefined;
  const server = createServer((req, res) => {
    answer = res;
    void route!.methods['GET']!({ req, res, method: 'GET', params: {}, query: () => new URLSearchParams() });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write(`GET /api/export HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();

  // The client reads nothing more. The server has stopped writing once the kernel's buffers are
  // full: bytes wait in the answer's own socket buffer, the export waits for a `drain` that only
  // a read can bring, and no piece is pulled over several checks. What is pulled by then is what
  // the buffers hold (a few MB on loopback), never the export: past 400 pieces (26 MB) it is not
  // waiting for the reader at all.
  const stopped = (): boolean => answer !== undefined && answer.listenerCount('drain') > 0 && (answer.socket?.writableLength ?? 0) > 0;
  let still = 0;
  for (let last = -1, checks = 0; still < 5; await delay(20)) {
    assert.ok(pulled < 400, `${pulled} pieces of 64 KiB pulled for a client that stopped reading`);
    assert.ok(++checks < 500, `the server neither stopped writing nor went on (${pulled} pieces pulled)`);
    still = stopped() && pulled === last ? still + 1 : 0;
    last = pulled;
  }
  const held = pulled;

  // Reading again pulls more: 50 pieces past what the buffers held.
  socket.resume();
  for (let checks = 0; pulled < held + 50; await delay(10)) assert.ok(++checks < 1000, `reading again pulled ${pulled - held} more pieces, not 50`);

  // A client that leaves ends the export (its generator's `finally`).
  socket.destroy();
  const bound = new AbortController();
  const outcome = await Promise.race([exportEnded.then(() => 'ended'), delay(5000, 'still running', { signal: bound.signal }).catch(() => 'aborted')]);
  bound.abort();
  assert.equal(outcome, 'ended', 'the export was ended when the client left');
});
