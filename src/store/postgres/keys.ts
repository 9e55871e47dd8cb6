/**
 * Stored API keys on PostgreSQL (docs/postgres.md, stored keys): the table `api_keys` (migration 5)
 * and, in front of it, the one thing this store keeps in memory across requests.
 *
 * Why a cache: the service reads every key on every request that carries one, and a database round
 * trip per request would double the cost of a create. Why it is still exact within a second: every
 * change but a touch notifies `api_keys_changed` (a trigger, so a change made by the command line or
 * by hand is announced too), and each instance LISTENs on a connection of its own and reads the keys
 * again on the next request after a notification. A notification can be lost (it is sent only to
 * the listeners connected when it commits, and the listening connection may be down just then),
 * so the keys are also read again when the copy is `maxAgeMs` old (a second): a revoke reaches
 * every instance within that second whatever happened to its notification. A key added or revoked
 * by this process is read again at once; the notification of that write (it names its
 * transaction) is then not another reason to read.
 */
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import type { KeyRecord, KeyStore, Role } from '../key-store.ts';
import type { MaybePromise } from '../link-store.ts';
import type { PostgresCalls } from './calls.ts';

/** The channel the trigger of migration 5 notifies. */
export const KEYS_CHANNEL = 'api_keys_changed';

/** A row of `api_keys` as the driver returns it: `bigint` columns come as strings. */
interface KeyRow {
  id: string;
  name: string;
  role: Role;
  domain: string | null;
  digest: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const toKey = (r: KeyRow): KeyRecord =>
  Object.freeze({
    id: r.id,
    name: r.name,
    role: r.role,
    domain: r.domain,
    digest: r.digest,
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  });

export class PostgresKeys implements KeyStore {
  /** The keys as last read, and the clock when that read began; `readAt` undefined: read again. */
  private cached: readonly KeyRecord[] = [];
  private readAt: number | undefined;
  /** Reads begun, and which of them the copy is: by order, not by the clock, which can be set back. */
  private reads = 0;
  private cachedOrder = 0;
  /** Changes heard of (notifications, reconnections of the listener, this process's writes). */
  private changes = 0;
  /**
   * The read in flight, the `changes` it began under and when: a later change needs a read of its
   * own, and so does a caller after it is `maxAgeMs` old (a slow database must not stretch the second).
   */
  private reading: { changes: number; started: number; keys: Promise<readonly KeyRecord[]> } | undefined;
  /** Transactions of this process's writes whose notification has not come yet. */
  private readonly own = new Set<string>();

  constructor(
    private readonly sql: postgres.Sql,
    private readonly calls: PostgresCalls,
    private readonly log: Logger,
    /** Milliseconds; the store's clock. */
    private readonly clock: () => number,
    /** How old the copy may be when no notification came, ms. */
    private readonly maxAgeMs: number,
  ) {}

  /**
   * LISTENs on the driver's connection for notifications (one more connection per process). It
   * (re)connects by itself, and each time it listens again the keys are read again: changes made
   * while it was away were never told. Failing here costs only the notifications: the keys are
   * then read again every `maxAgeMs`.
   */
  async listen(): Promise<void> {
    const notified = (tx: string): void => {
      if (!this.own.delete(tx)) this.changed();
    };
    const listening = (): void => {
      // Notifications of this process's writes made while it was away never come.
      this.own.clear();
      this.changed();
    };
    try {
      await this.sql.listen(KEYS_CHANNEL, notified, listening);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      this.log.warn('stored keys: no change notifications, the keys are read every second', { error: typeof code === 'string' ? code : String(err) });
    }
  }

  /** From memory while the copy is fresh and no change was heard of; else one read for every caller. */
  keys(): MaybePromise<readonly KeyRecord[]> {
    if (this.readAt !== undefined) {
      const age = this.clock() - this.readAt;
      // A clock set back is no reason to trust an old copy.
      if (age >= 0 && age < this.maxAgeMs) return this.cached;
    }
    return this.read();
  }

  private read(): Promise<readonly KeyRecord[]> {
    const changes = this.changes;
    const started = this.clock();
    const pending = this.reading;
    if (pending?.changes === changes && started - pending.started >= 0 && started - pending.started < this.maxAgeMs) return pending.keys;
    const order = ++this.reads;
    const keys = this.calls
      .run(this.sql<KeyRow[]>`
        SELECT id, name, role, domain, digest, created_at, expires_at, last_used_at FROM api_keys ORDER BY created_at, seq`)
      .then((rows) => {
        const read = Object.freeze(rows.map(toKey));
        // A change heard of while reading may be missing from this read: it answers the callers
        // that asked before, and the next one reads again. So does a read that began before the
        // copy's (two reads a second apart, the later answered first): it is the older of the two.
        if (this.changes === changes && order > this.cachedOrder) {
          this.cached = read;
          this.readAt = started;
          this.cachedOrder = order;
        }
        return read;
      });
    const done = (): void => {
      if (this.reading?.keys === keys) this.reading = undefined;
    };
    void keys.then(done, done);
    this.reading = { changes, started, keys };
    return keys;
  }

  private changed(): void {
    this.changes++;
    this.readAt = undefined;
  }

  /** A write of this process: read again at once (unless it surely `changed` nothing), and not again for its notification. */
  private wrote(rows: readonly { tx: string }[], changed = true): void {
    const tx = rows[0]?.tx;
    if (tx !== undefined) this.own.add(tx);
    if (changed) this.changed();
  }

  async addKey(key: KeyRecord): Promise<void> {
    const row = {
      id: key.id,
      name: key.name,
      role: key.role,
      domain: key.domain,
      digest: key.digest,
      created_at: key.createdAt,
      expires_at: key.expiresAt,
      last_used_at: key.lastUsedAt,
    };
    let rows: { tx: string }[] = [];
    try {
      rows = await this.calls.run(this.sql<{ tx: string }[]>`INSERT INTO api_keys ${this.sql(row)} RETURNING txid_current()::text AS tx`);
    } finally {
      // Even on an error: a write whose answer was lost may have been applied.
      this.wrote(rows);
    }
  }

  async revokeKey(id: string): Promise<boolean> {
    let rows: { tx: string; id: string | null }[] = [];
    let gone = true;
    try {
      // One row whether a key went or not: the trigger notifies either way, with this transaction.
      rows = await this.calls.run(this.sql<{ tx: string; id: string | null }[]>`
        WITH gone AS (DELETE FROM api_keys WHERE id = ${id} RETURNING id)
        SELECT (SELECT id FROM gone), txid_current()::text AS tx`);
      gone = typeof rows[0]?.id === 'string';
      return gone;
    } finally {
      this.wrote(rows, gone);
    }
  }

  /**
   * One UPDATE of one row, which notifies nobody (the trigger leaves `last_used_at` out): the
   * other instances see the time on their next read, at most `maxAgeMs` later. Never backwards,
   * whichever instance's clock is behind; a deleted (revoked) key has no row to update.
   */
  async touchKey(id: string, at: number): Promise<void> {
    await this.calls.run(this.sql`
      UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`);
    // This process sees it at once, without reading every key again.
    this.cached = Object.freeze(
      this.cached.map((k) => (k.id === id && (k.lastUsedAt === null || k.lastUsedAt < at) ? Object.freeze({ ...k, lastUsedAt: at }) : k)),
    );
  }
}
