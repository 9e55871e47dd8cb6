/**
 * Orphan visits in the log store (format 6, docs/analytics.md): their log entry, the table replay
 * and writes keep in memory, and the store of them (`OrphanStore`).
 *
 *   O <[time, type, domain, referrer, country, browser, os, device, bot, visitor]>
 *
 * One JSON array: JSON escapes any tab or line break, so the field needs no escaping of its own.
 * The table keeps the newest `MAX_ORPHANS` (a scanner sending random paths all day must not grow
 * memory without bound); a compaction writes those again, and a start-up checkpoint holds them.
 */
import type { OrphanStore, OrphanType, OrphanVisit } from '../orphan-store.ts';
import { ORPHAN_TYPES } from '../orphan-store.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../../visits/packed.ts';

export type OrphanEntry = { op: 'O'; visit: OrphanVisit };

/** The orphan visits a log store keeps: the newest ones. */
export const MAX_ORPHANS = 100_000;

type Row = [number, OrphanType, string | null, string | null, string | null, string | null, string | null, string | null, boolean, number | null];

const row = (v: OrphanVisit): Row => [v.time, v.type, v.domain, v.referrer, v.country, v.browser, v.os, v.device, v.bot, v.visitor];

const textOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const TYPES: ReadonlySet<unknown> = new Set(ORPHAN_TYPES);
const oneOf = (set: ReadonlySet<unknown>, v: unknown): boolean => v === null || set.has(v);
const BROWSER_SET: ReadonlySet<unknown> = new Set(BROWSERS);
const SYSTEM_SET: ReadonlySet<unknown> = new Set(SYSTEMS);
const DEVICE_SET: ReadonlySet<unknown> = new Set(DEVICES);

/** Whether these are the fields of an orphan visit a reader reads back (checked on the fields: no row is made for it). */
function isOrphan(v: { readonly [K in keyof OrphanVisit]: unknown }): v is OrphanVisit {
  const { time, visitor } = v;
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) return false;
  if (!TYPES.has(v.type) || !textOrNull(v.domain) || !textOrNull(v.referrer) || !textOrNull(v.country)) return false;
  if (!oneOf(BROWSER_SET, v.browser) || !oneOf(SYSTEM_SET, v.os) || !oneOf(DEVICE_SET, v.device) || typeof v.bot !== 'boolean') return false;
  return visitor === null || (typeof visitor === 'number' && Number.isInteger(visitor));
}

/** A visit from its row, or undefined when the row is none. */
export function orphanOf(value: unknown): OrphanVisit | undefined {
  if (!Array.isArray(value) || value.length !== 10) return undefined;
  const [time, type, domain, referrer, country, browser, os, device, bot, visitor] = value as unknown[];
  // Its fields in `orphanVisit`'s order: the table's visits, read back or recorded, share one shape.
  const visit = { time, referrer, country, browser, os, device, bot, visitor, type, domain };
  return isOrphan(visit) ? visit : undefined;
}

export function orphanPayload(entry: OrphanEntry): string {
  return `O\t${JSON.stringify(row(entry.visit))}`;
}

export function orphanWritable(entry: OrphanEntry): boolean {
  return isOrphan(entry.visit);
}

export function decodeOrphanFields(f: readonly string[]): OrphanEntry | undefined {
  if (f.length !== 2) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(f[1]!);
  } catch {
    return undefined;
  }
  const visit = orphanOf(value);
  return visit === undefined ? undefined : { op: 'O', visit };
}

/** The newest `MAX_ORPHANS` orphan visits, in the order they were written. */
export class OrphanTable {
  private visits: OrphanVisit[] = [];

  /** A table of these rows (a checkpoint's), oldest first. */
  static of(rows: readonly unknown[]): OrphanTable {
    const table = new OrphanTable();
    for (const r of rows) {
      const visit = orphanOf(r);
      if (visit !== undefined) table.apply({ op: 'O', visit });
    }
    return table;
  }

