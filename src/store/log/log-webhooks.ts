/**
 * Webhooks in the log store (`WebhookStore`, docs/webhooks.md): the table in memory
 * (`webhook-table.ts`), its entries in `urls.log` (`webhook-format.ts`), and the fan-out of a
 * change into outbox rows, which the engine appends in the same write as the change, after it.
 *
 * One process holds a data dir (`lock.ts`), so a row handed out by `due` is held here until it is
 * settled: no second attempt of it, nor of a later row of its subscription, runs meanwhile.
 */
import type { LinkRecord } from '../link-store.ts';
import {
  keyDomain,
  newEventId,
  type DeliveryAttempt,
  type EventType,
  type PendingDelivery,
  type WebhookBodies,
  type WebhookStore,
  type WebhookSubscription,
} from '../webhook-store.ts';
import type { VisitEvent } from '../../visits/event.ts';
import type { Entry } from './format.ts';
import type { WebhookEntry } from './webhook-format.ts';
import type { WebhookTable } from './webhook-table.ts';
import type { Keydir } from './keydir.ts';
import { unwritable } from './write-errors.ts';

/** Appends entries; `durable` runs once they are on disk, before the promise resolves. */
export type AppendWebhooks = (entries: Entry[], durable: () => void) => Promise<void>;

/** A counted visit waiting for the flush that writes its event, and its rows with it. */
export interface Click {
  code: string;
  event: VisitEvent;
}

/** Outbox rows per `N` entry of a visit flush: keeps a line, and what a torn write can cut, small. */
const ROWS_PER_LINE = 500;

export class LogWebhooks implements WebhookStore {
  /** Subscriptions with an attempt under way: `due` hands none of their rows out. */
  private readonly busy = new Set<string>();
  /** Counted visits whose `link.clicked` rows the next flush writes, with their events. */
  private clicks: Click[] = [];
  /** Rows of a flush whose write failed: the next flush writes them again (replay keeps one of each seq). */
  private failed: PendingDelivery[] = [];
  /** Settles memory has and the log not yet: written by the next visit flush, at least once a second. */
  private settled: WebhookEntry[] = [];

  constructor(
    private readonly table: () => WebhookTable,
    private readonly append: AppendWebhooks,
    private readonly bodies: WebhookBodies | undefined,
    /** Milliseconds. */
    private readonly now: () => number,
  ) {}

  /** Whether a counted visit must be kept for the flush's `link.clicked` rows: a test per visit, nothing more. */
  get hearsClicks(): boolean {
    return this.bodies !== undefined && this.table().hearsClicks;
  }

  /** Now, in Unix seconds: when an event without a time of its own happened. */
  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async addSubscription(sub: WebhookSubscription): Promise<void> {
    if (this.table().get(sub.id) !== undefined) throw new Error(`a subscription with the id ${sub.id} exists already`);
    await this.write([{ op: 'S', sub }]);
  }

  subscriptions(): readonly WebhookSubscription[] {
    return this.table().subscriptions();
  }

  async removeSubscription(id: string): Promise<boolean> {
    if (this.table().get(id) === undefined) return false;
    await this.write([{ op: 'Q', id }]);
    return true;
  }

  async enqueue(subscription: string, event: PendingDelivery['event'], now: number): Promise<boolean> {
    const table = this.table();
    if (table.get(subscription) === undefined) return false;
    await this.write([{ op: 'N', rows: [{ seq: table.take(1), subscription, event, attempts: 0, nextAt: now }] }]);
    return true;
  }

  async due(now: number, limit: number): Promise<readonly PendingDelivery[]> {
    const rows = this.table()
      .heads(now, limit + this.busy.size)
      .filter((row) => !this.busy.has(row.subscription))
      .slice(0, limit);
    for (const row of rows) this.busy.add(row.subscription);
    return rows;
  }

  /**
   * Memory has the outcome at once, and the entry is written with the next visit flush, at least
   * once a second (see `webhook-format.ts`): a subscription's next delivery waits on its receiver,
   * never on a write, and a thousand settles a second are one write, not a thousand. An entry lost
   * (a crash within that second, a write that failed) only sends its row again later.
   */
  async settle(row: PendingDelivery, attempt: DeliveryAttempt, nextAt: number | null): Promise<void> {
    const attempts = attempt.outcome === 'retry' ? row.attempts + 1 : row.attempts;
    const entry: WebhookEntry = { op: 'M', subscription: row.subscription, seq: row.seq, nextAt, attempts, attempt };
    this.table().apply(entry);
    this.busy.delete(row.subscription);
    this.settled.push(entry);
  }

  /** Nothing waits for the visit flush. */
  get idle(): boolean {
    return this.clicks.length === 0 && this.failed.length === 0 && this.settled.length === 0;
  }

