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
  eventIdHead,
  newEventId,
  newEventTail,
  type DeliveryAttempt,
  type EventType,
  type PendingDelivery,
  type WebhookBodies,
  type WebhookStore,
  type WebhookSubscription,
} from '../webhook-store.ts';
import type { Entry } from './format.ts';
import { rowEntries, type WebhookEntry } from './webhook-format.ts';
import { ClickRow } from './click-row.ts';
import { PENDING } from './pending-events.ts';
import type { WebhookTable } from './webhook-table.ts';
import type { Keydir } from './keydir.ts';
import { unwritable } from './write-errors.ts';

/** Appends entries; `durable` runs once they are on disk, before the promise resolves. */
export type AppendWebhooks = (entries: Entry[], durable: () => void) => Promise<void>;

/** What `addLimited` gives its write: see there. */
export interface Limited {
  written(): void;
  again(s?: number, seq?: number): void;
}

/** A limited link's visit that tells no subscription anything: nothing to apply or write again. */
const NOTHING_TOLD: Limited = { written: () => undefined, again: () => undefined };

export class LogWebhooks implements WebhookStore {
  /** Subscriptions with an attempt under way: `due` hands none of their rows out. */
  private readonly busy = new Set<string>();
  /** Rows of a flush whose write failed: the next flush writes them again (replay keeps one of each seq). */
  private failed: PendingDelivery[] = [];
  /** Events (`slot:seq`) a flush writes again whose rows are among `failed` already: it makes none for them. */
  private readonly told = new Set<string>();
  /** Settles memory has and the log not yet: written by the next visit flush, at least once a second. */
  private settled: WebhookEntry[] = [];

  constructor(
    private readonly table: () => WebhookTable,
    private readonly append: AppendWebhooks,
    private readonly bodies: WebhookBodies | undefined,
    /** Milliseconds. */
    private readonly now: () => number,
  ) {}

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
    return this.failed.length === 0 && this.settled.length === 0;
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
   * The `link.clicked` rows of the visits a flush writes: of each event in `p` (`PENDING` numbers
   * an event, as `VisitCounts` keeps them) whose link is live, for the subscriptions that want its
   * domain and whose cap leaves room (a drop is counted). Each row holds the event's packed words,
   * not its body (`click-row.ts`). Made when the flush is made, off the redirect.
   */
  clickRows(records: Keydir, p: readonly number[]): PendingDelivery[] {
    const table = this.table();
    if (this.bodies === undefined || p.length === 0 || !table.hearsClicks) return [];
    const now = this.now();
    const referrers = records.events.referrers;
    // Per slot, its key and who wants its domain's clicks, asked once a flush: a busy flush holds
    // thousands of one link's visits.
    const links = new Map<number, { key: string; subs: readonly WebhookSubscription[] }>();
    const wanting = new Map<string | null, readonly WebhookSubscription[]>();
    // Per subscription: the room its cap leaves, and its rows (written one run each).
    const owed = new Map<string, { left: number; rows: ClickRow[] }>();
    for (let i = 0; i < p.length; i += PENDING) {
      const s = p[i]!;
      if (this.told.size > 0 && this.told.delete(`${s}:${p[i + 1]!}`)) continue;
      let link = links.get(s);
      if (link === undefined) {
        // A slot deleted since its visit has no event written, so no click either.
        const key = records.isLive(s) ? records.code(s) : '';
        const domain = keyDomain(key);
        let subs = key === '' ? [] : wanting.get(domain);
        if (subs === undefined) wanting.set(domain, (subs = table.wanting('link.clicked', domain)));
        links.set(s, (link = { key, subs }));
      }
      // The event's id, made once for every subscription it goes to.
      let tail = -1;
      let head = '';
      for (const sub of link.subs) {
        let to = owed.get(sub.id);
        if (to === undefined) owed.set(sub.id, (to = { left: table.room(sub.id), rows: [] }));
        if (to.left <= 0) {
          table.dropped++;
          continue;
        }
        to.left--;
        if (tail === -1) {
          tail = newEventTail(now);
          head = eventIdHead();
        }
        to.rows.push(new ClickRow(table.take(1), sub.id, 0, now, head, tail, link.key, p[i + 2]!, referrers.host(p[i + 4]!), p[i + 5]!));
      }
    }
    const rows: PendingDelivery[] = [];
    for (const to of owed.values()) for (const row of to.rows) rows.push(row);
    return rows;
  }

  /**
   * What a visit flush writes, added to its `entries`: the rows of a failed flush first, then the
   * `link.clicked` rows of its events `p`, then the settles memory has already. Returns the rows,
   * which memory gets once written; the settles are not written again should the write fail (see `settle`).
   */
  flushRows(entries: Entry[], records: Keydir, p: readonly number[]): PendingDelivery[] {
    const rows = this.failed.concat(this.clickRows(records, p));
    // The events written again are among `p` now (their slots renumbered by a compaction since
    // would not be found: a new row then, and none kept waiting for ever).
    this.told.clear();
    this.failed = [];
    entries.push(...rowEntries(rows));
    entries.push(...this.settled);
    this.settled = [];
    return rows;
  }

  /**
   * Adds the rows of a limited link's visit just counted in slot `s` to `entries`, to be written
   * with its count: its `link.clicked` (`click`: its event as `PENDING` numbers, when it has one)
   * and, when it used the limit up, its `link.limit_reached`. Returns what to do once the write
   * is done (`written`: memory gets them), or when it may or may not have been (`again`: the next
   * flush writes them again, and makes no new row of the event `(s, seq)` it writes again).
   */
  addLimited(entries: Entry[], records: Keydir, s: number, click: readonly number[] | undefined): Limited {
    const rows = click === undefined ? [] : this.clickRows(records, click);
    if (records.visits(s) >= records.maxVisits(s)) {
      const reached = this.linkRows('link.limit_reached', records.record(s, records.code(s)), this.seconds());
      if (reached?.op === 'N') rows.push(...reached.rows);
    }
    if (rows.length === 0) return NOTHING_TOLD;
    const told = rowEntries(rows);
    entries.push(...told);
    return {
      written: () => {
        for (const entry of told) records.webhooks.apply(entry);
      },
      again: (slot, seq) => {
        if (slot !== undefined && slot !== -1 && click !== undefined) this.told.add(`${slot}:${seq}`);
        this.unsent(rows);
      },
    };
  }

  /** Rows of a flush whose write failed, for the next one. */
  unsent(rows: PendingDelivery[]): void {
    this.failed = rows.concat(this.failed);
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
