/**
 * The sum of several workers' metrics (src/metrics/merge.ts) and the worker's half of the scrape
 * exchange (src/metrics/cluster-scrape.ts), as pure functions; the whole exchange over real
 * workers is in cluster.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { workerScrapeScope } from '../../src/metrics/cluster-scrape.ts';
import { GAUGES, mergeFamilies } from '../../src/metrics/merge.ts';
import { createMetrics, setScrapeScope } from '../../src/metrics/metrics.ts';
import { renderPrometheus, type Family } from '../../src/metrics/prometheus.ts';

const requests = (samples: [string, string, string, number][]): Family => ({
  name: 'x_requests_total',
  help: 'Requests.',
  type: 'counter',
  samples: samples.map(([route, method, status, value]) => ({
    labels: [
      ['route', route],
      ['method', method],
      ['status', status],
    ],
    value,
  })),
});

test('counters add up sample by sample; a sample only one worker has is kept as it is', () => {
  const merged = mergeFamilies([
    [
      requests([
        ['/a', 'GET', '200', 3],
        ['/b', 'POST', '201', 1],
      ]),
    ],
    [
      requests([
        ['/a', 'GET', '200', 4],
        ['/a', 'GET', '404', 2],
      ]),
    ],
  ]);
  assert.deepEqual(merged, [
    requests([
      ['/a', 'GET', '200', 7],
      ['/a', 'GET', '404', 2],
      ['/b', 'POST', '201', 1],
    ]),
  ]);
});

test('histograms add up bucket by bucket, with their sums', () => {
  const h = (counts: number[], sum: number, route = '/a'): Family => ({
    name: 'x_seconds',
    help: 'D.',
    type: 'histogram',
    bounds: [0.1, 1],
    samples: [{ labels: [['route', route]], counts, sum }],
  });
  const [merged] = mergeFamilies([[h([1, 2, 0], 1.5)], [h([0, 1, 1], 3.25)], [h([5, 0, 0], 0.1, '/b')]]);
  assert.deepEqual(merged, {
    name: 'x_seconds',
    help: 'D.',
    type: 'histogram',
    bounds: [0.1, 1],
    samples: [
      { labels: [['route', '/a']], counts: [1, 3, 1], sum: 4.75 },
      { labels: [['route', '/b']], counts: [5, 0, 0], sum: 0.1 },
    ],
  });
});

test('gauges: memory adds up, the links of the one database and the event-loop lag take the largest', () => {
  const gauge = (name: string, value: number): Family => ({ name, help: 'G.', type: 'gauge', samples: [{ labels: [], value }] });
  const names = ['process_resident_memory_bytes', 'shortener_links', 'nodejs_eventloop_lag_seconds', 'x_other'];
  const merged = mergeFamilies([names.map((n) => gauge(n, 10)), names.map((n) => gauge(n, 30))]);
  assert.deepEqual(
    merged.map((f) => [f.name, (f.samples[0] as { value: number }).value]),
    [
      ['process_resident_memory_bytes', 40],
      ['shortener_links', 30],
      ['nodejs_eventloop_lag_seconds', 30],
      ['x_other', 40],
    ],
  );
  assert.deepEqual(GAUGES, {
    process_resident_memory_bytes: 'sum',
    shortener_links: 'max',
    nodejs_eventloop_lag_seconds: 'max',
    shortener_webhook_pending: 'max',
  });
});

test('the families of real registries merge into text that renders like one registry', async () => {
  const a = createMetrics({ links: () => 5 });
  const b = createMetrics({ links: () => 5 });
  a.request('/api/shorten', 'POST', 201, 0.002);
  b.request('/api/shorten', 'POST', 201, 0.003);
  b.request('/healthz', 'GET', 200, 0.0001);
  a.fastRedirects[0] = 4;
  b.fastRedirects[0] = 6;
  const text = renderPrometheus(mergeFamilies([await a.collect(), await b.collect()]));
  assert.match(text, /^shortener_http_requests_total\{route="\/api\/shorten",method="POST",status="201"\} 2$/m);
  assert.match(text, /^shortener_http_requests_total\{route="\/:code",method="GET",status="302"\} 10$/m);
  assert.match(text, /^shortener_http_requests_total\{route="\/healthz",method="GET",status="200"\} 1$/m);
  assert.match(text, /^shortener_redirects_total\{result="found"\} 10$/m);
  assert.match(text, /^shortener_http_request_duration_seconds_count\{route="\/api\/shorten"\} 2$/m);
  assert.match(text, /^shortener_links 5$/m);
});

test('families of different types or buckets under one name are refused, never summed', () => {
  const c: Family = { name: 'x', help: '', type: 'counter', samples: [] };
  const g: Family = { name: 'x', help: '', type: 'gauge', samples: [] };
  assert.throws(() => mergeFamilies([[c], [g]]), /counter in one process and a gauge/);
  const h1: Family = { name: 'h', help: '', type: 'histogram', bounds: [1], samples: [] };
  const h2: Family = { name: 'h', help: '', type: 'histogram', bounds: [2], samples: [] };
  assert.throws(() => mergeFamilies([[h1], [h2]]), /different buckets/);
});

test('a worker: its scrape asks the primary and answers the sum; it answers the primary with its own figures', async (t) => {
  // What the worker sends the primary, taken in order; a take waits for the message rather than
  // for a fixed time, since the worker's own figures are collected asynchronously.
  const sent: unknown[] = [];
  let wake: (() => void) | undefined;
  const scope = workerScrapeScope((m) => {
    sent.push(m);
    wake?.();
  });
  const take = async (): Promise<unknown> => {
    while (sent.length === 0) await new Promise<void>((r) => (wake = r));
    return sent.shift();
  };
  setScrapeScope(scope);
  t.after(() => setScrapeScope(undefined));
  const metrics = createMetrics({ links: () => 1 });
  metrics.linkCreated();

  // The primary asks for this worker's own figures.
  scope.receive({ 'shortener-metrics': 'collect', id: 7 });
  const answer = (await take()) as { 'shortener-metrics': string; id: number; families: Family[] };
  assert.equal(answer['shortener-metrics'], 'families');
  assert.equal(answer.id, 7);
  assert.deepEqual(answer.families.find((f) => f.name === 'shortener_links_created_total')!.samples, [{ labels: [], value: 1 }]);

  // A scrape on this worker: the answer is whatever sum the primary sends back for its request.
  const scrape = metrics.collect();
  assert.deepEqual(await take(), { 'shortener-metrics': 'gather', id: 0 });
  const sum: Family[] = [{ name: 'shortener_links_created_total', help: 'L.', type: 'counter', samples: [{ labels: [], value: 42 }] }];
  scope.receive({ 'shortener-metrics': 'sum', id: 0, families: sum });
  scope.receive({ unrelated: true });
  assert.deepEqual(await scrape, sum);
});
