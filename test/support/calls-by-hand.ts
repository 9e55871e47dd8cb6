/**
 * A stand-in for the PostgreSQL store's `sql` and `calls` whose every statement waits until the
 * test answers it: `answer(i, rows)` answers the i-th statement asked (from 0), in whatever order
 * the test chooses, and lets what awaited it run. For the copies in memory (keys, domains) whose
 * reads can end out of order; no database, no clock.
 */
import type postgres from 'postgres';
import type { PostgresCalls } from '../../src/store/postgres/calls.ts';

export function callsByHand(): { sql: postgres.Sql; calls: PostgresCalls; answer(i: number, rows: unknown[]): Promise<void>; asked(): number } {
  const pending: ((rows: unknown[]) => void)[] = [];
  const sql = (() => ({})) as unknown as postgres.Sql;
  const calls = { run: () => new Promise<unknown[]>((resolve) => pending.push(resolve)) } as unknown as PostgresCalls;
  const answer = async (i: number, rows: unknown[]): Promise<void> => {
    pending[i]!(rows);
    // A few turns: the statement's own continuation, then its callers'.
    for (let n = 0; n < 3; n++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { sql, calls, answer, asked: () => pending.length };
}
