/**
 * The log engine: every record in memory (the Bitcask "keydir", in columns: see `keydir.ts`), made
 * durable by the append-only log `urls.log`. This is its face, in the engine's own terms (slots,
 * entries, a redirect answered as a bare URL); `log-link-store.ts` puts the `LinkStore` contract
 * over it. What it does for the service is here: link reads and writes, the redirect, changes to a
 * link's visits. Its life (opening, the once-a-second tick, appends, the close) is
 * `engine-lifecycle.ts`, which it extends; the other parts, each in its own file:
 *
 * - `open.ts`: start-up (lock, replay, a torn tail copied aside and cut);
 * - `snapshot.ts`: a listing taken at once and read in slices;
 * - `log-writer.ts`: every change is written (group commit) before memory changes;
 * - `visit-counts.ts`: visits counted in memory, their counts appended as count batches once a second;
 * - `compaction.ts`: the log rewritten with the live records only;
 * - `reattach.ts`: the data directory removed under the running process, and taken back;
 * - `close.ts`: the log closed at the end (queued writes, a refused tail cut, fsync, the lock freed).
 */
import { EngineLifecycle } from './engine-lifecycle.ts';
import { isExpiredAt, type Entry } from './format.ts';
import type { Clock, InsertChain, RoutedDecision, Routing } from '../link-store.ts';
import type { StoredRecord } from './keydir.ts';
import { searchSnapshot, takeSnapshot, type SearchFilter, type Snapshot } from './snapshot.ts';
import type { VisitEvent, VisitEventSource } from '../../visits/event.ts';
import { STRIDE } from '../../visits/packed.ts';

export type { CompactReport } from './compaction.ts';
export { COMPACT_MIN_BYTES } from './compaction.ts';
export type { FsyncMode, LogEngineOptions } from './engine-lifecycle.ts';
export { COMPACT_SUFFIX, LOG_FILE } from './files.ts';
export { DataFileGoneError } from './write-errors.ts';
export { StoreOpenError } from './open.ts';
export type { Snapshot } from './snapshot.ts';

export class LogEngine extends EngineLifecycle {
  /** Codes whose tombstone is being written: still visible, but no longer deletable. */
  private readonly deleting = new Set<string>();

  /** The record of `code` (a snapshot: later visits do not change it). */
  get(code: string): StoredRecord | undefined {
    return this.records.get(code);
  }

  /** Records with this original URL, newest first. */
  *withUrl(url: string): Generator<StoredRecord> {
    for (const s of this.records.slotsWithUrl(url)) yield this.records.record(s);
  }

  /**
   * Live records for which `keep(slot fields)` holds, newest first, as a `Snapshot`: at once on a
   * small store, else once its slots were scanned across event-loop turns (see `snapshot.ts`).
   */
  snapshot(keep: (createdAt: number, retentionDays: number) => boolean): Snapshot | Promise<Snapshot> {
    this.readers++;
    return takeSnapshot(this.records, keep, () => this.readers--);
  }

  /**
   * `snapshot` narrowed by `filter` (a text, tags, an author); the records are tested across
   * event-loop turns (see `snapshot.ts`).
   */
  search(keep: (createdAt: number, retentionDays: number) => boolean, filter: SearchFilter): Promise<Snapshot> {
    this.readers++;
    return searchSnapshot(this.records, keep, filter, () => this.readers--);
  }

  /**
   * Stores a new record; resolves once its entry is durable, and only then is it visible. With
   * `chain`, refused unwritten once a write of the chain failed (`InsertChain`).
   */
  async create(rec: StoredRecord, chain?: InsertChain): Promise<StoredRecord> {
    // Whether the code is free is the caller's to decide (`LogLinkStore.insert` keeps codes being
    // inserted apart), so two creates of one code never both reach the log.
    const told = this.webhooks.linkRows('link.created', rec, rec.createdAt);
    await this.append(
      told === undefined ? [{ op: 'C', ...rec }] : [{ op: 'C', ...rec }, told],
      () => {
        this.records.add(rec.code, rec.url, rec.createdAt, rec.retentionDays, rec.visits, rec.maxVisits, rec);
        if (told !== undefined) this.records.webhooks.apply(told);
      },
      chain,
    );
    return { ...rec };
  }

  /** True while the tombstone of `code` is being written: it is no longer editable. */
  isDeleting(code: string): boolean {
    return this.deleting.has(code);
  }

