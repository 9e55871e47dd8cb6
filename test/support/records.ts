/** The link and the visit event the store tests start from: one fixture instead of a copy in each file. */
import type { LinkRecord } from '../../src/store/link-store.ts';
import type { OrphanVisit } from '../../src/store/orphan-store.ts';
import type { WebhookSubscription } from '../../src/store/webhook-store.ts';
import type { VisitEvent } from '../../src/visits/event.ts';

/** The tests' "now", Unix seconds (2026-09-21). */
export const T = 1_790_000_000;

/** A live link of `code` as a store holds it, made at `T`, kept forever, unlimited, unvisited; `extra` replaces fields. */
export function linkRecord(code: string, extra: Partial<LinkRecord> = {}): LinkRecord {
  return { code, url: `https://example.com/${code}`, createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null, ...extra };
}

/** A visit's event at `time` that knows nothing of its visitor. */
export const bareEvent = (time: number): VisitEvent => ({
  time,
  referrer: null,
  country: null,
  browser: null,
  os: null,
  device: null,
  bot: false,
  visitor: null,
});

/** An orphan visit at `time`: an unknown code asked on the default domain, by a visitor it knows nothing of; `extra` replaces fields. */
export const bareOrphan = (time: number, extra: Partial<OrphanVisit> = {}): OrphanVisit => ({
  ...bareEvent(time),
  type: 'invalid_short_url',
  domain: null,
  ...extra,
});

/** A webhook subscription `id` as a store holds it: every domain's links, made at `T`, enabled; `extra` replaces fields. */
export function webhookSubscription(id: string, extra: Partial<WebhookSubscription> = {}): WebhookSubscription {
  return {
    id,
    url: `https://hooks.example/${id}`,
    events: ['link.created'],
    domain: null,
    secret: `whsec_${'A'.repeat(32)}`,
    createdAt: T,
    disabled: false,
    ...extra,
  };
}
