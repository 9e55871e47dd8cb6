/**
 * What `GET /metrics` reports (docs/operations.md), counted by one shortener, and turned into plain metric
 * families (prometheus.ts) only when scraped.
 *
 * Counting must not cost the redirect. The fast path of `dispatch.ts` only adds 1 to a slot of
 * `fastRedirects`, a typed array allocated here once: no label lookup, no string, no closure, no
 * timer, no listener per request. Those redirects are therefore not timed; they are counted, under
 * the same route label as the general path's redirects (`LINK_ROUTE`), when a scrape reads them.
 * Every other request is timed by the dispatch with two `performance.now()` calls, from the
 * request reaching the handler until its answer was written (a body read, store commits and a
 * streamed list included; the socket sending it out, not).
 *
 * Process-wide figures (memory, CPU, event-loop lag) are read at scrape time.
 *
 * With `WORKERS=N` a scrape answers the sum over the machine's worker processes: `scrapeScope`
 * (set by `cluster-scrape.ts` in each worker) gathers the figures of every worker over the
 * cluster's IPC channel; `merge.ts` adds them up.
 */
import { METHODS } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Family, HistogramSample, Sample } from './prometheus.ts';
import type { Visit } from '../links/service.ts';

/** Upper bounds of the request-duration buckets, seconds: a redirect takes tens of µs, a durable create about a ms. */
export const REQUEST_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upper bounds of the store-write buckets, seconds: an fsync takes from tens of µs to tens of ms. */
export const STORE_WRITE_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** The route label of short links, the pattern of their route in the route table. */
export const LINK_ROUTE = '/:code';
/** The route label of a request no route answered (a bad or unknown path, a preflight, `/s` → `/s/`). */
export const NO_ROUTE = 'none';

/** The `result` label of `shortener_redirects_total`, every value always exported. */
export const REDIRECT_RESULTS = ['found', 'not_found', 'expired', 'limit_reached', 'preview'] as const;
const RESULT_SLOT: Readonly<Record<Visit['kind'], number>> = { found: 0, missing: 1, expired: 2, limit_reached: 3, preview: 4 };

/** Slots of `fastRedirects`. */
export const FAST_GET = 0;
export const FAST_HEAD = 1;

/** Methods by index: a request's method and status are one integer key. Anything else is `other`. */
const METHOD_INDEX = new Map(METHODS.map((m, i) => [m, i]));
const OTHER_METHOD = METHODS.length;
const methodName = (index: number): string => METHODS[index] ?? 'other';
const key = (method: string, status: number): number => status * 64 + (METHOD_INDEX.get(method) ?? OTHER_METHOD);

class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
  }
  sample(labels: HistogramSample['labels']): HistogramSample {
    return { labels, counts: [...this.counts], sum: this.sum };
  }
}

interface RouteStats {
  duration: Histogram;
  /** Answers by `key(method, status)`. */
  answers: Map<number, number>;
}

export interface MetricsSource {
  /** Links held by the store. */
  links(): number;
}

export interface Metrics {
  /** 302s of the redirect fast path, by `FAST_GET`/`FAST_HEAD`. The fast path only increments. */
  readonly fastRedirects: Float64Array;
  /** One request answered by the general path; `route` is its pattern (`NO_ROUTE` when none). */
  request(route: string, method: string, status: number, seconds: number): void;
  /** A short link resolved on the general path (the fast path counts its own). */
  redirected(kind: Visit['kind']): void;
  linkCreated(): void;
  /**
   * One visit event made (the recorder calls it when the store asks for the event of a counted
   * visit): an increment of one of two preallocated slots, by the bot flag.
   */
  visitEvent(bot: boolean): void;
  /** One group-commit write of the log, with its fsync. */
  storeWrite(seconds: number): void;
  /** Everything, as plain metric families; it awaits one turn of the event loop (the lag). */
  collect(): Promise<Family[]>;
}

/** Where a scrape's figures come from, when not from this process alone (a worker of a cluster). */
export interface ScrapeScope {
  /** Given this process's own collector (once per `createMetrics`), for the others' scrapes. */
  own(collect: () => Promise<Family[]>): void;
  /** The figures a scrape answers. */
  gather(): Promise<Family[]>;
}

/** Process-wide: a worker process serves one shortener, and the cluster's IPC channel is the process's. */
let scrapeScope: ScrapeScope | undefined;

/** From now on, metrics created in this process answer scrapes through `scope` (undefined: this process alone). */
export function setScrapeScope(scope: ScrapeScope | undefined): void {
  scrapeScope = scope;
}

/** How long a callback queued now waits for the event loop, seconds. */
function eventLoopLag(): Promise<number> {
  const queued = performance.now();
  return new Promise((resolve) => setImmediate(() => resolve((performance.now() - queued) / 1000)));
}

