/**
 * The store: every record in memory (the Bitcask "keydir", in columns: see `keydir.ts`), made
 * durable by the append-only log `urls.log`.
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
 *
 * Compaction rewrites the live records into a temp file while writes go on to the old log and are
 * also kept aside; then, with the write queue held, the kept-aside writes are appended, the temp
 * file is fsynced and renamed over the log, and the directory is fsynced. A crash before the
 * rename leaves the old log whole (the temp file is removed at the next start); after it, the new.
 *
 * The file under the process: if `urls.log` or its directory is removed or replaced while running,
 * writes still succeed, into a file nobody will read. So after each batch's write and fsync, before
 * anyone is answered, the open file is checked to still be the one at the path (one fstat and one
 * stat per batch). If it is not, the batch is refused and the store is *detached*: memory, which
 * holds every acknowledged change, stays as it was, and every write is refused until the directory
 * exists again; then the lock is taken again and the whole log rewritten from memory, like a
 * compaction, and writes go on.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  encodeEntry,
  isExpired,
  isExpiredAt,
  recordEntry,
  Replayer,
  type Damage,
  type Entry,
  type ReplayResult,
} from './format.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import type { Keydir, StoredRecord } from './keydir.ts';
import { acquireLock, LockError, type DirLock } from './lock.ts';
import type { Logger } from '../log.ts';
import { repeatLog, type RepeatLog } from '../log-throttle.ts';

export type { StoredRecord } from './keydir.ts';

export const LOG_FILE = 'urls.log';

/** Bytes read per step of start-up replay. */
const REPLAY_CHUNK = 4 << 20;
/** Dead keydir slots are squeezed out once there are more of them than this and than live ones. */
const VACUUM_MIN_DEAD = 1024;

/** Visit counts per batch line: keeps a line (and a torn write) small when many codes are hot. */
const VISITS_PER_LINE = 500;

/** Suffix of the copy of a torn tail kept beside the log, followed by Unix seconds. */
export const TORN_SUFFIX = '.torn-';

/** Suffix of a file found at the log's path after ours was replaced, kept beside it; then Unix seconds. */
export const REPLACED_SUFFIX = '.replaced-';
/** Suffix of the temp file of a log rewritten from memory after it was removed. */
export const RESTORE_SUFFIX = '.restore';

/** Suffix of the compaction temp file beside the log. */
export const COMPACT_SUFFIX = '.compact';
/** Automatic compaction waits until the log is at least this big: small logs are not worth it. */
export const COMPACT_MIN_BYTES = 1 << 20;
/** Records serialized per event-loop turn while compacting. */
const COMPACT_SLICE = 10_000;

/**
 * A frozen list of records, newest first: readable across event-loop turns (a long listing is
 * sent in slices), showing each record as it was when the list was taken, visit counts aside.
 * Call `release` when done: until then deleted records keep their memory.
 */
export interface Snapshot {
  readonly length: number;
  /** The records at positions [from, to). */
  slice(from: number, to: number): StoredRecord[];
  release(): void;
}

export interface CompactReport {
  bytesBefore: number;
  bytesAfter: number;
  entriesBefore: number;
  entriesAfter: number;
  /** Expired records dropped. */
  purged: number;
  ms: number;
}

/**
 * A write refused because the log was removed or replaced under the running process (see the top of
 * this file). The message is for clients: it names no path.
 */
export class DataFileGoneError extends Error {
  constructor() {
    super('the data file was removed or replaced while the server runs; nothing was changed, try again once its directory is back');
    this.name = 'DataFileGoneError';
  }
}

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
  /** How often buffered visit counts are appended (and the need to compact checked), in ms. */
  visitFlushMs?: number;
  /** Clock in ms: compaction drops records expired by then; repeated failures are summarized by it. */
  now?: () => number;
  /** Dead entries must outweigh live ones *and* the log pass this size before compacting by itself. */
  compactMinBytes?: number;
  /** Told the seconds of each group-commit write and its fsync (metrics). */
  onWrite?: (seconds: number) => void;
}

