/**
 * Webhooks on PostgreSQL (docs/postgres.md, webhooks): subscriptions, the outbox of their
 * deliveries and the attempts kept (migration 9), and a copy of the subscriptions in memory that
 * every change consults to know whether it has an event to write (`webhooks-fanout.ts` writes them
 * with the change).
 *
 * Claims, on any number of instances: `due` hands a row out by setting its `claimed_until`, a lease
 * of `leaseMs` (30 s, three times the 10 s a delivery may take) on the caller's clock, in one
 * `UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)`. Instances claiming at the same moment pass
 * over the rows the other has locked, and a row whose claim committed meanwhile is rechecked once
 * locked and left; a claimed row is no longer free, so no other instance is handed it until its
 * lease ends. Only each subscription's oldest row is a candidate, claimed or not, so its second
 * row waits while the first is in flight: order per subscription holds across instances. An
 * instance that dies holding a claim holds nothing once the lease is over: the row is handed out
 * again (delivery is at least once; the receiver knows it by its id). Chosen over a transaction
 * held per delivery: no connection stays open for the ten seconds a receiver may take.
 *
 * `settle` names the claim it ends (the `claimed_until` this instance set, kept here by `seq`): an
 * instance that comes back after its lease, once another has claimed the row, records its attempt
 * but leaves the row to the new holder.
 *
 * The copy of the subscriptions (like the domains', `domains.ts`) is at most `maxAgeMs` old, and
 * this instance's own changes are seen at once. Under traffic it is read again in the background
 * once half that age, so a redirect seldom waits for it.
 */
import type postgres from 'postgres';
import type { MaybePromise } from '../link-store.ts';
import type { DeliveryAttempt, OutboxEvent, PendingDelivery, WebhookStore, WebhookSubscription } from '../webhook-store.ts';
import type { PostgresCalls } from './calls.ts';
import { toAttempt, toPending, toSubscription, WebhookStatements } from './webhooks-sql.ts';

/** How long a claimed row stays with the instance that claimed it, ms: past a delivery's 10 s timeout. */
export const CLAIM_LEASE_MS = 30_000;

/** The SQLSTATE of a foreign key violation: the subscription went while its attempt was written. */
const SUBSCRIPTION_GONE = '23503';

export class PostgresWebhooks implements WebhookStore {
  readonly statements: WebhookStatements;
  private cached: readonly WebhookSubscription[] = [];
  /** When the copy was read (the store's clock, ms); undefined: read again. */
  private readAt: number | undefined;
  /** This instance's changes to the subscriptions: a read begun before one is not kept. */
  private changes = 0;
  private reading: { changes: number; subs: Promise<readonly WebhookSubscription[]> } | undefined;
  /** The claims this instance holds: `claimed_until` by `seq`, the token `settle` names. */
  private readonly claims = new Map<number, number>();
  /** Clicks the cap dropped here, not yet added to `webhook_counters`. */
  private drops = 0;
  /** Clicks the cap dropped here since this process started: what `/metrics` counts (each instance its own, so they add up). */
  private droppedHere = 0;

  constructor(
    sql: postgres.Sql,
    private readonly calls: PostgresCalls,
    /** Milliseconds; the store's clock (the copy's age). */
    private readonly clock: () => number,
    private readonly maxAgeMs: number,
    private readonly leaseMs = CLAIM_LEASE_MS,
  ) {
    this.statements = new WebhookStatements(sql);
  }

  // ---- The copy in memory ---------------------------------------------------------------------

  /** The subscriptions as last read, when fresh; else one read for every caller. */
  current(): MaybePromise<readonly WebhookSubscription[]> {
    if (this.readAt !== undefined) {
      const age = this.clock() - this.readAt;
      // A clock set back is no reason to trust an old copy.
      if (age >= 0 && age < this.maxAgeMs) {
        if (age * 2 >= this.maxAgeMs && this.reading === undefined) this.read().catch(() => undefined);
        return this.cached;
      }
    }
    return this.read();
  }