export function createMetrics(source: MetricsSource): Metrics {
  const fastRedirects = new Float64Array(2);
  const redirects = new Float64Array(REDIRECT_RESULTS.length);
  const routes = new Map<string, RouteStats>();
  const storeWrites = new Histogram(STORE_WRITE_BUCKETS);
  let created = 0;
  /** Visit events made: [not bots, bots]. */
  const events = new Float64Array(2);

  function statsOf(route: string): RouteStats {
    let stats = routes.get(route);
    if (!stats) routes.set(route, (stats = { duration: new Histogram(REQUEST_BUCKETS), answers: new Map() }));
    return stats;
  }

  function requestSamples(): Sample[] {
    const counts = new Map<string, Sample>();
    const add = (route: string, method: string, status: number, n: number): void => {
      const id = `${route} ${method} ${status}`;
      const seen = counts.get(id);
      if (seen) seen.value += n;
      else
        counts.set(id, {
          labels: [
            ['route', route],
            ['method', method],
            ['status', String(status)],
          ],
          value: n,
        });
    };
    for (const [route, stats] of routes) {
      for (const [k, n] of stats.answers) add(route, methodName(k % 64), Math.floor(k / 64), n);
    }
    if (fastRedirects[FAST_GET]! > 0) add(LINK_ROUTE, 'GET', 302, fastRedirects[FAST_GET]!);
    if (fastRedirects[FAST_HEAD]! > 0) add(LINK_ROUTE, 'HEAD', 302, fastRedirects[FAST_HEAD]!);
    return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  }

  async function collectOwn(): Promise<Family[]> {
    const lag = await eventLoopLag();
    const cpu = process.cpuUsage();
    const found = redirects[RESULT_SLOT.found]! + fastRedirects[FAST_GET]! + fastRedirects[FAST_HEAD]!;
    const byRoute = [...routes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return [
      {
        name: 'shortener_http_requests_total',
        help: 'HTTP requests answered, by route (its pattern in the route table, never the request path; "none" when no route answered), method and status.',
        type: 'counter',
        samples: requestSamples(),
      },
      {
        name: 'shortener_http_request_duration_seconds',
        help: 'Time from a request reaching the handler to its answer being written (body read, store commits and streaming included), by route. Redirects answered by the fast path are not timed; shortener_http_requests_total counts them.',
        type: 'histogram',
        bounds: REQUEST_BUCKETS,
        samples: byRoute.map(([route, stats]) => stats.duration.sample([['route', route]])),
      },
      {
        name: 'shortener_redirects_total',
        help: 'GET and HEAD requests of short links, by result.',
        type: 'counter',
        samples: REDIRECT_RESULTS.map((result, i) => ({ labels: [['result', result]], value: i === RESULT_SLOT.found ? found : redirects[i]! })),
      },
      { name: 'shortener_links_created_total', help: 'Links created (REST API and MCP).', type: 'counter', samples: [{ labels: [], value: created }] },
      {
        name: 'shortener_visit_events_total',
        help: 'Visit events recorded (VISIT_TRACKING=events), by whether the visitor was a bot.',
        type: 'counter',
        samples: [
          { labels: [['bot', 'false']], value: events[0]! },
          { labels: [['bot', 'true']], value: events[1]! },
        ],
      },
      {
        name: 'shortener_links',
        help: 'Links held by the store (an expired link until its storage is reclaimed).',
        type: 'gauge',
        samples: [{ labels: [], value: source.links() }],
      },
      {
        name: 'shortener_store_write_duration_seconds',
        help: 'One group-commit write of the log and its fsync (the write alone with FSYNC=off), seconds.',
        type: 'histogram',
        bounds: STORE_WRITE_BUCKETS,
        samples: [storeWrites.sample([])],
      },
      {
        name: 'process_resident_memory_bytes',
        help: 'Resident memory size in bytes.',
        type: 'gauge',
        samples: [{ labels: [], value: process.memoryUsage.rss() }],
      },
      {
        name: 'process_cpu_seconds_total',
        help: 'Total user and system CPU time spent in seconds.',
        type: 'counter',
        samples: [{ labels: [], value: (cpu.user + cpu.system) / 1e6 }],
      },
      {
        name: 'nodejs_eventloop_lag_seconds',
        help: 'Lag of the event loop in seconds: how long a callback queued at scrape time waited to run.',
        type: 'gauge',
        samples: [{ labels: [], value: lag }],
      },
    ];
  }

  const scope = scrapeScope;
  scope?.own(collectOwn);

  return {
    fastRedirects,
    request(route, method, status, seconds) {
      const stats = statsOf(route);
      const k = key(method, status);
      stats.answers.set(k, (stats.answers.get(k) ?? 0) + 1);
      stats.duration.observe(seconds);
    },
    redirected(kind) {
      redirects[RESULT_SLOT[kind]]!++;
    },
    linkCreated() {
      created++;
    },
    visitEvent(bot) {
      events[bot ? 1 : 0]!++;
    },
    storeWrite(seconds) {
      storeWrites.observe(seconds);
    },
    collect() {
      return scope ? scope.gather() : collectOwn();
    },
  };
}
