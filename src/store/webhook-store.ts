/**
 * The storage contract of webhooks (docs/webhooks.md): subscriptions, and the outbox of their
 * deliveries. An event is fanned out when it happens, into one outbox row per subscription that
 * asks for it, written in the same durable unit as the change it tells of (the log store's write,
 * PostgreSQL's statement or transaction): a crash neither loses an acknowledged change's event nor
 * leaves one for a change that did not happen. Rows leave the outbox once delivered or given up.
 *
 * Order per subscription is the rows' `seq`: a subscription's next delivery is always its oldest
 * row, so a receiver that is down holds back only its own events.
 */
import { randomBytes } from 'node:crypto';
import type { LinkRecord, MaybePromise } from './link-store.ts';
import type { VisitEvent } from '../visits/event.ts';

/** The event types, in the order the API and the UI list them (their meaning: `src/webhooks/events.ts`). */
export const EVENT_TYPES = Object.freeze(['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'link.limit_reached', 'ping'] as const);

export type EventType = (typeof EVENT_TYPES)[number];

// A Set, not `in` a table: `'toString' in table` is true, and a type is only what is listed.
const KNOWN: ReadonlySet<string> = new Set(EVENT_TYPES);

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && KNOWN.has(value);
}

/** Pending `link.clicked` rows per subscription beyond which new ones are dropped and counted (docs/webhooks.md). */
export const CLICK_CAP = 100_000;

/** The domain of a store key (`links/domains.ts`): the host before its `/`, null for the default domain's. */
export function keyDomain(key: string): string | null {
  const slash = key.indexOf('/');
  return slash === -1 ? null : key.slice(0, slash);
}

/** The code of a store key: what follows its domain's `/`, or the whole key. */
export function keyCode(key: string): string {
  return key.slice(key.indexOf('/') + 1);
}

/** What a visit event of §13 holds that a route may show: never the daily visitor id. */
export interface ClickedVisit {
  readonly time: number;
  readonly referrer: string | null;
  readonly country: string | null;
  readonly browser: string | null;
  readonly os: string | null;
  readonly device: string | null;
  readonly bot: boolean;
}

/**
 * The `data` of `link.clicked`: the link's code and domain (null for the default one) and the
 * visit's event, copied field by field, so whatever else the recorder's event carries (the daily
 * visitor id, and anything added later) is never sent.
 */
export function clickedData(code: string, domain: string | null, visit: ClickedVisit): Record<string, unknown> {
  const { time, referrer, country, browser, os, device, bot } = visit;
  return { short_code: code, domain, visit: { time, referrer, country, browser, os, device, bot } };
}

export interface WebhookSubscription {
  /** `wh_` + 16 base64url characters. */
  readonly id: string;
  /** The receiver, as `checkWebhookUrl` normalized it. */
  readonly url: string;
  /** Subscribable types, in table order (`checkEventList`). */
  readonly events: readonly EventType[];
  /** Whose links it hears of: null every domain's, `''` the default domain's, else that host's. */
  readonly domain: string | null;
  /** `whsec_…`: shown once when made, then only used to sign. */
  readonly secret: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Set when the receiver answered `410 Gone`: nothing more is sent, and the outbox keeps nothing new for it. */
  readonly disabled: boolean;
}

/** One event as a subscription will receive it: everything its body and headers are made of. */
export interface OutboxEvent {
  /** `msg_` + a ULID (`newEventId`): the `webhook-id` of every attempt, to every subscription. */
  readonly id: string;
  readonly type: EventType;
  /** When it happened, Unix seconds. */
  readonly time: number;
  /** The body's `data`, as JSON text. */
  readonly data: string;
}

/** A row of the outbox: one event owed to one subscription. */
export interface PendingDelivery {
  /** Its place in the outbox: a subscription's rows are delivered in this order. */
  readonly seq: number;
  readonly subscription: string;
  readonly event: OutboxEvent;
  /** Attempts that failed so far. */
  readonly attempts: number;
  /** When it may be tried (milliseconds). */
  readonly nextAt: number;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/** One attempt, as the list of deliveries shows it. */
export interface DeliveryAttempt {
  /** When it was made, milliseconds. */
  readonly at: number;
  readonly eventId: string;
  readonly type: EventType;
  /** The receiver's status, null when none was read (a network error, a timeout, a refused target). */
  readonly status: number | null;
  readonly durationMs: number;
  /** Why it failed, or the start of the receiver's answer (`keptResponse`); null for none. */
  readonly error: string | null;
  readonly outcome: DeliveryOutcome;
}

/** A store's answer to "what is owed to whom", for the fan-out of a change. */
export interface WebhookAudience {
  /** The subscriptions (not disabled) that ask for `type` of a link on `domain` (null the default one). */
  wanting(type: EventType, domain: string | null): readonly WebhookSubscription[];
}

/** Whether `sub` asks for `type` of a link on `domain` (null the default domain). */
export function wants(sub: WebhookSubscription, type: EventType, domain: string | null): boolean {
  return !sub.disabled && sub.events.includes(type) && (sub.domain === null || sub.domain === (domain ?? ''));
}

export interface WebhookStore {
  /** Stores a new subscription; durable before it resolves. */
  addSubscription(sub: WebhookSubscription): Promise<void>;
  /** Every subscription, oldest first. */
  subscriptions(): MaybePromise<readonly WebhookSubscription[]>;
  /** Deletes a subscription and every row owed to it: false when there is none. */
  removeSubscription(id: string): Promise<boolean>;
  /** Puts `event` in the outbox for one subscription (a test's `ping`); false when there is none. */
  enqueue(subscription: string, event: OutboxEvent, now: number): Promise<boolean>;
  /**
   * The rows due by `now` (ms): each subscription's oldest row, when it is due and the
   * subscription is not disabled, at most `limit`. On a store shared by several instances a row
   * handed out is held by this instance until `settle`, or until it dies: another instance is
   * handed it only then.
   */
  due(now: number, limit: number): Promise<readonly PendingDelivery[]>;
  /**
   * Records an attempt of `row`: `delivered` and `failed` take it out of the outbox, `retry` keeps
   * it with one more failed attempt until `nextAt`, `disabled` takes it out and disables its
   * subscription (rows owed to it stay, unsent, until it is deleted). The attempt joins the
   * subscription's list of deliveries, of which the newest 100 are kept.
   */
  settle(row: PendingDelivery, attempt: DeliveryAttempt, nextAt: number | null): Promise<void>;
  /** A subscription's newest attempts, newest first, at most 100; undefined when there is none. */
  deliveries(subscription: string): MaybePromise<readonly DeliveryAttempt[] | undefined>;
  /** Rows waiting, per subscription, and the `link.clicked` events dropped by the cap, for `/metrics`. */
  backlog(): MaybePromise<{ pending: number; dropped: number }>;
  /** Calls `written` whenever this process writes rows, so delivery need not wait for its next look; optional. */
  listen?(written: () => void): void;
}

/** Attempts a subscription's list of deliveries keeps. */
export const KEPT_ATTEMPTS = 100;

/**
 * What a store writes as an event's `data`, given by the service (it alone knows how a record is
 * shown): the store calls these while it makes the change, so the row is written with it.
 */
export interface WebhookBodies {
  /** The `data` of `link.created`, `link.updated`, `link.deleted` and `link.limit_reached`: the record as the API shows it. */
  link(record: LinkRecord): string;
  /**
   * The `data` of `link.clicked`: the link's code and domain and the visit's event (`clickedData`). A store
   * may instead keep a click's fields and make the same text with `clickedData` when it delivers it
   * (the log store does: `log/click-row.ts`).
   */
  clicked(code: string, domain: string | null, visit: VisitEvent): string;
}

/** Crockford's base32: no I, L, O or U, so an id read aloud or retyped is not misread. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The largest time a ULID's 48 bits hold (the year 10889). */
const MAX_ULID_MS = 2 ** 48 - 1;

/**
 * A new event id: `msg_` + a ULID (ulid/spec): 10 characters of the time in milliseconds, then 16
 * of 80 random bits, all Crockford base32. Fixed width and time first, so ids sort by when they
 * were made (to the millisecond, and within one in the order made), which makes a list
 * of deliveries and a receiver's log readable in order. Nothing relies on that order: delivery
 * order comes from the outbox's sequence, and the id is the receiver's idempotency key, which
 * needs only uniqueness (ids of one millisecond are counted up from a random first one). Chosen over the
 * specification's example (a KSUID, base62) because base32 of whole bits needs no big-number
 * division. `nowMs` is the injected clock's reading; `Date.now()` only when none is given.
 */
export function newEventId(nowMs: number = Date.now()): string {
  const tail = newEventTail(nowMs);
  return eventIdOf(head, tail);
}

/**
 * `newEventId` in two parts, for an outbox that keeps many ids: the id's last 4 characters as a
 * number (returned), and its first 30 (`eventIdHead()` just after), one string that thousands of
 * ids share; `eventIdOf` makes the id of the two.
 */
export function newEventTail(nowMs: number = Date.now()): number {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs > MAX_ULID_MS) throw new RangeError('an event id needs a time of 0 to 2^48 - 1 milliseconds');
  if (nowMs !== lastMs) {
    lastMs = nowMs;
    toDigits(randomBytes(10), digits);
    stamp = '';
    for (let rest = nowMs, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) stamp = CROCKFORD[rest % 32] + stamp;
    head = headOf();
  } else if (increment(digits)) head = headOf();
  return (digits[12]! << 15) | (digits[13]! << 10) | (digits[14]! << 5) | digits[15]!;
}

export function eventIdHead(): string {
  return head;
}

export function eventIdOf(head: string, tail: number): string {
  return head + CROCKFORD[(tail >>> 15) & 31] + CROCKFORD[(tail >>> 10) & 31] + CROCKFORD[(tail >>> 5) & 31] + CROCKFORD[tail & 31];
}

/** An id of `newEventId`'s shape. */
const EVENT_ID_SHAPE = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

/** `id` in the parts `eventIdOf` joins, or undefined when it is not of `newEventId`'s shape. */
export function eventIdParts(id: string): { head: string; tail: number } | undefined {
  if (!EVENT_ID_SHAPE.test(id)) return undefined;
  let tail = 0;
  for (let i = id.length - 4; i < id.length; i++) tail = (tail << 5) | CROCKFORD.indexOf(id[i]!);
  return { head: id.slice(0, -4), tail };
}

// The ULID specification's monotonic ids: within one millisecond the random part of the first id
// is counted up rather than drawn again, so a busy second's thousands of ids cost one draw a
// millisecond (drawn per id, the draws were a tenth of a busy redirect's work with a subscription).
// The random part is kept as its 16 base-32 digits (80 bits are exactly 16 of them, so counting up
// the digits is counting up the number), and the id's first 28 characters as one string, remade
// only when a carry reaches them: an id is that string and 4 characters.
let lastMs = -1;
let stamp = '';
let head = '';
const digits = new Uint8Array(16);

const headOf = (): string => `msg_${stamp}${Array.from(digits.subarray(0, 12), (d) => CROCKFORD[d]).join('')}`;

/** Adds 1 to the base-32 number `d` (wrapping past the top, 2⁸⁰ ids in a millisecond away); whether a carry reached its first 12 digits. */
function increment(d: Uint8Array): boolean {
  for (let i = d.length - 1; i >= 0; i--) {
    d[i] = (d[i]! + 1) & 31;
    if (d[i] !== 0) return i < 12;
  }
  return true;
}

/** The 5-bit groups of `bytes`, into `out` (10 bytes are 80 bits, 16 digits: nothing is left over). */
function toDigits(bytes: Uint8Array, out: Uint8Array): void {
  let buffered = 0;
  let bits = 0;
  let at = 0;
  for (const byte of bytes) {
    buffered = (buffered << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[at++] = (buffered >>> bits) & 31;
    }
    // Only the bits not yet written are kept, so `buffered` never grows past 12 bits.
    buffered &= (1 << bits) - 1;
  }
}
