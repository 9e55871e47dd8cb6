/**
 * Orphan visits on PostgreSQL (docs/analytics.md, orphan visits): the table `orphan_visits`
 * (migration 6), one row each. The type, browser, system and device are small numbers: their
 * index in `ORPHAN_TYPES` and in the lists of `packed.ts`, as the visits table keeps them.
 */
import type postgres from 'postgres';
import { ORPHAN_TYPES, type OrphanStore, type OrphanVisit } from '../orphan-store.ts';
import type { PostgresCalls } from './calls.ts';
import { eventColumns, eventOf, type EventRow } from './event-row.ts';

/** A row of `orphan_visits`: an event's, its type's index and its domain. */
type OrphanRow = EventRow & { type: number; domain: string | null };

const visitOf = (r: OrphanRow): OrphanVisit => ({ ...eventOf(r), type: ORPHAN_TYPES[r.type]!, domain: r.domain });

const ORPHAN_COLUMNS = ['time', 'type', 'domain', 'referrer', 'country', 'browser', 'os', 'device', 'bot', 'visitor'] as const;

export class PostgresOrphans implements OrphanStore {
  /** Visits that arrived while a write was running: the next write inserts them together. */
  private waiting: OrphanVisit[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly calls: PostgresCalls,
  ) {}

  /**
   * One write at a time per instance, so rows get their ids in the order the visits came (the
   * list's tie-break within one millisecond), and a scanner's burst is one statement, not one a
   * visit on as many connections.
   */
  recordOrphan(v: OrphanVisit): Promise<void> {
    this.waiting.push(v);
    this.writing ??= this.drain();
    return this.writing;
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      const rows = batch.map((v) => ({ ...eventColumns(v), type: ORPHAN_TYPES.indexOf(v.type), domain: v.domain }));
      try {
        await this.calls.run(this.sql`INSERT INTO orphan_visits ${this.sql(rows, ORPHAN_COLUMNS)}`);
      } catch {
        // A database that cannot be written now loses these orphan visits, and nothing a link holds.
      }
    }
    this.writing = undefined;
  }

  private bots(bots: 'exclude' | 'include' | 'only'): postgres.PendingQuery<postgres.Row[]> {
    return bots === 'include' ? this.sql`` : bots === 'only' ? this.sql`AND bot` : this.sql`AND NOT bot`;
  }

  async listOrphans(
    from: number,
    to: number,
    bots: 'exclude' | 'include' | 'only',
    limit: number,
    offset: number,
  ): Promise<{ total: number; visits: OrphanVisit[] }> {
    const [count, rows] = await Promise.all([
      this.calls.run(this.sql<{ n: string }[]>`SELECT count(*) AS n FROM orphan_visits WHERE time >= ${from} AND time < ${to} ${this.bots(bots)}`),
      this.calls.run(this.sql<OrphanRow[]>`
        SELECT time, type, domain, referrer, country, browser, os, device, bot FROM orphan_visits
        WHERE time >= ${from} AND time < ${to} ${this.bots(bots)}
        ORDER BY time DESC, id DESC LIMIT ${limit} OFFSET ${offset}`),
    ]);
    return { total: Number(count[0]!.n), visits: rows.map(visitOf) };
  }

  async countOrphans(from: number, to: number): Promise<{ total: number; bots: number }> {
    const [row] = await this.calls.run(
      this.sql<{ total: string; bots: string }[]>`
        SELECT count(*) AS total, count(*) FILTER (WHERE bot) AS bots FROM orphan_visits WHERE time >= ${from} AND time < ${to}`,
    );
    return { total: Number(row!.total), bots: Number(row!.bots) };
  }
}
