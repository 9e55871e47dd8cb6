/**
 * The subscriptions as an admin manages them (docs/webhooks.md): made with their secret shown
 * once, listed without it, deleted, tested with a `ping`, and their last attempts read. The rules
 * of each field are here, below the doors; the store keeps what they accept.
 */
import { randomBytes } from 'node:crypto';
import type { Domains } from '../links/domains.ts';
import { guarded, NOT_FOUND, refused, type Invalid, type NotFound, type Unavailable } from '../links/outcomes.ts';
import { Refusal } from '../links/refusal.ts';
import { newEventId, type DeliveryAttempt, type WebhookStore, type WebhookSubscription } from '../store/webhook-store.ts';
import { checkEventList } from './events.ts';
import { newSecret } from './signing.ts';
import { checkWebhookUrl } from './targets.ts';

/** A subscription as the API shows it: never its secret, but when it is made. */
export interface SubscriptionView {
  id: string;
  url: string;
  events: string[];
  /** null: every domain's links; else that domain's host (the default one's included). */
  domain: string | null;
  created_at: number;
  /** A receiver answered `410 Gone`: nothing more is sent. */
  disabled: boolean;
  /** Rows owed to it, not yet delivered nor given up. */
  pending?: number;
}

export interface AttemptView {
  at: string;
  event_id: string;
  type: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
  outcome: string;
}

export type Made = { ok: true; subscription: SubscriptionView; secret: string };
export type Failed = Invalid | NotFound | Unavailable;

export interface WebhookOptions {
  store: WebhookStore | undefined;
  domains: Domains;
  /** `webhook_allow_private`: receivers on this machine and private networks are allowed. */
  allowPrivate: boolean;
  /** Whether visits keep events: `link.clicked` tells a visit's event, so without them there is none to tell. */
  clicksTracked: boolean;
  /** Milliseconds. */
  now: () => number;
}

/** At most this many subscriptions: each costs a fan-out on every change it wants. */
export const MAX_SUBSCRIPTIONS = 100;

/** A subscription's id: `wh_` and 96 random bits. */
const newId = (): string => `wh_${randomBytes(12).toString('base64url')}`;

const FIELDS = new Set(['url', 'events', 'domain']);

export function createWebhooks(options: WebhookOptions) {
  const { store, domains } = options;
  const view = (sub: WebhookSubscription): SubscriptionView => ({
    id: sub.id,
    url: sub.url,
    events: [...sub.events],
    domain: sub.domain === null ? null : sub.domain === '' ? domains.defaultHost : sub.domain,
    created_at: sub.createdAt,
    disabled: sub.disabled,
  });
  const none: Unavailable = { ok: false, error: 'unavailable', detail: 'this store keeps no webhooks' };

  /** The subscription a body asks for, or why it is none. */
  function checked(input: Record<string, unknown>): Omit<WebhookSubscription, 'id' | 'secret' | 'createdAt' | 'disabled'> | Refusal {
    for (const name of Object.keys(input)) {
      if (!FIELDS.has(name)) return new Refusal(`${JSON.stringify(name)} is not a field of a subscription; it may hold url, events and domain`);
    }
    const url = checkWebhookUrl(input['url'], { allowPrivate: options.allowPrivate });
    if (url instanceof Refusal) return url;
    const events = checkEventList(input['events']);
    if (events instanceof Refusal) return events;
    if (events.includes('link.clicked') && !options.clicksTracked) {
      return new Refusal('events: link.clicked tells a visit\'s event, and this instance keeps none (visit_tracking is "counts")');
    }
    const asked = input['domain'];
    if (asked === undefined || asked === null || asked === '') return { url, events, domain: null };
    const domain = domains.named(asked);
    if (domain instanceof Refusal) return domain;
    return { url, events, domain: domain ?? '' };
  }

  return {
    async create(input: Record<string, unknown>): Promise<Made | Failed> {
      if (store === undefined) return none;
      const fields = checked(input);
      if (fields instanceof Refusal) return refused(fields);
      const listed = await guarded(() => store.subscriptions());
      if ('ok' in listed) return listed;
      if (listed.length >= MAX_SUBSCRIPTIONS) return refused(new Refusal(`an instance keeps at most ${MAX_SUBSCRIPTIONS} subscriptions; delete one first`));
      const sub: WebhookSubscription = { id: newId(), ...fields, secret: newSecret(), createdAt: Math.floor(options.now() / 1000), disabled: false };
      const added = await guarded(() => store.addSubscription(sub));
      if (added !== undefined) return added;
      return { ok: true, subscription: view(sub), secret: sub.secret };
    },

    async list(): Promise<{ ok: true; subscriptions: SubscriptionView[] } | Failed> {
      if (store === undefined) return { ok: true, subscriptions: [] };
      const listed = await guarded(() => store.subscriptions());
      if ('ok' in listed) return listed;
      return { ok: true, subscriptions: listed.map(view) };
    },

    async remove(id: string): Promise<{ ok: true } | Failed> {
      if (store === undefined) return NOT_FOUND;
      const removed = await guarded(() => store.removeSubscription(id));
      if (removed === true) return { ok: true };
      return removed === false ? NOT_FOUND : removed;
    },

    /** Puts a `ping` in the subscription's outbox, after what is owed to it already; its id, to find it in the deliveries. */
    async test(id: string): Promise<{ ok: true; eventId: string } | Failed> {
      if (store === undefined) return NOT_FOUND;
      const now = options.now();
      const time = Math.floor(now / 1000);
      const event = { id: newEventId(now), type: 'ping' as const, time, data: JSON.stringify({ subscription: id }) };
      const queued = await guarded(() => store.enqueue(id, event, now));
      if (queued === true) return { ok: true, eventId: event.id };
      return queued === false ? NOT_FOUND : queued;
    },

    async deliveries(id: string): Promise<{ ok: true; deliveries: AttemptView[] } | Failed> {
      if (store === undefined) return NOT_FOUND;
      const read = await guarded(() => store.deliveries(id));
      if (read === undefined) return NOT_FOUND;
      if ('ok' in read) return read;
      return { ok: true, deliveries: read.map(attemptView) };
    },
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;

export function attemptView(a: DeliveryAttempt): AttemptView {
  return {
    at: new Date(a.at).toISOString(),
    event_id: a.eventId,
    type: a.type,
    status: a.status,
    duration_ms: a.durationMs,
    error: a.error,
    outcome: a.outcome,
  };
}
