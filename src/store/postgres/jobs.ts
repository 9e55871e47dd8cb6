/**
 * The PostgreSQL store's background work (docs/postgres.md): the readiness check, the deletion of
 * expired links and the refresh of the link count, each on its own timer, and the count they keep.
 *
 * Its own file because none of it answers a request: it keeps the store's picture of the database
 * (readiness, the number of links) fresh and the table free of expired rows, whatever the traffic.
 */
import type { Logger } from '../../log.ts';
import type { PostgresCalls } from './calls.ts';
import type { PostgresStatements } from './statements.ts';

/** Runs `task` every `ms` (`fallback` when undefined; never when ≤ 0), on an unref'd timer kept in `timers`. */
export function every(timers: NodeJS.Timeout[], ms: number | undefined, fallback: number, task: () => Promise<unknown>): void {
  const interval = ms ?? fallback;
  if (interval <= 0) return;
  // A failure is already logged and reflected in readiness; the next round tries again. A
  // round still waiting (a database not answering) is not joined by another.
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void task()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, interval);
  timer.unref();
  timers.push(timer);
}

/**
 * Links held, expired ones not yet deleted included (the `shortener_links` gauge): read at open
 * and every `countRefreshMs`, and moved by this instance's own inserts and deletes in between.
 * An estimate when several instances write: other instances' changes show at the next refresh.
 */
export class LinkCount {
  private links = 0;
  /** Changes this instance made since the count being read now was asked for. */
  private drift = 0;

  get value(): number {
    return this.links;
  }

  moved(delta: number): void {
    this.links += delta;
    this.drift += delta;
  }

  async refresh(calls: PostgresCalls, statements: PostgresStatements): Promise<void> {
    this.drift = 0;
    const [row] = await calls.run(statements.countAll());
    this.links = Number(row!.n) + this.drift;
  }
}

/**
 * Deletes links expired by `now`, in batches, each its own short transaction; one instance at a
 * time (the others skip the round). Resolves with the number deleted.
 */
export async function reapExpired(
  calls: PostgresCalls,
  statements: PostgresStatements,
  count: LinkCount,
  log: Logger,
  now: number,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await calls.transaction(async (tx) => {
      const [lock] = await statements.reaperLock(tx);
      if (!lock?.got) return -1;
      const rows = await statements.reapBatch(tx, now, batch);
      // Their events with them: an expired link cannot be visited, so none is being added.
      if (rows.length > 0)
        await statements.deleteEvents(
          tx,
          rows.map((r) => r.seq),
        );
      return rows.length;
    });
    if (deleted < 0) return total;
    total += deleted;
    count.moved(-deleted);
    if (deleted < batch) {
      if (total > 0) log.debug('expired links deleted', { links: total });
      return total;
    }
  }
}