  listen(written: () => void): void {
    this.table().onRows = written;
  }

  deliveries(subscription: string): readonly DeliveryAttempt[] | undefined {
    return this.table().attempts(subscription);
  }

  backlog(): { pending: number; dropped: number } {
    const table = this.table();
    return { pending: table.pending(), dropped: table.dropped };
  }

  /**
   * The rows of a change to the link `record`, as the entry to write after the change's own, or
   * undefined when no subscription wants it. `time`: when it happened, Unix seconds.
   */
  linkRows(type: EventType, record: LinkRecord, time: number): WebhookEntry | undefined {
    const bodies = this.bodies;
    const table = this.table();
    if (bodies === undefined || table.size === 0) return undefined;
    const subs = table.wanting(type, keyDomain(record.code));
    if (subs.length === 0) return undefined;
    const now = this.now();
    const event = { id: newEventId(now), type, time, data: bodies.link(record) };
    const first = table.take(subs.length);
    return { op: 'N', rows: subs.map((sub, i) => ({ seq: first + i, subscription: sub.id, event, attempts: 0, nextAt: now })) };
  }

  /**
   * The `link.clicked` rows of the visits a flush writes, for the subscriptions that want each and
   * whose cap leaves room (a drop is counted). Called when the flush is made, off the redirect.
   */
  clickRows(clicks: readonly Click[]): PendingDelivery[] {
    const bodies = this.bodies;
    const table = this.table();
    if (bodies === undefined || clicks.length === 0) return [];
    const now = this.now();
    const rows: PendingDelivery[] = [];
    const added = new Map<string, number>();
    // Who wants a domain's clicks, asked once a flush: a busy flush holds thousands of one domain's.
    const wanting = new Map<string | null, readonly WebhookSubscription[]>();
    for (const { code, event } of clicks) {
      const domain = keyDomain(code);
      let asked = wanting.get(domain);
      if (asked === undefined) wanting.set(domain, (asked = table.wanting('link.clicked', domain)));
      const subs = asked.filter((sub) => table.roomForClick(sub.id, added.get(sub.id) ?? 0));
      if (subs.length === 0) continue;
      const shown = { id: newEventId(now), type: 'link.clicked' as const, time: event.time, data: bodies.clicked(code, domain, event) };
      for (const sub of subs) {
        added.set(sub.id, (added.get(sub.id) ?? 0) + 1);
        rows.push({ seq: table.take(1), subscription: sub.id, event: shown, attempts: 0, nextAt: now });
      }
    }
    return rows;
  }

  noteClick(code: string, event: VisitEvent): void {
    this.clicks.push({ code, event });
  }

  /**
   * What a visit flush writes, added to its `entries`: the rows of a failed flush first, then those
   * of the visits noted since, then the settles memory has already. Returns the rows, which memory
   * gets once written; the settles are not written again should the write fail (see `settle`).
   */
  flushRows(entries: Entry[]): PendingDelivery[] {
    const rows = this.failed.concat(this.clickRows(this.clicks));
    this.clicks = [];
    this.failed = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_LINE) entries.push({ op: 'N', rows: rows.slice(i, i + ROWS_PER_LINE) });
    entries.push(...this.settled);
    this.settled = [];
    return rows;
  }

  /** Adds the rows of a limited link's visit to `entries`; returns what applies them once written. */
  addLimited(entries: Entry[], records: Keydir, s: number, click: Click | undefined): () => void {
    const told = this.limitedRows(records, s, click);
    if (told === undefined) return () => undefined;
    entries.push(told);
    return () => records.webhooks.apply(told);
  }

  /** Rows of a flush whose write failed, for the next one. */
  unsent(rows: PendingDelivery[]): void {
    this.failed = rows.concat(this.failed);
  }

  /**
   * The rows of a limited link's visit just counted in slot `s`, written with its count: its
   * `link.clicked` (with an event) and, when it used the limit up, its `link.limit_reached`.
   */
  private limitedRows(records: Keydir, s: number, click: Click | undefined): WebhookEntry | undefined {
    const rows = click !== undefined && this.hearsClicks ? this.clickRows([click]) : [];
    if (records.visits(s) >= records.maxVisits(s)) {
      const reached = this.linkRows('link.limit_reached', records.record(s, records.code(s)), this.seconds());
      if (reached?.op === 'N') rows.push(...reached.rows);
    }
    return rows.length === 0 ? undefined : { op: 'N', rows };
  }

  private async write(entries: WebhookEntry[]): Promise<void> {
    const table = this.table();
    try {
      await this.append(entries, () => {
        for (const entry of entries) table.apply(entry);
      });
    } catch (err) {
      throw unwritable(err);
    }
  }
}
