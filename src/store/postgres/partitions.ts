/**
 * The months of the `visits` table (docs/postgres.md, partitions and retention): each calendar
 * month (UTC) of `time` is a partition of its own, created ahead of time by one instance at a time,
 * and retention drops the months entirely past it instead of deleting their rows one by one.
 *
 * Whatever retention removes becomes untracked visits of its link in the same transaction, so the
 * invariant events + `untracked_visits` = `visit_count` holds at every commit (docs/analytics.md),
 * and the day summaries of the days it touched go in that transaction too (`day-summaries.ts`).
 */
import type postgres from 'postgres';
import type { Logger } from '../../log.ts';
import type { PostgresCalls } from './calls.ts';
import { PARTITION_LOCK, RETENTION_LOCK } from './schema.ts';

/** Months created ahead of the current one. */
const MONTHS_AHEAD = 3;

/** Longest a background transaction of this file may take, ms: a month of events is counted in one. */
const JOB_TIMEOUT_MS = 60_000;

/**
 * Longest such a transaction waits for a lock, ms: dropping a month locks the whole table, and the
 * redirects queue behind that wait; past it, the round gives up and the next one tries again.
 */
const JOB_LOCK_WAIT_MS = 1_000;

interface Month {
  /** Full year, UTC. */
  year: number;
  /** 1–12. */
  month: number;
}

/** The UTC month of Unix second `t`. */
export function monthOf(t: number): Month {
  const d = new Date(t * 1000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
}

/** The month `n` months after `m`. */
export function addMonths(m: Month, n: number): Month {
  const i = m.year * 12 + (m.month - 1) + n;
  return { year: Math.floor(i / 12), month: (i % 12) + 1 };
}

/** The month's `[from, to)` in Unix seconds. */
export function monthRange(m: Month): { from: number; to: number } {
  return { from: Date.UTC(m.year, m.month - 1, 1) / 1000, to: Date.UTC(m.year, m.month, 1) / 1000 };
}

/** `visits_y2026m09`: the partition of a month. */
export function partitionName(m: Month): string {
  return `visits_y${String(m.year).padStart(4, '0')}m${String(m.month).padStart(2, '0')}`;
}

/** The month of a partition's name; undefined for any other table (the DEFAULT partition). */
export function monthOfPartition(name: string): Month | undefined {
  const match = /^visits_y(\d{4})m(\d{2})$/.exec(name);
  return match ? { year: Number(match[1]), month: Number(match[2]) } : undefined;
}

/** The months that should exist at `now`: this one and `MONTHS_AHEAD` more. */
export function monthsAhead(now: number): Month[] {
  const first = monthOf(now);
  return Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => addMonths(first, i));
}

async function partitions(tx: postgres.TransactionSql): Promise<string[]> {
  const rows = await tx<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'visits'::regclass`;
  return rows.map((r) => r.name);
}

async function jobLimits(tx: postgres.TransactionSql): Promise<void> {
  await tx.unsafe(`SET LOCAL statement_timeout = ${JOB_TIMEOUT_MS}; SET LOCAL lock_timeout = ${JOB_LOCK_WAIT_MS}`);
}

/**
 * Creates the months of `monthsAhead(now)` that are missing, one instance at a time: in the
 * background the others skip the round; at start-up (`wait`) they wait for it, so that no instance
 * counts a visit before this month exists (its event would land in the DEFAULT partition, and the
 * month could then not be created). A month whose events already sit in the DEFAULT partition
 * (imported from the future) cannot be created; they stay there, where every read still finds
 * them. Resolves with the partitions created.
 */
export async function ensurePartitions(calls: PostgresCalls, log: Logger, now: number, wait = false): Promise<string[]> {
  return calls.transaction(async (tx) => {
    if (wait) await tx`SELECT pg_advisory_xact_lock(${PARTITION_LOCK.toString()}::bigint)`;
    else {
      const [lock] = await tx<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(${PARTITION_LOCK.toString()}::bigint) AS got`;
      if (!lock?.got) return [];
    }
    await jobLimits(tx);
    const existing = new Set(await partitions(tx));
    const created: string[] = [];
    for (const month of monthsAhead(now)) {
      const name = partitionName(month);
      if (existing.has(name)) continue;
      const { from, to } = monthRange(month);
      try {
        await tx.savepoint((sp) => sp.unsafe(`CREATE TABLE ${name} PARTITION OF visits FOR VALUES FROM (${from}) TO (${to})`));
        created.push(name);
      } catch (err) {
        log.warn('visits partition not created', { partition: name, error: (err as Error).message });
      }
    }
    return created;
  }, JOB_TIMEOUT_MS);
}