interface Write {
  bytes: Buffer;
  lines: number;
  /** Applies the change to memory: runs once the bytes are durable, before anyone is answered. */
  durable: (() => void) | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** What `writeRecords` wrote: bytes, entries, and the slots of the expired records it left out. */
interface Written {
  size: number;
  lines: number;
  expired: number[];
}

/** Work that needs the log to itself (the end of a compaction): runs between two write batches. */
interface Task {
  task: () => Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Store {
  readonly path: string;
  private readonly fs: StoreFs;
  private fd: number;
  private readonly dir: string;
  private readonly now: () => number;
  private readonly compactMinBytes: number;
  /** Entries (lines) in the log; those beyond one per live record are dead weight. */
  private entries: number;
  /** While compacting: the writes made to the old log since the snapshot began. */
  private side: { chunks: Buffer[]; lines: number } | undefined;
  private compacting: Promise<CompactReport> | undefined;
  private readonly fsyncWrites: boolean;
  private readonly onWrite: ((seconds: number) => void) | undefined;
  private readonly log: Logger;
  /** Failures that repeat (a full disk fails every write) are logged once, then summarized. */
  private readonly problems: RepeatLog;
  /** A write failed since the last one that succeeded: the next success says storage is back. */
  private failing = false;
  private readonly records: Keydir;
  /** Codes whose create entry is being written: taken, though not yet visible. */
  private readonly reserved = new Set<string>();
  /** Codes whose tombstone is being written: still visible, but no longer deletable. */
  private readonly deleting = new Set<string>();
  /** Open snapshots: while any is open, slots are not renumbered. */
  private readers = 0;
  /** Slots visited since the last flush (renumbered by `vacuum`). */
  private dirty: number[] = [];
  private queue: (Write | Task)[] = [];
  private writing: Promise<void> | undefined;
  /** Bytes of intact log: where the next write goes. */
  private size: number;
  /** A failed write may have left partial bytes past `size`; cut them before the next write. */
  private tailSuspect = false;
  /** The open log is no longer the file at `path`: writes are refused until `reattach` succeeds. */
  private detached = false;
  /** The log is being rewritten from memory (`reattach`): slots must not be renumbered. */
  private restoring = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  /** The data dir's lock; undefined while not held (the directory was removed with the lock file). */
  private lock: DirLock | undefined;

  /** Opens (or creates) the log in `dir` and replays it. Throws `StoreOpenError` on damage. */
  constructor(options: StoreOptions) {
    this.fs = options.fs ?? nodeFs;
    this.log = options.log;
    this.fsyncWrites = options.fsync === 'always';
    this.onWrite = options.onWrite;
    this.dir = options.dir;
    this.now = options.now ?? Date.now;
    this.problems = repeatLog(this.log, this.now);
    this.compactMinBytes = options.compactMinBytes ?? COMPACT_MIN_BYTES;
    this.path = join(options.dir, LOG_FILE);
    try {
      this.fs.mkdirp(options.dir);
    } catch (err) {
      throw new StoreOpenError(`cannot create data directory ${options.dir}: ${(err as Error).message}`);
    }
    try {
      this.lock = acquireLock(options.dir, { log: this.log });
    } catch (err) {
      throw new StoreOpenError(err instanceof LockError ? err.message : `cannot lock ${options.dir}: ${(err as Error).message}`);
    }
    let result: ReplayResult & { bytes: number };
    try {
      // A compaction or a rewrite cut short by a crash: the old log is whole, its unfinished copy is not.
      this.fs.remove(this.path + COMPACT_SUFFIX);
      this.fs.remove(this.path + RESTORE_SUFFIX);
      this.fd = this.openLog(options.dir);
      result = this.replayLog();
    } catch (err) {
      this.lock?.release();
      throw err instanceof StoreOpenError ? err : new StoreOpenError(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    if (result.damage) {
      void this.fs.close(this.fd).catch(() => undefined);
      this.lock?.release();
      throw new StoreOpenError(damageMessage(this.path, result.damage));
    }
    if (result.tornTail) {
      let copy: string;
      try {
        copy = this.keepTorn(result.validBytes, result.bytes);
      } catch (err) {
        void this.fs.close(this.fd).catch(() => undefined);
        this.lock?.release();
        throw new StoreOpenError(
          `${this.path} ends with a torn entry, and its bytes could not be copied aside before cutting them off ` +
            `(${(err as Error).message}); start-up stopped so that nothing is dropped without a copy. Fix that and start again.`,
        );
      }
      this.log.warn('log ends with a torn entry (a crash during a write); cutting it off, a copy is kept', {
        file: this.path,
        line: result.tornTail.line,
        reason: result.tornTail.reason,
        bytes: result.bytes - result.validBytes,
        copy,
      });
      // The next append must not land after the torn bytes (the copy is durable: cutting them is safe).
      this.tailSuspect = true;
    }
    this.size = result.validBytes;
    this.entries = result.entries;
    this.records = result.records;
    this.maybeVacuum();

    this.timer = setInterval(() => {
      // Back without waiting for a write, so that a directory restored while idle gets its log.
      if (this.detached && !this.restoring && this.fs.exists(this.dir)) void this.exclusive(() => this.reattachNow()).catch(() => undefined);
      void this.flushVisits().catch(() => undefined);
      this.maybeCompact();
      this.maybeVacuum();
      this.problems.flush();
    }, options.visitFlushMs ?? 1000);
    this.timer.unref();
  }

  /** Replays the log in chunks: the file is never held in memory whole. `bytes`: the file's size. */
  private replayLog(): ReplayResult & { bytes: number } {
    const replayer = new Replayer();
    const chunk = Buffer.allocUnsafe(REPLAY_CHUNK);
    let position = 0;
    for (;;) {
      const n = this.fs.read(this.fd, chunk, position);
      if (n === 0) break;
      // The timer cannot renew the lease while this runs: a long replay must not let it lapse.
      this.lock?.refresh();
      replayer.push(chunk.subarray(0, n));
      position += n;
    }
    return { ...replayer.finish(), bytes: position };
  }

  /**
   * Copies the log's bytes [from, to) — a torn tail about to be cut — to a new file beside it,
   * fsynced with its directory entry; returns its path. A torn append is most likely a change that
   * was never acknowledged, but the bytes are the operator's to judge, not ours to destroy.
   */
  private keepTorn(from: number, to: number): string {
    const tail = Buffer.alloc(to - from);
    for (let at = 0; at < tail.length; ) {
      const n = this.fs.read(this.fd, tail.subarray(at), from + at);
      if (n === 0) break;
      at += n;
    }
    const copy = this.beside(TORN_SUFFIX, (path) => this.fs.writeNew(path, tail));
    this.fs.syncDir(this.dir);
    return copy;
  }

  /**
   * Calls `put` with a new name beside the log, `urls.log<suffix><Unix seconds>`, until one does not
   * exist yet (`put` throws EEXIST): two in one second (a crash right after a start) must not
   * overwrite each other. Returns the name used.
   */
  private beside(suffix: string, put: (path: string) => void): string {
    const base = `${this.path}${suffix}${Math.floor(this.now() / 1000)}`;
    for (let i = 1; ; i++) {
      const path = i === 1 ? base : `${base}.${i}`;
      try {
        put(path);
        return path;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || i >= 100) throw err;
      }
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

  /** The record of `code` (a snapshot: later visits do not change it). */
  get(code: string): StoredRecord | undefined {
    return this.records.get(code);
  }

  /** True when `code` is stored or being stored. */
  taken(code: string): boolean {
    return this.records.has(code) || this.reserved.has(code);
  }

  /** Records with this original URL, newest first. */
  *withUrl(url: string): Generator<StoredRecord> {
    for (const s of this.records.slotsWithUrl(url)) yield this.records.record(s);
  }

  /** Live records for which `keep(slot fields)` holds, newest first, as a `Snapshot`. */
  snapshot(keep: (createdAt: number, retentionDays: number) => boolean): Snapshot {
    const records = this.records;
    const slots = new Int32Array(records.size);
    let n = 0;
    for (let s = records.end - 1; s >= 0; s--) {
      if (records.isLive(s) && keep(records.createdAt(s), records.retentionDays(s))) slots[n++] = s;
    }
    this.readers++;
    let open = true;
    return {
      length: n,
      // A record deleted since is still readable: its slot keeps its bytes until a vacuum, and
      // none runs while a snapshot is open.
      slice: (from, to) => {
        const out: StoredRecord[] = [];
        for (let i = from; i < Math.min(to, n); i++) out.push(records.record(slots[i]!));
        return out;
      },
      release: () => {
        if (open) this.readers--;
        open = false;
      },
    };
  }

  /** Stores a new record; resolves once its entry is durable, and only then is it visible. */
  async create(rec: StoredRecord): Promise<StoredRecord> {
    this.reserved.add(rec.code);
    try {
      await this.append([{ op: 'C', ...rec }], () => {
        this.records.add(rec.code, rec.url, rec.createdAt, rec.retentionDays, rec.visits);
      });
    } finally {
      this.reserved.delete(rec.code);
    }
    return { ...rec };
  }

  /**
   * Deletes a record; resolves to false if it did not exist or is being deleted, true once the
   * tombstone is durable. Of concurrent deletes of one code exactly one writes a tombstone and gets
   * true (SPEC §4.1); if its write fails, the code is deletable again.
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
    if (this.compacting || this.restoring || this.readers > 0 || dead < VACUUM_MIN_DEAD || dead <= this.records.size) return;
    const renumber = this.records.vacuum();
    this.dirty = this.dirty.map((s) => renumber[s]!).filter((s) => s !== -1);
  }

  /** Counts one visit of a live code: an integer increment now, a log entry within a second. */
  visit(code: string): void {
    const s = this.records.find(code);
    if (s !== -1) this.countVisit(s);
  }

  private countVisit(s: number): void {
    if (this.records.visit(s)) this.dirty.push(s);
  }

  /**
   * The redirect's lookup: the URL of `code` (counting a visit when `count`), `null` when it has
   * expired by `nowSeconds`, `undefined` when there is no such code. One hash lookup and no record
   * object: this runs for every redirect.
   */
  resolve(code: string, nowSeconds: number, count: boolean): string | null | undefined {
    const records = this.records;
    const s = records.find(code);
    if (s === -1) return undefined;
    if (isExpiredAt(records.createdAt(s), records.retentionDays(s), nowSeconds)) return null;
    if (count) this.countVisit(s);
    return records.redirectUrl(s);
  }

  /** Appends the counts of every record visited since the last flush. */
  async flushVisits(): Promise<void> {
    if (this.dirty.length === 0) return;
    const records = this.records;
    const counts: [code: string, count: number][] = [];
    for (const s of this.dirty) {
      records.markDirty(s, false);
      // A slot deleted since its visit has no count worth writing.
      if (records.isLive(s)) counts.push([records.code(s), records.visits(s)]);
    }
    this.dirty = [];
    const entries: Entry[] = [];
    for (let i = 0; i < counts.length; i += VISITS_PER_LINE) entries.push({ op: 'V', counts: counts.slice(i, i + VISITS_PER_LINE) });
    try {
      await this.append(entries);
    } catch (err) {
      // Keep them dirty (by code: slots may have been renumbered meanwhile); the next flush writes
      // the by then larger counts.
      for (const [code] of counts) {
        const s = records.find(code);
        if (s !== -1 && records.markDirty(s, true)) this.dirty.push(s);
      }
      this.problems.report('warn', `visits:${errorKind(err)}`, 'could not write visit counts; will retry', { error: (err as Error).message });
      throw err;
    }
  }

  /** Flushes visits, waits for every queued write, fsyncs and closes the file. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  /**
   * Rewrites the log with one entry per live record, dropping expired records. Writes go on
   * meanwhile; a second call while one runs returns the same promise.
   */
  compact(): Promise<CompactReport> {
    if (this.closed || this.closing) return Promise.reject(new Error('store is closed'));
    return (this.compacting ??= this.rewrite().finally(() => (this.compacting = undefined)));
  }

  /** Starts a compaction when dead entries outweigh live ones and the log is past the size floor. */
  private maybeCompact(): void {
    const live = this.records.size;
    if (this.compacting || this.closed || this.detached || this.size < this.compactMinBytes || this.entries - live <= live) return;
    this.compact().then(
      (report) => {
        this.problems.resolved('compaction:');
        this.log.info('log compacted', { ...report });
      },
      // Retried every tick while dead entries outweigh live ones: on a full disk, that repeats.
      (err: Error) => this.problems.report('warn', `compaction:${errorKind(err)}`, 'compaction failed; the log is unchanged', { error: err.message }),
    );
  }

  private async rewrite(): Promise<CompactReport> {
    const started = performance.now();
    const bytesBefore = this.size;
    const entriesBefore = this.entries;
    const temp = this.path + COMPACT_SUFFIX;
    const fd = this.fs.create(temp);
    let written: Written;
    // From here on every write to the old log is also kept for the new one.
    this.side = { chunks: [], lines: 0 };
    try {
      written = await this.writeRecords(fd);
      await this.exclusive(async () => {
        const side = this.side!;
        this.side = undefined;
        // Records changed while the snapshot was written are in `side`, later: the last entry wins.
        for (const chunk of side.chunks) {
          await this.fs.write(fd, chunk, written.size);
          written.size += chunk.length;
        }
        written.lines += side.lines;
        await this.install(temp, fd, written, 'log compacted');
      });
    } catch (err) {
      // Every failure comes before the rename: the old log is still the log.
      this.side = undefined;
      await this.fs.close(fd).catch(() => undefined);
      try {
        this.fs.remove(temp);
      } catch {
        // Removed at the next start.
      }
      throw err;
    }
    return {
      bytesBefore,
      bytesAfter: written.size,
      entriesBefore,
      entriesAfter: written.lines,
      purged: written.expired.length,
      ms: Math.round(performance.now() - started),
    };
  }

  /** Writes one create per live record to `fd`, a slice per event-loop turn; expired records are left out. */
  private async writeRecords(fd: number): Promise<Written> {
    const written: Written = { size: 0, lines: 0, expired: [] };
    const nowSeconds = Math.floor(this.now() / 1000);
    // Slot numbers are stable meanwhile: no vacuum runs during a rewrite.
    const records = this.records;
    const slots = records.slotsOldestFirst();
    for (let done = false; !done; ) {
      const parts: Buffer[] = [];
      for (let n = 0; n < COMPACT_SLICE; n++) {
        const next = slots.next();
        if (next.done) {
          done = true;
          break;
        }
        const rec = records.record(next.value);
        if (isExpired(rec, nowSeconds)) written.expired.push(next.value);
        else parts.push(encodeEntry(recordEntry(rec)));
      }
      if (parts.length === 0) continue;
      const chunk = Buffer.concat(parts);
      await this.fs.write(fd, chunk, written.size);
      written.size += chunk.length;
      written.lines += parts.length;
    }
    return written;
  }

  /**
   * Makes `temp`, written whole through `fd`, the log: fsync, rename over the log, fsync of the
   * directory. Runs with the write queue held. Throws only before the rename, while the old log is
   * still the log.
   */
  private async install(temp: string, fd: number, written: Written, what: string): Promise<void> {
    await this.fs.fsync(fd);
    const lost = this.lock?.lost();
    if (lost) throw lost; // another server's log may be there now
    this.fs.rename(temp, this.path);
    // The temp file's descriptor now is the log's: no reopen that could fail after the rename.
    const old = this.fd;
    this.fd = fd;
    this.size = written.size;
    this.entries = written.lines;
    this.tailSuspect = false;
    // Only the very records left out: a code deleted and created anew meanwhile has a new slot,
    // and is in the new log.
    for (const s of written.expired) this.records.remove(s);
    await this.fs.close(old).catch(() => undefined);
    // Until the directory is fsynced, power loss could bring the old log back; so no write is
    // acknowledged before this returns (the write queue is held).
    try {
      this.fs.syncDir(this.dir);
    } catch (err) {
      this.log.error(`${what}, but its directory could not be fsynced: power loss could bring back the old log`, {
        error: (err as Error).message,
      });
    }
  }

  /** Runs `task` with the log to itself: after the writes queued before it, before those after. */
  private exclusive(task: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.compacting?.catch(() => undefined);
    // A last chance for a detached store whose directory is back (with no write to notice it).
    if (this.detached) await this.exclusive(() => this.reattachNow()).catch(() => undefined);
    try {
      await this.flushVisits();
    } catch {
      // Logged by flushVisits; the file is closed regardless.
    }
    this.closed = true;
    await this.writing;
    // Failures counted since the last summary are not left unsaid.
    this.problems.flush(true);
    if (this.detached) {
      // The directory was removed and is still gone: it is not recreated behind the operator's back.
      this.log.error('the data directory was removed and is not back: the links held only in memory are lost at exit', {
        dir: this.dir,
        records: this.records.size,
      });
    }
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
      this.lock?.release();
    }
  }

  private append(entries: Entry[], durable?: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const lost = this.lock ? this.lock.lost() : undefined;
    if (lost) {
      // The lock file went with the log (the directory was removed): that is a detached store,
      // which the write loop takes back once the directory is there again. A lock taken by another
      // server over a log still ours is not: that server writes here now.
      if (this.fs.isAt(this.fd, this.path)) return Promise.reject(lost);
      this.detached = true;
    }
    const bytes = entries.length === 1 ? encodeEntry(entries[0]!) : Buffer.concat(entries.map(encodeEntry));
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, lines: entries.length, durable, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** The group-commit loop: one write and one fsync per batch of everything queued meanwhile. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const first = this.queue[0]!;
      if ('task' in first) {
        this.queue.shift();
        await first.task().then(first.resolve, first.reject);
        continue;
      }
      const until = this.queue.findIndex((item) => 'task' in item);
      const batch = this.queue.splice(0, until === -1 ? this.queue.length : until) as Write[];
      if (this.detached && !(await this.reattach())) {
        this.failed(new DataFileGoneError(), batch);
        continue;
      }
      const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes));
      try {
        if (this.tailSuspect) {
          await this.fs.truncate(this.fd, this.size);
          this.tailSuspect = false;
        }
        const started = performance.now();
        await this.fs.write(this.fd, bytes, this.size);
        if (this.fsyncWrites) await this.fs.fsync(this.fd);
        this.onWrite?.((performance.now() - started) / 1000);
        // Durable, but maybe in a file nobody will read (see the top of this file): nobody is
        // answered before the file is known to be the log.
        if (!this.fs.isAt(this.fd, this.path)) {
          this.detached = true;
          throw new DataFileGoneError();
        }
        this.size += bytes.length;
        const lines = batch.reduce((n, p) => n + p.lines, 0);
        this.entries += lines;
        if (this.side) {
          this.side.chunks.push(bytes);
          this.side.lines += lines;
        }
        // Memory changes now, in log order, before any caller (or a compaction snapshot) looks.
        for (const p of batch) p.durable?.();
        for (const p of batch) p.resolve();
        if (this.failing) this.writable();
      } catch (err) {
        // Part or all of the batch may be on disk, but it was not acknowledged: cut it now, so that
        // neither a restart nor a crash brings back a change the client was told failed. If the cut
        // fails too, it is retried before the next write and at close. (A detached file too: one
        // moved away is still someone's copy of the log.)
        this.tailSuspect = true;
        await this.cutTail();
        this.failed(err, batch);
      }
    }
    this.writing = undefined;
  }

