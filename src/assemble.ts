/**
 * The shortener assembled from what `app.ts` opened (the settings, the logger, the metrics, the
 * store): the link service with this instance's rules, and the request handler around it (the
 * responder, the transfers, the route table, the router, the gate, the base path, `dispatch.ts`).
 * Built once per shortener; nothing here runs per request.
 */
import type { Config } from './config/config.ts';
import { envName } from './config/settings.ts';
import { createDispatch, type Handler } from './dispatch.ts';
import { createGate } from './http/gate.ts';
import { baseHeaders, flatten } from './http/headers.ts';
import { createResponder } from './http/respond.ts';
import { createRouter } from './http/router.ts';
import { loadStatic, withDomains } from './http/static.ts';
import { createCodeSource, reservedWords, SURFACE_SEGMENTS, type RandomSource, type Surfaces } from './links/codes.ts';
import { createLimiter, parseRate, type CreateLimiter } from './links/create-limit.ts';
import { createService, type Service } from './links/service.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics/metrics.ts';
import { normalizeTarget } from './paths.ts';
import { routeTable } from './route-table.ts';
import type { LinkStore } from './store/link-store.ts';
import type { CompactReport } from './store/log/log-engine.ts';
import { createTransfer } from './transfer/transfer.ts';
import type { Geoip } from './visits/geoip.ts';
import { createRecorder, type Recorder } from './visits/recorder.ts';
import { createSender } from './webhooks/send.ts';
import { createWebhooks, type Webhooks } from './webhooks/subscriptions.ts';
import { eventLoopBusy } from './webhooks/busy.ts';
import { startWorker, type Worker } from './webhooks/worker.ts';
import { createRuleVisitors } from './links/rule-visitor.ts';
import { createVisitorIds } from './visits/visitor-id.ts';

export interface Shortener {
  /** The request handler: `http.createServer(shortener.handler)`, or as Express/Connect middleware. */
  handler: Handler;
  /**
   * Turns readiness off: from now on `GET /healthz?ready` answers 503, so load balancers stop
   * sending traffic, while every other request is served as before. Call it first on SIGTERM;
   * `close()` implies it.
   */
  beginShutdown(): void;
  /** Flushes visit counts, fsyncs and closes the log. Call after the server stopped accepting. */
  close(): Promise<void>;
  /** Rewrites the log to one entry per live link now (it also happens by itself; see README). */
  compact(): Promise<CompactReport>;
  /** The resolved settings (secrets included: do not log it). */
  config: Readonly<Config> & { baseUrl: string };
  service: Service;
  /** Records in the store. */
  readonly count: number;
  /** The log file; empty with a database. */
  dataFile: string;
  /** With a database: its host and name (never the user or the password). */
  database: { host: string; database: string } | undefined;
}

/** What `openShortener` prepared: the settings, the logger and the opened store. */
export interface Opened {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** The storage contract the service sees. */
  links: LinkStore;
  /** Readiness of the store now (docs/operations.md): undefined while reads work. */
  ready: () => string | undefined;
  /** The log store's compaction; a database has none. */
  compact: () => Promise<CompactReport>;
  dataFile: string;
  database: { host: string; database: string } | undefined;
  /** The country database of `geoipDb`, open while the shortener is (events only). */
  geoip: Geoip | undefined;
}

/** The recorder of visit events (`visitTracking: events`), over the store's shared daily key if it has one. */
function recorderFor(config: Config, links: LinkStore, geoip: Geoip | undefined, metrics: Metrics, log: Logger, now: () => number): Recorder | undefined {
  if (config.visitTracking !== 'events') return undefined;
  const visitorIds = createVisitorIds({
    now,
    sharedKey: links.dailyKey ? (day) => links.dailyKey!(day) : undefined,
    onKeyError: (err) =>
      log.warn('the daily visitor key could not be read; visits get no visitor id until it can', { error: err instanceof Error ? err.message : String(err) }),
  });
  return createRecorder({ trustProxy: config.trustProxy, geoipHeader: config.geoipHeader, countries: geoip, now, visitorIds, recorded: metrics.visitEvent });
}

/**
 * A link stored under a surface's word before the surface was switched on (docs/compat.md) stays
 * readable through the API and listed, but `GET /<word>` is now the surface's: start-up says so,
 * naming it. A database answers later; the warning follows when it does.
 */
function warnShadowed(service: Service, surfaces: Surfaces, log: Logger): void {
  for (const [surface, word] of Object.entries(SURFACE_SEGMENTS) as [keyof Surfaces, string][]) {
    if (surfaces[surface] !== true) continue;
    void service.get(word).then(
      (found) => {
        if (found.ok)
          log.warn(
            `the link "${word}" cannot be opened while ${envName(surface)} is on: /${word} is that surface's path; it stays listed and readable through the API`,
            { code: word, short_url: found.record.short_url },
          );
      },
      () => undefined,
    );
  }
}

/** The create limit of `createRateLimit` (docs/security.md), by the client address `trustProxy` gives; none when it is empty. */
function createLimiterFor(config: Config, now: () => number): CreateLimiter | undefined {
  const rate = parseRate(config.createRateLimit);
  return rate === undefined ? undefined : createLimiter(rate, { trustProxy: config.trustProxy, now });
}

/** What an embedder or a test may inject (`ShortenerOptions`, app.ts) that the handler itself uses. */
export interface Injected {
  now?: (() => number) | undefined;
  random?: RandomSource | undefined;
  staticDir?: string | undefined;
}

