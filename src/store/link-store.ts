/**
 * The storage contract of the service: every operation the service needs, shaped so that each is
 * one statement of a database (an `INSERT … ON CONFLICT DO NOTHING`, a `DELETE … RETURNING`, one
 * conditional `UPDATE … RETURNING` per counted redirect) and one call of the in-memory log store.
 *
 * A method may answer with a value or with a promise, and callers await only a promise: the log
 * store holds every link in memory and answers reads and the redirect synchronously, so its
 * redirect costs no microtask; a database answers with promises. Writes that must be durable
 * before the answer (insert, delete) are promises in every store.
 *
 * Expiry is decided at read time against the `now` the service passes (Unix seconds; to the
 * redirect, a `Clock` to read only for a link that can expire), never the store's own clock:
 * expired links may stay stored until reclaimed, but no read returns them, and their codes are
 * free again. `test/support/store-conformance.ts` is this contract as tests; every backend passes it.
 */

export type MaybePromise<T> = T | Promise<T>;

export { keyOnDomain, labelsOf, type Labels } from './record-fields.ts';
export * from './routing.ts';

import type { DomainStore } from './domain-store.ts';
import type { RoutedDecision, Routing, RoutingChange } from './routing.ts';
import type { OrphanStore } from './orphan-store.ts';
import type { KeyStore } from './key-store.ts';
import type { CodedEvent, EventFilter, ImportedVisit, StatsQuery, VisitEvent, VisitEventSource, VisitPage, VisitStats } from '../visits/event.ts';
import type { VisitExportFilter } from '../visits/event.ts';

/**
 * Unix seconds, read when needed. The redirect gets the clock rather than its reading: most links
 * never expire, and a clock read is a call into the runtime that their redirects need not pay.
 */
export type Clock = () => number;

/**
 * The characters a code may have: the custom-code alphabet `A-Z a-z 0-9 - _` (docs/api.md), of
 * which the generated codes use a subset, as a table by char code (1: allowed), so a check costs
 * one load per character. The redirect's lookups find no code with another character.
 */
export const IN_CODE_ALPHABET = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') IN_CODE_ALPHABET[ch.charCodeAt(0)] = 1;

/** The longest code there can be: `max_short_length` is at most 64. */
export const MAX_CODE_LENGTH = 64;

/** A link as stored. */
export interface LinkRecord {
  /** Of the code alphabet: the service checks before `insert` (a log from elsewhere may hold others). */
  code: string;
  /** The WHATWG serialization of the original URL. */
  url: string;
  /** Unix seconds. */
  createdAt: number;
  /** 0 = forever. */
  retentionDays: number;
  visits: number;
  /**
   * Visits counted without an event (docs/analytics.md): imported counts, visits counted while
   * `visit_tracking` was `counts` or before events existed, events removed by retention. The
   * invariant of every store: the link's events + `untracked` = `visits`.
   */
  untracked: number;
  /** Counted visits allowed (docs/api.md, visit limits); null = unlimited. */
  maxVisits: number | null;
  /** The link's title (docs/api.md); absent or null = none. */
  title?: string | null | undefined;
  /** The link's tags: distinct, sorted (`checkTags`); absent or empty = none. */
  tags?: readonly string[] | undefined;
  /** The `id` of the stored key that made the link (docs/security.md); absent or null = none. */
  author?: string | null | undefined;
  /** Where the link sends each visitor (rules, validity, password: `routing.ts`); absent or null = none. */
  routing?: Routing | null | undefined;
}

/**
 * An edit (docs/api.md): the fields to change; absent ones stay. The code, `createdAt` and `visits`
 * never change, and an edited link keeps its place in the newest-first order (it is not a new link).
 */
export interface LinkChanges {
  url?: string;
  retentionDays?: number;
  /** null clears the limit. */
  maxVisits?: number | null;
  /** null clears the title. */
  title?: string | null;
  /** [] clears the tags. */
  tags?: readonly string[];
  /** Parts of the link's routing (`routing.ts`): each given replaces its part, a null part removes it; null removes them all. */
  routing?: RoutingChange | null;
}

/**
 * What a redirect does. `found` carries the URL, and whether the link has a visit limit (a link
 * preview of a limited link is a page, not counted: docs/api.md); the others are pages.
 */
export type VisitDecision =
  | { readonly kind: 'found'; readonly url: string; readonly limited: boolean }
  | { readonly kind: 'missing' }
  | { readonly kind: 'expired' }
  /** A link with routing, counted nothing: the service settles it, then asks again (`countVisit`). */
  | RoutedDecision
  /** The link's visit limit is used up (docs/api.md): `visits >= maxVisits`. */
  | { readonly kind: 'limit_reached' };