  /** Refuses `batch`; one log line for the first failure and a summary now and then, not one per change. */
  private failed(err: unknown, batch: Write[]): void {
    this.failing = true;
    if (err instanceof DataFileGoneError) {
      this.problems.report(
        'error',
        'storage:detached',
        'the data file was removed or replaced while running; writes are refused until its directory exists, then the log is rewritten from memory',
        { file: this.path, refused: batch.length },
        batch.length,
      );
    } else {
      const kind = errorKind(err);
      this.problems.report('error', `storage:${kind}`, 'storage write failed; change not made', { error: kind, refused: batch.length }, batch.length);
    }
    for (const p of batch) p.reject(err as Error);
  }

  /**
   * Takes the data directory back after the log was removed or replaced under us; true when writes
   * can go on. Memory holds every acknowledged change, so the whole log is rewritten from it like a
   * compaction (temp file, fsync, rename, fsync of the directory). Runs with the write queue held.
   */
  private async reattach(): Promise<boolean> {
    // A directory the operator removed is not recreated behind their back: wait until it is back.
    if (!this.fs.exists(this.dir)) return false;
    // The lock file may have gone with the directory. Taken again, it also tells whether another
    // process has taken the directory meanwhile: then it is theirs, and this store stays detached.
    try {
      this.lock?.release();
      this.lock = undefined;
      this.lock = acquireLock(this.dir, { log: this.log });
    } catch (err) {
      this.problems.report('error', 'storage:lock', 'the data directory is back but its lock cannot be taken again; writes stay refused', {
        dir: this.dir,
        error: (err as Error).message,
      });
      return false;
    }
    const temp = this.path + RESTORE_SUFFIX;
    this.restoring = true;
    let fd: number | undefined;
    try {
      fd = this.fs.create(temp);
      const written = await this.writeRecords(fd);
      await this.fs.fsync(fd);
      // A file at the path now is not ours (ours was removed or replaced): kept, never overwritten.
      // Linked only now, so that a failed attempt (a full disk) rarely leaves one more name behind.
      const kept = this.fs.exists(this.path) ? this.beside(REPLACED_SUFFIX, (to) => this.fs.link(this.path, to)) : undefined;
      if (kept) this.log.warn('a file had replaced the log; it is kept under another name', { file: this.path, kept });
      await this.install(temp, fd, written, 'log rewritten from memory');
      this.detached = false;
      this.writable({ rewritten_from_memory: written.lines });
      return true;
    } catch (err) {
      if (fd !== undefined) await this.fs.close(fd).catch(() => undefined);
      try {
        this.fs.remove(temp);
      } catch {
        // Removed at the next start.
      }
      const kind = errorKind(err);
      this.problems.report('error', `storage:${kind}`, 'the data directory is back but the log could not be rewritten; writes stay refused', {
        file: this.path,
        error: kind,
      });
      return false;
    } finally {
      this.restoring = false;
    }
  }

  /** `reattach` as a queued task (the timer, shutdown), if still detached by then. */
  private async reattachNow(): Promise<void> {
    if (this.detached) await this.reattach();
  }

  /** Writes succeed again: one line with the count of the failures since the first. */
  private writable(fields?: Record<string, unknown>): void {
    this.failing = false;
    this.problems.resolved('visits:');
    this.problems.resolved('storage:', 'storage writable again', { file: this.path, ...fields });
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
}

/** What a failure is, for counting repeats: its errno code (ENOSPC, EIO…), else its name. */
function errorKind(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}

function damageMessage(path: string, damage: Damage): string {
  return (
    `${path} is damaged at line ${damage.line} (${damage.reason}): a complete line that is not an intact entry, ` +
    'which a crash during a write cannot leave. ' +
    'Start-up stopped so that nothing is dropped silently. To keep every intact entry and move the ' +
    'damaged file aside, run the server once with --repair (same DATA_DIR); or restore the data ' +
    'directory from a backup.'
  );
}
