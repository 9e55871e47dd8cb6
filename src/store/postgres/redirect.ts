/**
 * The redirect on PostgreSQL (link-store.ts `countVisit`). A GET is one conditional UPDATE: it
 * counts the visit only of a live link with visits left, so a limit is exact under any
 * concurrency, on any number of instances. The commit is synchronous for a link with a limit (a
 * crash cannot grant the visit twice) and asynchronous for the others (`set_config(…, true)` lasts
 * until this statement's own commit): a database crash may lose the last fraction of a second of
 * their counts, never a link or a limit. Only when it matched nothing is the link read, to tell
 * missing, expired, used up and routed apart.
 *
 * A link some webhook subscription hears of has its events written by the same statement, or, for
 * the visit that reaches its limit, in the same transaction (`webhooks-fanout.ts`).
 *
 * A link with routing (store/routing.ts) is never counted by the plain statement (it matches only
 * rows without any): its read answers `routed`, and the service asks again with `routed` once it
 * has settled the routing. A routing this build cannot read fails closed, a 503: taken as none, it
 * would send a password-protected link's visitors to its target.
 */
import { performance } from 'node:perf_hooks';
import type { VisitEventSource } from '../../visits/event.ts';
import { isExpiredAt, isUsedUp, routingOf, StoreUnavailableError, type Clock, type VisitDecision } from '../link-store.ts';
import type { PostgresCalls } from './calls.ts';
import { eventColumns } from './event-row.ts';
import type { PostgresStatements } from './statements.ts';
import type { WebhookFanout } from './webhooks-fanout.ts';

const MISSING: VisitDecision = { kind: 'missing' };

export class PostgresRedirect {
  constructor(
    private readonly calls: PostgresCalls,
    private readonly statements: PostgresStatements,
    /** Told when a synchronous commit (a limited link's count) started at `started` has ended. */
    private readonly wrote: (started: number) => void,
    /** The events of a counted visit; absent: a store opened without webhook bodies. */
    private readonly fanout?: WebhookFanout,
  ) {}

  async countVisit(code: string, clock: Clock, count: boolean, event?: VisitEventSource, routed = false): Promise<VisitDecision> {
    // One reading for the whole decision: the statement and the read after it agree on the time.
    const now = clock();
    if (!count) return this.peek(code, now, routed);
    // Made before the statement, which decides whether the visit counts: a GET of a code that is
    // not found pays for it, which a database round trip dwarfs anyway. Made quietly: the events
    // metric hears of it only once the statement counted the visit.
    const visit = event?.('quiet');
    const columns = visit && eventColumns(visit);
    // No subscription wants this visit (the copy in memory says so at once): the plain statement.
    const asked = this.fanout?.forVisit(code, visit);
    const hooks = asked instanceof Promise ? await asked : asked;
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const hit =
        hooks === undefined
          ? (await this.calls.run(this.statements.countVisit(code, now, columns, routed)))[0]
          : await this.fanout!.count(this.calls, code, now, columns, routed, hooks, attempt > 0);
      if (hit) {
        if (visit !== undefined) event!('counted', visit);
        if (hit.max_visits !== null) this.wrote(started);
        return { kind: 'found', url: hit.url, limited: hit.max_visits !== null };
      }
      const decision = await this.peek(code, now, routed);
      // `found` here means the link changed in between (created, or its limit raised): count again;
      // or, while `link.limit_reached` is wanted, that this visit is its last (`webhooks-fanout.ts`).
      if (decision.kind !== 'found') return decision;
      if (attempt === 2) return { kind: 'limit_reached' };
    }
  }

  /** What a visit would be, counting nothing (HEAD, and the reason of a GET that counted nothing). */
  private async peek(code: string, now: number, routed: boolean): Promise<VisitDecision> {
    const rows = await this.calls.run(this.statements.peek(code));
    const row = rows[0];
    if (!row) return MISSING;
    const expired = isExpiredAt(Number(row.created_at), row.retention_days, now);
    const usedUp = isUsedUp({ visits: Number(row.visit_count), maxVisits: row.max_visits });
    if (!routed && row.routing !== null) {
      const routing = routingOf(row.routing);
      if (routing === false) throw new StoreUnavailableError(`the routing of link ${code} is not one this version can read`);
      if (routing !== undefined) {
        const gone = expired ? 'expired' : usedUp ? 'limit_reached' : null;
        return { kind: 'routed', url: row.url, limited: row.max_visits !== null, routing, gone };
      }
    }
    if (expired) return { kind: 'expired' };
    if (usedUp) return { kind: 'limit_reached' };
    return { kind: 'found', url: row.url, limited: row.max_visits !== null };
  }
}
