/**
 * The writer of the append-only log: every change reaches `urls.log` through here.
 *
 * Ordering rule: a create or delete changes memory only after its log entry is written (and, with
 * `fsync: 'always'`, fsynced). So memory never runs ahead of the disk: a request answered 201/204
 * is on disk, and a failed write leaves no trace a reader could see.
 *
 * Group commit: entries are queued; one write + one fsync takes everything queued while the
 * previous fsync ran. Under load, N concurrent creates cost about one fsync, not N.
 *
 * The file under the process: if `urls.log` or its directory is removed or replaced while running,
 * writes still succeed, into a file nobody will read. So after each batch's write and fsync, before
 * anyone is answered, the open file is checked to still be the one at the path (one fstat and one
 * stat per batch). If it is not, the batch is refused and the writer is *detached* until the log is
 * rewritten from memory (see `reattach.ts`).
 *
 * The version line: the first write to an empty log starts with it. A log without one (format 1)
 * is rewritten from memory, with it, before the first batch is written (`upgrade`): nothing of a
 * newer format is ever appended to a log that does not say it is one.
 */
import { performance } from 'node:perf_hooks';
import { encodeEntry, HEADER, type Entry } from './format.ts';
import type { StoreFs } from './fs.ts';
import type { RepeatLog } from '../../log-throttle.ts';
import type { InsertChain } from '../link-store.ts';
import { DataFileGoneError, errorKind, markRefused } from './write-errors.ts';

interface Write {
  bytes: Buffer;
  lines: number;
  /** Applies the change to memory: runs once the bytes are durable, before anyone is answered. */
  durable: (() => void) | undefined;
  /** The writes that fail together from the first failure on (an import's rows). */
  chain: InsertChain | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Lines encoded already (a flush of visit events, `visit-counts.ts`), and how many. */
export interface EncodedLines {
  bytes: Buffer;
  lines: number;
}

/** Work that needs the log to itself (the end of a compaction): runs between two write batches. */
interface Task {
  task: () => Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** The writes made to the log while a rewrite runs, to be appended to the new log. */
interface SideCopy {
  chunks: Buffer[];
  lines: number;
}

interface LogWriterOptions {
  fs: StoreFs;
  path: string;
  fd: number;
  /** Bytes of intact log. */
  size: number;
  /** Entries in the log. */
  entries: number;
  /** Bytes past `size` may be there (a torn tail): cut before the first write. */
  tailSuspect: boolean;
  fsync: boolean;
  onWrite: ((seconds: number) => void) | undefined;
  problems: RepeatLog;
  /** Called, with the queue held, before a batch while detached; true when writes can go on. */
  reattach: () => Promise<boolean>;
  /** The log has entries but no version line (format 1): `upgrade` runs before the first batch. */
  legacy: boolean;
  /** Rewrites the log with the version line (`replace` follows); called with the queue held. */
  upgrade: () => Promise<void>;
}

export class LogWriter {
  private readonly fs: StoreFs;
  private readonly path: string;
  fd: number;
  /** Bytes of intact log: where the next write goes. */
  size: number;
  /** Entries (lines) in the log; those beyond one per live record are dead weight. */
  entries: number;
  /** A failed write may have left partial bytes past `size`; cut them before the next write. */
  tailSuspect: boolean;
  /** The open log is no longer the file at `path`: writes are refused until a reattach succeeds. */
  detached = false;
  /** The log has entries and no version line: it is rewritten before anything is appended. */
  legacy: boolean;
  private readonly upgrade: () => Promise<void>;
  /** While compacting: the writes made to the old log since the snapshot began. */
  private side: SideCopy | undefined;
  private readonly fsyncWrites: boolean;
  private readonly onWrite: ((seconds: number) => void) | undefined;
  /** Failures that repeat (a full disk fails every write) are logged once, then summarized. */
  private readonly problems: RepeatLog;
  private readonly reattach: () => Promise<boolean>;
  /** A write failed since the last one that succeeded: the next success says storage is back. */
  private failing = false;
  private queue: (Write | Task)[] = [];
  private writing: Promise<void> | undefined;

