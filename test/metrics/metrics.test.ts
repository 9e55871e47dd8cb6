/**
 * `GET /metrics` (docs/operations.md, metrics): the pure renderer of the Prometheus text format,
 * the counters moving exactly with real requests (the redirect fast path included), the gate, the
 * library mount, and `promtool check metrics` on the real output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { RESERVED_SEGMENTS } from '../../src/links/codes.ts';
import { createMetrics, REQUEST_BUCKETS, STORE_WRITE_BUCKETS } from '../../src/metrics/metrics.ts';
import { escapeHelp, escapeLabelValue, formatValue, renderPrometheus, type Family } from '../../src/metrics/prometheus.ts';
import { encodeEntry } from '../../src/store/log/format.ts';
import { codeOf, HOST_APP_BODY, mount, mountInHostApp, request, start, tempDir, type Harness } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';
import { missingTool } from '../support/missing-tool.ts';

const TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const TOKEN = 'metrics-token';

// ---- the renderer (pure) --------------------------------------------------------------------------

test('label values escape backslash, double quote and line feed; HELP escapes backslash and line feed', () => {
  assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
  assert.equal(escapeLabelValue('plain /:code'), 'plain /:code');
  assert.equal(escapeHelp('one\\two\nthree "quoted"'), 'one\\\\two\\nthree "quoted"');
  assert.deepEqual([NaN, Infinity, -Infinity, 0, 3, 0.25, 1e-7].map(formatValue), ['NaN', '+Inf', '-Inf', '0', '3', '0.25', '1e-7']);
});

test('counters and gauges: HELP and TYPE lines, then one line per sample, labels in order', () => {
  const families: Family[] = [
    {
      name: 'x_requests_total',
      help: 'Requests.\nBy path "p".',
      type: 'counter',
      samples: [
        {
          labels: [
            ['route', '/a'],
            ['method', 'GET'],
          ],
          value: 2,
        },
        {
          labels: [
            ['route', 'odd"\\\nvalue'],
            ['method', 'POST'],
          ],
          value: 0,
        },
      ],
    },
    { name: 'x_up', help: 'Up.', type: 'gauge', samples: [{ labels: [], value: 1 }] },
    { name: 'x_empty_total', help: 'Nothing yet.', type: 'counter', samples: [] },
  ];
  assert.equal(
    renderPrometheus(families),
    [
      '# HELP x_requests_total Requests.\\nBy path "p".',
      '# TYPE x_requests_total counter',
      'x_requests_total{route="/a",method="GET"} 2',
      'x_requests_total{route="odd\\"\\\\\\nvalue",method="POST"} 0',
      '# HELP x_up Up.',
      '# TYPE x_up gauge',
      'x_up 1',
      '# HELP x_empty_total Nothing yet.',
      '# TYPE x_empty_total counter',
      '',
    ].join('\n'),
  );
});

test('histograms: cumulative buckets ending in +Inf, then _sum and _count, per label set', () => {
  const families: Family[] = [
    {
      name: 'x_seconds',
      help: 'Durations.',
      type: 'histogram',
      bounds: [0.1, 1],
      samples: [
        { labels: [['route', '/a']], counts: [1, 2, 3], sum: 12.5 },
        { labels: [], counts: [0, 0, 0], sum: 0 },
      ],
    },
  ];
  assert.equal(
    renderPrometheus(families),
    [
      '# HELP x_seconds Durations.',
      '# TYPE x_seconds histogram',
      'x_seconds_bucket{route="/a",le="0.1"} 1',
      'x_seconds_bucket{route="/a",le="1"} 3',
      'x_seconds_bucket{route="/a",le="+Inf"} 6',
      'x_seconds_sum{route="/a"} 12.5',
      'x_seconds_count{route="/a"} 6',
      'x_seconds_bucket{le="0.1"} 0',
      'x_seconds_bucket{le="1"} 0',
      'x_seconds_bucket{le="+Inf"} 0',
      'x_seconds_sum 0',
      'x_seconds_count 0',
      '',
    ].join('\n'),
  );
});

test("the registry: an observation on a bound falls in that bound's bucket; a scrape is plain data", async () => {
  const metrics = createMetrics({ links: () => 7 });
  metrics.storeWrite(STORE_WRITE_BUCKETS[0]!);
  metrics.storeWrite(0.003);
  metrics.storeWrite(60);
  metrics.request('/api/health', 'GET', 200, REQUEST_BUCKETS[1]!);
  metrics.request('/api/health', 'GET', 200, 0.2);
  metrics.request('/api/health', 'BREW', 418, 0);
  const families = await metrics.collect();
  assert.deepEqual(JSON.parse(JSON.stringify(families)), families, 'numbers, strings and arrays only: it survives IPC');
  const writes = families.find((f) => f.name === 'shortener_store_write_duration_seconds');
  assert.ok(writes?.type === 'histogram');
  const counts = writes.samples[0]!.counts;
  assert.equal(counts.length, STORE_WRITE_BUCKETS.length + 1);
  assert.equal(counts[0], 1, 'exactly on the first bound');
  assert.equal(counts[STORE_WRITE_BUCKETS.indexOf(0.005)], 1, '0.003 is at or below 0.005');
  assert.equal(counts.at(-1), 1, 'above every bound');
  assert.equal(writes.samples[0]!.sum, STORE_WRITE_BUCKETS[0]! + 0.003 + 60);
  const requests = families.find((f) => f.name === 'shortener_http_requests_total');
  assert.deepEqual(requests?.samples, [
    {
      labels: [
        ['route', '/api/health'],
        ['method', 'GET'],
        ['status', '200'],
      ],
      value: 2,
    },
    {
      labels: [
        ['route', '/api/health'],
        ['method', 'other'],
        ['status', '418'],
      ],
      value: 1,
    },
  ]);
  const links = families.find((f) => f.name === 'shortener_links');
  assert.deepEqual(links?.samples, [{ labels: [], value: 7 }]);
});

// ---- over HTTP -----------------------------------------------------------------------------------

/** The samples of an exposition, by their series as written: `name{labels}` → value. */
function samples(body: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

async function scrape(h: Harness, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const r = await h.req('/metrics', { headers });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], TYPE);
  assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
  assert.equal(r.headers['x-content-type-options'], 'nosniff', 'the usual headers');
  return samples(r.body);
}

