/**
 * The store: a Map from code to record in memory (the Bitcask "keydir"), made durable by the
 * append-only log `urls.log`.
 *
 * Ordering rule: a create or delete changes memory only after its log entry is written (and, with
 * `fsync: 'always'`, fsynced). So memory never runs ahead of the disk: a request answered 201/204
 * is on disk, and a failed write leaves no trace a reader could see.
 *
 * Group commit: entries are queued; one write + one fsync takes everything queued while the
 * previous fsync ran. Under load, N concurrent creates cost about one fsync, not N.
 *
 * Visits are not worth an fsync each: they bump an integer in memory and the counts of the codes
 * visited since the last flush are appended as one batch at least once a second and at close.
 */
import { join } from 'node:path';
import { encodeEntry, Replayer, type Damage, type Entry, type ReplayResult, type StoredRecord } from './format.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import { acquireLock, LockError } from './lock.ts';
import type { Logger } from '../log.ts';

export type { StoredRecord } from './format.ts';

export const LOG_FILE = 'urls.log';

/** Bytes read per step of start-up replay. */
const REPLAY_CHUNK = 4 << 20;
/** Records indexed by URL per event-loop turn after start-up (a few ms each). */
const INDEX_SLICE = 20_000;

/** Visit counts per batch line: keeps a line (and a torn write) small when many codes are hot. */
const VISITS_PER_LINE = 500;

/** Start-up cannot continue: the message names the problem and what to do. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

export interface StoreOptions {
  dir: string;
  fsync: 'always' | 'off';
  log: Logger;
  fs?: StoreFs;
  /** How often buffered visit counts are appended, in ms. */
  visitFlushMs?: number;
}

