/**
 * The log entries of webhooks (format 8, docs/storage.md), as pure functions: an entry's payload
 * and back. Each payload is one JSON value after its op: JSON escapes any tab or line break, so a
 * field needs no escaping of its own.
 *
 *   S <subscription>      a subscription, whole: made, or disabled by a `410` (compaction writes one per subscription)
 *   Q <id>                a subscription deleted, with every row owed to it
 *   N <[rows]>            outbox rows: [seq, subscription, event id, type, time, data, attempts, next_at]
 *   L <[subscription, attempts, next_at, rows…]>
 *                         `link.clicked` rows of one subscription with the same attempts and time,
 *                         six fields each: seq, event id, link key, time, referrer host, attrs word
 *                         (`visits/packed.ts`: country, browser, OS, device, bot); the body is made
 *                         from these when the row is delivered (`click-row.ts`)
 *   M <[settle]>          an attempt: [subscription, seq, outcome, next_at, at, event id, type, status, duration_ms, error, attempts]
 *
 * An `N` entry is written in the same write as the change it tells of, and after its lines: a
 * write lands as a prefix of its bytes, so an `N` read back means its change was read back too
 * (docs/webhooks.md says what a power loss in mid-write can still cost). An `M` entry is not
 * waited for: memory has it at once and the next delivery goes on, since a settle lost in a crash
 * only sends its row again, with the same `webhook-id` (delivery is at least once); applied twice
 * (a compaction's copy of memory, then the entry itself), it changes nothing more.
 */
import { isEventType, type DeliveryAttempt, type DeliveryOutcome, type EventType, type PendingDelivery, type WebhookSubscription } from '../webhook-store.ts';
import { isRecordInteger } from '../record-limits.ts';
import type { WebhookImage } from './webhook-table.ts';
import { ClickRow } from './click-row.ts';

export type WebhookEntry =
  | { op: 'S'; sub: WebhookSubscription }
  | { op: 'Q'; id: string }
  | { op: 'N'; rows: PendingDelivery[] }
  /** Every row a `ClickRow`, and its subscription, attempts and `nextAt` the first row's. */
  | { op: 'L'; rows: PendingDelivery[] }
  /** `attempts`: the row's failed attempts once settled, written out so that applying the entry twice changes nothing more. */
  | { op: 'M'; subscription: string; seq: number; nextAt: number | null; attempts: number; attempt: DeliveryAttempt };

export const WEBHOOK_OPS: ReadonlySet<string> = new Set(['S', 'Q', 'N', 'L', 'M']);

const OUTCOMES: ReadonlySet<string> = new Set<DeliveryOutcome>(['delivered', 'retry', 'failed', 'disabled']);
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const EVENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

const rowOf = (r: PendingDelivery): unknown[] => [r.seq, r.subscription, r.event.id, r.event.type, r.event.time, r.event.data, r.attempts, r.nextAt];

export function webhookPayload(entry: WebhookEntry): string {
  switch (entry.op) {
    case 'S': {
      const { id, url, events, domain, secret, createdAt, disabled } = entry.sub;
      return `S\t${JSON.stringify([id, url, events, domain, secret, createdAt, disabled])}`;
    }
    case 'Q':
      return `Q\t${entry.id}`;
    case 'N':
      return `N\t${JSON.stringify(entry.rows.map(rowOf))}`;
    case 'L':
      return `L\t${JSON.stringify(clickFields(entry.rows))}`;
    case 'M': {
      const a = entry.attempt;
      return `M\t${JSON.stringify([entry.subscription, entry.seq, a.outcome, entry.nextAt, a.at, a.eventId, a.type, a.status, a.durationMs, a.error, entry.attempts])}`;
    }
  }
}

/**
 * Whether every field of `entry` is one `decodeWebhookFields` reads back as it is. Rows and
 * attempts are checked field by field: a busy link's flush writes thousands of rows, deliveries at
 * full pace settle thousands a second, and a round trip through the text would encode and parse
 * each twice more. The rarer entries (a subscription made or deleted) take the round trip.
 */
export function webhookWritable(entry: WebhookEntry): boolean {
  if (entry.op === 'N') return entry.rows.length > 0 && entry.rows.every(rowWritable);
  if (entry.op === 'L') return clicksWritable(entry.rows);
  if (entry.op === 'M') return settleWritable(entry);
  return decodeWebhookFields(webhookPayload(entry).split('\t')) !== undefined;
}

