/**
 * The log engine: every record in memory (the Bitcask "keydir", in columns: see `keydir.ts`), made
 * durable by the append-only log `urls.log`. This is its face, in the engine's own terms (slots,
 * entries, a redirect answered as a bare URL); `log-link-store.ts` puts the `LinkStore` contract
 * over it. The parts, each in its own file:
 *
 * - `open.ts`: start-up (lock, replay, a torn tail copied aside and cut);
 * - `snapshot.ts`: a listing taken at once and read in slices;
 * - `log-writer.ts`: every change is written (group commit) before memory changes;
 * - `visit-counts.ts`: visits counted in memory, their counts appended as count batches once a second;
 * - `compaction.ts`: the log rewritten with the live records only;
 * - `reattach.ts`: the data directory removed under the running process, and taken back;
 * - `close.ts`: the log closed at the end (queued writes, a refused tail cut, fsync, the lock freed).
 */
import { join } from 'node:path';
import { CHECKPOINT_MIN_BYTES } from './checkpoint.ts';
import { closeLog } from './close.ts';
import { COMPACT_MIN_BYTES, upgradeLog, type CompactReport, type StoreParts } from './compaction.ts';
import { Compactor } from './compactor.ts';
import { LOG_FILE } from './files.ts';
import { isExpiredAt, type Entry } from './format.ts';
import type { Clock, InsertChain } from '../link-store.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import type { Keydir, StoredRecord } from './keydir.ts';
import { LogWriter, type EncodedLines } from './log-writer.ts';
import { openLog } from './open.ts';
import { Reattacher } from './reattach.ts';
import { searchSnapshot, takeSnapshot, type Snapshot } from './snapshot.ts';
import { VisitCounts } from './visit-counts.ts';
import { errorKind } from './write-errors.ts';
import type { Logger } from '../../log.ts';
import type { VisitEvent, VisitEventSource } from '../../visits/event.ts';
import { STRIDE } from '../../visits/packed.ts';
import { repeatLog, type RepeatLog } from '../../log-throttle.ts';

export type { StoredRecord } from './keydir.ts';
export type { CompactReport } from './compaction.ts';
export { COMPACT_MIN_BYTES } from './compaction.ts';
export { COMPACT_SUFFIX, LOG_FILE, REPLACED_SUFFIX, RESTORE_SUFFIX, TORN_SUFFIX } from './files.ts';
export { DataFileGoneError } from './write-errors.ts';
export { StoreOpenError } from './open.ts';
export type { Snapshot } from './snapshot.ts';

/** When every acknowledged write is fsynced first (`always`), or left to the OS (`off`). */
export type FsyncMode = 'always' | 'off';

/** Dead keydir slots are squeezed out once there are more of them than this and than live ones. */
const VACUUM_MIN_DEAD = 1024;

export interface LogEngineOptions {
  dir: string;
  fsync: FsyncMode;
  log: Logger;
  fs?: StoreFs;
  /** How often buffered visit counts are appended (and the need to compact checked), in ms. */
  visitFlushMs?: number;
  /** Clock in ms: compaction drops records expired by then; repeated failures are summarized by it. */
  now?: () => number;
  /** Dead entries must outweigh live ones *and* the log pass this size before compacting by itself. */
  compactMinBytes?: number;
  /** Told the seconds of each group-commit write and its fsync (metrics). */
  onWrite?: (seconds: number) => void;
  /** Events older than this many days become untracked visits, checked hourly (0 = keep them). */
  visitRetentionDays?: number;
  /** The start-up checkpoint is written once this much log (and 1/32 of it) is past the last one (`checkpoint.ts`). */
  checkpointMinBytes?: number;
}

/** How often retention looks for events past their time, in ms. */
const RETENTION_CHECK_MS = 3_600_000;

