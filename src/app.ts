/**
 * `createShortener(options)`: the whole service as a `(req, res)` handler plus `close()`.
 * The handler is the library; `server.ts` only wraps it in a listening socket.
 * `openShortener(options).start(port)` is the same in two steps, for a server that must load every
 * link before it opens its port but learns the port (PORT=0) only by opening it.
 */
import { createCodeSource, type RandomSource } from './api/codes.ts';
import { configFromOptions, type Config } from './cli/config.ts';
import { createDispatch, type Handler } from './dispatch.ts';
import { createGate } from './http/gate.ts';
import { baseHeaders, flatten } from './http/headers.ts';
import { createLogger, type Logger, type LogSink } from './log.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { createResponder } from './http/respond.ts';
import { createRouter } from './http/router.ts';
import { normalizeTarget } from './paths.ts';
import { routeTable } from './route-table.ts';
import { createService, type Service } from './api/service.ts';
import { loadStatic } from './http/static.ts';
import { LogStore } from './store/log-store.ts';
import type { StoreFs } from './store/fs.ts';
import { Store, type CompactReport } from './store/store.ts';
import { createTransfer } from './transfer/transfer.ts';

export type { Handler } from './dispatch.ts';

/** Settings (docs/operations.md, camelCase) plus what tests and embedders may inject. */
export interface ShortenerOptions extends Partial<Config> {
  /** A logger; by default JSON lines at `logLevel` on `logStream` (stdout). */
  logger?: Logger;
  logStream?: LogSink;
  /** Clock in milliseconds (expiry tests). */
  now?: () => number;
  /** Randomness for codes (collision tests). */
  random?: RandomSource;
  /** File operations of the store (slow or failing disks in tests). */
  fs?: StoreFs;
  /** Interval of the visit-count flush, ms (default 1000). */
  visitFlushMs?: number;
  /** Directory of the UI files (default: the package's `static/`). */
  staticDir?: string;
}

/**
 * The options of `createShortener()` that are not settings. A record over exactly those keys, so
 * TypeScript keeps it complete: a name missing here would be refused as unknown.
 */
const LIBRARY_OPTIONS: Readonly<Record<Exclude<keyof ShortenerOptions, keyof Config>, true>> = {
  logger: true,
  logStream: true,
  now: true,
  random: true,
  fs: true,
  visitFlushMs: true,
  staticDir: true,
};

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
  /** The log file. */
  dataFile: string;
}

/** A shortener whose links are loaded but whose handler is not built yet (see `openShortener`). */
export interface OpenedShortener {
  /** Records in the store. */
  readonly count: number;
  /** The log file. */
  dataFile: string;
  /**
   * Builds the shortener. `port` (default: the `port` option) is only used for the default base
   * URL, `http://localhost:<port>`, when `baseUrl` is not set. Call it once.
   */
  start(port?: number): Shortener;
  /** Closes the store of a shortener that will not start (its server could not listen). */
  close(): Promise<void>;
}

/** What `openShortener` prepared: the settings, the logger and the replayed store. */
interface Opened {
  config: Config;
  log: Logger;
  store: Store;
  metrics: Metrics;
}

export function createShortener(options: ShortenerOptions = {}): Shortener {
  return openShortener(options).start();
}

/**
 * The slow half of `createShortener`: validates the options, opens the data dir, takes its lock
 * and replays the log. Nothing is listening yet, so no client can connect before every link is
 * loaded.
 */
export function openShortener(options: ShortenerOptions = {}): OpenedShortener {
  const { logger, logStream, now, random, fs, visitFlushMs, staticDir, ...settings } = options;
  // An unknown name (`apiKey` for `apiKeys`) is a TypeError, never a service silently run without it.
  const config = configFromOptions(settings, Object.keys(LIBRARY_OPTIONS));
  const log = logger ?? createLogger(config.logLevel, logStream);
  const metrics = createMetrics({ links: () => store.count });
  const store = new Store({
    dir: config.dataDir,
    fsync: config.fsync,
    log,
    ...(now ? { now } : {}),
    ...(fs ? { fs } : {}),
    ...(visitFlushMs ? { visitFlushMs } : {}),
    onWrite: metrics.storeWrite,
  });
  let started = false;
  return {
    get count() {
      return store.count;
    },
    dataFile: store.path,
    start(port) {
      if (started) throw new Error('this shortener has already been started');
      started = true;
      return assemble(options, { config: { ...config, port: port ?? config.port }, log, store, metrics });
    },
    close: () => store.close(),
  };
}

function assemble(options: ShortenerOptions, { config, log, store, metrics }: Opened): Shortener {
  const { now, random, staticDir } = options;
  const baseUrl = config.baseUrl ?? `http://localhost:${config.port}`;
  let shuttingDown = false;
  // The service sees the storage contract only; this process's store is the log store.
  const links = new LogStore(store);
  /**
   * Undefined while ready, else why not (docs/operations.md). The log store was loaded before this runs and
   * reads it from memory, which cannot fail: only a shutdown makes it not ready.
   */
  const readiness = (): string | undefined => (shuttingDown ? 'shutting down' : links.ready());
  const service = createService({
    store: links,
    baseUrl,
    minShortLength: config.minShortLength,
    maxShortLength: config.maxShortLength,
    maxUrlLength: config.maxUrlLength,
    apiKeys: config.apiKeys,
    now: now ?? Date.now,
    randomCode: createCodeSource(random),
    log,
    created: metrics.linkCreated,
  });
  const base = new URL(baseUrl);
  const reply = createResponder(flatten(baseHeaders({ https: base.protocol === 'https:' })));
  const transfer = createTransfer({
    store: links,
    rules: { baseUrl, maxLength: config.maxUrlLength, minShortLength: config.minShortLength, maxShortLength: config.maxShortLength },
    now: now ?? Date.now,
    randomCode: createCodeSource(random),
  });
  const routes = routeTable({ service, reply, files: loadStatic(staticDir), config: { ...config, baseUrl }, log, metrics, readiness, transfer });
  const match = createRouter(routes);
  const gate = createGate(config.apiToken);
  // The base path as the router sees paths: decoded segments. `basePathRaw` is its spelling on the wire.
  const basePathRaw = base.pathname.replace(/\/+$/, '');
  const baseNorm = normalizeTarget(basePathRaw || '/');
  const baseSegments = baseNorm.ok ? baseNorm.target.segments : [];
  const handler = createDispatch({
    service,
    reply,
    match,
    gate,
    metrics,
    log,
    baseSegments,
    basePathRaw,
    // The redirect's fast path skips the gate: it is for instances whose short links are public.
    fastRedirects: config.apiToken === '' || config.publicRedirects,
    uiServed: !config.production,
  });

  return {
    handler,
    beginShutdown() {
      shuttingDown = true;
    },
    close() {
      shuttingDown = true;
      return links.close();
    },
    compact: () => store.compact(),
    config: { ...config, baseUrl },
    service,
    get count() {
      return store.count;
    },
    dataFile: store.path,
  };
}
