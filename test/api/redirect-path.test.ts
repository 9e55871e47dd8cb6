/**
 * The redirect has a fast path for the plain spelling `GET <base>/<code>`; every other spelling goes
 * through normalization and the router. Both must give the same answer, byte for byte, and count
 * each visit exactly once.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeEntry } from '../../src/store/log/format.ts';
import { request, start, tempDir, visitsOf } from '../support/helpers.ts';
import { sendRaw } from '../support/raw-http.ts';
import { onOneProcess } from '../support/cluster.ts';

/** Headers whose values differ per response by nature. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive']);
const stable = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !VOLATILE.has(k)));

for (const base of ['', '/s']) {
  test(`fast and general paths answer alike and count once each${base ? ' (base path)' : ''}`, async (t) => {
    const h = await start(t, base ? { baseUrl: 'http://127.0.0.1/s' } : {});
    try {
      const code = await h.shorten('https://example.com/target?q=1');
      const fast = await h.req(`${base}/${code}`);
      assert.equal(fast.status, 302);
      assert.equal(fast.headers.location, 'https://example.com/target?q=1');
      assert.equal(fast.headers['cache-control'], 'private, no-store');
      assert.equal(fast.headers['content-length'], '0');
      assert.equal(fast.body, '');
      // Spellings the fast path leaves to the router: trailing slash, a query, an escaped letter.
      const hex = code.charCodeAt(0).toString(16);
      for (const spelling of [`${base}/${code}/`, `${base}/${code}?utm=x`, `${base}/%${hex}${code.slice(1)}`]) {
        const general = await h.req(spelling);
        assert.equal(general.status, 302, spelling);
        assert.deepEqual(stable(general.headers), stable(fast.headers), spelling);
      }
      const head = await h.req(`${base}/${code}`, { method: 'HEAD' });
      assert.equal(head.status, 302);
      const meta = JSON.parse((await h.req(`${base}/api/urls/${code}`)).body) as { visit_count: number };
      assert.equal(meta.visit_count, 4, 'four GETs, one visit each; HEAD not counted');
    } finally {
      await h.close();
    }
  });
}

test('a plain code that is unknown, expired or reserved falls through to the general answers', async (t) => {
  let now = Date.UTC(2026, 0, 1);
  const h = await start(t, { now: () => now });
  try {
    const code = await h.shorten('https://example.com/soon', 1);
    now += 2 * 86_400_000;
    const expired = await h.req(`/${code}`);
    assert.equal(expired.status, 410);
    assert.match(expired.body, /This link has expired/);
    const missing = await h.req('/zzzzzz');
    assert.equal(missing.status, 404);
    assert.match(missing.body, /Link not found/);
    // `api` is made of alphabet characters but is reserved: the router's 404 (empty), not a lookup.
    const reserved = await h.req('/api');
    assert.equal(reserved.status, 404);
    assert.equal(reserved.body, '');
    const healthz = await h.req('/healthz');
    assert.equal(healthz.status, 200);
    // Every reserved word made of alphabet characters reaches its own route, never a lookup.
    for (const [path, status] of [
      ['/docs', 200],
      ['/metrics', 200],
      ['/schemas', 404],
      ['/static', 404],
      ['/mcp', 405],
    ] as const) {
      assert.equal((await h.req(path)).status, status, path);
    }
  } finally {
    await h.close();
  }
});

/** A response as sent, without its Date line (it changes every second). */
async function rawAnswer(port: number, path: string, method = 'GET'): Promise<string> {
  const reply = await sendRaw(port, `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, { head: method === 'HEAD' });
  return reply.text.replace(/^Date: .*\r\n/m, '');
}

test('a plain code no link has is answered on the fast path with the bytes the general path sends for it', async (t) => {
  // The fast path answers such a miss itself (a scanner's random paths cost less): the same page,
  // or the same redirect of a domain's not_found, as another spelling of it gets from the router.
  const h = await start(t, { logLevel: 'silent', apiKeys: ['k'], domains: ['go.example'] });
  try {
    const fast = await rawAnswer(h.port, '/zzzzzz');
    assert.match(fast, /^HTTP\/1\.1 404 Not Found\r\n/);
    assert.match(fast, /Link not found/);
    assert.equal(await rawAnswer(h.port, '/zzzzzz?utm=x'), fast);
    assert.equal(await rawAnswer(h.port, '/zzzzzz', 'HEAD'), fast.slice(0, fast.indexOf('\r\n\r\n') + 4), 'HEAD: the same head, no body');
    // Any other plain segment a scanner sends is the same miss, on the fast path too; the spelling
    // with a query, or with a letter escaped, takes the router.
    for (const path of ['/wp-login.php', "/a.b~c!$&'()*+,;=:@"]) {
      assert.equal(await rawAnswer(h.port, path), fast, path);
      assert.equal(await rawAnswer(h.port, `${path}?x=1`), fast, `${path}?x=1`);
    }
    assert.equal(await rawAnswer(h.port, '/wp-login.ph%70'), fast);
  } finally {
    await h.close();
  }
});

test(
  "a plain code no link has on a domain with a not_found redirect is that redirect on the fast path, as on the router's",
  // Each instance reads a domain's redirects from a cache within a second of the table (the
  // cross-instance case is test/api/domains.test.ts's); here one process answers both spellings.
  onOneProcess("a domain's redirects reach the other instances within a second, checked at the store"),
  async (t) => {
    const h = await start(t, { logLevel: 'silent', apiKeys: ['k'], domains: ['go.example'] });
    try {
      const set = await h.req(`/api/domains/127.0.0.1:${h.port}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: '{"not_found":"https://example.com/lost"}',
      });
      assert.equal(set.status, 200, set.body);
      const elsewhere = await rawAnswer(h.port, '/zzzzzz');
      assert.match(elsewhere, /^HTTP\/1\.1 302 Found\r\n[\s\S]*\r\nLocation: https:\/\/example\.com\/lost\r\n/);
      assert.equal(await rawAnswer(h.port, '/zzzzzz?utm=x'), elsewhere);
    } finally {
      await h.close();
    }
  },
);