export class LogEngine {
  readonly path: string;
  private readonly parts: StoreParts;
  private readonly records: Keydir;
  private readonly writer: LogWriter;
  private readonly counts: VisitCounts;
  private readonly reattacher: Reattacher;
  private readonly log: Logger;
  private readonly problems: RepeatLog;
  private readonly compactor: Compactor;
  /** Codes whose tombstone is being written: still visible, but no longer deletable. */
  private readonly deleting = new Set<string>();
  /** Open snapshots: while any is open, slots are not renumbered. */
  private readers = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  /** Opens (or creates) the log in `dir` and replays it. Throws `StoreOpenError` on damage. */
  constructor(options: LogEngineOptions) {
    const fs = options.fs ?? nodeFs;
    const now = options.now ?? Date.now;
    this.log = options.log;
    this.problems = repeatLog(this.log, now);
    this.path = join(options.dir, LOG_FILE);
    const checkpointMinBytes = options.checkpointMinBytes ?? CHECKPOINT_MIN_BYTES;
    const opened = openLog(fs, options.dir, this.path, this.log, now, checkpointMinBytes);
    this.records = opened.records;
    this.writer = new LogWriter({
      fs,
      path: this.path,
      fd: opened.fd,
      size: opened.size,
      entries: opened.entries,
      tailSuspect: opened.tailSuspect,
      fsync: options.fsync === 'always',
      onWrite: options.onWrite,
      problems: this.problems,
      reattach: () => this.reattacher.reattach(),
      legacy: opened.legacy,
      upgrade: async () => {
        await upgradeLog(this.parts);
      },
    });
    this.parts = {
      fs,
      dir: options.dir,
      path: this.path,
      log: this.log,
      problems: this.problems,
      now,
      records: this.records,
      writer: this.writer,
      lock: opened.lock,
      checkpoint: { covered: opened.checkpointed, minBytes: checkpointMinBytes },
    };
    this.reattacher = new Reattacher(this.parts);
    this.counts = new VisitCounts(
      this.records,
      this.problems,
      (entries, chain) => this.append(entries, undefined, chain),
      () => setImmediate(() => void this.flushVisits().catch(() => undefined)),
    );
    this.compactor = new Compactor(this.parts, options.compactMinBytes ?? COMPACT_MIN_BYTES, opened);
    this.maybeVacuum();

    const retentionDays = options.visitRetentionDays ?? 0;
    let nextRetention = 0;
    this.timer = setInterval(() => {
      this.reattacher.poll();
      if (retentionDays > 0 && now() >= nextRetention && !this.closed) {
        nextRetention = now() + RETENTION_CHECK_MS;
        this.expireEvents(Math.floor(now() / 1000) - retentionDays * 86_400).catch((err: Error) =>
          this.problems.report('warn', `retention:${errorKind(err)}`, 'could not write the removal of old visit events; will retry', { error: err.message }),
        );
      }
      void this.flushVisits().catch(() => undefined);
      if (!this.closed) this.compactor.maybe();
      this.maybeVacuum();
      this.problems.flush();
    }, options.visitFlushMs ?? 1000);
    this.timer.unref();
  }

  get count(): number {
    return this.records.size;
  }

  /** The record of `code` (a snapshot: later visits do not change it). */
  get(code: string): StoredRecord | undefined {
    return this.records.get(code);
  }

  /** Records with this original URL, newest first. */
  *withUrl(url: string): Generator<StoredRecord> {
    for (const s of this.records.slotsWithUrl(url)) yield this.records.record(s);
  }

  /** Live records for which `keep(slot fields)` holds, newest first, as a `Snapshot`. */
  snapshot(keep: (createdAt: number, retentionDays: number) => boolean): Snapshot {
    const snapshot = takeSnapshot(this.records, keep, () => this.readers--);
    this.readers++;
    return snapshot;
  }

  /**
   * `snapshot` narrowed to the records whose code or URL contains `q`, case-insensitively; the
   * records are tested across event-loop turns (see `snapshot.ts`).
   */
  search(keep: (createdAt: number, retentionDays: number) => boolean, q: string | undefined, tags: readonly string[] | undefined): Promise<Snapshot> {
    this.readers++;
    return searchSnapshot(this.records, keep, q, tags, () => this.readers--);
  }