test('the counters move exactly with the requests made, the redirect fast path included', onOneProcess('its metrics'), async (t) => {
  const clock = { ms: Date.UTC(2026, 0, 1) };
  const h = await start(t, { now: () => clock.ms, visitFlushMs: 3_600_000, logLevel: 'silent' });
  const before = await scrape(h);
  assert.equal(before.get('shortener_links_created_total'), 0);
  assert.equal(before.get('shortener_links'), 0);
  for (const result of ['found', 'not_found', 'expired', 'limit_reached']) assert.equal(before.get(`shortener_redirects_total{result="${result}"}`), 0, result);

  const code = await h.shorten('https://example.com/metrics'); // POST /api/shorten: 201
  const doomed = await h.shorten('https://example.com/soon-gone', 1);
  const mcp = await h.req('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'shorten_url', arguments: { url: 'https://example.com/by-mcp' } } }),
  });
  assert.equal(mcp.status, 200);
  assert.equal((await h.req(`/${code}`)).status, 302); // the fast path
  assert.equal((await h.req(`/${code}`)).status, 302);
  assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
  assert.equal((await h.req(`/${code}/`)).status, 302); // another spelling: the general path
  // Each orphan visit (the unknown code here, the expired link below) is written in the background,
  // in a batch of its own here: wait for it through the service, which moves no request counter.
  const orphansWritten = async (n: number): Promise<void> => {
    for (let i = 0; i < 500; i++) {
      const counted = await h.shortener.service.orphanCounts(0, Number.MAX_SAFE_INTEGER);
      if ('total' in counted && counted.total === n) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  assert.equal((await h.req('/NoSuchCode')).status, 404);
  await orphansWritten(1);
  assert.equal((await h.req('/api/health')).status, 200);
  assert.equal((await h.req('/api/nope')).status, 404);
  clock.ms += 2 * 86_400_000;
  assert.equal((await h.req(`/${doomed}`)).status, 410);
  await orphansWritten(2);

  const m = await scrape(h);
  const requests = (route: string, method: string, status: number): number | undefined =>
    m.get(`shortener_http_requests_total{route="${route}",method="${method}",status="${status}"}`);
  assert.equal(requests('/api/shorten', 'POST', 201), 2);
  assert.equal(requests('/mcp', 'POST', 200), 1);
  assert.equal(requests('/:code', 'GET', 302), 3, 'two by the fast path, one by the general path, one series');
  assert.equal(requests('/:code', 'HEAD', 302), 1);
  assert.equal(requests('/:code', 'GET', 404), 1);
  assert.equal(requests('/:code', 'GET', 410), 1);
  assert.equal(requests('/api/health', 'GET', 200), 1);
  assert.equal(requests('none', 'GET', 404), 1, 'an unknown path has no route');
  assert.equal(requests('/metrics', 'GET', 200), 1, 'the previous scrape; this one is still being answered');
  const series = [...m.keys()].filter((k) => k.startsWith('shortener_http_requests_total{'));
  assert.equal(series.length, 9, series.join('\n'));

  assert.equal(m.get('shortener_redirects_total{result="found"}'), 4);
  assert.equal(m.get('shortener_redirects_total{result="not_found"}'), 1);
  assert.equal(m.get('shortener_redirects_total{result="expired"}'), 1);
  assert.equal(m.get('shortener_redirects_total{result="limit_reached"}'), 0);
  assert.equal(m.get('shortener_links_created_total'), 3, 'two over REST, one over MCP');
  assert.equal(m.get('shortener_links'), 3);
  // The two orphan visits, each a group commit of its own here; the counted visits wait for the flush.
  assert.equal(m.get('shortener_store_write_duration_seconds_count'), 5, 'one group commit per create and per orphan visit, one at a time');
  assert.equal(m.get('shortener_store_write_duration_seconds_bucket{le="+Inf"}'), 5);

  // The histogram times the general path only: the fast path's three 302s are not in it.
  assert.equal(m.get('shortener_http_request_duration_seconds_count{route="/:code"}'), 3);
  assert.equal(m.get('shortener_http_request_duration_seconds_count{route="/api/shorten"}'), 2);
  assert.ok(m.get('shortener_http_request_duration_seconds_sum{route="/api/shorten"}')! > 0);
  assert.ok(m.get('process_resident_memory_bytes')! > 1e6);
  assert.ok(m.get('process_cpu_seconds_total')! > 0);
  assert.ok(m.get('nodejs_eventloop_lag_seconds')! >= 0);

  // Route labels are route patterns: no code, no raw path.
  const body = (await h.req('/metrics')).body;
  for (const raw of [code, doomed, 'NoSuchCode', '/api/nope']) assert.ok(!body.includes(raw), `${raw} in the output`);
});

test('behind the gate: 401 without the token, the metrics with it', onOneProcess('its metrics'), async (t) => {
  const h = await start(t, { apiToken: TOKEN, logLevel: 'silent' });
  const refused = await h.req('/metrics');
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['www-authenticate'], 'Bearer');
  assert.equal(refused.headers['content-type'], 'application/json');
  assert.equal(refused.body, '{"detail":"authentication required: send the header Authorization: Bearer <token>"}');
  assert.equal((await h.req('/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401);
  const m = await scrape(h, { authorization: `Bearer ${TOKEN}` });
  assert.equal(m.get('shortener_http_requests_total{route="/metrics",method="GET",status="401"}'), 2, 'refusals are counted too');
});

test('metrics is a reserved segment: a stored link with that code never hides the route', async (t) => {
  assert.ok(RESERVED_SEGMENTS.has('metrics'));
  const dir = tempDir();
  writeFileSync(
    join(dir, 'urls.log'),
    encodeEntry({ op: 'C', code: 'metrics', url: 'https://example.com/hijack', createdAt: 1_790_000_000, retentionDays: 0, visits: 0 }),
  );
  const h = await start(t, { dataDir: dir, logLevel: 'silent' });
  const r = await h.req('/metrics');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], TYPE);
  assert.equal(r.headers.location, undefined);
});

test('the library: /metrics under an Express-style base path; what goes to next() is not counted', async (t) => {
  const app = await mountInHostApp(t, '/s', { logLevel: 'silent' });
  assert.equal((await request(app.port, '/elsewhere')).body, HOST_APP_BODY);
  assert.equal((await request(app.port, '/s/api/health')).status, 200);
  const r = await request(app.port, '/s/metrics');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], TYPE);
  const m = samples(r.body);
  assert.equal(m.get('shortener_http_requests_total{route="/api/health",method="GET",status="200"}'), 1);
  const counted = [...m.entries()].filter(([k]) => k.startsWith('shortener_http_requests_total{'));
  assert.deepEqual(counted, [['shortener_http_requests_total{route="/api/health",method="GET",status="200"}', 1]]);
});

