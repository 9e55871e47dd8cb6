/**
 * The daily key of the visitor ids on PostgreSQL (docs/postgres.md, the key table): one random key
 * per UTC day, shared by every instance through the UNLOGGED `visit_keys` table, so a visitor is
 * one visitor whichever instance answered. Each process asks the database once per day and keeps
 * the answer; the keys of earlier days are deleted as the new day's is made.
 */
import { randomBytes } from 'node:crypto';
import type { PostgresCalls } from './calls.ts';
import type { VisitStatements } from './visit-statements.ts';

/** Bytes of a key (HMAC-SHA-256's block is larger; 32 is its output and plenty). */
const KEY_BYTES = 32;

export class DailyKeys {
  /** The day asked last and its key (a process needs one day at a time, two around midnight). */
  private readonly keys = new Map<number, Promise<Uint8Array>>();

  constructor(
    private readonly calls: PostgresCalls,
    private readonly statements: VisitStatements,
  ) {}

  key(day: number): Promise<Uint8Array> {
    let key = this.keys.get(day);
    if (key === undefined) {
      key = this.read(day);
      this.keys.set(day, key);
      // A failure is not remembered: the next visit asks again.
      key.catch(() => this.keys.delete(day));
      for (const d of this.keys.keys()) if (d < day - 1) this.keys.delete(d);
    }
    return key;
  }

  private async read(day: number): Promise<Uint8Array> {
    const mine = randomBytes(KEY_BYTES);
    for (;;) {
      const [row] = await this.calls.run(this.statements.dailyKey(day, mine));
      // No row: another instance is storing the day's key right now; it is there once it commits.
      if (row) return new Uint8Array(row.key);
    }
  }
}
