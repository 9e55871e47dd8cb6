/**
 * What `GET /metrics` reports (docs/operations.md), counted by one shortener, and turned into plain metric
 * families (families.ts, written out by prometheus.ts) only when scraped.
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
import { performance } from 'node:perf_hooks';
import type { Visit } from '../links/service.ts';
import {
  families,
  Histogram,
  key,
  REDIRECT_RESULTS,
  RESULT_SLOT,
  REQUEST_BUCKETS,
  STORE_WRITE_BUCKETS,
  WEBHOOK_OUTCOMES,
  type Backlog,
  type Counts,
  type RouteStats,
} from './families.ts';
import type { Family } from './prometheus.ts';

export { FAST_GET, FAST_HEAD, LINK_ROUTE, NO_ROUTE, REDIRECT_RESULTS, REQUEST_BUCKETS, STORE_WRITE_BUCKETS } from './families.ts';

export interface MetricsSource {
  /** Links held by the store. */
  links(): number;
  /** The webhooks' outbox (absent: none). */
  webhooks?(): Backlog | Promise<Backlog> | undefined;
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
  /** One webhook attempt, by its outcome. */
  webhookAttempt(outcome: (typeof WEBHOOK_OUTCOMES)[number]): void;
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
  const counts: Counts = {
    fastRedirects: new Float64Array(2),
    redirects: new Float64Array(REDIRECT_RESULTS.length),
    routes: new Map<string, RouteStats>(),
    storeWrites: new Histogram(STORE_WRITE_BUCKETS),
    events: new Float64Array(2),
    created: 0,
    webhooks: new Float64Array(WEBHOOK_OUTCOMES.length),
  };
  const { fastRedirects, redirects, storeWrites, events } = counts;
  const routes = counts.routes as Map<string, RouteStats>;

  function statsOf(route: string): RouteStats {
    let stats = routes.get(route);
    if (!stats) routes.set(route, (stats = { duration: new Histogram(REQUEST_BUCKETS), answers: new Map() }));
    return stats;
  }

  async function collectOwn(): Promise<Family[]> {
    const lag = await eventLoopLag();
    // A store that cannot say now (a database away) reports an empty outbox rather than no scrape.
    const backlog = await Promise.resolve(source.webhooks?.()).catch(() => undefined);
    return families(counts, source.links(), lag, backlog);
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
      counts.created++;
    },
    visitEvent(bot) {
      events[bot ? 1 : 0]!++;
    },
    storeWrite(seconds) {
      storeWrites.observe(seconds);
    },
    webhookAttempt(outcome) {
      counts.webhooks[WEBHOOK_OUTCOMES.indexOf(outcome)]!++;
    },
    collect() {
      return scope ? scope.gather() : collectOwn();
    },
  };
}
