/**
 * The metric families a scrape answers (docs/operations.md lists every metric), built from what one
 * shortener counted (`metrics.ts`) and the process's own figures, as plain families that
 * `prometheus.ts` writes out. Also the counting's own shapes: a histogram, a route's figures.
 */
import { METHODS } from 'node:http';
import type { Visit } from '../links/service.ts';
import type { Family, HistogramSample, Sample } from './prometheus.ts';

/** Upper bounds of the request-duration buckets, seconds: a redirect takes tens of µs, a durable create about a ms. */
export const REQUEST_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upper bounds of the store-write buckets, seconds: an fsync takes from tens of µs to tens of ms. */
export const STORE_WRITE_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** The route label of short links, the pattern of their route in the route table. */
export const LINK_ROUTE = '/:code';
/** The route label of a request no route answered (a bad or unknown path, a preflight, `/s` → `/s/`). */
export const NO_ROUTE = 'none';

/** The `result` label of `shortener_redirects_total`, every value always exported. */
export const REDIRECT_RESULTS = ['found', 'not_found', 'expired', 'limit_reached', 'preview', 'fallback', 'password'] as const;
export const RESULT_SLOT: Readonly<Record<Visit['kind'], number>> = {
  found: 0,
  missing: 1,
  expired: 2,
  limit_reached: 3,
  preview: 4,
  fallback: 5,
  password: 6,
};

/** Slots of `fastRedirects`. */
export const FAST_GET = 0;
export const FAST_HEAD = 1;

/** Methods by index: a request's method and status are one integer key. Anything else is `other`. */
const METHOD_INDEX = new Map(METHODS.map((m, i) => [m, i]));
const OTHER_METHOD = METHODS.length;
export const methodName = (index: number): string => METHODS[index] ?? 'other';
export const key = (method: string, status: number): number => status * 64 + (METHOD_INDEX.get(method) ?? OTHER_METHOD);

export class Histogram {
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

export interface RouteStats {
  duration: Histogram;
  /** Answers by `key(method, status)`. */
  answers: Map<number, number>;
}

/** What one shortener counted, as a scrape reads it. */
export interface Counts {
  /** 302s of the redirect fast path, by `FAST_GET`/`FAST_HEAD`. */
  readonly fastRedirects: Float64Array;
  /** Redirects of the general path, by `RESULT_SLOT`. */
  readonly redirects: Float64Array;
  readonly routes: ReadonlyMap<string, RouteStats>;
  readonly storeWrites: Histogram;
  /** Visit events made: [not bots, bots]. */
  readonly events: Float64Array;
  created: number;
  /** Webhook attempts, by `WEBHOOK_OUTCOMES`. */
  readonly webhooks: Float64Array;
}

/** The outcomes of a webhook's attempt (docs/webhooks.md), in the order `Counts.webhooks` keeps them. */
export const WEBHOOK_OUTCOMES = ['delivered', 'retry', 'failed', 'disabled'] as const;

/** The outbox as a scrape reads it: rows owed, and `link.clicked` events dropped by the cap. */
export interface Backlog {
  pending: number;
  dropped: number;
}

function requestSamples({ routes, fastRedirects }: Counts): Sample[] {
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

/** Every family of a scrape: `counts`, the links the store holds, and the event loop's lag (seconds) just measured. */
export function families(counts: Counts, links: number, lag: number, backlog: Backlog = { pending: 0, dropped: 0 }): Family[] {
  const { fastRedirects, redirects, routes, storeWrites, events } = counts;
  const cpu = process.cpuUsage();
  const found = redirects[RESULT_SLOT.found]! + fastRedirects[FAST_GET]! + fastRedirects[FAST_HEAD]!;
  const byRoute = [...routes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    {
      name: 'shortener_http_requests_total',
      help: 'HTTP requests answered, by route (its pattern in the route table, never the request path; "none" when no route answered), method and status.',
      type: 'counter',
      samples: requestSamples(counts),
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
    { name: 'shortener_links_created_total', help: 'Links created (REST API and MCP).', type: 'counter', samples: [{ labels: [], value: counts.created }] },
    {
      name: 'shortener_visit_events_total',
      help: 'Visit events recorded (VISIT_TRACKING=events), by whether the visitor was a bot.',
      type: 'counter',
      samples: [
        { labels: [['bot', 'false']], value: events[0]! },
        { labels: [['bot', 'true']], value: events[1]! },
      ],
    },
    ...webhookFamilies(counts, backlog),
    {
      name: 'shortener_links',
      help: 'Links held by the store (an expired link until its storage is reclaimed).',
      type: 'gauge',
      samples: [{ labels: [], value: links }],
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

/** The webhooks' families: attempts by outcome, the outbox's rows owed, the clicks the cap dropped. */
function webhookFamilies(counts: Counts, backlog: Backlog): Family[] {
  return [
    {
      name: 'shortener_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: delivered (a 2xx), retry (failed, tried again later), failed (given up), disabled (the receiver answered 410).',
      type: 'counter',
      samples: WEBHOOK_OUTCOMES.map((outcome, i) => ({ labels: [['outcome', outcome]], value: counts.webhooks[i]! })),
    },
    {
      name: 'shortener_webhook_pending',
      help: 'Webhook deliveries owed and not yet made, every subscription together.',
      type: 'gauge',
      samples: [{ labels: [], value: backlog.pending }],
    },
    {
      name: 'shortener_webhook_clicks_dropped_total',
      help: 'link.clicked events not queued because their subscription already had 100,000 waiting (since this process started).',
      type: 'counter',
      samples: [{ labels: [], value: backlog.dropped }],
    },
  ];
}