  /**
   * Edits the record of `code` in place: `url`, `retentionDays`, `maxVisits`, `title`, `tags` and
   * `routing` become those of `rec`. Resolves once the edit entry is durable with the record as edited, or undefined when
   * the code was gone by then. The caller makes sure one edit of a code runs at a time.
   *
   * A link left with a visit limit has its count written with the edit, in the same write and
   * before it: the visits of a link without a limit are counted in memory (`visit-counts.ts`), and
   * a restart that forgot them would grant them again under the new limit (docs/storage.md).
   */
  async edit(rec: StoredRecord): Promise<StoredRecord | undefined> {
    const records = this.records;
    const before = records.find(rec.code);
    const counted = before === -1 ? 0 : records.visits(before);
    const gainsLimit = rec.maxVisits !== null && before !== -1 && records.maxVisits(before) === 0;
    const entries: Entry[] = [
      {
        op: 'E',
        code: rec.code,
        url: rec.url,
        retentionDays: rec.retentionDays,
        maxVisits: rec.maxVisits,
        title: rec.title,
        tags: rec.tags,
        routing: rec.routing,
      },
    ];
    if (rec.maxVisits !== null && counted > 0) entries.unshift(...this.counts.carried(before));
    // The record as the edit leaves it: its count is memory's, not the caller's copy's.
    // (Without a subscription, not even the record is made.)
    const told =
      before === -1 || records.webhooks.size === 0
        ? undefined
        : this.webhooks.linkRows('link.updated', { ...rec, visits: records.visits(before) }, this.seconds());
    if (told !== undefined) entries.push(told);
    let edited: StoredRecord | undefined;
    await this.append(entries, () => {
      // Memory holds what the log does: the rows are written, whatever became of the link meanwhile.
      if (told !== undefined) records.webhooks.apply(told);
      const s = records.find(rec.code);
      if (s === -1) return;
      records.edit(s, rec.url, rec.retentionDays, rec.maxVisits, rec);
      edited = records.record(s, rec.code);
    });
    // Visits counted while that write ran were still those of a link without a limit, in memory
    // only; the count as the answer reports it is made durable too. (Should this second write
    // fail, the edit stands, its count is left to the next flush, and the client gets the 503.)
    if (edited && gainsLimit && edited.visits > counted) {
      const s = records.find(rec.code);
      if (s !== -1) await this.counts.write(s);
    }
    return edited;
  }

  /**
   * Deletes a record; resolves to false if it did not exist or is being deleted, true once the
   * tombstone is durable. Of concurrent deletes of one code exactly one writes a tombstone and gets
   * true (docs/api.md); if its write fails, the code is deletable again.
   */
  async delete(code: string): Promise<boolean> {
    if (!this.records.has(code) || this.deleting.has(code)) return false;
    this.deleting.add(code);
    try {
      const told =
        this.records.webhooks.size === 0
          ? undefined
          : this.webhooks.linkRows('link.deleted', this.records.record(this.records.find(code), code), this.seconds());
      await this.append(told === undefined ? [{ op: 'D', code }] : [{ op: 'D', code }, told], () => {
        this.forget(code);
        if (told !== undefined) this.records.webhooks.apply(told);
      });
    } finally {
      this.deleting.delete(code);
    }
    return true;
  }

  /** Drops a record from memory (its tombstone is durable, or compaction left it out). */
  private forget(code: string): void {
    // Gone already when a concurrent request deleted it meanwhile.
    if (this.records.delete(code)) this.maybeVacuum();
  }

  /**
   * Whether the link the last `resolve` answered a URL for has a visit limit: read at once, like
   * that answer (the redirect's link previews, docs/api.md).
   */
  resolvedLimited = false;

  /** Counts one visit of a live code: an integer increment now, a log entry within a second. */
  visit(code: string): void {
    const s = this.records.find(code);
    if (s !== -1) this.counts.count(s);
  }