test('the fast path sends the bytes the general path sends, header order included', async (t) => {
  const h = await start(t, { logLevel: 'silent' });
  try {
    const code = await h.shorten('https://example.com/bytes?q=1');
    const fast = await rawAnswer(h.port, `/${code}`);
    assert.match(fast, /^HTTP\/1\.1 302 Found\r\n/);
    assert.match(fast, /\r\nLocation: https:\/\/example\.com\/bytes\?q=1\r\nCache-Control: private, no-store\r\nContent-Length: 0\r\n/);
    assert.ok(fast.endsWith('\r\n\r\n'), 'no body');
    for (const spelling of [`/${code}/`, `/${code}?utm=x`]) assert.equal(await rawAnswer(h.port, spelling), fast, spelling);
    assert.equal(await rawAnswer(h.port, `/${code}`, 'HEAD'), fast, 'HEAD: the same head, no body');
    assert.equal(await rawAnswer(h.port, `/${code}/`, 'HEAD'), fast);
  } finally {
    await h.close();
  }
});

test(
  'many concurrent redirects of several links: every GET counted once, in memory, in the metrics and on disk; the plain spellings take the fast path',
  onOneProcess('it reads its metrics and its log file'),
  async (t) => {
    const h = await start(t, { logLevel: 'silent', visitFlushMs: 5 });
    const codes = [await h.shorten('https://example.com/one'), await h.shorten('https://example.com/two'), await h.shorten('https://example.com/three')];
    const gets = [0, 0, 0];
    let heads = 0;
    try {
      const jobs: Promise<void>[] = [];
      for (let i = 0; i < 600; i++) {
        const n = i % 3;
        // Mostly the fast path; every 10th GET a spelling that takes the general path; every 7th a HEAD.
        const head = i % 7 === 0;
        const path = i % 10 === 0 ? `/${codes[n]}/` : `/${codes[n]}`;
        if (head) heads++;
        else gets[n]!++;
        jobs.push(
          request(h.port, path, head ? { method: 'HEAD' } : {}).then((r) => {
            assert.equal(r.status, 302);
          }),
        );
      }
      await Promise.all(jobs);
      for (const [n, code] of codes.entries()) {
        const meta = JSON.parse((await h.req(`/api/urls/${code}`)).body) as { visit_count: number };
        assert.equal(meta.visit_count, gets[n], code);
      }
      const metrics = (await h.req('/metrics')).body;
      const sample = (series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1]);
      assert.equal(sample('shortener_redirects_total{result="found"}'), 600);
      assert.equal(sample('shortener_http_requests_total{route="/:code",method="GET",status="302"}'), 600 - heads);
      assert.equal(sample('shortener_http_requests_total{route="/:code",method="HEAD",status="302"}'), heads);
      // What only the fast path does: it counts a redirect without timing it (docs/operations.md,
      // "Metrics": what counting costs), so the route's duration histogram holds the general path's
      // requests alone: the 60 with a trailing slash. Were every redirect to take the general path,
      // all 600 would be timed.
      assert.equal(sample('shortener_http_request_duration_seconds_count{route="/:code"}'), 60);
    } finally {
      await h.close(true);
    }
    // The counts survive a restart exactly: flushed at close, replayed from the log.
    const again = await start(t, { logLevel: 'silent', dataDir: h.dir });
    try {
      for (const [n, code] of codes.entries()) {
        const meta = JSON.parse((await again.req(`/api/urls/${code}`)).body) as { visit_count: number };
        assert.equal(meta.visit_count, gets[n], code);
      }
    } finally {
      await again.close();
    }
  },
);

test(
  'a log holding links under reserved words (written by another tool) never shadows the routes',
  onOneProcess('it seeds its log file directly'),
  async (t) => {
    const dir = tempDir(t);
    const words = ['metrics', 'static', 'docs', 'api', 'healthz', 'mcp'];
    const lines = [...words, 'plain1'].map((code) =>
      encodeEntry({ op: 'C', code, url: `https://example.com/${code}`, createdAt: 1_790_000_000, retentionDays: 0, visits: 0 }),
    );
    writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
    for (const base of ['', '/s']) {
      const h = await start(t, { dataDir: dir, ...(base ? { baseUrl: 'http://127.0.0.1/s' } : {}) });
      const plain = await h.req(`${base}/plain1`);
      assert.equal(plain.headers.location, 'https://example.com/plain1', `the log is read: ${plain.status} ${plain.body}`);
      // Each path twice: the second time the store has seen it.
      for (let round = 0; round < 2; round++) {
        for (const [word, status] of [
          ['metrics', 200],
          ['static', 404],
          ['docs', 200],
          ['api', 404],
          ['healthz', 200],
          ['mcp', 405],
        ] as const) {
          const r = await h.req(`${base}/${word}`);
          assert.equal(r.status, status, `${base}/${word}`);
          assert.equal(r.headers.location, undefined, `${base}/${word}`);
        }
      }
      await h.close(true);
    }
    // No visit of theirs was counted.
    const h = await start(t, { dataDir: dir });
    for (const word of words) assert.equal(await visitsOf(h.shortener, word), 0, word);
  },
);
