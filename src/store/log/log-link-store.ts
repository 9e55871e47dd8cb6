/**
 * The embedded log store (`log-engine.ts`: keydir in memory, append-only log on disk) behind the
 * `LinkStore` contract. Every read and the redirect answer synchronously from memory; inserts,
 * edits and deletes are promises that settle once their log entry is durable, and so is a counted
 * visit of a link with a visit limit. A list filtered by `q` is a promise too: it is searched
 * across event-loop turns.
 */
import type { WebhookStore } from '../webhook-store.ts';
import type { OrphanStore } from '../orphan-store.ts';
import type { DomainStore } from '../domain-store.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  IN_CODE_ALPHABET,
  keyOnDomain,
  isExpired,
  isExpiredAt,
  MAX_CODE_LENGTH,
  mergeRouting,
  type Clock,
  type InsertChain,
  type LinkChanges,
  type LinkPage,
  type LinkRecord,
  type LinkStore,
  type ListQuery,
  type VisitDecision,
} from '../link-store.ts';
import type { KeyStore } from '../key-store.ts';
import type { Snapshot, LogEngine } from './log-engine.ts';
import { allStats, exportEvents, linkStats, linkVisits } from './visit-reads.ts';
import { unwritable } from './write-errors.ts';
import type {
  CodedEvent,
  EventFilter,
  ImportedVisit,
  StatsQuery,
  VisitEvent,
  VisitEventSource,
  VisitExportFilter,
  VisitPage,
  VisitStats,
} from '../../visits/event.ts';

const MISSING: VisitDecision = { kind: 'missing' };
const EXPIRED: VisitDecision = { kind: 'expired' };
const LIMIT_REACHED: VisitDecision = { kind: 'limit_reached' };

/** Records read per event-loop turn while exporting. */
const EXPORT_SLICE = 1000;

export class LogLinkStore implements LinkStore {
  /**
   * The one `found` answer of this store, its URL set on each redirect: a redirect allocates no
   * result object. Callers read it at once (the contract says so), before the next redirect.
   */
  private readonly found: { kind: 'found'; url: string; limited: boolean } = { kind: 'found', url: '', limited: false };
  /** Codes whose insert is being written: taken, though not yet visible. */
  private readonly inserting = new Set<string>();
  /** The last edit of each code being edited: the next waits for it, so none is lost. */
  private readonly editing = new Map<string, Promise<LinkRecord | undefined>>();
  /** Stored API keys, in memory and in the log beside the links (`log-keys.ts`). */
  readonly accessKeys: KeyStore;
  readonly domains: DomainStore;
  readonly orphans: OrphanStore;
  readonly webhooks: WebhookStore;

  constructor(private readonly store: LogEngine) {
    this.accessKeys = store.accessKeys;
    this.domains = store.domains;
    this.orphans = store.orphans;
    this.webhooks = store.webhooks;
  }

  get count(): number {
    return this.store.count;
  }

  insert(record: LinkRecord, now: number, chain?: InsertChain): false | Promise<boolean> {
    if (chain?.failed !== undefined) return Promise.reject(unwritable(chain.failed));
    const { code } = record;
    if (this.inserting.has(code)) return false;
    // An expired link still in memory (not compacted yet) gives its code up: the create replaces it.
    const held = this.store.get(code);
    if (held && !isExpired(held, now)) return false;
    this.inserting.add(code);
    return this.store.create({ ...record }, chain).then(
      () => {
        this.inserting.delete(code);
        return true;
      },
      (err: unknown) => {
        this.inserting.delete(code);
        const failure = unwritable(err);
        // Refused before the writer saw it (a closed store): the chain stops here too.
        if (chain !== undefined) chain.failed = failure;
        throw failure;
      },
    );
  }

  get(code: string, now: number): LinkRecord | undefined {
    const rec = this.store.get(code);
    return rec && !isExpired(rec, now) ? rec : undefined;
  }

  newestByUrl(url: string, now: number, domain?: string | null): LinkRecord | undefined {
    for (const rec of this.store.withUrl(url)) if (!isExpired(rec, now) && (domain === undefined || keyOnDomain(rec.code, domain))) return rec;
    return undefined;
  }

  list({ limit, offset, now, q, tags, author, domain }: ListQuery): LinkPage | Promise<LinkPage> {
    const live = (createdAt: number, retentionDays: number): boolean => !isExpiredAt(createdAt, retentionDays, now);
    const tagged = tags !== undefined && tags.length > 0 ? tags : undefined;
    if (q === undefined && tagged === undefined && author === undefined && domain === undefined) {
      const snapshot = this.store.snapshot(live);
      return snapshot instanceof Promise ? snapshot.then((taken) => page(taken, offset, limit)) : page(snapshot, offset, limit);
    }
    return this.store.search(live, { q, tags: tagged, author, domain }).then((snapshot) => page(snapshot, offset, limit));
  }

  async delete(code: string, now: number): Promise<boolean> {
    const rec = this.store.get(code);
    if (!rec || isExpired(rec, now)) return false;
    try {
      return await this.store.delete(code);
    } catch (err) {
      throw unwritable(err);
    }
  }

  countVisit(code: string, now: Clock, count: boolean, event?: VisitEventSource, routed?: boolean): VisitDecision | Promise<VisitDecision> {
    return this.decision(this.store.resolve(code, now, count, undefined, undefined, event, routed));
  }

