/**
 * The events of changes on PostgreSQL (docs/postgres.md, webhooks): the outbox rows of a create,
 * an edit, a delete and a counted visit, written by the change's own statement or transaction, so
 * a change and its events commit together or not at all, and a change that did not happen (a code
 * lost to another create, a link already gone, a visit not counted) writes none.
 *
 * Whether a change has events to write is the copy of the subscriptions' answer (`webhooks.ts`,
 * `wants` of the contract): when no subscription wants one, the change is sent exactly as without
 * webhooks. Which subscriptions get a row is the table's answer, read by the change's own statement
 * (`webhooks-sql.ts`). The bodies are the service's (`WebhookBodies`), rendered here from the
 * record being written or the row the change returned.
 *
 * A counted visit (`redirect.ts`) writes its `link.clicked` rows in the redirect's own statement
 * (`HOOKED`, redirect-sql.ts), its data rendered before the statement from the visit's event. Its
 * `link.limit_reached` needs the row as the visit left it, which no statement has before it runs:
 * while a subscription wants it, the hooked statement first counts only a visit that leaves the
 * link short of its limit; the one that reaches it is counted again in a transaction, which adds
 * the event rendered from the row it returned. Only that visit pays the transaction.
 */
import type postgres from 'postgres';
import type { VisitEvent } from '../../visits/event.ts';
import { mapMaybe, type LinkRecord, type MaybePromise } from '../link-store.ts';
import { CLICK_CAP, keyDomain, newEventId, wants, type EventType, type WebhookBodies } from '../webhook-store.ts';
import type { PostgresCalls } from './calls.ts';
import type { EventColumns } from './event-row.ts';
import { HOOKED, visitParams } from './redirect-sql.ts';
import { toRecord, type Row } from './statements.ts';
import type { PostgresWebhooks } from './webhooks.ts';
import type { CreatedEvents, OutboxWrite } from './webhooks-sql.ts';

/** The domain of a store key as the subscriptions' column names it: its host, '' for the default domain. */
const domainOf = (key: string): string => keyDomain(key) ?? '';

/** A counted visit's webhooks, made before its statement (`forVisit`). */
export interface VisitHooks {
  /** The hooked text's parameters after the event's (redirect-sql.ts `hooks`); none for a visit without an event. */
  readonly params: readonly (string | number)[];
  /** Some subscription wants `link.limit_reached` of the link's domain. */
  readonly limit: boolean;
  readonly domain: string;
}

/** What a hooked count returns: the row as the visit left it, and how many subscriptions' clicks the cap dropped. */
type HookedRow = Row & { dropped: string };

