/**
 * Opening the PostgreSQL store (docs/postgres.md): load the optional `postgres` driver, open a pool
 * with bounded timeouts, run the migrations under their advisory lock, then hand the pool to the
 * store. The driver is an optional peer dependency, loaded only when a database URL is set.
 */
import type postgres from 'postgres';
import { migrate } from './schema.ts';
import { DATABASE_UNAVAILABLE, isUnavailableError } from './calls.ts';
import { PostgresStore, type PostgresStoreOptions } from './store.ts';

/** The driver is not installed: the message says how to install it. */
export class DriverMissingError extends Error {
  constructor(moduleName: string) {
    super(`DATABASE_URL is set but the PostgreSQL driver is not installed: run \`npm install ${moduleName}\``);
    this.name = 'DriverMissingError';
  }
}

/** The database could not be opened at start-up (unreachable, refused, or a migration failed). */
export class DatabaseOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

type Driver = typeof postgres;

/** `import(moduleName)`; a missing module is a `DriverMissingError`. The name is a seam for tests. */
export async function loadDriver(moduleName = 'postgres'): Promise<Driver> {
  try {
    const mod = (await import(moduleName)) as { default?: Driver };
    return mod.default ?? (mod as unknown as Driver);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new DriverMissingError(moduleName);
    throw err;
  }
}

/** Host (with its port) and database name of a URL, for logs: never the user or the password. */
export function describeDatabase(url: string): { host: string; database: string } {
  try {
    const u = new URL(url);
    const socket = u.searchParams.get('host');
    return { host: u.host || socket || 'localhost', database: decodeURIComponent(u.pathname.slice(1)) || '(default)' };
  } catch {
    return { host: '(unparsable URL)', database: '(unknown)' };
  }
}

export interface PostgresOpenOptions extends Omit<PostgresStoreOptions, 'sql'> {
  url: string;
  /** Connections of this process's pool (DB_POOL_SIZE). */
  poolSize: number;
  /** The driver's module name (default `postgres`): a seam for the test of a missing driver. */
  driverModule?: string;
  /** Connect timeout, seconds (default 3). */
  connectTimeoutS?: number;
}

/** Loads the driver, opens the pool, migrates, and opens the store. */
export async function openPostgresStore(options: PostgresOpenOptions): Promise<PostgresStore> {
  const { url, poolSize, driverModule, connectTimeoutS = 3, ...storeOptions } = options;
  const driver = await loadDriver(driverModule);
  const timeoutMs = storeOptions.timeoutMs ?? 4000;
  const sql = driver(url, {
    max: poolSize,
    connect_timeout: connectTimeoutS,
    // Reconnect soon once the database is back: the driver's default backoff grows to 20 s.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    idle_timeout: 60,
    onnotice: () => undefined,
    connection: {
      application_name: 'url-shortener',
      // The server's half of the bound on every call; the store's timer is the other.
      statement_timeout: timeoutMs,
      // Creates, edits, deletes, imports and limited visits are acknowledged only once committed
      // durably, whatever the server's default; unlimited visits relax it per statement.
      synchronous_commit: 'on',
      // Compiling a plan costs more than it saves here: the statements are short, and the stats'
      // aggregates over a million events took three times as long with it (docs/postgres.md).
      jit: 'off',
    },
  });
  const where = describeDatabase(url);
  try {
    await migrate(sql);
    // The driver asks each new connection for the array types before its first statement, and
    // nothing awaits that question: a connection lost while it is asked (a database restarting)
    // rejects a promise no caller holds, and an unhandled rejection ends the process. The first
    // connection has asked already (migrate waited for it), and the answer is the pool's: the
    // connections opened later need not ask again.
    sql.options.fetch_types = false;
    return await PostgresStore.open({ ...storeOptions, sql });
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => undefined);
    if (isUnavailableError(err)) {
      const code = (err as { code?: unknown }).code;
      throw new DatabaseOpenError(`cannot reach the database ${where.database} on ${where.host}: ${DATABASE_UNAVAILABLE} (${String(code)})`);
    }
    throw new DatabaseOpenError(`cannot open the database ${where.database} on ${where.host}: ${(err as Error).message}`);
  }
}