/** The shortener over the opened parts: the service, then the handler that serves it. */
export function assemble(injected: Injected, parts: Opened): Shortener {
  const { config, log, links, compact, dataFile, database, geoip } = parts;
  const baseUrl = config.baseUrl ?? `http://localhost:${config.port}`;
  let shuttingDown = false;
  /**
   * Undefined while ready, else why not (docs/operations.md). The log store was loaded before this
   * runs and reads from memory, which cannot fail: only a shutdown makes it not ready. A database
   * is not ready while it cannot be reached.
   */
  const readiness = (): string | undefined => (shuttingDown ? 'shutting down' : parts.ready());
  const reserved = reservedWords({ shlinkApi: config.shlinkApi });
  const service = serviceFor(parts, injected, baseUrl, reserved);
  warnShadowed(service, { shlinkApi: config.shlinkApi }, log);
  const { webhooks, worker } = webhooksFor(parts, injected, service);
  const handler = handlerFor(parts, injected, { service, baseUrl, reserved, readiness, webhooks });

  return {
    handler,
    beginShutdown() {
      shuttingDown = true;
    },
    async close() {
      shuttingDown = true;
      geoip?.close();
      // Attempts under way are settled first; what is still owed is sent after the next start.
      await worker?.stop();
      return links.close();
    },
    compact,
    config: { ...config, baseUrl },
    service,
    get count() {
      return links.count;
    },
    dataFile,
    database,
  };
}

/** The link service over the store, with this instance's rules, codes, visits and create limit. */
function serviceFor({ config, log, links, metrics, geoip }: Opened, injected: Injected, baseUrl: string, reserved: ReadonlySet<string>): Service {
  const now = injected.now ?? Date.now;
  return createService({
    store: links,
    baseUrl,
    domains: config.domains,
    forwardedHost: config.trustProxy > 0,
    minShortLength: config.minShortLength,
    maxShortLength: config.maxShortLength,
    maxUrlLength: config.maxUrlLength,
    apiKeys: config.apiKeys,
    now,
    randomCode: createCodeSource(injected.random),
    log,
    created: metrics.linkCreated,
    recorder: recorderFor(config, links, geoip, metrics, log, now),
    visitTracking: config.visitTracking,
    reserved,
    createLimit: createLimiterFor(config, now),
    createAccess: config.createAccess,
    // The same readings as a visit's event: the client address behind trust_proxy, the country
    // from a trusted proxy's header or the country database.
    ruleVisitors: createRuleVisitors({
      trustProxy: config.trustProxy,
      geoipHeader: config.geoipHeader,
      countries: geoip,
      seconds: () => Math.floor(now() / 1000),
    }),
  });
}

/** What the handler is built around: the service, the public address, the reserved words, readiness, the webhooks. */
interface Core {
  service: Service;
  baseUrl: string;
  reserved: ReadonlySet<string>;
  readiness: () => string | undefined;
  webhooks: Webhooks;
}

/** The webhooks' subscriptions, and their delivery running in the background when the store keeps them (docs/webhooks.md). */
function webhooksFor({ config, log, links, metrics }: Opened, injected: Injected, service: Service): { webhooks: Webhooks; worker: Worker | undefined } {
  const now = injected.now ?? Date.now;
  const allowPrivate = config.webhookAllowPrivate;
  const webhooks = createWebhooks({ store: links.webhooks, domains: service.domains, allowPrivate, clicksTracked: config.visitTracking === 'events', now });
  if (links.webhooks === undefined) return { webhooks, worker: undefined };
  const worker = startWorker({
    store: links.webhooks,
    send: createSender(),
    allowPrivate,
    now,
    attempted: (outcome) => metrics.webhookAttempt(outcome),
    busy: eventLoopBusy(),
    warn: (message, fields) => log.warn(message, fields),
  });
  return { webhooks, worker };
}

/** The request handler: the responder, the transfers, the route table and its router, the gate, the base path. */
function handlerFor({ config, log, links, metrics }: Opened, injected: Injected, { service, baseUrl, reserved, readiness, webhooks }: Core): Handler {
  const now = injected.now ?? Date.now;
  const base = new URL(baseUrl);
  const reply = createResponder(flatten(baseHeaders({ https: base.protocol === 'https:' })));
  const transfer = createTransfer({
    store: links,
    rules: {
      baseUrl,
      domains: service.domains,
      otherBases: service.domains.otherBases,
      maxLength: config.maxUrlLength,
      minShortLength: config.minShortLength,
      maxShortLength: config.maxShortLength,
      reserved,
    },
    now,
    randomCode: createCodeSource(injected.random),
  });
  const routes = routeTable({
    service,
    reply,
    files: withDomains(loadStatic(injected.staticDir), service.domains.hosts),
    config: { ...config, baseUrl },
    log,
    metrics,
    readiness,
    transfer,
    now,
    webhooks,
  });
  // The base path as the router sees paths: decoded segments. `basePathRaw` is its spelling on the wire.
  const basePathRaw = base.pathname.replace(/\/+$/, '');
  const baseNorm = normalizeTarget(basePathRaw || '/');
  return createDispatch({
    service,
    reply,
    match: createRouter(routes),
    gate: createGate(config.apiToken),
    metrics,
    log,
    baseSegments: baseNorm.ok ? baseNorm.target.segments : [],
    basePathRaw,
    // The redirect's fast path skips the gate: it is for instances whose short links are public.
    fastRedirects: config.apiToken === '' || config.publicRedirects,
    uiServed: !config.production,
    reserved,
  });
}