  /**
   * Stores a new record; resolves once its entry is durable, and only then is it visible. With
   * `chain`, refused unwritten once a write of the chain failed (`InsertChain`).
   */
  async create(rec: StoredRecord, chain?: InsertChain): Promise<StoredRecord> {
    // Whether the code is free is the caller's to decide (`LogLinkStore.insert` keeps codes being
    // inserted apart), so two creates of one code never both reach the log.
    await this.append(
      [{ op: 'C', ...rec }],
      () => {
        this.records.add(rec.code, rec.url, rec.createdAt, rec.retentionDays, rec.visits, rec.maxVisits, rec);
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
   * Edits the record of `code` in place: `url`, `retentionDays`, `maxVisits`, `title` and `tags`
   * become those of `rec`. Resolves once the edit entry is durable with the record as edited, or undefined when
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
      { op: 'E', code: rec.code, url: rec.url, retentionDays: rec.retentionDays, maxVisits: rec.maxVisits, title: rec.title, tags: rec.tags },
    ];
    if (rec.maxVisits !== null && counted > 0) entries.unshift(...this.counts.carried(before));
    let edited: StoredRecord | undefined;
    await this.append(entries, () => {
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
      await this.append([{ op: 'D', code }], () => this.forget(code));
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
   * Reclaims the memory of deleted records once they outnumber the live ones: amortized O(1) per
   * delete. Not while compacting or while a snapshot is open, which read slots across event-loop
   * turns.
   */
  private maybeVacuum(): void {
    const dead = this.records.end - this.records.size;
    if (this.compactor.running || this.reattacher.restoring || this.readers > 0 || dead < VACUUM_MIN_DEAD || dead <= this.records.size) return;
    this.counts.renumber(this.records.vacuum());
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
   * whose answer carries the URL of a link that needs no other check).
   */
  resolve(
    text: string,
    now: Clock,
    count: boolean,
    start?: number,
    allowed?: Uint8Array,
    event?: VisitEventSource,
  ): string | null | undefined | false | Promise<string> {
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

  /** The live slot of `code`, or -1 (expiry is the caller's). */
  slot(code: string): number {
    return this.records.find(code);
  }

  /** The keydir, for the stats' reads: never written through this. */
  get keydir(): Keydir {
    return this.records;
  }

  /**
   * Holds slot numbers still (no vacuum) until the returned release is called: for reads of the
   * events that go on across event-loop turns.
   */
  holdSlots(): () => void {
    this.readers++;
    let held = true;
    return () => {
      if (held) this.readers--;
      held = false;
    };
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

  /**
   * Retention (docs/analytics.md): the events older than `before` become untracked visits of their
   * links, in memory at once and in the log as one `T` entry. Returns the events removed.
   */
  async expireEvents(before: number): Promise<number> {
    const records = this.records;
    const counts: [string, number][] = [];
    let removed = 0;
    for (const s of records.slotsOldestFirst()) {
      const n = records.expireEvents(s, before);
      if (n === 0) continue;
      removed += n;
      counts.push([records.code(s), records.untracked(s)]);
    }
    // Their lines, were they written after this entry, would bring them back.
    this.counts.dropPendingBefore(before);
    // Should the write fail, memory and the log still agree on every count: the log holds those
    // events still, and the next compaction writes memory as it is.
    if (counts.length > 0) await this.append([{ op: 'T', before, counts }]);
    return removed;
  }

  /** Appends the counts of every record visited since the last flush, as count-batch entries. */
  flushVisits(): Promise<void> {
    return this.counts.flush();
  }

  /** Appends the pending visit counts, waits for every queued write, fsyncs and closes the file. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  /**
   * Rewrites the log with one entry per live record, dropping expired records. Writes go on
   * meanwhile; a second call while one runs returns the same promise.
   */
  compact(): Promise<CompactReport> {
    if (this.closed || this.closing) return Promise.reject(new Error('store is closed'));
    return this.compactor.run();
  }

  private append(entries: Entry[] | EncodedLines, durable?: () => void, chain?: InsertChain): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const lost = this.reattacher.lockLost();
    if (lost) return Promise.reject(lost);
    return this.writer.append(entries, durable, chain);
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.compactor.running?.catch(() => undefined);
    await this.reattacher.lastChance();
    try {
      await this.flushVisits();
    } catch {
      // Logged by flushVisits; the file is closed regardless.
    }
    this.closed = true;
    // The checkpoint at close is taken only if no visit is waiting to be written (one counted after
    // the last flush would be in it and not in the log).
    await closeLog(this.parts, () => this.counts.idle);
  }
}