  private read(): Promise<readonly WebhookSubscription[]> {
    const changes = this.changes;
    if (this.reading?.changes === changes) return this.reading.subs;
    const started = this.clock();
    const subs = this.calls.run(this.statements.subscriptions()).then((rows) => {
      const read = Object.freeze(rows.map(toSubscription));
      // A change of this instance made while reading may be missing: the next caller reads again.
      if (this.changes === changes) {
        this.cached = read;
        this.readAt = started;
      }
      return read;
    });
    const done = (): void => {
      if (this.reading?.subs === subs) this.reading = undefined;
    };
    subs.then(done, done);
    this.reading = { changes, subs };
    return subs;
  }

  private changed(): void {
    this.changes++;
    this.readAt = undefined;
  }

  // ---- Subscriptions ---------------------------------------------------------------------------

  async addSubscription(sub: WebhookSubscription): Promise<void> {
    try {
      await this.calls.run(this.statements.addSubscription(sub));
    } finally {
      // Even on an error: a write whose answer was lost may have been applied.
      this.changed();
    }
  }

  /** Read from the table, never the copy: an admin's list shows what is stored now. */
  subscriptions(): Promise<readonly WebhookSubscription[]> {
    return this.read();
  }

  async removeSubscription(id: string): Promise<boolean> {
    try {
      return (await this.calls.run(this.statements.removeSubscription(id))).length > 0;
    } finally {
      this.changed();
    }
  }

  // ---- The outbox -----------------------------------------------------------------------------

  async enqueue(subscription: string, event: OutboxEvent, now: number): Promise<boolean> {
    return (await this.calls.run(this.statements.enqueue(subscription, event, now))).length > 0;
  }

  async due(now: number, limit: number): Promise<readonly PendingDelivery[]> {
    if (limit <= 0) return [];
    const rows = await this.calls.run(this.statements.claim(now, now + this.leaseMs, limit));
    const claimed = rows.map(toPending).sort((a, b) => a.row.seq - b.row.seq);
    for (const { row, token } of claimed) this.claims.set(row.seq, token);
    return claimed.map((c) => c.row);
  }

  async settle(row: PendingDelivery, attempt: DeliveryAttempt, nextAt: number | null): Promise<void> {
    const token = this.claims.get(row.seq);
    try {
      await this.calls.run(this.statements.settle(row, attempt, nextAt, token));
    } catch (err) {
      // Deleted meanwhile, its rows and attempts with it: nothing is left to record.
      if ((err as { code?: unknown } | null)?.code !== SUBSCRIPTION_GONE) throw err;
    } finally {
      if (this.claims.get(row.seq) === token) this.claims.delete(row.seq);
      if (attempt.outcome === 'disabled') this.changed();
    }
  }

  async deliveries(subscription: string): Promise<readonly DeliveryAttempt[] | undefined> {
    const rows = await this.calls.run(this.statements.deliveries(subscription));
    if (rows.length === 0) return undefined;
    return rows.filter((r) => r.id !== null).map(toAttempt);
  }

  async backlog(): Promise<{ pending: number; dropped: number }> {
    await this.flushDrops();
    const [row] = await this.calls.run(this.statements.backlog());
    return { pending: Number(row!.pending), dropped: this.droppedHere };
  }

  // ---- Clicks dropped by the cap ---------------------------------------------------------------

  /**
   * Counted here and added to the table in the background (`flushDrops`, every second): a counter
   * row every dropped click updated would make the redirects of a subscription at its cap wait on
   * one another. A crash loses at most the last second's count of this instance, never an event.
   */
  dropped(n: number): void {
    this.drops += n;
    this.droppedHere += n;
  }

  async flushDrops(): Promise<void> {
    const n = this.drops;
    if (n === 0) return;
    this.drops = 0;
    try {
      await this.calls.run(this.statements.addDropped(n));
    } catch (err) {
      this.drops += n;
      throw err;
    }
  }
}
