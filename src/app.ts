/**
 * `createShortener(options)`: the whole service as a `(req, res)` handler plus `close()`.
 * The handler is the library; `main.ts` only wraps it in a listening socket.
 * `openShortener(options).start(port)` is the same in two steps, for a server that must load every
 * link before it opens its port but learns the port (PORT=0) only by opening it.
 * With `databaseUrl` the links live in PostgreSQL (docs/postgres.md), which opens asynchronously:
 * `openShortenerAsync`/`createShortenerAsync` (they open the log store too).
 */
import { assemble, type Opened, type Shortener } from './assemble.ts';
import type { Config } from './config/config.ts';
import { configFromOptions } from './config/resolve.ts';
import { ConfigError } from './errors.ts';
import type { RandomSource } from './links/codes.ts';
import { createLogger, type Logger, type LogSink } from './log.ts';
import { createMetrics, type Metrics, type MetricsSource } from './metrics/metrics.ts';
import { webhookBodies } from './webhooks/bodies.ts';
import { createDomains } from './links/domains.ts';
import type { StoreFs } from './store/log/fs.ts';
import { LogEngine } from './store/log/log-engine.ts';
import { LogLinkStore } from './store/log/log-link-store.ts';
import { describeDatabase, openPostgresStore } from './store/postgres/connect.ts';
import { GeoipError, openGeoip, type Geoip } from './visits/geoip.ts';

export type { Shortener } from './assemble.ts';
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
  /** The size the log must pass, its dead entries outweighing its live ones, to compact itself (default 1 MiB). */
  compactMinBytes?: number;
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
  compactMinBytes: true,
  staticDir: true,
  driverModule: true,
};

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

export function createShortener(options: ShortenerOptions = {}): Shortener {
  return openShortener(options).start();
}

/** `createShortener`, for a database too: resolves once the database is reachable and migrated. */
export async function createShortenerAsync(options: ShortenerOptions = {}): Promise<Shortener> {
  return (await openShortenerAsync(options)).start();
}

/** Validated settings, the logger and the metrics: the part of opening common to both stores. */
/** What a store writes as its webhooks' events: records shown on this instance's domains. */
function bodiesFor(config: Config): ReturnType<typeof webhookBodies> {
  return webhookBodies(createDomains(config.baseUrl ?? `http://localhost:${config.port}`, config.domains, config.trustProxy > 0));
}

/** What a scrape asks of the store, set once it is open. */
interface Count {
  links: () => number;
  webhooks: NonNullable<MetricsSource['webhooks']>;
}

function prepare(options: ShortenerOptions): { config: Config; log: Logger; metrics: Metrics; count: Count } {
  const { logger, logStream, now, random, fs, visitFlushMs, compactMinBytes, staticDir, driverModule, ...settings } = options;
  // An unknown name (`apiKey` for `apiKeys`) is a TypeError, never a service silently run without it.
  const config = configFromOptions(settings, Object.keys(LIBRARY_OPTIONS));
  const log = logger ?? createLogger(config.logLevel, logStream);
  // The gauge reads the store once it exists.
  const count: Count = { links: (): number => 0, webhooks: () => undefined };
  const metrics = createMetrics({ links: () => count.links(), webhooks: () => count.webhooks() });
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
      webhookBodies: bodiesFor(config),
    });
  } catch (err) {
    geoip?.close();
    throw err;
  }
  count.links = () => store.count;
  count.webhooks = () => store.webhooks?.backlog();
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
  const { now, fs, visitFlushMs, compactMinBytes } = options;
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
      ...(compactMinBytes ? { compactMinBytes } : {}),
      onWrite: metrics.storeWrite,
      visitRetentionDays: config.visitRetentionDays,
      webhookBodies: bodiesFor(config),
    });
  } catch (err) {
    geoip?.close();
    throw err;
  }
  count.links = () => store.count;
  count.webhooks = () => store.webhooks.backlog();
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
