/**
 * `createShortener(options)`: the whole service as a `(req, res)` handler plus `close()`.
 * The handler is the library; `server.ts` only wraps it in a listening socket.
 * `openShortener(options).start(port)` is the same in two steps, for a server that must load every
 * link before it opens its port but learns the port (PORT=0) only by opening it.
 * With `databaseUrl` the links live in PostgreSQL (docs/postgres.md), which opens asynchronously:
 * `openShortenerAsync`/`createShortenerAsync` (they open the log store too).
 */
import { createCodeSource, reservedWords, SURFACE_SEGMENTS, type RandomSource, type Surfaces } from './links/codes.ts';
import type { Config } from './config/config.ts';
import { configFromOptions } from './config/resolve.ts';
import { envName } from './config/settings.ts';
import { createDispatch, type Handler } from './dispatch.ts';
import { createGate } from './http/gate.ts';
import { baseHeaders, flatten } from './http/headers.ts';
import { createLogger, type Logger, type LogSink } from './log.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { createResponder } from './http/respond.ts';
import { createRouter } from './http/router.ts';
import { normalizeTarget } from './paths.ts';
import { routeTable } from './route-table.ts';
import { createService, type Service } from './links/service.ts';
import { createLimiter, parseRate, type CreateLimiter } from './links/create-limit.ts';
import { loadStatic } from './http/static.ts';
import type { LinkStore } from './store/link-store.ts';
import { LogLinkStore } from './store/log/log-link-store.ts';
import { describeDatabase, openPostgresStore } from './store/postgres/connect.ts';
import type { StoreFs } from './store/log/fs.ts';
import { LogEngine, type CompactReport } from './store/log/log-engine.ts';
import { createTransfer } from './transfer/transfer.ts';
import { ConfigError } from './errors.ts';
import { GeoipError, openGeoip, type Geoip } from './visits/geoip.ts';
import { createRecorder, type Recorder } from './visits/recorder.ts';
import { createVisitorIds } from './visits/visitor-id.ts';

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
  /** The module name of the PostgreSQL driver (default `postgres`; tests of a missing driver). */
  driverModule?: string;
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
  driverModule: true,
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
  /** The log file; empty with a database. */
  dataFile: string;
  /** With a database: its host and name (never the user or the password). */
  database: { host: string; database: string } | undefined;
}

/** A shortener whose links are loaded but whose handler is not built yet (see `openShortener`). */
export interface OpenedShortener {
  /** Records in the store. */
  readonly count: number;
  /** The log file; empty with a database. */
  dataFile: string;
  /** With a database: its host and name (never the user or the password). */
  database: { host: string; database: string } | undefined;
  /**
   * Builds the shortener. `port` (default: the `port` option) is only used for the default base
   * URL, `http://localhost:<port>`, when `baseUrl` is not set. Call it once.
   */
  start(port?: number): Shortener;
  /** Closes the store of a shortener that will not start (its server could not listen). */
  close(): Promise<void>;
}

