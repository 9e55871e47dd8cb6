/**
 * `url-shortener export` and `url-shortener import FILE` (docs/operations.md), and
 * `export-visits` and `import-visits FILE` (docs/analytics.md, moving history): the export and the
 * import of the HTTP API, offline, for moving links and their visit history between instances and
 * backends. They log to stderr, never stdout (stdout is the export itself).
 *
 * `export` reads the data dir without taking its lock, so it may run beside a server (a hot
 * backup); `import` and both visits commands open the store like a server does, so they refuse
 * while a server holds it.
 * With `--database-url` (or `DATABASE_URL`) both work on PostgreSQL instead (docs/postgres.md),
 * beside running servers: the export reads one snapshot, the import commits row by row. Their
 * command line is `transfer-args.ts`.
 */
import { createReadStream } from 'node:fs';
import { createCodeSource } from '../links/codes.ts';
import { ConfigError } from '../errors.ts';
import { createLogger, type Logger } from '../log.ts';
import { StoreUnavailableError, type LinkRecord, type LinkStore } from '../store/link-store.ts';
import { LogLinkStore } from '../store/log/log-link-store.ts';
import { DatabaseOpenError, describeDatabase, DriverMissingError, openPostgresStore } from '../store/postgres/connect.ts';
import { LogEngine, StoreOpenError } from '../store/log/log-engine.ts';
import { exportText } from '../transfer/export.ts';
import { LogSnapshotError, readLogSnapshot } from '../transfer/log-snapshot.ts';
import { createTransfer, type Transfer } from '../transfer/transfer.ts';
import { createDomains } from '../links/domains.ts';
import { ImportInputError, type ImportFormat } from '../transfer/sources.ts';
import { parseVisitExportFilter, visitExportText } from '../transfer/visit-transfer.ts';
import type { Config } from '../config/config.ts';
import { resolveConfig } from '../config/resolve.ts';
import type { TransferCommand } from './transfer-args.ts';

export { parseTransferCommand, type TransferCommand, type TransferCommandName } from './transfer-args.ts';

/** What the commands touch of the process: injectable for tests. */
export interface CommandIo {
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  now: () => number;
  /** The module name of the PostgreSQL driver (default `postgres`; tests of a missing driver). */
  driverModule?: string;
  /** What `import-visits -` reads (default: the process's stdin). */
  stdin?: NodeJS.ReadableStream;
}

/** Runs the command; resolves with the exit code (0 done, 1 failed, 2 bad usage). */
export async function runTransferCommand(cmd: TransferCommand, io: CommandIo): Promise<number> {
  let config: Config;
  try {
    const argv = cmd.databaseUrl === undefined ? cmd.settings : [...cmd.settings, `--database-url=${cmd.databaseUrl}`];
    const resolved = resolveConfig({ argv, env: io.env, readFile: io.readFile });
    if (resolved.command !== 'run') throw new ConfigError(`${cmd.command} takes no ${[...resolved.switches].join(' ')}`);
    config = resolved.config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr.write(`url-shortener ${cmd.command}: ${err.message}\n`);
    return 2;
  }
  const log = createLogger(config.logLevel, io.stderr);
  if (config.databaseUrl === '') {
    // The visits commands open the store like a server does (its lock): its events are read from
    // memory as the server would read them, and a server holding the dir makes them refuse.
    if (cmd.command === 'export') return exportCommand(cmd, config, log, io);
    return withLogStore(config, log, io, (links) =>
      cmd.command === 'export-visits' ? writeVisits(links, cmd, log, io, { data_dir: config.dataDir }) : importInto(links, cmd, config, log, io),
    );
  }
  let store: LinkStore;
  try {
    store = await openPostgresStore({
      url: config.databaseUrl,
      poolSize: 2,
      log,
      now: io.now,
      ...(io.driverModule !== undefined ? { driverModule: io.driverModule } : {}),
    });
  } catch (err) {
    if (err instanceof DriverMissingError) {
      io.stderr.write(`url-shortener ${cmd.command}: ${err.message}\n`);
      return 2;
    }
    if (!(err instanceof DatabaseOpenError)) throw err;
    log.error(err.message);
    return 1;
  }
  try {
    const where = describeDatabase(config.databaseUrl);
    const source = { database: where.database, database_host: where.host };
    if (cmd.command === 'export') return await writeExport(store.exportAll(Math.floor(io.now() / 1000)), cmd, config, log, io, source);
    if (cmd.command === 'export-visits') return await writeVisits(store, cmd, log, io, source);
    return await importInto(store, cmd, config, log, io);
  } finally {
    await store.close();
  }
}

const baseUrlOf = (config: Config): string => config.baseUrl ?? `http://localhost:${config.port}`;

function exportCommand(cmd: TransferCommand, config: Config, log: Logger, io: CommandIo): Promise<number> {
  return writeExport(readLogSnapshot(config.dataDir, Math.floor(io.now() / 1000)), cmd, config, log, io, { data_dir: config.dataDir });
}