export interface ListQuery {
  /** Records on the page; all from `offset` on when absent. */
  limit?: number | undefined;
  offset: number;
  /** Unix seconds: links expired by then are left out, of the page and of the total. */
  now: number;
  /** Keeps the links whose code, URL or title contains this, by `toLowerCase()` of both; `total` counts them. */
  q?: string | undefined;
  /** Keeps only the links having every one of these tags (compared exactly). Absent or empty: no filter. */
  tags?: readonly string[] | undefined;
  /** Keeps only the links the key of this `id` made (an editor's own links). Absent: every author's. */
  author?: string | undefined;
  /**
   * Keeps only the links of this domain (links/domains.ts): null the default one, whose keys hold
   * no `/`; a host, whose keys start with `<host>/`. Absent: every domain's.
   */
  domain?: string | null | undefined;
}

/**
 * A page of live links, newest first, frozen when `list` answered: `total`, `count` and every slice
 * agree, whatever is written meanwhile (links deleted since are still read as they were). A long
 * page is read in slices across event-loop turns; `release` it when done (the log store keeps the
 * memory of deleted links while a page is open; a database ends its snapshot transaction).
 */
export interface LinkPage {
  /** Live links, this page or not (`X-Total-Count`). */
  readonly total: number;
  /** Links on this page. */
  readonly count: number;
  /** The page's links at positions [from, to) (clamped to `count`). */
  slice(from: number, to: number): MaybePromise<readonly LinkRecord[]>;
  /** Idempotent. */
  release(): void;
}

/**
 * Inserts that land in the order they were asked or not at all past a failure (an import's rows,
 * docs/api.md). Once an insert of a chain fails, every later one is refused with the same error,
 * those already queued behind it included: a store that writes in batches would otherwise write
 * the next batch once the disk has room again, after the failure was reported.
 */
export interface InsertChain {
  /** Why an insert of the chain failed; undefined while none has. */
  failed: unknown;
}