const int = (v: unknown): v is number => typeof v === 'number' && isRecordInteger(v);
const textOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

function subscriptionOf(v: unknown): WebhookSubscription | undefined {
  if (!Array.isArray(v) || v.length !== 7) return undefined;
  const [id, url, events, domain, secret, createdAt, disabled] = v as unknown[];
  if (typeof id !== 'string' || !ID.test(id) || typeof url !== 'string' || url === '' || typeof secret !== 'string') return undefined;
  if (!Array.isArray(events) || !events.every(isEventType) || !textOrNull(domain) || !int(createdAt) || typeof disabled !== 'boolean') return undefined;
  return { id, url, events: events as EventType[], domain, secret, createdAt, disabled };
}

function pendingOf(v: unknown): PendingDelivery | undefined {
  if (!Array.isArray(v) || v.length !== 8) return undefined;
  const [seq, subscription, id, type, time, data, attempts, nextAt] = v as unknown[];
  if (!int(seq) || typeof subscription !== 'string' || !ID.test(subscription) || typeof id !== 'string' || !EVENT_ID.test(id)) return undefined;
  if (!isEventType(type) || !int(time) || typeof data !== 'string' || !int(attempts) || !int(nextAt)) return undefined;
  return { seq, subscription, event: { id, type, time, data }, attempts, nextAt };
}

/** `pendingOf`'s checks on a row as it is, without building one (a flush checks thousands). */
function rowWritable(r: PendingDelivery): boolean {
  const e = r.event;
  return (
    int(r.seq) &&
    ID.test(r.subscription) &&
    EVENT_ID.test(e.id) &&
    isEventType(e.type) &&
    int(e.time) &&
    typeof e.data === 'string' &&
    int(r.attempts) &&
    int(r.nextAt)
  );
}

/** Fields a row takes in an `L` entry, after the three of its head. */
const CLICK_FIELDS = 6;

function clickFields(rows: readonly PendingDelivery[]): unknown[] {
  const head = rows[0]!;
  const out: unknown[] = [head.subscription, head.attempts, head.nextAt];
  for (const r of rows as readonly ClickRow[]) out.push(r.seq, r.id, r.key, r.time, r.referrer, r.attrs);
  return out;
}

/** `clicksOf`'s checks on rows as they are, field by field, as `rowWritable` does. */
function clicksWritable(rows: readonly PendingDelivery[]): boolean {
  const head = rows[0];
  if (head === undefined || !ID.test(head.subscription) || !int(head.attempts) || !int(head.nextAt)) return false;
  for (const r of rows) {
    if (!(r instanceof ClickRow) || r.subscription !== head.subscription || r.attempts !== head.attempts || r.nextAt !== head.nextAt) return false;
    // An id made here (`newEventTail`) or read back from a line is one already: only another is tested.
    if (!int(r.seq) || !(r.idTail !== -1 || EVENT_ID.test(r.idHead)) || r.key === '' || !int(r.time) || !(r.referrer === null || r.referrer !== ''))
      return false;
  }
  return true;
}

function clicksOf(v: unknown): PendingDelivery[] | undefined {
  if (!Array.isArray(v) || v.length < 3 + CLICK_FIELDS || (v.length - 3) % CLICK_FIELDS !== 0) return undefined;
  const [subscription, attempts, nextAt] = v as unknown[];
  if (typeof subscription !== 'string' || !ID.test(subscription) || !int(attempts) || !int(nextAt)) return undefined;
  const rows: PendingDelivery[] = [];
  for (let i = 3; i < v.length; i += CLICK_FIELDS) {
    const [seq, id, key, time, referrer, attrs] = (v as unknown[]).slice(i, i + CLICK_FIELDS);
    if (!int(seq) || typeof id !== 'string' || !EVENT_ID.test(id) || typeof key !== 'string' || key === '' || !int(time)) return undefined;
    if (!(referrer === null || (typeof referrer === 'string' && referrer !== '')) || !int(attrs) || attrs > 0xffffffff) return undefined;
    rows.push(ClickRow.of(seq, subscription, attempts, nextAt, id, key, time, referrer, attrs));
  }
  return rows;
}