test('a request the host app passes back to the same handler from next() is counted once', async (t) => {
  const app = await mount(
    t,
    '/s',
    (shortener) => (req: IncomingMessage & { originalUrl?: string }, res) =>
      shortener.handler(req, res, () => {
        // A host that rewrites unknown paths into the mount, then dispatches again.
        req.originalUrl = '/s/api/health';
        shortener.handler(req, res);
      }),
    { logLevel: 'silent' },
  );
  assert.equal((await request(app.port, '/rewritten')).status, 200);
  const m = samples((await request(app.port, '/s/metrics')).body);
  assert.equal(m.get('shortener_http_requests_total{route="/api/health",method="GET",status="200"}'), 1);
});

test('counting adds no listener to a response, on the redirect fast path or elsewhere', async (t) => {
  const seen: { path: string | undefined; added: number }[] = [];
  const app = await mount(
    t,
    '',
    (shortener) => (req, res) => {
      const events = ['finish', 'close', 'error', 'drain'] as const;
      const before = events.reduce((n, e) => n + res.listenerCount(e), 0);
      shortener.handler(req, res);
      seen.push({ path: req.url, added: events.reduce((n, e) => n + res.listenerCount(e), 0) - before });
    },
    { logLevel: 'info', logStream: { write: () => true } },
  );
  const created = await request(app.port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/l"}',
  });
  const code = codeOf(created);
  assert.equal((await request(app.port, `/${code}`)).status, 302);
  assert.equal((await request(app.port, '/api/health')).status, 200);
  assert.deepEqual(seen.slice(1), [
    { path: `/${code}`, added: 0 },
    { path: '/api/health', added: 0 },
  ]);
});

