/**
 * The life of a log engine (`log-engine.ts`), apart from what the service asks of it: opening (the
 * parts wired together over the replayed log), the tick that runs once a second (a removed data
 * dir looked for, retention hourly, the visit counts written, compaction and vacuum when due),
 * every append to the log, and the close.
 *
 * Its own file because none of it is the redirect's or a request's: `LogEngine` extends this class
 * and reads the same fields directly, so its lookups pay no extra object or call.
 */
import { join } from 'node:path';
import { CHECKPOINT_MIN_BYTES } from './checkpoint.ts';
import { closeLog } from './close.ts';
import { COMPACT_MIN_BYTES, upgradeLog, type CompactReport } from './compaction.ts';
import { Compactor } from './compactor.ts';
import { LOG_FILE } from './files.ts';
import type { Entry } from './format.ts';
import type { InsertChain } from '../link-store.ts';
import { nodeFs, type StoreFs } from './fs.ts';
import type { Keydir } from './keydir.ts';
import { LogDomains } from './domain-format.ts';
import { LogOrphans } from './orphan-log.ts';
import { LogKeys } from './log-keys.ts';
import { LogWebhooks } from './log-webhooks.ts';
import type { WebhookBodies } from '../webhook-store.ts';
import { LogWriter, type EncodedLines } from './log-writer.ts';
import type { StoreParts } from './log-rewrite.ts';
import { openLog } from './open.ts';
import { Reattacher } from './reattach.ts';
import { VisitCounts } from './visit-counts.ts';
import { errorKind } from './write-errors.ts';
import type { Logger } from '../../log.ts';
import { repeatLog, type RepeatLog } from '../../log-throttle.ts';

/** When every acknowledged write is fsynced first (`always`), or left to the OS (`off`). */
export type FsyncMode = 'always' | 'off';

/** Dead keydir slots are squeezed out once there are more of them than this and than live ones. */
const VACUUM_MIN_DEAD = 1024;

/** How often retention looks for events past their time, in ms. */
const RETENTION_CHECK_MS = 3_600_000;

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
  /** What a webhook's event says of a link or a visit (the service's); absent: no event is written. */
  webhookBodies?: WebhookBodies;
  /** The start-up checkpoint is written once this much log (and 1/32 of it) is past the last one (`checkpoint.ts`). */
  checkpointMinBytes?: number;
}

export abstract class EngineLifecycle {
  readonly path: string;
  private readonly parts: StoreParts;
  protected readonly records: Keydir;
  private readonly writer: LogWriter;
  protected readonly counts: VisitCounts;
  /** The stored API keys (`log-keys.ts`), written through `append` like every change. */
  readonly accessKeys: LogKeys;
  readonly domains: LogDomains;
  readonly orphans: LogOrphans;
  /** Webhook subscriptions and their outbox (`log-webhooks.ts`), written with the changes they tell of. */
  readonly webhooks: LogWebhooks;
  private readonly reattacher: Reattacher;
  private readonly log: Logger;
  private readonly problems: RepeatLog;
  private readonly compactor: Compactor;
  /** Open snapshots: while any is open, slots are not renumbered. */
  protected readers = 0;
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
    this.accessKeys = new LogKeys(this.records.accessKeys, (entries, durable) => this.append(entries, durable));
    this.domains = new LogDomains(
      () => this.records.domains,
      (entries, durable) => this.append(entries, durable),
    );
    this.orphans = new LogOrphans(
      () => this.records.orphans,
      (entries, durable) => this.append(entries, durable),
    );
    this.webhooks = new LogWebhooks(
      () => this.records.webhooks,
      (entries, durable) => this.append(entries, durable),
      options.webhookBodies,
      now,
    );
    this.counts.webhooks = this.webhooks;
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

  /**
   * Retention (docs/analytics.md): the events older than `before` become untracked visits of their
   * links, and the orphan visits older are removed, in memory at once and in the log as one `T`
   * entry. Returns the link events removed.
   */
  async expireEvents(before: number): Promise<number> {
    const records = this.records;
    const counts: [string, number][] = [];
    let removed = 0;
    for (const s of records.slotsOldestFirst()) {
      const n = records.expireEvents(s, before);
      if (n === 0) continue;
      removed += n;
      counts.push([records.code(s), this.counts.untrackedAfterImports(s)]);
    }
    // Their lines, were they written after this entry, would bring them back.
    this.counts.dropPendingBefore(before);
    // Should the write fail, memory and the log still agree on every count: the log holds those
    // events still, and the next compaction writes memory as it is.
    const orphans = records.orphans.expire(before);
    if (counts.length > 0 || orphans > 0) await this.append([{ op: 'T', before, counts }]);
    return removed;
  }

  get count(): number {
    return this.records.size;
  }

  /** The keydir, for the stats' reads: never written through this. */
  get keydir(): Keydir {
    return this.records;
  }

  /**
   * Reclaims the memory of deleted records once they outnumber the live ones: amortized O(1) per
   * delete. Not while compacting or while a snapshot is open, which read slots across event-loop
   * turns.
   */
  protected maybeVacuum(): void {
    const dead = this.records.end - this.records.size;
    if (this.compactor.running || this.reattacher.restoring || this.readers > 0 || dead < VACUUM_MIN_DEAD || dead <= this.records.size) return;
    this.counts.renumber(this.records.vacuum());
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

  /** The clock, in Unix seconds. */
  protected seconds(): number {
    return this.webhooks.seconds();
  }

  protected append(entries: Entry[] | EncodedLines, durable?: () => void, chain?: InsertChain): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const lost = this.reattacher.lockLost();
    if (lost) return Promise.reject(lost);
    return this.writer.append(entries, Array.isArray(entries) ? this.naming(entries, durable) : durable, chain);
  }

  /**
   * `durable`, after which the referrer numbers whose `R` entries `entries` carry are known to be
   * in the log: every write that names one counts (an edit carrying a limited link's pending
   * events, a durable visit, an import), or a reset would leave memory forgetting a name the log
   * holds. (A flush's encoded lines mark their own.)
   */
  private naming(entries: Entry[], durable?: () => void): (() => void) | undefined {
    let named: number[] | undefined;
    for (const e of entries) if (e.op === 'R') (named ??= []).push(e.n);
    if (named === undefined) return durable;
    return () => {
      for (const n of named) this.records.events.referrers.markWritten(n);
      durable?.();
    };
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.compactor.running?.catch(() => undefined);
    await this.reattacher.lastChance();
    // The orphan visits waiting for their batch's write go first: a write after close would fail.
    await this.orphans.settle();
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