interface Pending {
  bytes: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Store {
  readonly path: string;
  private readonly fs: StoreFs;
  private readonly fd: number;
  private readonly fsyncWrites: boolean;
  private readonly log: Logger;
  private readonly records: Map<string, StoredRecord>;
  /** Creation order, oldest first; may hold records since deleted (`holes` of them). */
  private order: StoredRecord[];
  private holes = 0;
  /** original URL → its record, or its records oldest first when shortened more than once. */
  private readonly byUrl = new Map<string, StoredRecord | StoredRecord[]>();
  /** Records replayed at start-up and not yet in `byUrl` (a live iterator over `records`). */
  private unindexed: Iterator<StoredRecord> | undefined;
  /** Codes whose create entry is being written: taken, though not yet visible. */
  private readonly reserved = new Set<string>();
  private dirty: StoredRecord[] = [];
  private queue: Pending[] = [];
  private writing: Promise<void> | undefined;
  /** Bytes of intact log: where the next write goes. */
  private size: number;
  /** A failed write may have left partial bytes past `size`; cut them before the next write. */
  private tailSuspect = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly unlock: () => void;

  /** Opens (or creates) the log in `dir` and replays it. Throws `StoreOpenError` on damage. */
  constructor(options: StoreOptions) {
    this.fs = options.fs ?? nodeFs;
    this.log = options.log;
    this.fsyncWrites = options.fsync === 'always';
    this.path = join(options.dir, LOG_FILE);
    try {
      this.fs.mkdirp(options.dir);
    } catch (err) {
      throw new StoreOpenError(`cannot create data directory ${options.dir}: ${(err as Error).message}`);
    }
    try {
      this.unlock = acquireLock(options.dir);
    } catch (err) {
      throw new StoreOpenError(err instanceof LockError ? err.message : `cannot lock ${options.dir}: ${(err as Error).message}`);
    }
    let result: ReplayResult;
    try {
      this.fd = this.openLog(options.dir);
      result = this.replayLog();
    } catch (err) {
      this.unlock();
      throw err instanceof StoreOpenError ? err : new StoreOpenError(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    if (result.damage) {
      void this.fs.close(this.fd).catch(() => undefined);
      this.unlock();
      throw new StoreOpenError(damageMessage(this.path, result.damage));
    }
    if (result.tornTail) {
      this.log.warn('log ends with a torn entry (a crash during a write); cutting it off', {
        file: this.path,
        line: result.tornTail.line,
        reason: result.tornTail.reason,
      });
      // The next append must not land after the torn bytes.
      this.tailSuspect = true;
    }
    this.size = result.validBytes;
    this.records = result.records;
    this.order = [...this.records.values()];
    // The URL index is built after start-up, a slice per event-loop turn: with a million links
    // it takes about half a second that the server can already spend serving. `withUrl` finishes
    // it at once if a lookup comes first.
    this.unindexed = this.records.values();
    this.indexSoon();

    this.timer = setInterval(() => void this.flushVisits().catch(() => undefined), options.visitFlushMs ?? 1000);
    this.timer.unref();
  }

  /** Replays the log in chunks: the file is never held in memory whole. */
  private replayLog(): ReplayResult {
    const replayer = new Replayer();
    const chunk = Buffer.allocUnsafe(REPLAY_CHUNK);
    for (let position = 0; ; ) {
      const n = this.fs.read(this.fd, chunk, position);
      if (n === 0) break;
      replayer.push(chunk.subarray(0, n));
      position += n;
    }
    return replayer.finish();
  }

  private indexSoon(): void {
    setImmediate(() => {
      this.buildIndex(INDEX_SLICE);
      if (this.unindexed) this.indexSoon();
    }).unref();
  }

  /** Indexes up to `budget` more records of the start-up backlog. */
  private buildIndex(budget = Infinity): void {
    const it = this.unindexed;
    if (!it) return;
    for (let n = 0; n < budget; n++) {
      const next = it.next();
      if (next.done) {
        this.unindexed = undefined;
        return;
      }
      this.addToIndex(next.value);
    }
  }

  private openLog(dir: string): number {
    let opened: { fd: number; created: boolean };
    try {
      opened = this.fs.open(this.path);
    } catch (err) {
      throw new StoreOpenError(`cannot open ${this.path}: ${(err as Error).message}`);
    }
    // A new file's directory entry must be durable too, or power loss could lose the whole log.
    if (opened.created) this.fs.syncDir(dir);
    return opened.fd;
  }

  get count(): number {
    return this.records.size;
  }

  get(code: string): StoredRecord | undefined {
    return this.records.get(code);
  }

  /** True when `code` is stored or being stored. */
  taken(code: string): boolean {
    return this.records.has(code) || this.reserved.has(code);
  }

  /** Records with this original URL, newest first. */
  *withUrl(url: string): Generator<StoredRecord> {
    this.buildIndex();
    const hit = this.byUrl.get(url);
    if (!hit) return;
    if (!Array.isArray(hit)) {
      yield hit;
      return;
    }
    for (let i = hit.length - 1; i >= 0; i--) yield hit[i]!;
  }

  /** Every record, newest first. */
  *newestFirst(): Generator<StoredRecord> {
    for (let i = this.order.length - 1; i >= 0; i--) {
      const rec = this.order[i]!;
      if (this.records.get(rec.code) === rec) yield rec;
    }
  }

  /** Stores a new record; resolves once its entry is durable, and only then is it visible. */
  async create(rec: Omit<StoredRecord, 'dirty'>): Promise<StoredRecord> {
    this.reserved.add(rec.code);
    try {
      await this.append([{ op: 'C', ...rec }]);
    } finally {
      this.reserved.delete(rec.code);
    }
    const live: StoredRecord = { ...rec, dirty: false };
    this.records.set(live.code, live);
    this.order.push(live);
    this.index(live);
    return live;
  }

  /** Deletes a record; resolves to false if it did not exist, true once the tombstone is durable. */
  async delete(code: string): Promise<boolean> {
    if (!this.records.has(code)) return false;
    await this.append([{ op: 'D', code }]);
    const rec = this.records.get(code);
    if (!rec) return true; // deleted by a concurrent request meanwhile
    this.records.delete(code);
    this.unindex(rec);
    this.holes++;
    // Rebuild the order list once it is mostly holes: amortized O(1) per delete.
    if (this.holes > 1024 && this.holes * 2 > this.order.length) {
      this.order = this.order.filter((r) => this.records.get(r.code) === r);
      this.holes = 0;
    }
    return true;
  }

  /** Counts one visit: an integer increment now, a log entry within a second. */
  visit(rec: StoredRecord): void {
    rec.visits++;
    if (!rec.dirty) {
      rec.dirty = true;
      this.dirty.push(rec);
    }
  }

  /** Appends the counts of every record visited since the last flush. */
  async flushVisits(): Promise<void> {
    if (this.dirty.length === 0) return;
    const batch = this.dirty;
    this.dirty = [];
    const live = batch.filter((rec) => this.records.get(rec.code) === rec);
    for (const rec of batch) rec.dirty = false;
    const entries: Entry[] = [];
    for (let i = 0; i < live.length; i += VISITS_PER_LINE) {
      entries.push({ op: 'V', counts: live.slice(i, i + VISITS_PER_LINE).map((rec) => [rec.code, rec.visits]) });
    }
    try {
      await this.append(entries);
    } catch (err) {
      // Keep them dirty: the next flush writes the (by then larger) counts.
      for (const rec of live) {
        if (!rec.dirty) {
          rec.dirty = true;
          this.dirty.push(rec);
        }
      }
      this.log.warn('could not write visit counts; will retry', { error: (err as Error).message });
      throw err;
    }
  }

  /** Flushes visits, waits for every queued write, fsyncs and closes the file. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    try {
      await this.flushVisits();
    } catch {
      // Logged by flushVisits; the file is closed regardless.
    }
    this.closed = true;
    await this.writing;
    try {
      if (this.tailSuspect && !(await this.cutTail())) {
        // Still failing at close: bytes of a refused change stay past the intact end. A torn line is
        // cut at start-up, but a whole one would replay; say so rather than hide it.
        this.log.error('could not cut unacknowledged bytes from the log; a refused change may reappear after restart', {
          file: this.path,
          intact_bytes: this.size,
        });
      }
      await this.fs.fsync(this.fd);
    } finally {
      await this.fs.close(this.fd);
      this.unlock();
    }
  }

  private append(entries: Entry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const bytes = entries.length === 1 ? encodeEntry(entries[0]!) : Buffer.concat(entries.map(encodeEntry));
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** The group-commit loop: one write and one fsync per batch of everything queued meanwhile. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes));
      try {
        if (this.tailSuspect) {
          await this.fs.truncate(this.fd, this.size);
          this.tailSuspect = false;
        }
        await this.fs.write(this.fd, bytes, this.size);
        if (this.fsyncWrites) await this.fs.fsync(this.fd);
        this.size += bytes.length;
        for (const p of batch) p.resolve();
      } catch (err) {
        // Part or all of the batch may be on disk, but it was not acknowledged: cut it now, so that
        // neither a restart nor a crash brings back a change the client was told failed. If the cut
        // fails too, it is retried before the next write and at close.
        this.tailSuspect = true;
        await this.cutTail();
        for (const p of batch) p.reject(err as Error);
      }
    }
    this.writing = undefined;
  }

  /** Truncates the log back to its last intact byte; false when that failed too. */
  private async cutTail(): Promise<boolean> {
    try {
      await this.fs.truncate(this.fd, this.size);
      this.tailSuspect = false;
      return true;
    } catch {
      return false;
    }
  }

  private index(rec: StoredRecord): void {
    // While the start-up backlog is indexed, its live Map iterator reaches new records itself.
    if (!this.unindexed) this.addToIndex(rec);
  }

  private addToIndex(rec: StoredRecord): void {
    const hit = this.byUrl.get(rec.url);
    if (!hit) this.byUrl.set(rec.url, rec);
    else if (Array.isArray(hit)) hit.push(rec);
    else this.byUrl.set(rec.url, [hit, rec]);
  }

  private unindex(rec: StoredRecord): void {
    const hit = this.byUrl.get(rec.url);
    if (hit === rec) this.byUrl.delete(rec.url);
    else if (Array.isArray(hit)) {
      const rest = hit.filter((r) => r !== rec);
      this.byUrl.set(rec.url, rest.length === 1 ? rest[0]! : rest);
    }
  }
}

function damageMessage(path: string, damage: Damage): string {
  return (
    `${path} is damaged at line ${damage.line} (${damage.reason}), before its last entry. ` +
    'Start-up stopped so that nothing is dropped silently. To keep every intact entry and move the ' +
    'damaged file aside, run the server once with --repair (same DATA_DIR); or restore the data ' +
    'directory from a backup.'
  );
}