  get size(): number {
    return this.visits.length;
  }

  apply(entry: OrphanEntry): void {
    // Frozen as it is: every entry's visit is a new object (a decoded row's, or `orphanVisit`'s).
    this.visits.push(Object.freeze(entry.visit));
    // Trimmed by a tenth at a time, so that dropping the oldest costs little per visit.
    if (this.visits.length > MAX_ORPHANS + MAX_ORPHANS / 10) this.visits.splice(0, this.visits.length - MAX_ORPHANS);
  }

  /** Removes the visits older than `before` (Unix seconds: retention); returns how many. */
  expire(before: number): number {
    const kept = this.visits.filter((v) => v.time >= before);
    const removed = this.visits.length - kept.length;
    if (removed > 0) this.visits = kept;
    return removed;
  }

  /** The newest `MAX_ORPHANS`, oldest first. */
  all(): readonly OrphanVisit[] {
    return this.visits.length > MAX_ORPHANS ? this.visits.slice(-MAX_ORPHANS) : this.visits;
  }

  /** Their rows, as a checkpoint keeps them. */
  rows(): Row[] {
    return this.all().map(row);
  }
}

/** Appends entries; `durable` runs once they are on disk, before the promise resolves. */
export type AppendOrphans = (entries: OrphanEntry[], durable: () => void) => Promise<void>;

/**
 * How long orphan visits wait to be written together: a scanner's paths arrive one or two an
 * event-loop turn, and a write (with its fsync) for each cost more than the 404s themselves.
 */
export const ORPHAN_BATCH_MS = 100;

export class LogOrphans implements OrphanStore {
  /** Visits waiting for the batch's write, at most `ORPHAN_BATCH_MS`. */
  private pending: OrphanEntry[] = [];
  private written: Promise<void> = Promise.resolve();
  /** Writes the batch now (its timer cleared); set while one waits. */
  private release: (() => void) | undefined;

  constructor(
    private readonly table: () => OrphanTable,
    private readonly append: AppendOrphans,
  ) {}

  /** Resolves once the visit is written, or lost: a log that cannot be written now loses it, and nothing a link holds. */
  recordOrphan(visit: OrphanVisit): Promise<void> {
    this.pending.push({ op: 'O', visit });
    if (this.pending.length === 1) {
      this.written = new Promise((done) => {
        // Not unref'd: a batch is written even when nothing else holds the process (close writes it at once).
        const timer = setTimeout(() => this.release?.(), ORPHAN_BATCH_MS);
        this.release = () => {
          clearTimeout(timer);
          this.release = undefined;
          void this.flush().then(done);
        };
      });
    }
    return this.written;
  }

  /** Writes the waiting batch now; resolves once it is written (or lost). */
  settle(): Promise<void> {
    this.release?.();
    return this.written;
  }

  private flush(): Promise<void> {
    const entries = this.pending;
    this.pending = [];
    return this.append(entries, () => {
      const table = this.table();
      for (const entry of entries) table.apply(entry);
    }).catch(() => undefined);
  }

  listOrphans(from: number, to: number, bots: 'exclude' | 'include' | 'only', limit: number, offset: number): { total: number; visits: OrphanVisit[] } {
    const all = this.table().all();
    const kept: OrphanVisit[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const v = all[i]!;
      if (v.time < from || v.time >= to || (bots === 'exclude' && v.bot) || (bots === 'only' && !v.bot)) continue;
      kept.push(v);
    }
    // Newest first by time, then arrival: the stable sort keeps the arrival order of one second.
    kept.sort((a, b) => b.time - a.time);
    return { total: kept.length, visits: kept.slice(offset, offset + limit) };
  }

  countOrphans(from: number, to: number): { total: number; bots: number } {
    let total = 0;
    let bots = 0;
    for (const v of this.table().all()) {
      if (v.time < from || v.time >= to) continue;
      total++;
      if (v.bot) bots++;
    }
    return { total, bots };
  }
}