  constructor(options: LogWriterOptions) {
    this.fs = options.fs;
    this.path = options.path;
    this.fd = options.fd;
    this.size = options.size;
    this.entries = options.entries;
    this.tailSuspect = options.tailSuspect;
    this.fsyncWrites = options.fsync;
    this.onWrite = options.onWrite;
    this.problems = options.problems;
    this.reattach = options.reattach;
    this.legacy = options.legacy;
    this.upgrade = options.upgrade;
  }

  /**
   * Queues `entries`; resolves once they are durable and `durable` has run, rejects if refused.
   * With `chain`, refused without being written once a write of the chain failed.
   */
  append(entries: Entry[] | EncodedLines, durable?: () => void, chain?: InsertChain): Promise<void> {
    const { bytes, lines } = Array.isArray(entries)
      ? { bytes: entries.length === 1 ? encodeEntry(entries[0]!) : Buffer.concat(entries.map(encodeEntry)), lines: entries.length }
      : entries;
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, lines, durable, chain, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Runs `task` with the log to itself: after the writes queued before it, before those after. */
  exclusive(task: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Resolves once every write queued so far is done. */
  async idle(): Promise<void> {
    await this.writing;
  }

  /** From now on every write is also kept for a new log being written (see `compaction.ts`). */
  keepSide(): void {
    this.side = { chunks: [], lines: 0 };
  }

  /** Stops keeping writes aside; returns those kept. */
  takeSide(): SideCopy | undefined {
    const side = this.side;
    this.side = undefined;
    return side;
  }

  /**
   * Makes `fd`, a file of `size` bytes and `entries` entries just renamed over the log, the log;
   * returns the old descriptor, for the caller to close.
   */
  replace(fd: number, size: number, entries: number): number {
    const old = this.fd;
    this.fd = fd;
    this.size = size;
    this.entries = entries;
    this.tailSuspect = false;
    // Every rewrite starts with the version line.
    this.legacy = false;
    return old;
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
      const batch = withoutBrokenChains(this.queue.splice(0, until === -1 ? this.queue.length : until) as Write[]);
      if (batch.length === 0) continue;
      if (this.detached && !(await this.reattach())) {
        this.failed(new DataFileGoneError(), batch);
        continue;
      }
      if (this.legacy) {
        try {
          await this.upgrade();
        } catch (err) {
          markRefused(err);
          this.failed(err, batch);
          continue;
        }
      }
      const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes));
      // A new (or emptied) log starts with its version line.
      const written = this.size === 0 ? Buffer.concat([HEADER, bytes]) : bytes;
      let syncing = false;
      try {
        if (this.tailSuspect) {
          await this.fs.truncate(this.fd, this.size);
          this.tailSuspect = false;
        }
        const started = performance.now();
        await this.fs.write(this.fd, written, this.size);
        syncing = true;
        if (this.fsyncWrites) await this.fs.fsync(this.fd);
        this.onWrite?.((performance.now() - started) / 1000);
        // Durable, but maybe in a file nobody will read (see the top of this file): nobody is
        // answered before the file is known to be the log.
        if (!this.fs.isAt(this.fd, this.path)) {
          this.detached = true;
          throw new DataFileGoneError();
        }
        this.size += written.length;
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
        if (!syncing) markRefused(err);
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
    for (const p of batch) {
      // Marked before the next batch is taken from the queue: the chain's writes queued behind
      // this one are refused there, unwritten (the disk may have room for a smaller batch).
      if (p.chain !== undefined) p.chain.failed ??= err;
      p.reject(err as Error);
    }
  }

  /** Writes succeed again: one line with the count of the failures since the first. */
  writable(fields?: Record<string, unknown>): void {
    this.failing = false;
    this.problems.resolved('visits:');
    this.problems.resolved('storage:', 'storage writable again', { file: this.path, ...fields });
  }

  /** Truncates the log back to its last intact byte; false when that failed too. */
  async cutTail(): Promise<boolean> {
    try {
      await this.fs.truncate(this.fd, this.size);
      this.tailSuspect = false;
      return true;
    } catch {
      return false;
    }
  }
}

/** `batch` without the writes of a chain that failed, which are refused with its error. */
function withoutBrokenChains(batch: Write[]): Write[] {
  if (!batch.some((p) => p.chain?.failed !== undefined)) return batch;
  const kept: Write[] = [];
  for (const p of batch) {
    if (p.chain?.failed === undefined) kept.push(p);
    else p.reject(p.chain.failed as Error);
  }
  return kept;
}
