/**
 * Orphan visits (docs/analytics.md, orphan visits): a `GET` that no link answered — a domain's
 * `GET /` where the UI is not served, an unknown code, an expired or used-up link — recorded, with
 * `visit_tracking=events`, as an event of its own with its type and domain and the private fields
 * of a visit's event (never the path that was asked for); and their page, newest first.
 */
import { orphanVisit, type OrphanType } from '../store/orphan-store.ts';
import type { LinkStore } from '../store/link-store.ts';
import type { Recorder, VisitRequest } from '../visits/recorder.ts';
import { parseEventFilter, RangeRefusal, type RangeParams } from '../visits/range.ts';
import type { Domain } from './domains.ts';
import { checkPaging } from './list-query.ts';
import { guarded, refused, type Invalid, type Unavailable } from './outcomes.ts';
import { Refusal } from './refusal.ts';
import { DEFAULT_VISIT_PAGE, eventJson, type EventJson, type VisitPaging } from './visits.ts';

/** An orphan visit as every door shows it: a visit's event, its type and domain. */
export type OrphanJson = EventJson & { type: OrphanType; domain: string | null };

export type OrphansOutcome = { ok: true; total: number; visits: OrphanJson[] } | Invalid | Unavailable;

export interface OrphanDeps {
  store: LinkStore;
  /** Absent: only counts are kept (`visit_tracking=counts`), and so no orphan visit either. */
  recorder: Recorder | undefined;
}

export function createOrphans({ store, recorder }: OrphanDeps) {
  const orphans = store.orphans;
  return {
    /**
     * Records the orphan visit of `req`, sent to `domain`, in the background: the answer never
     * waits on it, and a store that cannot write it loses it and nothing else.
     */
    recordOrphan(type: OrphanType, domain: Domain, req: VisitRequest): void {
      if (recorder === undefined || orphans === undefined) return;
      const record = (): void => void orphans.recordOrphan(orphanVisit(recorder.event(req, false), type, domain));
      const waiting = recorder.ready();
      if (waiting === undefined) record();
      else void waiting.then(record, () => undefined);
    },

    /** The orphan visits in a range (`from`, `to`, `bots` as a link's visits take them), newest first, paged. */
    async orphanVisits(params: Omit<RangeParams, 'interval'>, paging: VisitPaging = {}): Promise<OrphansOutcome> {
      const page = checkPaging(paging.limit, paging.offset);
      if (page instanceof Refusal) return refused(page);
      const filter = parseEventFilter(params);
      if (filter instanceof RangeRefusal) return { ok: false, error: 'invalid', detail: filter.detail };
      if (orphans === undefined) return { ok: true, total: 0, visits: [] };
      const listed = await guarded(() => orphans.listOrphans(filter.from, filter.to, filter.bots, page.limit ?? DEFAULT_VISIT_PAGE, page.offset));
      if ('error' in listed) return listed;
      return { ok: true, total: listed.total, visits: listed.visits.map((v) => ({ ...eventJson(v), type: v.type, domain: v.domain })) };
    },

    /** How many orphan visits have `from <= time < to`, and how many are bots'; none in a store that keeps none. */
    async orphanCounts(from: number, to: number): Promise<{ total: number; bots: number } | Unavailable> {
      if (orphans === undefined) return { total: 0, bots: 0 };
      return guarded(() => orphans.countOrphans(from, to));
    },
  };
}
