/**
 * The server's command line (`server.ts` runs it): read the configuration, then run a command
 * or serve: load the links, listen, attach the handler, log one start-up line, and shut down
 * cleanly on SIGTERM/SIGINT. Everything else lives in the handler (and the server's connection
 * limits in http-options.ts and connections.ts).
 */
import { ensureFirstAdmin, heldUntil } from './cli/first-admin.ts';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openShortenerAsync, type OpenedShortener, type Shortener, type ShortenerOptions } from './app.ts';
import { startCluster } from './cli/cluster.ts';
import { helpText } from './cli/help.ts';
import type { Config } from './config/config.ts';
import { resolveConfig, type Command, type Resolved } from './config/resolve.ts';
import { spareLongUploads } from './http/body.ts';
import { trackConnections, type TrackedConnections } from './http/tracking.ts';
import { ConfigError } from './errors.ts';
import { serverOptions } from './cli/http-options.ts';
import { parseTransferCommand, runTransferCommand, type CommandIo } from './cli/transfer-commands.ts';
import { parseKeysCommand, runKeysCommand } from './cli/keys-commands.ts';
import { parseWebhooksCommand, runWebhooksCommand } from './cli/webhooks-commands.ts';
import { createLogger, ignoreClosedPipe, type Logger } from './log.ts';
import { isLoopbackListenAddress } from './cli/loopback.ts';
import { LockError } from './store/log/lock.ts';
import { DatabaseOpenError, DriverMissingError } from './store/postgres/connect.ts';
import { repairLog } from './store/log/repair.ts';
import { LogEngine, StoreOpenError } from './store/log/log-engine.ts';
import { NAME, VERSION } from './version.ts';

/** Flushing visits and closing the log after the requests are done: a stuck disk exits 1 after this. */
const FLUSH_GRACE_MS = 10_000;

/**
 * The store's clocks, which the crash tests run faster than a deployment's (a visit flush every
 * tenth of a second, a compaction once the log passes some hundred kilobytes) so that a kill lands
 * after flushes and during compactions within a short load. No setting gives them: the server run
 * as `server.ts` keeps the defaults.
 */
export type ServerTuning = Pick<ShortenerOptions, 'visitFlushMs' | 'compactMinBytes'>;

/** Each command of the command line (`--help`, `--version`, `--repair`, `--compact`, or serving). */
const COMMANDS: Readonly<Record<Command, (config: Config, tuning: ServerTuning) => void | Promise<void>>> = {
  help: () => void process.stdout.write(`${helpText()}\n`),
  version: () => void process.stdout.write(`${NAME} ${VERSION}\n`),
  repair: (config) => repair(config.dataDir, createLogger(config.logLevel)),
  compact: (config) => compactOffline(config.dataDir, createLogger(config.logLevel)),
  run: serve,
};

/** Runs the command of `process.argv` (by default, serving) with the store on `tuning`'s clocks. */
export async function main(tuning: ServerTuning = {}): Promise<void> {
  ignoreClosedPipe(process.stdout);
  if (storeCommand()) return;
  const { command, config } = resolvedOrExit();
  await COMMANDS[command](config, tuning);
}