  countVisitIn(text: string, start: number, now: Clock, count: boolean, event?: VisitEventSource, routed?: boolean): VisitDecision | Promise<VisitDecision> {
    const length = text.length - start;
    if (length < 1 || length > MAX_CODE_LENGTH) return MISSING;
    return this.decision(this.store.resolve(text, now, count, start, IN_CODE_ALPHABET, event, routed));
  }

  /** The decision `LogEngine.resolve` answered (see there), as the contract spells it. */
  private decision(url: ReturnType<LogEngine['resolve']>): VisitDecision | Promise<VisitDecision> {
    if (typeof url === 'string') {
      this.found.url = url;
      this.found.limited = this.store.resolvedLimited;
      return this.found;
    }
    if (url === undefined) return MISSING;
    if (url === null) return EXPIRED;
    if (url === false) return LIMIT_REACHED;
    if (!(url instanceof Promise)) return url;
    // A counted visit of a link with a limit: granted once its count is durable.
    return url.then(
      (target) => ({ kind: 'found', url: target, limited: true }),
      (err: unknown) => {
        throw unwritable(err);
      },
    );
  }

  /** The live slot of `code` at `now`, or -1. */
  private liveSlot(code: string, now: number): number {
    const s = this.store.slot(code);
    if (s === -1) return -1;
    const keydir = this.store.keydir;
    return isExpiredAt(keydir.createdAt(s), keydir.retentionDays(s), now) ? -1 : s;
  }

  visitStats(code: string | null, query: StatsQuery, now: number): VisitStats | Promise<VisitStats> | undefined {
    if (code === null) return allStats(this.store, query, now);
    const s = this.liveSlot(code, now);
    return s === -1 ? undefined : linkStats(this.store, s, query);
  }

  listVisits(code: string, filter: EventFilter, limit: number, offset: number, now: number): VisitPage | undefined {
    const s = this.liveSlot(code, now);
    return s === -1 ? undefined : linkVisits(this.store, s, filter, limit, offset);
  }

  async deleteVisits(code: string, now: number): Promise<number | undefined> {
    if (this.liveSlot(code, now) === -1) return undefined;
    try {
      return await this.store.resetVisits(code);
    } catch (err) {
      throw unwritable(err);
    }
  }

  exportVisits(filter: VisitExportFilter, now: number): AsyncIterable<CodedEvent> {
    return exportEvents(this.store, filter, now);
  }

  importVisit(code: string, event: VisitEvent, now: number, chain?: InsertChain): ImportedVisit | Promise<ImportedVisit> {
    if (chain?.failed !== undefined) return Promise.reject(unwritable(chain.failed));
    if (this.liveSlot(code, now) === -1) return 'unknown_code';
    return this.store.importVisit(code, event, chain).then(
      (): ImportedVisit => 'imported',
      (err: unknown) => {
        const failure = unwritable(err);
        if (chain !== undefined) chain.failed = failure;
        throw failure;
      },
    );
  }

  /**
   * A snapshot read from its oldest end, a slice per event-loop turn: what the export shows is the
   * store when it began, and a long export never holds the loop.
   */
  async *exportAll(now: number, author?: string): AsyncGenerator<LinkRecord> {
    const live = (createdAt: number, retentionDays: number): boolean => !isExpiredAt(createdAt, retentionDays, now);
    const snapshot = await (author === undefined ? this.store.snapshot(live) : this.store.search(live, { author }));
    try {
      for (let end = snapshot.length; end > 0; end -= EXPORT_SLICE) {
        const records = snapshot.slice(Math.max(0, end - EXPORT_SLICE), end);
        for (let i = records.length - 1; i >= 0; i--) yield records[i]!;
        await nextTurn();
      }
    } finally {
      snapshot.release();
    }
  }

  /**
   * Edits of one code run one after the other, each on the record as the previous one left it: two
   * concurrent edits of different fields both take effect. A code being deleted is not edited (the
   * delete wins), nor one deleted while the edit waited its turn.
   */
  update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const before = this.editing.get(code);
    const run = (): Promise<LinkRecord | undefined> => this.edit(code, changes, now);
    // Without an edit before it, it starts now: a delete asked after it comes after it.
    const edit = before ? before.then(run, run) : run();
    this.editing.set(code, edit);
    const done = (): void => {
      if (this.editing.get(code) === edit) this.editing.delete(code);
    };
    edit.then(done, done);
    return edit;
  }

  private async edit(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    const rec = this.store.get(code);
    if (!rec || isExpired(rec, now) || this.store.isDeleting(code)) return undefined;
    try {
      return await this.store.edit({
        ...rec,
        url: changes.url ?? rec.url,
        retentionDays: changes.retentionDays ?? rec.retentionDays,
        maxVisits: changes.maxVisits === undefined ? rec.maxVisits : changes.maxVisits,
        title: changes.title === undefined ? rec.title : changes.title,
        tags: changes.tags ?? rec.tags,
        routing: changes.routing === undefined ? rec.routing : mergeRouting(rec.routing, changes.routing),
      });
    } catch (err) {
      throw unwritable(err);
    }
  }

  /** Replayed before this object exists, and read from memory, which cannot fail. */
  ready(): undefined {
    return undefined;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** The page [offset, offset + limit) of a snapshot, newest first; `total` counts the whole snapshot. */
function page(snapshot: Snapshot, offset: number, limit: number | undefined): LinkPage {
  const start = Math.min(offset, snapshot.length);
  const count = limit === undefined ? snapshot.length - start : Math.min(limit, snapshot.length - start);
  return {
    total: snapshot.length,
    count,
    slice: (from, to) => snapshot.slice(start + from, start + Math.min(to, count)),
    release: snapshot.release,
  };
}