/** Writes `records` to stdout in the asked format; `source` names where they came from, in the log. */
function writeExport(
  records: AsyncIterable<LinkRecord>,
  cmd: TransferCommand,
  config: Config,
  log: Logger,
  io: CommandIo,
  source: Record<string, string>,
): Promise<number> {
  const format = cmd.format ?? 'jsonl';
  return writePieces(records, (counted) => exportText(counted, format, createDomains(baseUrlOf(config), config.domains)), 'records', log, io, {
    ...source,
    format,
  });
}

/** Writes the events `cmd` asks for (`--code`, `--from`, `--to`, `--bots`) of `links` to stdout. */
function writeVisits(links: LinkStore, cmd: TransferCommand, log: Logger, io: CommandIo, source: Record<string, string>): Promise<number> {
  const format = cmd.format ?? 'jsonl';
  // Checked by parseTransferCommand already.
  const filter = parseVisitExportFilter(cmd.visits ?? {});
  if (typeof filter === 'string') throw new ConfigError(filter);
  return writePieces(links.exportVisits(filter, Math.floor(io.now() / 1000)), (counted) => visitExportText(counted, format), 'events', log, io, {
    ...source,
    format,
  });
}

/**
 * Writes the text `text` makes of `items` to stdout, counting the items as `noun` for the log line
 * (`fields` say what and from where).
 */
async function writePieces<T>(
  items: AsyncIterable<T>,
  text: (counted: AsyncIterable<T>) => AsyncIterable<string>,
  noun: string,
  log: Logger,
  io: CommandIo,
  fields: Record<string, string>,
): Promise<number> {
  let count = 0;
  const counted = (async function* () {
    for await (const item of items) {
      count++;
      yield item;
    }
  })();
  const out = io.stdout;
  // A closed pipe shows as an error (EPIPE) or a close: process.stdout is never marked destroyed.
  let gone = false;
  const onGone = (): void => void (gone = true);
  out.on('error', onGone).on('close', onGone);
  try {
    for await (const piece of text(counted)) {
      if (gone) {
        // The reader went away (`export | head`): the export is incomplete, which must not look done.
        log.warn('stdout was closed; the export is incomplete', { [noun]: count });
        return 1;
      }
      // Waits when the reader is slower than the log: memory holds a piece, not the export.
      if (!out.write(piece)) await writable(out);
    }
  } catch (err) {
    if (!(err instanceof LogSnapshotError || err instanceof StoreUnavailableError)) throw err;
    log.error(err.message);
    return 1;
  } finally {
    out.off('error', onGone).off('close', onGone);
  }
  const { format, ...source } = fields;
  log.info('exported', { ...source, [noun]: count, format });
  return 0;
}

/** Resolves once `out` drained, or closed. */
function writable(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

/** Runs `run` on the log store of the data dir, opened like a server opens it (with its lock). */
async function withLogStore(config: Config, log: Logger, io: CommandIo, run: (links: LinkStore) => Promise<number>): Promise<number> {
  let store: LogEngine;
  try {
    store = new LogEngine({ dir: config.dataDir, fsync: config.fsync, log, now: io.now });
  } catch (err) {
    // Another process holds the data dir: the message names it (host and PID).
    if (!(err instanceof StoreOpenError)) throw err;
    log.error(err.message);
    return 1;
  }
  const links = new LogLinkStore(store);
  try {
    return await run(links);
  } finally {
    await links.close();
  }
}

/** Imports the command's file (links, or with `import-visits` their events) into `links`, logging skipped rows; the exit code. */
async function importInto(links: LinkStore, cmd: TransferCommand, config: Config, log: Logger, io: CommandIo): Promise<number> {
  const file = cmd.file!;
  const stdin = file === '-' && cmd.command === 'import-visits';
  const format: ImportFormat = cmd.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'jsonl');
  const domains = createDomains(baseUrlOf(config), config.domains);
  const transfer: Transfer = createTransfer({
    store: links,
    rules: {
      baseUrl: baseUrlOf(config),
      domains,
      otherBases: domains.otherBases,
      maxLength: config.maxUrlLength,
      minShortLength: config.minShortLength,
      maxShortLength: config.maxShortLength,
    },
    now: io.now,
    randomCode: createCodeSource(),
  });
  const visits = cmd.command === 'import-visits';
  try {
    const input = stdin ? (io.stdin ?? process.stdin) : createReadStream(file);
    const body = input as AsyncIterable<Buffer | string>;
    const result = visits ? await transfer.importVisits(body, format, cmd.fromLine) : await transfer.importLinks(body, format, cmd.fromLine);
    for (const e of result.errors) log.warn('row skipped', { line: e.line, detail: e.detail });
    if (!result.ok) {
      // Every row before `line` is stored and none from it on: `--from-line` resumes there.
      log.error('import stopped: the store failed', {
        detail: result.detail,
        imported: result.imported,
        line: result.line,
        resume: `--from-line ${result.line}`,
      });
      return 1;
    }
    if (visits) log.info('imported', { file, format, imported: result.imported, skipped: result.skipped });
    else log.info('imported', { file, format, imported: result.imported, skipped: result.skipped, records: links.count });
    return 0;
  } catch (err) {
    if (err instanceof ImportInputError) log.error(err.message, { file });
    else if ((err as NodeJS.ErrnoException).code !== undefined && (err as NodeJS.ErrnoException).syscall !== undefined)
      log.error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
    else throw err;
    return 1;
  }
}
