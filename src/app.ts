/**
 * `createShortener(options)`: the whole service as a `(req, res)` handler plus `close()`.
 * The handler is the library; `server.ts` only wraps it in a listening socket.
 * `openShortener(options).start(port)` is the same in two steps, for a server that must load every
 * link before it opens its port but learns the port (PORT=0) only by opening it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createCodeSource, isCodeShaped, RESERVED_SEGMENTS, type RandomSource } from './api/codes.ts';
import { configFromOptions, type Config } from './cli/config.ts';
import { HttpError } from './errors.ts';
import { createGate, type GateVerdict } from './http/gate.ts';
import { baseHeaders, flatten } from './http/headers.ts';
import { createLogger, redactTarget, type Logger, type LogSink } from './log.ts';
import { FAST_GET, FAST_HEAD, NO_ROUTE, createMetrics, type Metrics } from './metrics/metrics.ts';
import { createResponder } from './http/respond.ts';
import { allowHeader, createRouter } from './http/router.ts';
import { normalizeTarget, stripBase } from './paths.ts';
import { routeTable } from './route-table.ts';
import type { Ctx } from './http/context.ts';
import { answerVisit } from './api/redirect.ts';
import { createService, type Service, type Visit } from './api/service.ts';
import { loadStatic } from './http/static.ts';
import type { StoreFs } from './store/fs.ts';
import { LogStore } from './store/log-store.ts';
import { Store, type CompactReport } from './store/store.ts';

/** Settings (SPEC §2, camelCase) plus what tests and embedders may inject. */
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

export type Handler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

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
  /** Rewrites the log to one entry per live link now (it also happens by itself; see docs/storage.md). */
  compact(): Promise<CompactReport>;
  /** The resolved settings (secrets included: do not log it). */
  config: Readonly<Config> & { baseUrl: string };
  service: Service;
  /** Records in the store. */
  readonly count: number;
  /** The log file. */
  dataFile: string;
}

/**
 * More request headers than this is `431` (SPEC §12). Node keeps only the first 2,000 in
 * `rawHeaders` (`maxHeadersCount`) and drops the rest unseen, so past that a second `Authorization`
 * would slip by the gate's duplicate rule; no real client sends anywhere near 100.
 */
const MAX_REQUEST_HEADERS = 100;
/** `rawHeaders` holds names and values in turn. */
const MAX_RAW_HEADERS = MAX_REQUEST_HEADERS * 2;

/** `routed` of a request handed to the host app: not ours to count. */
const HANDED_ON = '';