export interface LinkStore {
  /** Stored API keys (`key-store.ts`); absent on a store that cannot keep them. */
  readonly accessKeys?: KeyStore;
  /** The domains' own redirects (`domain-store.ts`); absent: a store that keeps none (a domain then has no redirects). */
  readonly domains?: DomainStore;
  /** Orphan visits (`orphan-store.ts`); absent: a store that keeps none. */
  readonly orphans?: OrphanStore;
  /** Webhooks (`webhook-store.ts`): a change's events are written with it. Absent: a store that keeps none. */
  readonly webhooks?: import('./webhook-store.ts').WebhookStore;
  /**
   * Stores a new link as the newest; false when a live link holds its code (a generated code's
   * collision, or a custom code in use). The code of a deleted or expired (by `now`) link is free.
   * Of concurrent inserts of one code exactly one is true. True only once the link is durable;
   * a write that cannot be made rejects with `StoreUnavailableError`. With `chain`, refused once
   * an earlier insert of the chain failed (see `InsertChain`).
   */
  insert(record: LinkRecord, now: number, chain?: InsertChain): MaybePromise<boolean>;
  /** The live link of `code`. */
  get(code: string, now: number): MaybePromise<LinkRecord | undefined>;
  /** The newest live link whose URL is exactly `url` (already normalized by the caller). */
  newestByUrl(url: string, now: number, domain?: string | null): MaybePromise<LinkRecord | undefined>;
  /**
   * A page of live links, newest first: in reverse order of insertion, whatever their `createdAt`
   * (a database keeps an insertion sequence for this, never the clock alone).
   */
  list(query: ListQuery): MaybePromise<LinkPage>;
  /**
   * Deletes the live link of `code`; false when there is none (unknown, expired, or deleted by a
   * concurrent call: of concurrent deletes of one code exactly one is true). True once durable;
   * rejects with `StoreUnavailableError` like `insert`.
   */
  delete(code: string, now: number): Promise<boolean>;
  /**
   * The redirect: decides what `GET`/`HEAD /<code>` answers and, when `count` (a GET of a live
   * link), counts the visit, in one call. Counts are exact: every counted `found` adds one.
   * The answer is read at once: the log store reuses one object for every `found`, so that a
   * redirect allocates nothing but the URL. `now` is read only when the link can expire.
   * A link with routing answers `routed`, counting nothing, unless `routed`: then it is counted as any.
   */
  countVisit(code: string, now: Clock, count: boolean, event?: VisitEventSource, routed?: boolean): MaybePromise<VisitDecision>;
  /**
   * Optional, for a store that answers from memory: `countVisit` of the code that `text` spells
   * from `start` to its end, asked without making that string (the redirect's fast path passes its
   * request path). Any text may be asked: one that is no stored code, or has a character outside
   * the code alphabet or more than `MAX_CODE_LENGTH` of them, is `missing`, at once. A store
   * without it is asked `countVisit` only with a code-shaped, unreserved code.
   */
  countVisitIn?(text: string, start: number, now: Clock, count: boolean, event?: VisitEventSource, routed?: boolean): MaybePromise<VisitDecision>;
  /*
   * Events (docs/analytics.md): a counted visit with `event` records the event `event()` makes
   * (called once, only for a counted visit) as one unit with the count: durable together, lost
   * together, never one without the other. Without `event` (`visit_tracking: counts`) the visit
   * adds to `untracked` too. Events belong to the link, not its code: a code taken again by a new
   * link starts with none, and a deleted link's events go with it.
   */
  /*
   * Visit limits in `countVisit`: a link with `maxVisits` whose `visits` has reached it answers
   * `limit_reached` and counts nothing (a 410 is not a visit), for GET and HEAD alike; HEAD of a
   * link with visits left answers `found` without counting. The counted visit and the limit
   * decision are one atomic step: of any number of concurrent GETs exactly `maxVisits - visits` are
   * `found`. A counted `found` of a link *with* a limit answers with a promise that settles only
   * once the new count is durable (it joins the group commit, or commits synchronously), so no crash
   * can grant an extra visit; it rejects with `StoreUnavailableError` when the count cannot be
   * written, and the visit is not granted. A write known not to have happened (refused by the
   * disk, a statement that failed) gives the visit back; one whose outcome is unknown (a failed
   * fsync, a lost commit acknowledgement) leaves it used. Links without a limit count in batches.
   */
  /**
   * Edits the live link of `code` (docs/api.md); undefined when there is none (unknown, expired by
   * `now`, or being deleted). Resolves with the updated record once the change is durable; rejects
   * with `StoreUnavailableError` like `insert`. The caller has validated every field. A new
   * retention counts from `createdAt`, so it may expire the link at once (the answer is then the
   * record as updated; later reads do not return it); a `maxVisits` at or below `visits` uses it up.
   * A link left with a limit has its visit count durable with the edit, whatever was buffered. */
  update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined>;
  /** Every live link (that `author` made, when given), oldest first; memory stays flat whatever the number of links. */
  exportAll(now: number, author?: string): AsyncIterable<LinkRecord>;
  /**
   * The stats of the live link of `code`, or of every live link when `code` is null (with
   * `links`); undefined when `code` has no live link. Never holds the event loop long: a long
   * count is done in slices.
   */
  visitStats(code: string | null, query: StatsQuery, now: number): MaybePromise<VisitStats | undefined>;
  /** A page of the events of the live link of `code` that pass `filter`, newest first; undefined when none. */
  listVisits(code: string, filter: EventFilter, limit: number, offset: number, now: number): MaybePromise<VisitPage | undefined>;
  /**
   * Removes the events of the live link of `code` and sets its `visits` and `untracked` to 0 (a
   * used-up link can be visited again); resolves with the number of events removed once durable,
   * undefined when there is no live link. Rejects with `StoreUnavailableError` like `insert`.
   */
  deleteVisits(code: string, now: number): Promise<number | undefined>;
  /** The events of live links that pass `filter`, oldest first; memory stays flat. */
  exportVisits(filter: VisitExportFilter, now: number): AsyncIterable<CodedEvent>;
  /**
   * Records an event of the past for the live link of `code`: it turns one of the link's
   * `untracked` visits into this event, or adds a visit when there are none left, so the invariant
   * holds. Durable before it resolves; `chain` as in `insert`.
   */
  importVisit(code: string, event: VisitEvent, now: number, chain?: InsertChain): MaybePromise<ImportedVisit>;
  /**
   * Optional, for stores that instances share: the random key of UTC day `day` (days since
   * 1970-01-01) for the daily visitor ids, the same for every instance, made on first use and
   * deleted after its day. A store without it (the log store) leaves the key in the process's
   * memory (visitor-id.ts).
   */
  dailyKey?(day: number): Promise<Uint8Array>;
  /** Undefined when reads work (docs/operations.md readiness), else why not. */
  ready(): MaybePromise<string | undefined>;
  /** Writes what is buffered (visit counts) and releases the store. Idempotent. */
  close(): Promise<void>;
  /** Links held, expired ones not yet reclaimed included (the `shortener_links` gauge). */
  readonly count: number;
}

/** A change the store could not make now (disk full, data file gone, database unreachable): nothing changed, a retry may succeed. */
export class StoreUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

/** `f` of a value now, or of a promise's value once it settles: no microtask for a value. */
export function mapMaybe<T, U>(value: MaybePromise<T>, f: (value: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

const DAY = 86400;
/** True once a record with a retention has passed `created_at + retention_days × 86400` (seconds). */
export function isExpired(rec: Pick<LinkRecord, 'createdAt' | 'retentionDays'>, nowSeconds: number): boolean {
  return isExpiredAt(rec.createdAt, rec.retentionDays, nowSeconds);
}

/** `isExpired` on the bare fields (the redirect path reads them from the keydir's columns). */
export function isExpiredAt(createdAt: number, retentionDays: number, nowSeconds: number): boolean {
  return retentionDays > 0 && nowSeconds >= createdAt + retentionDays * DAY;
}

/** `created_at + retention_days × 86400`, or null when the link is kept forever (the record's `expires_at`). */
export function expiresAt(rec: Pick<LinkRecord, 'createdAt' | 'retentionDays'>): number | null {
  return rec.retentionDays > 0 ? rec.createdAt + rec.retentionDays * DAY : null;
}

/** True when a link with a visit limit has used it up. */
export function isUsedUp(rec: Pick<LinkRecord, 'visits' | 'maxVisits'>): boolean {
  return rec.maxVisits !== null && rec.visits >= rec.maxVisits;
}