/** `settleOf`'s checks on an attempt as it is, without building one. */
function settleWritable(entry: Extract<WebhookEntry, { op: 'M' }>): boolean {
  const a = entry.attempt;
  return (
    ID.test(entry.subscription) &&
    int(entry.seq) &&
    OUTCOMES.has(a.outcome) &&
    (entry.nextAt === null || int(entry.nextAt)) &&
    int(a.at) &&
    typeof a.eventId === 'string' &&
    isEventType(a.type) &&
    (a.status === null || int(a.status)) &&
    int(a.durationMs) &&
    textOrNull(a.error) &&
    int(entry.attempts)
  );
}

function settleOf(v: unknown): WebhookEntry | undefined {
  if (!Array.isArray(v) || v.length !== 11) return undefined;
  const [subscription, seq, outcome, nextAt, at, eventId, type, status, durationMs, error, attempts] = v as unknown[];
  if (typeof subscription !== 'string' || !ID.test(subscription) || !int(seq) || typeof outcome !== 'string' || !OUTCOMES.has(outcome)) return undefined;
  if (!(nextAt === null || int(nextAt)) || !int(at) || typeof eventId !== 'string' || !isEventType(type)) return undefined;
  if (!(status === null || int(status)) || !int(durationMs) || !textOrNull(error) || !int(attempts)) return undefined;
  const attempt: DeliveryAttempt = { at, eventId, type, status, durationMs, error, outcome: outcome as DeliveryOutcome };
  return { op: 'M', subscription, seq, nextAt, attempts, attempt };
}

function json(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The entry of a payload split at its tabs, or undefined when it is none. */
export function decodeWebhookFields(f: readonly string[]): WebhookEntry | undefined {
  if (f.length !== 2) return undefined;
  switch (f[0]) {
    case 'S': {
      const sub = subscriptionOf(json(f[1]));
      return sub === undefined ? undefined : { op: 'S', sub };
    }
    case 'Q':
      return ID.test(f[1]!) ? { op: 'Q', id: f[1]! } : undefined;
    case 'N': {
      const rows = json(f[1]);
      if (!Array.isArray(rows) || rows.length === 0) return undefined;
      const read = rows.map(pendingOf);
      return read.every((r) => r !== undefined) ? { op: 'N', rows: read as PendingDelivery[] } : undefined;
    }
    case 'L': {
      const rows = clicksOf(json(f[1]));
      return rows === undefined ? undefined : { op: 'L', rows };
    }
    case 'M':
      return settleOf(json(f[1]));
    default:
      return undefined;
  }
}

/** Rows per `N` or `L` line: keeps a line, and what a torn write can cut, small. */
const ROWS_PER_LINE = 500;

/**
 * The entries that write `rows`: a run of one subscription's `link.clicked` rows of the log
 * store's own form with the same attempts and time as an `L` entry, any other run as an `N` entry.
 */
export function rowEntries(rows: readonly PendingDelivery[]): WebhookEntry[] {
  const out: WebhookEntry[] = [];
  for (let i = 0; i < rows.length; ) {
    const head = rows[i]!;
    const click = head instanceof ClickRow;
    let end = i + 1;
    while (end < rows.length && end - i < ROWS_PER_LINE && sameRun(head, rows[end]!, click)) end++;
    out.push({ op: click ? 'L' : 'N', rows: rows.slice(i, end) });
    i = end;
  }
  return out;
}

function sameRun(head: PendingDelivery, row: PendingDelivery, click: boolean): boolean {
  if (!click) return !(row instanceof ClickRow);
  return row instanceof ClickRow && row.subscription === head.subscription && row.attempts === head.attempts && row.nextAt === head.nextAt;
}

/**
 * The lines a compaction writes for `image`: each subscription whole, then the attempts shown in
 * the lists of deliveries (before the rows, so they change none), then the rows owed, with their
 * attempts and times.
 */
export function webhookEntries(image: WebhookImage): WebhookEntry[] {
  const out: WebhookEntry[] = image.subs.map((sub) => ({ op: 'S', sub }));
  for (const [subscription, attempts] of image.attempts) {
    for (const attempt of attempts) out.push({ op: 'M', subscription, seq: 0, nextAt: null, attempts: 0, attempt });
  }
  out.push(...rowEntries(image.rows));
  return out;
}