/** The request target. Express strips its mount path from `req.url`; `originalUrl` keeps the base path. */
function targetOf(req: IncomingMessage): string {
  return (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
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
   * Undefined while ready, else why not (SPEC §12). The log store was loaded before this runs and
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
  const routes = routeTable({ service, reply, files: loadStatic(staticDir), config: { ...config, baseUrl }, log, metrics, readiness });
  const match = createRouter(routes);
  const gate = createGate(config.apiToken);
  // The base path as the router sees paths: decoded segments. `basePathRaw` is its spelling on the wire.
  const basePathRaw = base.pathname.replace(/\/+$/, '');
  const baseNorm = normalizeTarget(basePathRaw || '/');
  const baseSegments = baseNorm.ok ? baseNorm.target.segments : [];
  const linkPrefix = `${basePathRaw}/`;
  // The redirect fast path skips the gate, so it is taken only where short links are public: gate
  // off, or PUBLIC_REDIRECTS on. Behind the gate every request takes the general path, gate first.
  const fastRedirects = config.apiToken === '' || config.publicRedirects;
  const debug = log.enabled('debug');

  function fail(res: ServerResponse, err: unknown, method: string, target: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof HttpError) {
      const extra = err.headers.flat();
      // An unread upload stays on the socket: close it rather than parse the rest as a request.
      if (err.status === 413) extra.push('Connection', 'close');
      if (err.detail === undefined) reply.empty(res, err.status, extra);
      else reply.json(res, err.status, { detail: err.detail }, extra);
      return;
    }
    log.error('unexpected error', {
      method,
      path: redactTarget(target),
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    reply.json(res, 500, { detail: 'internal error' });
  }

  /** A 401 (SPEC §5): one warning line with the method and the redacted path, never the header. */
  function refuse(res: ServerResponse, verdict: Exclude<GateVerdict, { pass: true }>, method: string, target: string): void {
    log.warn('request refused by the gate', { method, path: redactTarget(target), reason: verdict.reason });
    fail(res, new HttpError(401, verdict.detail, [['WWW-Authenticate', 'Bearer']]), method, target);
  }

  /** The 431 of too many headers, before anything else — unless the request belongs to a host app. */
  function crowded(res: ServerResponse, method: string, target: string, next: ((err?: unknown) => void) | undefined): void {
    if (next) {
      const normalized = normalizeTarget(target);
      if (normalized.ok && stripBase(normalized.target.segments, baseSegments) === undefined) return next();
    }
    fail(res, new HttpError(431, `too many request headers: at most ${MAX_REQUEST_HEADERS} are accepted`), method, target);
  }

  function notAllowed(res: ServerResponse, method: string, target: string, allow: string): void {
    fail(res, new HttpError(405, `${method} is not allowed here`, [['Allow', allow]]), method, target);
  }

  function fastAnswer(res: ServerResponse, method: string, hit: Visit): void {
    if (hit.kind === 'found') metrics.fastRedirects[method === 'GET' ? FAST_GET : FAST_HEAD]!++;
    else metrics.redirected(hit.kind);
    answerVisit(reply, res, hit);
  }

  function dispatch(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void {
    const target = targetOf(req);
    const method = req.method ?? 'GET';
    // First, and for every request: the gate must never decide on a header list Node cut short.
    // One length comparison, so the redirect below pays nothing more.
    if (req.rawHeaders.length > MAX_RAW_HEADERS) return crowded(res, method, target, next);
    // The hot path: `GET <base>/<code>` spelled plainly — alphabet characters only, so no escape,
    // dot segment, query or trailing slash to normalize — where short links are public (see
    // `fastRedirects`). A hit is answered here; anything else (a miss, an expired link, any other
    // spelling) takes the general path below, which gives the same answers.
    if (fastRedirects && (method === 'GET' || method === 'HEAD') && target.startsWith(linkPrefix)) {
      const code = target.slice(linkPrefix.length);
      if (isCodeShaped(code) && !RESERVED_SEGMENTS.has(code)) {
        try {
          const hit = service.visit(code, method === 'GET');
          // A store that answers later (a database) has decided, and counted, by then: answered
          // here whatever the decision, since the general path would count a second time.
          if (hit instanceof Promise) return void hit.then((decided) => fastAnswer(res, method, decided), (err: unknown) => fail(res, err, method, target));
          if (hit.kind === 'found') {
            // Counting here is one increment of a preallocated slot, and no timing (metrics.ts).
            metrics.fastRedirects[method === 'GET' ? FAST_GET : FAST_HEAD]!++;
            return reply.found(res, hit.url);
          }
        } catch (err) {
          return fail(res, err, method, target);
        }
      }
    }
    const started = performance.now();
    routed = NO_ROUTE;
    const pending = general(req, res, method, target, next);
    // Read now: `routed` belongs to the next request once this one awaits.
    const route = routed;
    if (route === HANDED_ON) return;
    const count = (): void => metrics.request(route, method, res.statusCode, (performance.now() - started) / 1000);
    if (pending) void pending.then(count);
    else count();
  }

  /**
   * The pattern of the route `general` matched, set before it returns: `NO_ROUTE` when none did,
   * `HANDED_ON` when the request went to the host app's `next`.
   */
  let routed: string = NO_ROUTE;

  /** Everything but the fast path. Returns the handler's pending work, if any. */
  function general(req: IncomingMessage, res: ServerResponse, method: string, target: string, next?: (err?: unknown) => void): Promise<void> | void {
    const normalized = normalizeTarget(target);
    if (!normalized.ok) return fail(res, new HttpError(400, normalized.detail), method, target);
    const { segments, trailingSlash, query } = normalized.target;

    const rest = stripBase(segments, baseSegments);
    // Outside the base path an embedding app's own routes come first (Express-style `next`).
    if (rest === undefined && next) {
      next();
      // Set after: the host app may pass the request to this very handler again from `next`.
      routed = HANDED_ON;
      return;
    }
    // A preflight reveals nothing: the same 204 for every path, known or not (SPEC §3.6).
    if (method === 'OPTIONS') return reply.empty(res, 204);
    // One match serves the gate and the dispatch below. Nothing below runs for a request the gate
    // refuses; outside the base path counts as an unknown path.
    const found = rest === undefined ? undefined : match(method, rest);
    if (found) routed = found.route.path;
    const verdict = gate(method, found?.route, req.rawHeaders);
    if (!verdict.pass) return refuse(res, verdict, method, target);
    if (rest === undefined) return reply.empty(res, 404);
    if (rest.length === 0 && baseSegments.length > 0 && !trailingSlash) {
      // `/s` → `/s/`, keeping the query (SPEC §3.3).
      if (method !== 'GET' && method !== 'HEAD') return notAllowed(res, method, target, allowHeader(['GET']));
      return reply.empty(res, 301, ['Location', `${basePathRaw}/${query ? '?' + query : ''}`]);
    }

    if (!found) return reply.empty(res, 404);
    if (!found.handler) return notAllowed(res, method, target, found.allow);
    let parsed: URLSearchParams | undefined;
    const ctx: Ctx = { req, res, method, params: found.params, query: () => (parsed ??= new URLSearchParams(query)) };
    try {
      const done = found.handler(ctx);
      if (done) return done.catch((err: unknown) => fail(res, err, method, target));
    } catch (err) {
      fail(res, err, method, target);
    }
  }

  const handler: Handler = debug
    ? function shortenerWithAccessLog(req, res, next) {
        const start = performance.now();
        let passed = false;
        res.once('finish', () => {
          // A request handed on to the host app's `next` is the host's to log.
          if (passed) return;
          log.debug('request', {
            method: req.method,
            path: redactTarget(targetOf(req)),
            status: res.statusCode,
            ms: Math.round((performance.now() - start) * 100) / 100,
          });
        });
        const onward = next
          ? (err?: unknown): void => {
              passed = true;
              next(err);
            }
          : undefined;
        dispatch(req, res, onward);
      }
    : dispatch;

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