// ---- promtool ------------------------------------------------------------------------------------

/** Runs `promtool check metrics` on `text`; undefined when promtool is missing (the test then skips, or fails under CI). */
function promtool(t: TestContext, text: string): { status: number | null; output: string } | undefined {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error) {
    t.skip(
      missingTool(
        'PROMTOOL CHECK',
        `promtool not found (${(r.error as NodeJS.ErrnoException).code}; apt-get install prometheus): the /metrics output cannot be checked`,
      ),
    );
    return undefined;
  }
  return { status: r.status, output: r.stdout + r.stderr };
}

test('promtool check metrics: the real output is clean, and a broken one is caught', async (t) => {
  const h = await start(t, { logLevel: 'silent' });
  const code = await h.shorten('https://example.com/promtool');
  await h.req(`/${code}`);
  await h.req('/nope');
  await h.req('/api/health');
  await h.req('/api/health', { method: 'OPTIONS' });
  await h.req('/metrics');
  const body = (await h.req('/metrics')).body;
  const clean = promtool(t, body);
  if (!clean) return;
  assert.deepEqual(clean, { status: 0, output: '' });
  // It does object: to a counter without `_total`, and to a label value with a bare double quote.
  const unsuffixed = promtool(t, body.replace(/shortener_links_created_total/g, 'shortener_links_created'));
  assert.notEqual(unsuffixed?.status, 0);
  assert.match(unsuffixed?.output ?? '', /should have "_total" suffix/);
  const unescaped = promtool(t, body.replace('route="/api/health"', 'route="/api/"health"'));
  assert.notEqual(unescaped?.status, 0);
  assert.match(unescaped?.output ?? '', /parsing error/);
});