/**
 * Removes the events older than `retentionDays` before `now`: the months entirely older are
 * dropped, each in its own transaction, the rest (the boundary month, the DEFAULT partition) are
 * deleted row by row; in each transaction the removed events are added to their links'
 * `untracked_visits`. The orphan visits older go with the rest. One instance at a time. Resolves
 * with the number of link events removed.
 */
export async function applyRetention(calls: PostgresCalls, log: Logger, now: number, retentionDays: number): Promise<number> {
  if (retentionDays <= 0) return 0;
  const cutoff = now - retentionDays * 86400;
  const locked = async <T>(tx: postgres.TransactionSql, fn: () => Promise<T>): Promise<T | undefined> => {
    const [lock] = await tx<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK.toString()}::bigint) AS got`;
    if (!lock?.got) return undefined;
    await jobLimits(tx);
    return fn();
  };
  let removed = 0;
  const old = await calls.transaction(
    (tx) =>
      locked(tx, async () =>
        (await partitions(tx)).filter((name) => {
          const month = monthOfPartition(name);
          return month !== undefined && monthRange(month).to <= cutoff;
        }),
      ),
    JOB_TIMEOUT_MS,
  );
  if (old === undefined) return 0;
  for (const name of old.sort()) {
    const n = await calls.transaction(
      (tx) =>
        locked(tx, async () => {
          // No event can be added to the month while it is counted (an import of an old event waits).
          await tx.unsafe(`LOCK TABLE ${name} IN SHARE MODE`);
          const [row] = await tx.unsafe<{ n: string }[]>(`
            WITH counted AS (SELECT link_seq, count(*) AS n FROM ${name} GROUP BY link_seq),
            moved AS (
              UPDATE links SET untracked_visits = untracked_visits + counted.n FROM counted WHERE links.seq = counted.link_seq
            )
            SELECT coalesce(sum(n), 0)::text AS n FROM counted`);
          await tx.unsafe(`DROP TABLE ${name}`);
          // Its days' summaries with it (day-summaries.ts: builders wait for this lock).
          const { from, to } = monthRange(monthOfPartition(name)!);
          await tx`DELETE FROM visit_days WHERE day >= ${from / 86400}::integer AND day < ${to / 86400}::integer`;
          return Number(row?.n ?? 0);
        }),
      JOB_TIMEOUT_MS,
    );
    if (n === undefined) return removed;
    removed += n;
  }
  const rest = await calls.transaction(
    (tx) =>
      locked(tx, async () => {
        const [row] = await tx<{ n: string }[]>`
          WITH gone AS (DELETE FROM visits WHERE time < ${cutoff}::bigint RETURNING link_seq),
          counted AS (SELECT link_seq, count(*) AS n FROM gone GROUP BY link_seq),
          moved AS (
            UPDATE links SET untracked_visits = untracked_visits + counted.n FROM counted WHERE links.seq = counted.link_seq
          )
          SELECT coalesce(sum(n), 0)::text AS n FROM counted`;
        // The summaries of the days it emptied or cut, the boundary day included.
        await tx`DELETE FROM visit_days WHERE day <= ${Math.floor(cutoff / 86400)}::integer`;
        // Orphan visits past it too (docs/analytics.md): no link counts them, so nothing moves.
        await tx`DELETE FROM orphan_visits WHERE time < ${cutoff}::bigint`;
        return Number(row?.n ?? 0);
      }),
    JOB_TIMEOUT_MS,
  );
  removed += rest ?? 0;
  if (removed > 0) log.debug('visit events past their retention removed', { events: removed });
  return removed;
}
