/**
 * The webhooks a log store keeps in memory (`webhook-format.ts` writes them): the subscriptions,
 * each one's outbox rows in order, its newest attempts, and the number the next row gets. Replay
 * and the writes' `durable` callbacks apply entries here alike, so memory is what the log says.
 */
import { CLICK_CAP, KEPT_ATTEMPTS, wants, type EventType, type DeliveryAttempt, type PendingDelivery, type WebhookSubscription } from '../webhook-store.ts';
import type { WebhookEntry } from './webhook-format.ts';
import { ClickRow, type StoredClick } from './click-row.ts';
import { ClickQueue } from './click-queue.ts';

interface Held {
  sub: WebhookSubscription;
  /**
   * Its rows, oldest first, from `first` on: settling the head moves `first` rather than shifting
   * up to 100,000 rows each time (the array is cut when most of it lies before `first`).
   */
  rows: PendingDelivery[];
  first: number;
  /**
   * Its `link.clicked` rows never attempted (`click-queue.ts`), beside `rows`: each in seq order,
   * its head the older of the two heads.
   */
  queue: ClickQueue;
  /** Its newest attempts, oldest first (shown newest first). */
  attempts: DeliveryAttempt[];
  /** Its `link.clicked` rows among `rows` and `queue`, for the cap. */
  clicks: number;
}

/** What a checkpoint keeps of the table. */
export interface WebhookImage {
  subs: WebhookSubscription[];
  rows: PendingDelivery[];
  attempts: [string, DeliveryAttempt[]][];
  nextSeq: number;
}

export class WebhookTable {
  private readonly held = new Map<string, Held>();
  /** The seq the next row gets: past every row ever written, so order holds across deletes. */
  nextSeq = 1;
  /** Whether a subscription not disabled wants `link.clicked`: read per visit flush, so kept, not searched. */
  hearsClicks = false;
  /** `link.clicked` rows not kept because their subscription had `CLICK_CAP` waiting, since start. */
  dropped = 0;
  /** `CLICK_CAP`; a test lowers it rather than queue 100,000 rows. */
  cap = CLICK_CAP;
  /** Told when rows are added (`LogWebhooks.listen`). */
  onRows: (() => void) | undefined;

  static of(image: WebhookImage | undefined): WebhookTable {
    const table = new WebhookTable();
    if (image === undefined) return table;
    for (const sub of image.subs) table.apply({ op: 'S', sub });
    // A checkpoint's rows are JSON: its clicks in their short form (`ClickRow.toJSON`).
    if (image.rows.length > 0) table.apply({ op: 'N', rows: image.rows.map((row) => ClickRow.read(row as PendingDelivery | StoredClick)) });
    for (const [id, attempts] of image.attempts) {
      const held = table.held.get(id);
      if (held) held.attempts = attempts.slice(-KEPT_ATTEMPTS);
    }
    table.nextSeq = Math.max(table.nextSeq, image.nextSeq);
    return table;
  }

  image(): WebhookImage {
    const all = [...this.held.values()];
    return {
      subs: all.map((h) => h.sub),
      rows: all.flatMap((h) => merged(h.rows.slice(h.first), h.queue.rows())),
      attempts: all.filter((h) => h.attempts.length > 0).map((h) => [h.sub.id, h.attempts]),
      nextSeq: this.nextSeq,
    };
  }

  get size(): number {
    return this.held.size;
  }

  subscriptions(): WebhookSubscription[] {
    return [...this.held.values()].map((h) => h.sub).sort((a, b) => a.createdAt - b.createdAt);
  }

  get(id: string): WebhookSubscription | undefined {
    return this.held.get(id)?.sub;
  }

  /** The subscriptions that want `type` of a link on `domain`, and whose cap leaves room for it. */
  wanting(type: EventType, domain: string | null): WebhookSubscription[] {
    const out: WebhookSubscription[] = [];
    for (const h of this.held.values()) if (wants(h.sub, type, domain)) out.push(h.sub);
    return out;
  }

  /** How many more `link.clicked` rows `id` takes before its cap; 0 for no such subscription. */
  room(id: string): number {
    const h = this.held.get(id);
    return h === undefined ? 0 : this.cap - h.clicks;
  }

  /** Takes the next `n` seq numbers (for rows about to be written). */
  take(n: number): number {
    const first = this.nextSeq;
    this.nextSeq += n;
    return first;
  }