/** What `openShortener` prepared: the settings, the logger and the opened store. */
interface Opened {
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

export function createShortener(options: ShortenerOptions = {}): Shortener {
  return openShortener(options).start();
}

/** `createShortener`, for a database too: resolves once the database is reachable and migrated. */
export async function createShortenerAsync(options: ShortenerOptions = {}): Promise<Shortener> {
  return (await openShortenerAsync(options)).start();
}

/** Validated settings, the logger and the metrics: the part of opening common to both stores. */
function prepare(options: ShortenerOptions): { config: Config; log: Logger; metrics: Metrics; count: { links: () => number } } {
  const { logger, logStream, now, random, fs, visitFlushMs, staticDir, driverModule, ...settings } = options;
  // An unknown name (`apiKey` for `apiKeys`) is a TypeError, never a service silently run without it.
  const config = configFromOptions(settings, Object.keys(LIBRARY_OPTIONS));
  const log = logger ?? createLogger(config.logLevel, logStream);
  // The gauge reads the store once it exists.
  const count = { links: (): number => 0 };
  const metrics = createMetrics({ links: () => count.links() });
  return { config, log, metrics, count };
}

/**
 * The country database, opened before the store (a damaged file stops start-up: a `ConfigError`,
 * exit 2) and only when events are recorded (with `counts` nothing reads it). A `geoipHeader`
 * without `trustProxy` is ignored with a warning: without a proxy that sets the header, any
 * client could send a country (docs/analytics.md).
 */
function openCountries(config: Config, log: Logger): Geoip | undefined {
  if (config.visitTracking !== 'events') return undefined;
  if (config.geoipHeader !== '' && config.trustProxy === 0) {
    log.warn('GEOIP_HEADER is ignored: a country header is trusted only behind a proxy (set TRUST_PROXY)', { header: config.geoipHeader });
  }
  if (config.geoipDb === '') return undefined;
  try {
    return openGeoip({ path: config.geoipDb, warn: (msg, fields) => log.warn(msg, fields), info: (msg, fields) => log.info(msg, fields) });
  } catch (err) {
    if (err instanceof GeoipError) throw new ConfigError(`invalid GEOIP_DB: ${err.message}`);
    throw err;
  }
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
 * `openShortener` for either store: with `databaseUrl`, loads the PostgreSQL driver, connects,
 * and runs the schema's migrations (under an advisory lock: instances may start together) before
 * it resolves; without, it is `openShortener`. Rejects with `DriverMissingError` when the driver is
 * not installed, and `DatabaseOpenError` when the database cannot be reached or migrated.
 */
export async function openShortenerAsync(options: ShortenerOptions = {}): Promise<OpenedShortener> {
  const { config, log, metrics, count } = prepare(options);
  if (config.databaseUrl === '') return openShortener(options);
  const geoip = openCountries(config, log);
  let store;
  try {
    store = await openPostgresStore({
      url: config.databaseUrl,
      poolSize: config.dbPoolSize,
      log,
      ...(options.now ? { now: options.now } : {}),
      ...(options.driverModule !== undefined ? { driverModule: options.driverModule } : {}),
      onWrite: metrics.storeWrite,
      visitRetentionDays: config.visitRetentionDays,
    });
  } catch (err) {
    geoip?.close();
    throw err;
  }
  count.links = () => store.count;
  return opened(options, {
    config,
    log,
    metrics,
    links: store,
    ready: () => store.ready(),
    compact: () => Promise.reject(new Error('compaction is for the log store; PostgreSQL reclaims space itself (autovacuum)')),
    dataFile: '',
    database: describeDatabase(config.databaseUrl),
    geoip,
  });
}

/**
 * The slow half of `createShortener`: validates the options, opens the data dir, takes its lock
 * and replays the log. Nothing is listening yet, so no client can connect before every link is
 * loaded.
 */
export function openShortener(options: ShortenerOptions = {}): OpenedShortener {
  const { now, fs, visitFlushMs } = options;
  const { config, log, metrics, count } = prepare(options);
  if (config.databaseUrl !== '') {
    throw new TypeError('databaseUrl is set: a database opens asynchronously, use openShortenerAsync() or createShortenerAsync()');
  }
  const geoip = openCountries(config, log);
  let store: LogEngine;
  try {
    store = new LogEngine({
      dir: config.dataDir,
      fsync: config.fsync,
      log,
      ...(now ? { now } : {}),
      ...(fs ? { fs } : {}),
      ...(visitFlushMs ? { visitFlushMs } : {}),
      onWrite: metrics.storeWrite,
      visitRetentionDays: config.visitRetentionDays,
    });
  } catch (err) {
    geoip?.close();
    throw err;
  }
  count.links = () => store.count;
  // The service sees the storage contract only.
  const links = new LogLinkStore(store);
  return opened(options, {
    config,
    log,
    metrics,
    links,
    ready: () => links.ready(),
    compact: () => store.compact(),
    dataFile: store.path,
    database: undefined,
    geoip,
  });
}

function opened(options: ShortenerOptions, parts: Opened): OpenedShortener {
  let started = false;
  return {
    get count() {
      return parts.links.count;
    },
    dataFile: parts.dataFile,
    database: parts.database,
    start(port) {
      if (started) throw new Error('this shortener has already been started');
      started = true;
      return assemble(options, { ...parts, config: { ...parts.config, port: port ?? parts.config.port } });
    },
    close: () => {
      parts.geoip?.close();
      return parts.links.close();
    },
  };
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

function assemble(options: ShortenerOptions, { config, log, links, ready, compact, dataFile, database, metrics, geoip }: Opened): Shortener {
  const { now, random, staticDir } = options;
  const baseUrl = config.baseUrl ?? `http://localhost:${config.port}`;
  let shuttingDown = false;
  /**
   * Undefined while ready, else why not (docs/operations.md). The log store was loaded before this
   * runs and reads from memory, which cannot fail: only a shutdown makes it not ready. A database
   * is not ready while it cannot be reached.
   */
  const readiness = (): string | undefined => (shuttingDown ? 'shutting down' : ready());
  const reserved = reservedWords({ shlinkApi: config.shlinkApi });
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
    recorder: recorderFor(config, links, geoip, metrics, log, now ?? Date.now),
    visitTracking: config.visitTracking,
    reserved,
    createLimit: createLimiterFor(config, now ?? Date.now),
  });
  warnShadowed(service, { shlinkApi: config.shlinkApi }, log);
  const base = new URL(baseUrl);
  const reply = createResponder(flatten(baseHeaders({ https: base.protocol === 'https:' })));
  const transfer = createTransfer({
    store: links,
    rules: { baseUrl, maxLength: config.maxUrlLength, minShortLength: config.minShortLength, maxShortLength: config.maxShortLength, reserved },
    now: now ?? Date.now,
    randomCode: createCodeSource(random),
  });
  const routes = routeTable({
    service,
    reply,
    files: loadStatic(staticDir),
    config: { ...config, baseUrl },
    log,
    metrics,
    readiness,
    transfer,
    now: now ?? Date.now,
  });
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
    reserved,
  });

  return {
    handler,
    beginShutdown() {
      shuttingDown = true;
    },
    close() {
      shuttingDown = true;
      geoip?.close();
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
