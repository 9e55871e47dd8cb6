/**
 * How the PostgreSQL store's inserts are grouped (docs/postgres.md): in batches, one multi-row
 * statement and one commit for every insert asked while the previous batch was in flight (a group
 * commit), and batches go one after the other: links get their place in the newest-first order in
 * the order they were asked, as an import needs (its rows are stored in file order), however many
 * connections the pool has.
 *
 * Its own file because the batching is a policy of its own (the order, one row per code, the batch
 * size), apart from the SQL of a batch, which the store sends.
 */
import type { InsertChain, LinkRecord } from '../link-store.ts';

/** Rows of one insert statement at most. */
const MAX_BATCH = 500;

export interface PendingInsert {
  record: LinkRecord;
  now: number;
  chain: InsertChain | undefined;
  resolve: (inserted: boolean) => void;
  reject: (err: unknown) => void;
}

export class InsertBatches {
  /** Inserts asked for and not yet sent; `inserting` while a batch is in flight. */
  private inserts: PendingInsert[] = [];
  private inserting = false;

  /** `send` stores one batch and settles each of its inserts. */
  constructor(private readonly send: (batch: PendingInsert[]) => Promise<void>) {}

  /** With `chain`: refused, unsent, once an insert of the chain failed (`InsertChain`). */
  insert(record: LinkRecord, now: number, chain?: InsertChain): Promise<boolean> {
    if (chain?.failed !== undefined) return Promise.reject(chain.failed);
    return new Promise<boolean>((resolve, reject) => {
      const fail =
        chain === undefined
          ? reject
          : (err: unknown): void => {
              // Marked when the batch fails, before the next one is formed: the chain's inserts
              // waiting behind it are refused there, and never reach the database.
              chain.failed ??= err;
              reject(err);
            };
      this.inserts.push({ record, now, chain, resolve, reject: fail });
      if (this.inserts.length === 1 && !this.inserting) queueMicrotask(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    if (this.inserting) return;
    this.inserting = true;
    try {
      while (this.inserts.length > 0) {
        // One row per code in a batch: a second insert of a code waits for the next batch, where
        // it meets the first as a conflict.
        const codes = new Set<string>();
        const batch: PendingInsert[] = [];
        const later: PendingInsert[] = [];
        for (const p of this.inserts) {
          if (p.chain?.failed !== undefined) p.reject(p.chain.failed);
          else if (batch.length < MAX_BATCH && !codes.has(p.record.code)) {
            codes.add(p.record.code);
            batch.push(p);
          } else later.push(p);
        }
        this.inserts = later;
        if (batch.length > 0) await this.send(batch);
      }
    } finally {
      this.inserting = false;
    }
  }
}
