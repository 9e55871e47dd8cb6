/**
 * One link's stats on PostgreSQL from summaries of its closed UTC days (docs/postgres.md, day
 * summaries): a question reads the summaries it may use and the rest of its range raw, in one
 * snapshot, and first builds the summaries its range lacks, a bounded amount per question.
 * `/api/stats` (every link) stays on the raw statement.
 *
 * When a summary may be read, exactly. Each link has `events_closed`, the first UTC day still open
 * to its redirects, and `events_epoch`. A summary names the epoch it was built under, and is read
 * only while that is still the link's epoch. Whatever adds or removes an event of a day before
 * `events_closed` bumps the epoch in the same transaction: a redirect whose clock is behind the
 * one that closed the day (in the redirect's own UPDATE of the link's row: no extra statement),
 * an import, the deletion of the link's events. A builder first commits `events_closed` (one
 * UPDATE of the link's row), then reads the events and the epoch in one statement. A redirect
 * that updated the row before that UPDATE held the row lock until it committed, so its event is
 * in the builder's snapshot; one after it reads the new `events_closed` (an UPDATE reads the
 * row's latest version) and bumps the epoch if its event is in a closed day, and then either its
 * commit is in the builder's snapshot (event and bump both read) or not (the summary names an
 * epoch that is already gone). No clock is trusted to agree with another, and no transaction
 * waits on another for longer than one redirect's commit. Retention removes events without
 * touching the epoch: it deletes the summaries of the days it empties in its own transaction,
 * and a builder holds retention's advisory lock shared, so none is built from a snapshot that
 * retention is changing. A link's delete cascades to its summaries.
 *
 * A day is closed `CLOSE_SLACK` after its end by the clock of the instance asking, so an instance
 * whose clock is behind by less than that never retires a summary.
 */
import type { Logger } from '../../log.ts';
import type { StatsQuery, VisitStats } from '../../visits/event.ts';
import { StoreUnavailableError } from '../link-store.ts';
import type { PostgresCalls } from './calls.ts';
import { DAY, mergeDayStats, planDays, wholeDays, type SummedValue } from './day-stats.ts';
import type { VisitDayStatements } from './visit-day-statements.ts';
import type { StatsRow, VisitStatements } from './visit-statements.ts';

/** Seconds after a UTC day's end before it is closed to redirects. */
const CLOSE_SLACK = 600;

/**
 * Days built per transaction: from 1, doubled while a build takes less than `CHUNK_TARGET_MS`,
 * up to `MAX_CHUNK_DAYS`; each is one statement over those days' events, so a busy link's days
 * go one at a time and a quiet link's many at once.
 */
const MAX_CHUNK_DAYS = 32;
const CHUNK_TARGET_MS = 250;

/** Most days one question builds, and the time after which it starts no more chunks (ms). */
const MAX_BUILD_DAYS = 366;
const BUILD_BUDGET_MS = 2_500;

/** How long a link with a day too busy to build in one statement is left to be read raw, ms. */
const TOO_BUSY_MS = 3_600_000;

/** Memory of a build's hash tables (a day's visitors by id): past it they spill to disk, several times slower. */
const BUILD_WORK_MEM = '32MB';

export class DaySummaries {
  /**
   * Links (by seq) whose day took longer to build than a statement may, until when: building them
   * again at every question would make each wait that long before reading raw anyway.
   */
  private readonly tooBusy = new Map<string, number>();

  constructor(
    private readonly calls: PostgresCalls,
    private readonly visits: VisitStatements,
    private readonly days: VisitDayStatements,
    private readonly log: Logger,
    /** Longest one build statement may take, ms: a day too busy for it is read raw instead. */
    private readonly buildTimeoutMs: number,
  ) {}

