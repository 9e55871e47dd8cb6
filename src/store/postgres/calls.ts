/**
 * The PostgreSQL store's plumbing (docs/postgres.md): every call bounded, and a database that cannot
 * be reached, or goes away mid-call, turned into the one `StoreUnavailableError("database
 * unavailable")` that the service answers 503, never a hang, never a 500. What it sees of those
 * failures is the store's readiness.
 *
 * Its own file because it is the same for every statement: the store says what to ask
 * (`statements.ts`) and hands it here to be sent, timed and have its errors sorted out.
 */
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import { StoreUnavailableError } from '../link-store.ts';
import { beginGuarded } from './begin.ts';

/** The message of every `StoreUnavailableError` of this store: the 503's `detail`. */
export const DATABASE_UNAVAILABLE = 'database unavailable';

/**
 * Errors that mean "the database cannot do this now" rather than a bug: no connection, a
 * connection lost, the server shutting down or starting up, out of resources, a statement
 * cancelled by its timeout, a read-only standby, a transaction aborted by one of these.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  '25006', // read_only_sql_transaction: a standby after a failover
  '25P02', // in_failed_sql_transaction: after one of these inside a held snapshot
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
// SQLSTATE classes: connection exception, insufficient resources, operator intervention
// (shutdown, statement timeout, cancel), system error.
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

export function isUnavailableError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_CODES.has(code) || (code.length === 5 && UNAVAILABLE_CLASSES.has(code.slice(0, 2)));
}

/** A transaction kept open across calls: a page read in parts, the export. */
export interface Held {
  tx: postgres.TransactionSql;
  /** Ends the transaction. Idempotent. */
  end(): void;
}

const SNAPSHOT = 'isolation level repeatable read read only';

/** The bounded calls of one pool, and the readiness they show. */
export class PostgresCalls {
  /** Undefined while the database answers; else why not (readiness). */
  private reason: string | undefined = undefined;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly log: Logger,
    /** Longest a call may take before it fails as unavailable, ms. */
    private readonly timeoutMs: number,
  ) {}

  ready(): string | undefined {
    return this.reason;
  }

  /** One statement (of the pool or of a held transaction), bounded: past the timeout it is cancelled (or taken out of the queue) and fails as unavailable. */
  async run<T extends readonly postgres.MaybeRow[]>(query: postgres.PendingQuery<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Only a query still queued is cancelled: postgres.js takes it out of the queue at once. A
        // query already sent would be cancelled over a connection of its own, whose failure (the
        // database being away is why we are here) rejects a promise the driver never hands back:
        // an unhandled rejection that ends the process. The server's statement_timeout ends it
        // instead, or the lost connection does; its settling is handled by the race below.
        if (!(query as { state?: unknown }).state) query.cancel();
        reject(new StoreUnavailableError(DATABASE_UNAVAILABLE));
      }, this.timeoutMs);
    });
    try {
      const rows = await Promise.race([query, timeout]);
      this.reachable();
      return rows as T;
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A short read-write transaction, bounded like a statement (a background job may allow itself
   * longer): one that only got its connection after the caller was told "unavailable" rolls back
   * without doing anything.
   */
  async transaction<T>(fn: (tx: postgres.TransactionSql) => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    let abandoned = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned = true;
        reject(new StoreUnavailableError(DATABASE_UNAVAILABLE));
      }, timeoutMs);
    });
    // A statement refused after the close (begin.ts) fails the body; `begin` has rejected already.
    const work = beginGuarded(this.sql, '', async (tx) => {
      if (abandoned) throw new StoreUnavailableError(DATABASE_UNAVAILABLE);
      const result = await fn(tx);
      // Too late to be acknowledged: roll back rather than commit what the caller was told failed.
      if (abandoned) throw new StoreUnavailableError(DATABASE_UNAVAILABLE);
      return result;
    });
    try {
      const result = await Promise.race([work, timeout]);
      this.reachable();
      return result;
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A repeatable-read, read-only transaction kept open until `end()`: one snapshot for many reads. */
  hold(): Promise<Held> {
    return new Promise<Held>((resolve, reject) => {
      let finish!: () => void;
      const ended = new Promise<void>((r) => (finish = r));
      let abandoned = false;
      const timer = setTimeout(() => {
        abandoned = true;
        reject(this.failure(new StoreUnavailableError(DATABASE_UNAVAILABLE)));
      }, this.timeoutMs);
      // The holder's reads build their statements before `run` sees them: one refused after the
      // close (begin.ts) must already be the store's error.
      const unavailable = (): Error => new StoreUnavailableError(DATABASE_UNAVAILABLE);
      beginGuarded(
        this.sql,
        SNAPSHOT,
        async (tx) => {
          clearTimeout(timer);
          if (abandoned) return;
          resolve({ tx, end: finish });
          await ended;
        },
        unavailable,
      ).catch((err: unknown) => {
        clearTimeout(timer);
        finish();
        reject(this.failure(err));
      });
    });
  }

  /** The error to throw for `err`: unavailability becomes the one `StoreUnavailableError`. */
  private failure(err: unknown): unknown {
    if (!(err instanceof StoreUnavailableError) && !isUnavailableError(err)) return err;
    if (this.reason === undefined) {
      const code = (err as { code?: unknown }).code;
      this.log.warn('database unavailable', { error: typeof code === 'string' ? code : 'timeout' });
    }
    this.reason = DATABASE_UNAVAILABLE;
    return err instanceof StoreUnavailableError ? err : new StoreUnavailableError(DATABASE_UNAVAILABLE);
  }

  private reachable(): void {
    if (this.reason === undefined) return;
    this.reason = undefined;
    this.log.info('database reachable again');
  }
}