  /**
   * The redirect's lookup, one hash lookup and no record object: the URL of the code (counted when
   * `count`; a promise for a limited link, see `limited`), `null` when expired by `now()` (read only
   * for a link that can expire), `undefined` when unknown, `false` when its visit limit is used up.
   * The code is `text` from `start` on, of the characters `allowed` (`Keydir.find`; `findIn`,
   * whose answer carries the URL of a link that needs no other check). A link with routing, unless
   * `routed`, is its `RoutedDecision`, counted nothing (link-store.ts `countVisit`).
   */
  resolve(
    text: string,
    now: Clock,
    count: boolean,
    start?: number,
    allowed?: Uint8Array,
    event?: VisitEventSource,
    routed?: boolean,
  ): string | null | undefined | false | Promise<string> | RoutedDecision {
    const records = this.records;
    // A remembered answer is only ever one of a link without a limit (`Keydir.findIn`).
    this.resolvedLimited = false;
    let s: number;
    if (start === undefined) s = records.find(text);
    else {
      const found = records.findIn(text, start, allowed);
      if (found === undefined) return undefined;
      if (found.url !== null) {
        if (count) {
          if (event === undefined) this.counts.count(found.slot);
          else this.counts.record(found.slot, event());
        }
        return found.url;
      }
      s = found.slot;
    }
    if (s === -1) return undefined;
    // A remembered answer is never one of a link with routing (`Keydir.findIn`).
    if (routed !== true) {
      const routing = records.routingOf(s);
      if (routing !== undefined) return this.routedAt(s, routing, now);
    }
    const days = records.retentionDays(s);
    if (days > 0 && isExpiredAt(records.createdAt(s), days, now())) return null;
    // The one read a link without a limit pays for limits.
    if (records.maxVisits(s) !== 0) {
      this.resolvedLimited = true;
      return this.limited(s, count, event);
    }
    if (count) {
      if (event === undefined) this.counts.count(s);
      else this.counts.record(s, event());
    }
    return records.redirectUrl(s);
  }

  /**
   * A link with a visit limit (docs/api.md): the decision and the count in one synchronous step,
   * so that concurrent visits can never overshoot; a counted visit resolves once its count is
   * durable (see `VisitCounts.countDurably`).
   */
  private limited(s: number, count: boolean, event: VisitEventSource | undefined): false | string | Promise<string> {
    const records = this.records;
    if (records.visits(s) >= records.maxVisits(s)) return false;
    const url = records.redirectUrl(s);
    if (!count) return url;
    return (event === undefined ? this.counts.countDurably(s) : this.counts.recordDurably(s, event())).then(() => url);
  }

  /** What a link with routing is now, counting nothing. */
  private routedAt(s: number, routing: Routing, now: Clock): RoutedDecision {
    const records = this.records;
    const days = records.retentionDays(s);
    const limit = records.maxVisits(s);
    const gone = days > 0 && isExpiredAt(records.createdAt(s), days, now()) ? 'expired' : limit !== 0 && records.visits(s) >= limit ? 'limit_reached' : null;
    return { kind: 'routed', url: records.redirectUrl(s), limited: limit !== 0, routing, gone };
  }

  /** The live slot of `code`, or -1 (expiry is the caller's). */
  slot(code: string): number {
    return this.records.find(code);
  }

  /**
   * Removes the events of `code`'s link and sets its counts to 0, at once in memory (a used-up
   * link can be visited again); resolves with the number of events removed once that is durable.
   * The entry numbers the link's next event, so lines of earlier events written after it are
   * skipped on replay. If the write fails, the events and counts are put back.
   */
  async resetVisits(code: string): Promise<number> {
    const records = this.records;
    const s = records.find(code);
    if (s === -1) return 0;
    const events = records.events;
    const saved = { data: events.data(s)?.slice(0, events.length(s) * STRIDE), untracked: records.untracked(s) };
    const removed = records.resetVisits(s);
    this.counts.dropPendingOf(s);
    try {
      await this.append([{ op: 'Z', code, seq: events.nextSeq(s) }]);
    } catch (err) {
      const now = records.find(code);
      if (now !== -1) {
        records.setUntracked(now, records.untracked(now) + saved.untracked);
        const data = saved.data;
        const next = events.nextSeq(now);
        if (data) for (let w = 0; w < data.length; w += STRIDE) records.addEvent(now, data[w]!, data[w + 1]!, data[w + 2]!, data[w + 3]!);
        events.setNextSeq(now, next);
      }
      throw err;
    }
    return removed;
  }

  /** Records an imported event for `code`'s live link (see `VisitCounts.importDurably`). */
  importVisit(code: string, event: VisitEvent, chain?: InsertChain): Promise<void> {
    const s = this.records.find(code);
    if (s === -1) return Promise.resolve();
    return this.counts.importDurably(s, event, chain);
  }
}
