/**
 * The stored API keys of the log store (`KeyStore`, docs/security.md): kept in memory
 * (`key-table.ts`) and made durable in `urls.log` as entries of their own (`key-format.ts`).
 *
 * Every write goes through the log's one append path, as a link's does: it joins the group commit,
 * resolves once its entry is durable, and only then changes memory. A write that fails rejects with
 * `StoreUnavailableError` and leaves memory as it was. A process holds the only copy of its data
 * dir (one writer, `lock.ts`), so a revoke is seen at once.
 */
import type { KeyRecord, KeyStore } from '../key-store.ts';
import type { KeyEntry } from './key-format.ts';
import type { KeyTable } from './key-table.ts';
import { unwritable } from './write-errors.ts';

/** Appends entries; `durable` runs once they are on disk, before the promise resolves. */
export type AppendKeys = (entries: KeyEntry[], durable: () => void) => Promise<void>;

export class LogKeys implements KeyStore {
  /** Ids whose revoke is being written: of concurrent revokes of one key, one is true. */
  private readonly revoking = new Set<string>();

  constructor(
    private readonly table: KeyTable,
    private readonly append: AppendKeys,
  ) {}

  /** Stores a new key; a key held already under its id is refused (the service makes ids unique). */
  async addKey(key: KeyRecord): Promise<void> {
    if (this.table.get(key.id) !== undefined) throw new Error(`a stored key with the id ${key.id} exists already`);
    await this.write({ op: 'A', key: { ...key } });
  }

  /** Every key not revoked, oldest first: at once, from memory. */
  keys(): readonly KeyRecord[] {
    return this.table.list();
  }

  async revokeKey(id: string): Promise<boolean> {
    if (this.table.get(id) === undefined || this.revoking.has(id)) return false;
    this.revoking.add(id);
    try {
      await this.write({ op: 'W', id });
    } finally {
      this.revoking.delete(id);
    }
    return true;
  }

  /**
   * Nothing is written for a key not there (revoked already). A use while a revoke of the key is on
   * its way is written after it, as any write: acknowledged only once that revoke is durable too,
   * and kept if a crash loses the revoke. Written after a revoke, it changes nothing (`KeyTable`):
   * a revoked key stays revoked.
   */
  async touchKey(id: string, at: number): Promise<void> {
    if (this.table.get(id) === undefined) return;
    await this.write({ op: 'U', id, at });
  }

  private async write(entry: KeyEntry): Promise<void> {
    try {
      await this.append([entry], () => this.table.apply(entry));
    } catch (err) {
      throw unwritable(err);
    }
  }
}
