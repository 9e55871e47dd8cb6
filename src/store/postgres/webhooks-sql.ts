/**
 * The SQL of webhooks on PostgreSQL (docs/postgres.md, webhooks), one method per statement, and the
 * rows they read. Each method only builds its query; `webhooks.ts` and `webhooks-fanout.ts` hand it
 * to the bounded `run` (`calls.ts`), or run it in the transaction of the change it tells of.
 *
 * "Wants" is `wants` of the contract (webhook-store.ts) spelled in SQL, so the rows a change writes
 * are decided by the table as the change's own statement reads it, never by a copy in memory.
 */
import type postgres from 'postgres';
import { KEPT_ATTEMPTS, type DeliveryAttempt, type EventType, type OutboxEvent, type PendingDelivery, type WebhookSubscription } from '../webhook-store.ts';

/** A row of `webhook_subscriptions` as the driver returns it: `bigint` columns come as strings. */
interface SubscriptionRow {
  id: string;
  url: string;
  events: string[];
  domain: string | null;
  secret: string;
  created_at: string;
  disabled: boolean;
}

/** A row of `webhook_outbox` as `claim` returns it. */
interface OutboxRow {
  seq: string;
  subscription_id: string;
  event_id: string;
  type: string;
  time: string;
  data: string;
  attempts: number;
  next_at: string;
  claimed_until: string;
}

/** A row of `webhook_attempts`; all null for a subscription without any (`deliveries`). */
interface AttemptRow {
  id: string | null;
  at: string;
  event_id: string;
  type: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
  outcome: DeliveryAttempt['outcome'];
}

export const toSubscription = (r: SubscriptionRow): WebhookSubscription =>
  Object.freeze({
    id: r.id,
    url: r.url,
    events: Object.freeze(r.events as EventType[]),
    domain: r.domain,
    secret: r.secret,
    createdAt: Number(r.created_at),
    disabled: r.disabled,
  });

/** A claimed row, and the `claimed_until` that is its claim's token. */
export const toPending = (r: OutboxRow): { row: PendingDelivery; token: number } => ({
  row: Object.freeze({
    seq: Number(r.seq),
    subscription: r.subscription_id,
    event: Object.freeze({ id: r.event_id, type: r.type as EventType, time: Number(r.time), data: r.data }),
    attempts: r.attempts,
    nextAt: Number(r.next_at),
  }),
  token: Number(r.claimed_until),
});

export const toAttempt = (r: AttemptRow): DeliveryAttempt =>
  Object.freeze({
    at: Number(r.at),
    eventId: r.event_id,
    type: r.type as EventType,
    status: r.status,
    durationMs: r.duration_ms,
    error: r.error,
    outcome: r.outcome,
  });

/** One event a change tells of, for every subscription that wants it of `domain` ('' the default one). */
export interface OutboxWrite {
  readonly domain: string;
  readonly event: OutboxEvent;
  /** `next_at` of its rows: due at once (the store's clock, ms). */
  readonly nextAt: number;
}

/** The `link.created` events of a batch of inserts, one per link some subscription wants it of. */
export interface CreatedEvents {
  readonly codes: string[];
  readonly domains: string[];
  readonly ids: string[];
  readonly times: number[];
  readonly data: string[];
  readonly nextAt: number;
}

export class WebhookStatements {
  constructor(private readonly sql: postgres.Sql) {}

  /** `wants` of the subscription named `s`, for `type` on `domain` (a parameter or a column). */
  private wanting(type: EventType, domain: string | postgres.PendingQuery<postgres.Row[]>): postgres.PendingQuery<postgres.Row[]> {
    const on = typeof domain === 'string' ? this.sql`${domain}::text` : domain;
    return this.sql`NOT s.disabled AND ${type}::text = ANY (s.events) AND (s.domain IS NULL OR s.domain = ${on})`;
  }