/** The configuration of flags, environment and file; a bad one is one line and exit 2. */
function resolvedOrExit(): Resolved {
  try {
    return resolveConfig({ argv: process.argv.slice(2), env: process.env, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${NAME}: ${err.message}\n`);
    process.exit(2);
  }
}

/** `--repair`: salvage what a damaged log still holds (docs/storage.md), report, exit. */
function repair(dataDir: string, log: Logger): void {
  try {
    const report = repairLog(dataDir);
    if (!report.movedTo) log.info('log is intact; nothing to repair', { file: report.file, entries: report.kept });
    else {
      for (const l of report.lost) log.warn('dropped a damaged line', { line: l.line, reason: l.reason, bytes: l.bytes });
      log.info('log repaired', { file: report.file, kept: report.kept, lost: report.lost.length, damaged_copy: report.movedTo });
    }
  } catch (err) {
    log.error(err instanceof LockError ? err.message : `repair failed: ${(err as Error).message}`);
    process.exit(1);
  }
}

/** Serving: load the links, listen, log the start-up line, and shut down cleanly on a signal. */
async function serve(config: Config, tuning: ServerTuning): Promise<void> {
  const log = createLogger(config.logLevel);
  // WORKERS=N: the primary forks the workers and serves nothing itself (docs/scale-out.md).
  if (startCluster(config, log)) return;
  const opened = await openOrExit(config, log, tuning);

  // Timeouts, header size and a connection cap: no client can hold the server with slow bytes.
  const limits = serverOptions(config);
  const server = createServer(limits.options);
  // Its `serve` attaches the handler: a request counts as in flight before it runs. It keeps the
  // keep-alive timeout from here on (keep-alive.ts).
  const connections = trackConnections(server, limits.maxConnections);
  // An import may take longer than request_timeout_ms to upload: cut only when its bytes stop.
  spareLongUploads(server, config.requestTimeoutMs);

  const cannotListen = (err: NodeJS.ErrnoException): void => {
    log.error('cannot listen', { host: config.host, port: config.port, error: err.code ?? err.message });
    // Release the data dir for whoever starts next.
    void opened
      .close()
      .catch(() => undefined)
      .then(() => process.exit(1));
  };
  server.once('error', cannotListen);

  server.listen(config.port, config.host, () => {
    // Once listening, a server error (a failed accept) concerns one connection, not the service.
    server.off('error', cannotListen);
    server.on('error', (err: NodeJS.ErrnoException) => log.error('server error', { error: err.code ?? err.message }));
    const { port } = server.address() as AddressInfo;
    const shortener = opened.start(port);
    // The first admin key exists before any request is answered (the requests of the moment wait).
    connections.serve(heldUntil(ensureFirstAdmin(shortener.service.keys, config, log), shortener.handler));
    // Before the start-up line: whoever reads it may send SIGTERM at once, and a signal with no
    // listener yet would kill the process without the clean shutdown.
    const shutdown = shutdownOf(server, connections.table, shortener, config, log);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));
    logStart(config, shortener, port, log);
  });
}

/**
 * Every link loaded before the port opens (docs/storage.md Start-up): the first request ever
 * answered sees them all; with a database, connected and migrated first (docs/postgres.md). The
 * handler is built once listening, when PORT=0 knows the port of its default base URL. A store
 * that cannot open exits 1; a setting that cannot be used (a damaged GEOIP_DB), 2.
 */
async function openOrExit(config: Config, log: Logger, tuning: ServerTuning): Promise<OpenedShortener> {
  try {
    return await openShortenerAsync({ ...tuning, ...config, logger: log });
  } catch (err) {
    if (err instanceof DriverMissingError || err instanceof ConfigError) {
      process.stderr.write(`${NAME}: ${err.message}\n`);
      process.exit(2);
    }
    if (!(err instanceof StoreOpenError || err instanceof DatabaseOpenError)) throw err;
    log.error(err.message);
    process.exit(1);
  }
}

/** The start-up line, and the warnings of a configuration that leaves something open. */
function logStart(config: Config, shortener: Shortener, port: number, log: Logger): void {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  log.info('listening', {
    url: `http://${host}:${port}`,
    base_url: shortener.config.baseUrl,
    ...(shortener.database ? { database: shortener.database.database, database_host: shortener.database.host } : { data_file: shortener.dataFile }),
    records: shortener.count,
    ...(shortener.database ? { pool_size: config.dbPoolSize } : { fsync: config.fsync }),
    gate: config.apiToken !== '',
    public_redirects: config.publicRedirects,
    api_keys: config.apiKeys.length > 0,
  });
  if (config.apiToken === '' && !isLoopbackListenAddress(config.host) && config.createAccess === 'open') {
    // An instance that must stay open is told of the controls it has (docs/security.md).
    const limit =
      '; or let only API keys create with CREATE_ACCESS=key' +
      (config.createRateLimit === '' ? '; if it must stay open, limit creates per client with CREATE_RATE_LIMIT (e.g. 60/min)' : '');
    log.warn(
      'the gate is off and HOST is not a loopback address: anyone who can reach the port can create links, ' +
        `and open shorteners are abused for phishing. Set API_TOKEN, or listen on 127.0.0.1 behind a proxy that adds it${limit}`,
      { host: config.host, create_rate_limit: config.createRateLimit === '' ? 'off' : config.createRateLimit },
    );
  }
}

/** docs/storage.md Shutdown: the first signal stops the server, lets requests finish, flushes and exits. */
function shutdownOf(server: Server, table: TrackedConnections['table'], shortener: Shortener, config: Config, log: Logger): (signal: string) => Promise<void> {
  let stopping = false;
  return async function shutdown(signal) {
    if (stopping) return;
    stopping = true;
    // First, so that a load balancer probing readiness stops sending traffic.
    shortener.beginShutdown();
    log.info('shutting down', { signal, in_flight: table.inFlight });
    // Requests in flight get shutdown_timeout_ms; then their connections are cut.
    const cutOff = setTimeout(() => {
      log.warn('shutdown timeout: closing connections with requests still in flight', {
        in_flight: table.inFlight,
        shutdown_timeout_ms: config.shutdownTimeoutMs,
      });
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    // Stop accepting; close every connection without a request in flight (silent, half a request
    // sent, idle) now and the others once answered. node:http alone would wait for silent ones.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      table.drain();
    });
    clearTimeout(cutOff);
    setTimeout(() => {
      log.error('flushing the log took too long; exiting');
      process.exit(1);
    }, FLUSH_GRACE_MS).unref();
    // Flush visits, fsync, release the lock.
    await shortener.close();
    log.info('stopped', { records: shortener.count });
    process.exit(0);
  };
}

/**
 * The commands that work on a store and exit: `export`, `import FILE` and the visits' pair
 * (src/cli/transfer-commands.ts), `keys create|list|revoke` (src/cli/keys-commands.ts),
 * `webhooks list|create|delete|deliveries` (src/cli/webhooks-commands.ts). True when argv is one
 * of them.
 */
function storeCommand(): boolean {
  const argv = process.argv.slice(2);
  let run: ((io: CommandIo) => Promise<number>) | undefined;
  try {
    const transfer = parseTransferCommand(argv);
    const keys = parseKeysCommand(argv);
    const webhooks = parseWebhooksCommand(argv);
    if (transfer !== undefined) run = (io) => runTransferCommand(transfer, io);
    else if (keys !== undefined) run = (io) => runKeysCommand(keys, io);
    else if (webhooks !== undefined) run = (io) => runWebhooksCommand(webhooks, io);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${NAME}: ${err.message}\n`);
    process.exit(2);
  }
  if (run === undefined) return false;
  const io = { env: process.env, readFile: (p: string) => readFileSync(p, 'utf8'), stdout: process.stdout, stderr: process.stderr, now: Date.now };
  void run(io).then((code) => (process.exitCode = code));
  return true;
}

/** `--compact`: rewrite the log of a stopped server's data dir, report, exit. */
async function compactOffline(dataDir: string, log: Logger): Promise<void> {
  let store: LogEngine;
  try {
    store = new LogEngine({ dir: dataDir, fsync: 'always', log });
  } catch (err) {
    if (!(err instanceof StoreOpenError)) throw err;
    log.error(err.message);
    process.exit(1);
  }
  try {
    const report = await store.compact();
    log.info('log compacted', { file: store.path, records: store.count, ...report });
  } catch (err) {
    log.error('compaction failed; the log is unchanged', { error: (err as Error).message });
    process.exitCode = 1;
  } finally {
    await store.close();
  }
}