  /** The stats of the live link of `code`; undefined when it is not live. */
  async stats(code: string, q: StatsQuery, now: number): Promise<VisitStats | undefined> {
    const { firstDay, endDay } = wholeDays(q.edges);
    const closing = Math.floor((now - CLOSE_SLACK) / DAY);
    for (let built = false; ; built = true) {
      const held = await this.calls.hold();
      let build: { seq: string; closed: number; days: number[] };
      try {
        const rows = await this.calls.run(this.days.summaries(held.tx, code, firstDay, endDay, now));
        const link = rows.find((r) => r.kind === 'link');
        if (link === undefined) return undefined;
        const slots = new Map<number, number[] | null>();
        const values: SummedValue[] = [];
        for (const r of rows) {
          if (r.kind === 'day') slots.set(r.at!, r.slots);
          else if (r.kind === 'value') values.push({ dim: r.at!, value: r.value, people: Number(r.n), bots: Number(r.b) });
        }
        const missing: number[] = [];
        if (!built && !this.resting(link.seq!)) {
          // Not the days before the link existed: events there (imported) are rare, and reading
          // them raw costs an empty index range, where summaries would be a row a day for ever.
          const first = Math.max(firstDay, link.at!);
          for (let day = Math.min(endDay, closing) - 1; day >= first && missing.length < MAX_BUILD_DAYS; day--) if (!slots.has(day)) missing.push(day);
        }
        if (missing.length === 0) {
          const plan = planDays(q.edges, (day) => slots.has(day));
          const raw: readonly StatsRow[] =
            plan.whole.length + plan.pieces.length === 0 ? [] : await this.calls.run(this.visits.rawPart(held.tx, link.seq!, q, plan.whole, plan.pieces));
          return mergeDayStats({ edges: q.edges, bots: q.bots, link: { visitCount: Number(link.n), untracked: Number(link.b) }, plan, slots, values, raw });
        }
        build = { seq: link.seq!, closed: link.closed!, days: missing };
      } finally {
        held.end();
      }
      await this.build(build.seq, build.closed, closing, build.days);
    }
  }

  /** Whether link `seq` is left unbuilt for now (`tooBusy`); forgets what has expired. */
  private resting(seq: string): boolean {
    const until = this.tooBusy.get(seq);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.tooBusy.delete(seq);
    return false;
  }

  /**
   * Builds the summaries of `days` (latest first) of link `seq`, closing the days before `closing`
   * first, in chunks, until the budget is spent. A summary only saves time: whatever fails here
   * leaves those days to be read raw (a database that went away fails the read next anyway).
   */
  private async build(seq: string, closed: number, closing: number, days: readonly number[]): Promise<void> {
    const started = performance.now();
    try {
      let open = closed;
      if (closed < closing) {
        // Waits for the redirects of the link under way, no longer than a second.
        await this.calls.transaction(async (tx) => {
          await tx`SET LOCAL lock_timeout = 1000`;
          await this.days.close(tx, seq, closing);
        });
        open = closing;
      }
      const ready = days.filter((day) => day < open);
      let size = 1;
      for (let i = 0; i < ready.length && performance.now() - started < BUILD_BUDGET_MS; ) {
        const chunk = ready.slice(i, i + size);
        const chunkStarted = performance.now();
        const done = await this.calls.transaction(async (tx) => {
          const [lock] = await this.days.sharedRetentionLock(tx);
          if (!lock?.got) return false;
          await tx.unsafe(`SET LOCAL work_mem = '${BUILD_WORK_MEM}'; SET LOCAL statement_timeout = ${this.buildTimeoutMs}`);
          try {
            await tx.savepoint((sp) => this.days.build(sp, seq, chunk));
            return true;
          } catch (err) {
            // Too many events for one statement: not a database gone away, and not worth a retry.
            if ((err as { code?: unknown }).code !== '57014') throw err;
            this.log.warn('visit day summary too slow to build: read raw', { days: chunk.length });
            // One day alone: the link is that busy. Several: the next question starts from one.
            if (chunk.length === 1) this.tooBusy.set(seq, Date.now() + TOO_BUSY_MS);
            return false;
          }
        });
        if (!done) return;
        i += chunk.length;
        if (performance.now() - chunkStarted < CHUNK_TARGET_MS) size = Math.min(size * 2, MAX_CHUNK_DAYS);
      }
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      this.log.warn('visit day summaries not built', { error: (err as Error).message });
    }
  }
}