  addSubscription(sub: WebhookSubscription): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`
      INSERT INTO webhook_subscriptions (id, url, events, domain, secret, created_at, disabled)
      VALUES (${sub.id}, ${sub.url}, ${[...sub.events]}::text[], ${sub.domain}, ${sub.secret}, ${sub.createdAt}, ${sub.disabled})`;
  }

  subscriptions(): postgres.PendingQuery<SubscriptionRow[]> {
    return this.sql<SubscriptionRow[]>`
      SELECT id, url, events, domain, secret, created_at, disabled FROM webhook_subscriptions ORDER BY created_at, seq`;
  }

  /** Its outbox rows and attempts go with it (ON DELETE CASCADE). */
  removeSubscription(id: string): postgres.PendingQuery<{ id: string }[]> {
    return this.sql<{ id: string }[]>`DELETE FROM webhook_subscriptions WHERE id = ${id} RETURNING id`;
  }

  /** A row for one subscription, whatever it asked for; none for a disabled one. One row back when it exists. */
  enqueue(subscription: string, event: OutboxEvent, nextAt: number): postgres.PendingQuery<{ id: string }[]> {
    return this.sql<{ id: string }[]>`
      WITH sub AS (SELECT id, disabled FROM webhook_subscriptions WHERE id = ${subscription} FOR KEY SHARE), added AS (
        INSERT INTO webhook_outbox (subscription_id, event_id, type, time, data, next_at)
        SELECT id, ${event.id}::text, ${event.type}::text, ${event.time}::bigint, ${event.data}::text, ${nextAt}::bigint FROM sub WHERE NOT disabled
      )
      SELECT id FROM sub`;
  }

  /**
   * The rows of one event, one per subscription that wants it (in the change's transaction). Here,
   * in `created` and in `enqueue`, the subscriptions are read with the lock their key check takes
   * (`FOR KEY SHARE`): one whose removal is under way is waited on and then passed over, where the
   * check, after the wait, failed the change (23503).
   */
  fanOut(tx: postgres.ISql, { domain, event, nextAt }: OutboxWrite): postgres.PendingQuery<postgres.Row[]> {
    return tx`
      INSERT INTO webhook_outbox (subscription_id, event_id, type, time, data, next_at)
      SELECT s.id, ${event.id}::text, ${event.type}::text, ${event.time}::bigint, ${event.data}::text, ${nextAt}::bigint
      FROM webhook_subscriptions s WHERE ${this.wanting(event.type, domain)} ORDER BY s.seq FOR KEY SHARE OF s`;
  }

  /**
   * The `link.created` rows of a batch, as a CTE of its insert (statements.ts `insertBatch`): they
   * join `inserted`, so a link that lost its code to another writes nothing. In the batch's order.
   */
  created(e: CreatedEvents): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`
      INSERT INTO webhook_outbox (subscription_id, event_id, type, time, data, next_at)
      SELECT s.id, e.event_id, 'link.created', e.time, e.data, ${e.nextAt}::bigint
      FROM inserted i
      JOIN unnest(${e.codes}::text[], ${e.domains}::text[], ${e.ids}::text[], ${e.times}::bigint[], ${e.data}::text[])
        WITH ORDINALITY AS e (code, domain, event_id, time, data, n) ON e.code = i.code
      JOIN webhook_subscriptions s ON ${this.wanting('link.created', this.sql`e.domain`)}
      ORDER BY e.n, s.seq FOR KEY SHARE OF s`;
  }

  /**
   * Claims the rows due by `now` (webhooks.ts says how): each subscription's oldest row, when it is
   * due, unclaimed or its claim expired, and the subscription not disabled; locked with SKIP LOCKED
   * so an instance claiming at the same moment passes over them, and rechecked once locked.
   */
  claim(now: number, until: number, limit: number): postgres.PendingQuery<OutboxRow[]> {
    const free = (o: string): postgres.PendingQuery<postgres.Row[]> =>
      this.sql`${this.sql(o)}.next_at <= ${now}::bigint AND (${this.sql(o)}.claimed_until IS NULL OR ${this.sql(o)}.claimed_until <= ${now}::bigint)`;
    return this.sql<OutboxRow[]>`
      WITH heads AS (
        SELECT h.seq FROM webhook_subscriptions s
        CROSS JOIN LATERAL (
          SELECT o.seq, o.next_at, o.claimed_until FROM webhook_outbox o WHERE o.subscription_id = s.id ORDER BY o.seq LIMIT 1
        ) h
        WHERE NOT s.disabled AND ${free('h')}
      ), mine AS (
        SELECT o.seq FROM webhook_outbox o WHERE o.seq IN (SELECT seq FROM heads) AND ${free('o')}
        ORDER BY o.seq LIMIT ${limit} FOR UPDATE OF o SKIP LOCKED
      )
      UPDATE webhook_outbox o SET claimed_until = ${until}::bigint FROM mine WHERE o.seq = mine.seq
      RETURNING o.seq, o.subscription_id, o.event_id, o.type, o.time, o.data, o.attempts, o.next_at, o.claimed_until`;
  }

  /**
   * An attempt of `row`, one statement: the row deleted or kept for its retry (only while `token`,
   * this instance's claim, still holds it), the subscription disabled for a `disabled`, the attempt
   * added to its list and the list trimmed to the newest `KEPT_ATTEMPTS` (the trim reads the list
   * before this attempt, so it keeps one fewer).
   *
   * The subscription's row is locked first (`sub`: every part waits on it before touching a row of
   * its own), as its removal locks it before the rows that go with it: settled in the other order,
   * an attempt holding its outbox row while it waited on the subscription, and a removal holding the
   * subscription while it waited on that row, deadlocked, and one failed as unavailable. An attempt
   * of a subscription removed meanwhile changes nothing.
   */
  settle(row: PendingDelivery, a: DeliveryAttempt, nextAt: number | null, token: number | undefined): postgres.PendingQuery<postgres.Row[]> {
    const claim = token === undefined ? this.sql`seq = ${row.seq}` : this.sql`seq = ${row.seq} AND claimed_until = ${token}::bigint`;
    const held = this.sql`${claim} AND EXISTS (SELECT 1 FROM sub)`;
    const change =
      a.outcome === 'retry'
        ? this.sql`UPDATE webhook_outbox SET attempts = attempts + 1, next_at = ${nextAt ?? a.at}::bigint, claimed_until = NULL WHERE ${held}`
        : this.sql`DELETE FROM webhook_outbox WHERE ${held}`;
    const off = a.outcome === 'disabled' ? this.sql`, off AS (UPDATE webhook_subscriptions SET disabled = true WHERE id = (SELECT id FROM sub))` : this.sql``;
    return this.sql`
      WITH sub AS (SELECT id FROM webhook_subscriptions WHERE id = ${row.subscription} FOR KEY SHARE), change AS (${change})${off}, kept AS (
        INSERT INTO webhook_attempts (subscription_id, at, event_id, type, status, duration_ms, error, outcome)
        SELECT id, ${Math.round(a.at)}::bigint, ${a.eventId}::text, ${a.type}::text, ${a.status}::integer, ${Math.round(a.durationMs)}::integer,
          ${a.error}::text, ${a.outcome}::text
        FROM sub
      ), trimmed AS (
        DELETE FROM webhook_attempts WHERE EXISTS (SELECT 1 FROM sub) AND id IN (
          SELECT id FROM webhook_attempts WHERE subscription_id = ${row.subscription} ORDER BY id DESC OFFSET ${KEPT_ATTEMPTS - 1})
      )
      SELECT 1`;
  }

  /** A subscription's newest attempts, newest first; no row when there is no such subscription. */
  deliveries(id: string): postgres.PendingQuery<AttemptRow[]> {
    return this.sql<AttemptRow[]>`
      SELECT a.* FROM webhook_subscriptions s
      LEFT JOIN LATERAL (
        SELECT id, at, event_id, type, status, duration_ms, error, outcome FROM webhook_attempts
        WHERE subscription_id = s.id ORDER BY id DESC LIMIT ${KEPT_ATTEMPTS}
      ) a ON true
      WHERE s.id = ${id} ORDER BY a.id DESC`;
  }

  backlog(): postgres.PendingQuery<{ pending: string; dropped: string }[]> {
    return this.sql<{ pending: string; dropped: string }[]>`
      SELECT (SELECT count(*) FROM webhook_outbox) AS pending, (SELECT dropped_clicks FROM webhook_counters) AS dropped`;
  }

  addDropped(n: number): postgres.PendingQuery<postgres.Row[]> {
    return this.sql`UPDATE webhook_counters SET dropped_clicks = dropped_clicks + ${n}::bigint`;
  }
}
