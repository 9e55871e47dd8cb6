/**
 * The stored API keys of a log store, in memory: a few keys by id, oldest first, revoked ones gone.
 * Replay applies their log entries (`key-format.ts`) here, and so does a write once it is durable
 * (`log-keys.ts`); a start-up checkpoint holds the table as it is (`checkpoint.ts`), and a
 * compaction writes one added-line per key (`log-rewrite.ts`).
 *
 * It hangs on the keydir (`KeydirColumns.accessKeys`), as the referrer hosts do: every reader and
 * rewriter of the log has the keydir at hand, and the table goes wherever it goes.
 */
import type { KeyRecord } from '../key-store.ts';
import type { KeyEntry } from './key-format.ts';

export class KeyTable {
  private readonly byId = new Map<string, KeyRecord>();
  /** `list()`'s answer until the next change: the service asks for it on every request with a key. */
  private listed: readonly KeyRecord[] | undefined;

  /** A table of these keys, in this order (a checkpoint's). */
  static of(keys: readonly KeyRecord[]): KeyTable {
    const table = new KeyTable();
    for (const key of keys) table.apply({ op: 'A', key });
    return table;
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): KeyRecord | undefined {
    return this.byId.get(id);
  }

  /** Every key, oldest first. Frozen, like each key: the caller reads them, never changes them. */
  list(): readonly KeyRecord[] {
    return (this.listed ??= Object.freeze([...this.byId.values()]));
  }

  /**
   * Applies an entry: an added key is the newest (one added again under its id replaces it, as the
   * last entry wins), a revoked one is gone, a used one gets its `lastUsedAt`. A revoke or a use of
   * a key not there changes nothing.
   */
  apply(entry: KeyEntry): void {
    switch (entry.op) {
      case 'A':
        // A copy: the caller's object may change after the write.
        this.byId.delete(entry.key.id);
        this.byId.set(entry.key.id, Object.freeze({ ...entry.key }));
        break;
      case 'W':
        if (!this.byId.delete(entry.id)) return;
        break;
      case 'U': {
        const key = this.byId.get(entry.id);
        if (key === undefined) return;
        this.byId.set(entry.id, Object.freeze({ ...key, lastUsedAt: entry.at }));
        break;
      }
    }
    this.listed = undefined;
  }
}
