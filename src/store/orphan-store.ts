/**
 * The storage contract of orphan visits (docs/analytics.md, orphan visits): a `GET` that no link
 * answered — a domain's `GET /` where the UI is not served, an unknown code, an expired or used-up
 * link — recorded with `visit_tracking=events` as an event of its own: its type and domain beside
 * the private fields of a visit's event (docs/analytics.md), never the path that was asked for.
 */
import type { MaybePromise } from './link-store.ts';
import type { VisitEvent } from '../visits/event.ts';

export type OrphanType = 'base_url' | 'invalid_short_url' | 'expired';
export const ORPHAN_TYPES: readonly OrphanType[] = ['base_url', 'invalid_short_url', 'expired'];

export interface OrphanVisit extends VisitEvent {
  readonly type: OrphanType;
  /** The domain the request was sent to: null for the default one. */
  readonly domain: string | null;
}

/**
 * The orphan visit of `event`, each field named: a spread (`{ ...event, type, domain }`) took a
 * scanner's 404 several microseconds on V8's slow path (docs/performance.md, several domains).
 */
export function orphanVisit(event: VisitEvent, type: OrphanType, domain: string | null): OrphanVisit {
  const { time, referrer, country, browser, os, device, bot, visitor } = event;
  return { time, referrer, country, browser, os, device, bot, visitor, type, domain };
}

export interface OrphanStore {
  /**
   * Records an orphan visit. It is no link's, so nothing is counted with it: a store that cannot
   * write it now drops it, and the promise never rejects.
   */
  recordOrphan(visit: OrphanVisit): void | Promise<void>;
  /** The orphan visits with `from <= time < to`, newest first (by time, then arrival); `total` counts them all. */
  listOrphans(
    from: number,
    to: number,
    bots: 'exclude' | 'include' | 'only',
    limit: number,
    offset: number,
  ): MaybePromise<{ total: number; visits: OrphanVisit[] }>;
  /** How many orphan visits have `from <= time < to`, and how many of them are bots'. */
  countOrphans(from: number, to: number): MaybePromise<{ total: number; bots: number }>;
}