  /** Each subscription's oldest row, due by `now`, for subscriptions not disabled. */
  heads(now: number, limit: number): PendingDelivery[] {
    const out: PendingDelivery[] = [];
    for (const h of this.held.values()) {
      const head = headOf(h);
      if (head === undefined || h.sub.disabled || head.nextAt > now) continue;
      out.push(head);
      if (out.length === limit) break;
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  attempts(id: string): DeliveryAttempt[] | undefined {
    const h = this.held.get(id);
    return h === undefined ? undefined : [...h.attempts].reverse();
  }

  pending(): number {
    let n = 0;
    for (const h of this.held.values()) n += h.rows.length - h.first + h.queue.size;
    return n;
  }

  apply(entry: WebhookEntry): void {
    switch (entry.op) {
      case 'S': {
        const h = this.held.get(entry.sub.id);
        if (h) h.sub = entry.sub;
        else this.held.set(entry.sub.id, { sub: entry.sub, rows: [], first: 0, queue: new ClickQueue(entry.sub.id), attempts: [], clicks: 0 });
        this.heard();
        return;
      }
      case 'Q':
        this.held.delete(entry.id);
        this.heard();
        return;
      case 'N':
      case 'L':
        for (const row of entry.rows) this.add(row);
        this.onRows?.();
        return;
      case 'M':
        this.settle(entry);
    }
  }

  private heard(): void {
    this.hearsClicks = [...this.held.values()].some((h) => !h.sub.disabled && h.sub.events.includes('link.clicked'));
  }

  private add(row: PendingDelivery): void {
    this.nextSeq = Math.max(this.nextSeq, row.seq + 1);
    // Rows of a subscription deleted meanwhile are dropped with it.
    const h = this.held.get(row.subscription);
    if (h === undefined) return;
    const rows = h.rows;
    const fresh = row instanceof ClickRow && row.attempts === 0 && row.seq > h.queue.lastSeq;
    // Rows arrive in seq order but for a compaction's copy, which is whole and sorted: appended,
    // or inserted in place, once.
    if (fresh && (rows.length === h.first || rows[rows.length - 1]!.seq < row.seq)) h.queue.push(row);
    else if (h.queue.find(row.seq) !== -1) return;
    else if (rows.length === h.first || rows[rows.length - 1]!.seq < row.seq) rows.push(row);
    else {
      let at = h.first;
      while (rows[at]!.seq < row.seq) at++;
      if (rows[at]!.seq === row.seq) return;
      rows.splice(at, 0, row);
    }
    if (row.event.type === 'link.clicked') h.clicks++;
  }

  private settle(entry: Extract<WebhookEntry, { op: 'M' }>): void {
    const h = this.held.get(entry.subscription);
    if (h === undefined) return;
    const last = h.attempts.at(-1);
    // The same attempt twice: a compaction copied memory with it, then its own entry was written.
    if (last !== undefined && last.at === entry.attempt.at && last.eventId === entry.attempt.eventId && last.outcome === entry.attempt.outcome) return;
    h.attempts.push(entry.attempt);
    if (h.attempts.length > KEPT_ATTEMPTS) h.attempts.splice(0, h.attempts.length - KEPT_ATTEMPTS);
    const outcome = entry.attempt.outcome;
    if (outcome === 'disabled') {
      h.sub = { ...h.sub, disabled: true };
      this.heard();
    }
    const queued = h.queue.find(entry.seq);
    if (queued !== -1) {
      const row = h.queue.row(queued);
      h.queue.remove(queued);
      if (outcome === 'retry' && entry.nextAt !== null) {
        // Attempted: it leaves the queue for the list, at its head (it was the oldest row).
        if (h.first > 0) h.rows[--h.first] = row.retried(entry.attempts, entry.nextAt);
        else h.rows.unshift(row.retried(entry.attempts, entry.nextAt));
      } else h.clicks--;
      return;
    }
    const at = indexOf(h, entry.seq);
    // A settle of a row gone already (written twice, or before a compaction that dropped it) is history only.
    if (at === -1) return;
    const row = h.rows[at]!;
    if (outcome === 'retry' && entry.nextAt !== null) {
      h.rows[at] = row instanceof ClickRow ? row.retried(entry.attempts, entry.nextAt) : { ...row, attempts: entry.attempts, nextAt: entry.nextAt };
      return;
    }
    if (at === h.first) {
      h.rows[at] = undefined as unknown as PendingDelivery;
      h.first++;
      if (h.first > 4096 && h.first * 2 > h.rows.length) {
        h.rows = h.rows.slice(h.first);
        h.first = 0;
      }
    } else h.rows.splice(at, 1);
    if (row.event.type === 'link.clicked') h.clicks--;
  }
}

/** The oldest row of `h`: the older of the heads of its list and its queue. */
function headOf(h: Held): PendingDelivery | undefined {
  const listed = h.rows[h.first];
  if (h.queue.size === 0) return listed;
  return listed !== undefined && listed.seq < h.queue.headSeq ? listed : h.queue.row(0);
}

/** Two lists of rows in seq order as one. */
function merged(a: PendingDelivery[], b: PendingDelivery[]): PendingDelivery[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return [...a, ...b].sort((x, y) => x.seq - y.seq);
}

/** Where the row `seq` of `h` is, or -1; nearly always the head: a subscription's rows are settled in order. */
function indexOf(h: Held, seq: number): number {
  if (h.rows[h.first]?.seq === seq) return h.first;
  for (let i = h.first + 1; i < h.rows.length; i++) if (h.rows[i]!.seq === seq) return i;
  return -1;
}
