/**
 * The embedded log store (`store.ts`: keydir in memory, append-only log on disk) behind the
 * `LinkStore` contract. Every read and the redirect answer synchronously from memory; inserts and
 * deletes are promises that settle once their log entry is durable.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isExpired, isExpiredAt, StoreUnavailableError, type LinkPage, type LinkRecord, type LinkStore, type ListQuery, type VisitDecision } from './link-store.ts';
import { DataFileGoneError, type Store } from './store.ts';

const MISSING: VisitDecision = { kind: 'missing' };
const EXPIRED: VisitDecision = { kind: 'expired' };

/** Records read per event-loop turn while exporting. */
const EXPORT_SLICE = 1000;

export class LogStore implements LinkStore {
  /**
   * The one `found` answer of this store, its URL set on each redirect: a redirect allocates no
   * result object. Callers read it at once (the contract says so), before the next redirect.
   */
  private readonly found: { kind: 'found'; url: string } = { kind: 'found', url: '' };
  /** Codes whose insert is being written: taken, though not yet visible. */
  private readonly inserting = new Set<string>();

  constructor(private readonly store: Store) {}

  get count(): number {
    return this.store.count;
  }

  insert(record: LinkRecord, now: number): false | Promise<boolean> {
    const { code } = record;
    if (this.inserting.has(code)) return false;
    // An expired link still in memory (not compacted yet) gives its code up: the create replaces it.
    const held = this.store.get(code);
    if (held && !isExpired(held, now)) return false;
    this.inserting.add(code);
    return this.store.create({ ...record }).then(
      () => {
        this.inserting.delete(code);
        return true;
      },
      (err: unknown) => {
        this.inserting.delete(code);
        throw unwritable(err);
      },
    );
  }

  get(code: string, now: number): LinkRecord | undefined {
    const rec = this.store.get(code);
    return rec && !isExpired(rec, now) ? rec : undefined;
  }

  newestByUrl(url: string, now: number): LinkRecord | undefined {
    for (const rec of this.store.withUrl(url)) if (!isExpired(rec, now)) return rec;
    return undefined;
  }

  list({ limit, offset, now }: ListQuery): LinkPage {
    const snapshot = this.store.snapshot((createdAt, retentionDays) => !isExpiredAt(createdAt, retentionDays, now));
    const start = Math.min(offset, snapshot.length);
    const count = limit === undefined ? snapshot.length - start : Math.min(limit, snapshot.length - start);
    return {
      total: snapshot.length,
      count,
      slice: (from, to) => snapshot.slice(start + from, start + Math.min(to, count)),
      release: snapshot.release,
    };
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

  countVisit(code: string, now: number, count: boolean): VisitDecision {
    const url = this.store.resolve(code, now, count);
    if (url === undefined) return MISSING;
    if (url === null) return EXPIRED;
    this.found.url = url;
    return this.found;
  }

  /**
   * A snapshot read from its oldest end, a slice per event-loop turn: what the export shows is the
   * store when it began, and a long export never holds the loop.
   */
  async *exportAll(now: number): AsyncGenerator<LinkRecord> {
    const snapshot = this.store.snapshot((createdAt, retentionDays) => !isExpiredAt(createdAt, retentionDays, now));
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

  update(): Promise<LinkRecord | undefined> {
    // Placeholder while edits are built in the log store.
    return Promise.reject(new Error('edit is not built yet'));
  }

  /** Replayed before this object exists, and read from memory, which cannot fail. */
  ready(): undefined {
    return undefined;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * A failed log write (an errno from the file system: ENOSPC, EROFS, EIO…, or the data file removed
 * under the process) is `StoreUnavailableError`: the change was not made, and the client may
 * retry. Anything else is a bug and goes on as it is. The store has logged the failure (once, then
 * in summaries: a full disk fails every request).
 */
function unwritable(err: unknown): unknown {
  if (err instanceof DataFileGoneError) return new StoreUnavailableError(err.message);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^E[A-Z0-9]+$/.test(code)) return err;
  return new StoreUnavailableError(`storage is not writable right now (${code}); nothing was changed, try again later`);
}