export class WebhookFanout {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly webhooks: PostgresWebhooks,
    private readonly bodies: WebhookBodies,
    /** Milliseconds: the event ids' time, and `next_at` of new rows. */
    private readonly clock: () => number,
    /** Pending `link.clicked` rows a subscription may have (`CLICK_CAP`; smaller in tests). */
    private readonly cap = CLICK_CAP,
  ) {}

  /** Whether some subscription of the copy wants `type` of the link of store key `key`. */
  wants(type: EventType, key: string): MaybePromise<boolean> {
    const domain = domainOf(key);
    return mapMaybe(this.webhooks.current(), (subs) => subs.some((s) => wants(s, type, domain)));
  }

  /** The `link.created` events of a batch of inserts, of the links some subscription wants it of; undefined for none. */
  created(records: readonly LinkRecord[]): MaybePromise<CreatedEvents | undefined> {
    return mapMaybe(this.webhooks.current(), (subs) => {
      const told = records.filter((r) => subs.some((s) => wants(s, 'link.created', domainOf(r.code))));
      if (told.length === 0) return undefined;
      const ms = this.clock();
      return {
        codes: told.map((r) => r.code),
        domains: told.map((r) => domainOf(r.code)),
        ids: told.map(() => newEventId(ms)),
        times: told.map((r) => r.createdAt),
        data: told.map((r) => this.bodies.link(r)),
        nextAt: ms,
      };
    });
  }

  /** The outbox CTE of a batch's insert (statements.ts `insertBatch`). */
  afterInsert(events: CreatedEvents): postgres.PendingQuery<postgres.Row[]> {
    return this.webhooks.statements.created(events);
  }

  /** The `link.created` of `code` among a batch's events, for the insert that takes over an expired link's code. */
  createdOne(events: CreatedEvents, code: string): OutboxWrite | undefined {
    const i = events.codes.indexOf(code);
    if (i < 0) return undefined;
    const event = { id: events.ids[i]!, type: 'link.created', time: events.times[i]!, data: events.data[i]! } as const;
    return { domain: events.domains[i]!, event, nextAt: events.nextAt };
  }

  /** Writes one event's rows in `tx`, the transaction of its change. */
  writeIn(tx: postgres.ISql, write: OutboxWrite): postgres.PendingQuery<postgres.Row[]> {
    return this.webhooks.statements.fanOut(tx, write);
  }

  /** The rows of `type` (a link's event) for `record` as its change left it, at `time` (Unix seconds), in `tx`. */
  write(tx: postgres.ISql, type: EventType, record: LinkRecord, time: number): postgres.PendingQuery<postgres.Row[]> {
    const ms = this.clock();
    const event = { id: newEventId(ms), type, time, data: this.bodies.link(record) };
    return this.writeIn(tx, { domain: domainOf(record.code), event, nextAt: ms });
  }

  /**
   * A visit's webhooks, or undefined when no subscription of the copy wants `link.clicked` (of a
   * visit with an event: one without, `visit_tracking: counts`, has nothing to tell) or
   * `link.limit_reached` of the link's domain: the redirect is then the plain one. The click's data
   * is rendered whenever a hooked text is sent: the table decides who gets it, not the copy.
   */
  forVisit(key: string, visit: VisitEvent | undefined): MaybePromise<VisitHooks | undefined> {
    const domain = domainOf(key);
    return mapMaybe(this.webhooks.current(), (subs) => {
      const clicks = visit !== undefined && subs.some((s) => wants(s, 'link.clicked', domain));
      const limit = subs.some((s) => wants(s, 'link.limit_reached', domain));
      if (!clicks && !limit) return undefined;
      if (visit === undefined) return { params: [], limit, domain };
      const ms = this.clock();
      const data = this.bodies.clicked(key, domain === '' ? null : domain, visit);
      return { params: [domain, newEventId(ms), data, visit.time, ms, this.cap], limit, domain };
    });
  }

  /**
   * The hooked count of a visit (`redirect.ts`): one statement; or, when `link.limit_reached` is
   * wanted and the first try found the link at its last visit (`retry`), a transaction that counts
   * it and adds the event when this visit reached the limit.
   */
  async count(
    calls: PostgresCalls,
    code: string,
    now: number,
    columns: EventColumns | undefined,
    routed: boolean,
    hooks: VisitHooks,
    retry: boolean,
  ): Promise<HookedRow | undefined> {
    const inTransaction = hooks.limit && retry;
    const texts = HOOKED[routed ? 'routed' : 'plain'][hooks.limit && !inTransaction ? 'below' : 'any'];
    const text = columns === undefined ? texts.untracked : texts.withEvent;
    const params = [...visitParams(code, now, columns, routed), ...hooks.params];
    const once = async (): Promise<HookedRow | undefined> =>
      inTransaction
        ? await calls.transaction(async (tx) => {
            const [hit] = await tx.unsafe<HookedRow[]>(text, params, { prepare: true });
            if (hit !== undefined && hit.max_visits !== null && Number(hit.visit_count) >= hit.max_visits) {
              const ms = this.clock();
              const event = { id: newEventId(ms), type: 'link.limit_reached', time: now, data: this.bodies.link(toRecord(hit)) } as const;
              await this.writeIn(tx, { domain: hooks.domain, event, nextAt: ms });
            }
            return hit;
          })
        : (await calls.run(this.sql.unsafe<HookedRow[]>(text, params, { prepare: true })))[0];
    // A subscription removed while this statement waited on it fails its click's key check
    // (23503), and the statement with it, counting nothing: once more, it no longer sees the
    // subscription. A retry on that rare race rather than a lock taken by every visit beforehand
    // (the hooked redirect was 8 % slower so, on PostgreSQL with a click subscriber).
    let row: HookedRow | undefined;
    try {
      row = await once();
    } catch (err) {
      const { code: state, table_name: table } = err as { code?: unknown; table_name?: unknown };
      if (state !== '23503' || table !== 'webhook_outbox') throw err;
      row = await once();
    }
    if (row !== undefined && row.dropped !== '0') this.webhooks.dropped(Number(row.dropped));
    return row;
  }
}
