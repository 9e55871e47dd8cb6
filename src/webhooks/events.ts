/**
 * What a webhook can tell: the event types, the rule for a subscription's list of them,
 * and the body of a delivery. The body follows the Standard Webhooks payload structure,
 * `{"type","timestamp","data"}`, written here once so every sender writes it alike.
 */
import { Refusal } from '../links/refusal.ts';
import { EVENT_TYPES, isEventType, type EventType } from '../store/webhook-store.ts';

// The types' names follow the specification (`noun.verb`, `[a-z_]`); the list is the storage
// contract's, which stores them.
export { EVENT_TYPES, isEventType, type EventType } from '../store/webhook-store.ts';
// What a click's `data` holds is the contract's: the log store renders it from a click's packed row.
export { clickedData, type ClickedVisit } from '../store/webhook-store.ts';

/**
 * Each type: whether a subscription may ask for it, and what it says. `ping` is sent only by
 * `POST /api/webhooks/<id>/test`, to the one subscription tested, whatever its list says: asking
 * for it would mean nothing.
 */
export const EVENT_TABLE: Readonly<Record<EventType, { readonly subscribable: boolean; readonly description: string }>> = Object.freeze({
  'link.created': { subscribable: true, description: 'a link was made' },
  'link.updated': { subscribable: true, description: 'a link was edited' },
  'link.deleted': { subscribable: true, description: 'a link was deleted' },
  'link.clicked': { subscribable: true, description: 'a visit was counted' },
  'link.limit_reached': { subscribable: true, description: "a visit used up a link's visit limit" },
  ping: { subscribable: false, description: 'a test delivery' },
});

/** The types a subscription may ask for, in table order. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly EventType[] = Object.freeze(EVENT_TYPES.filter((type) => EVENT_TABLE[type].subscribable));

/**
 * A subscription's `events`: a non-empty array of distinct, known, subscribable types. The result
 * is in table order, not the order sent: two subscriptions to the same events store the same list.
 */
export function checkEventList(input: unknown): EventType[] | Refusal {
  const choices = `one or more of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`;
  if (!Array.isArray(input)) return new Refusal(`events must be an array of event types: ${choices}`);
  if (input.length === 0) return new Refusal(`events must not be empty: ${choices}`);
  const seen = new Set<EventType>();
  for (const item of input) {
    if (typeof item !== 'string') return new Refusal(`events must be strings: ${choices}`);
    if (!isEventType(item)) return new Refusal(`events: ${quoted(item)} is not an event type: ${choices}`);
    if (!EVENT_TABLE[item].subscribable) return new Refusal(`events: ${item} cannot be subscribed to (it is sent only by a test delivery)`);
    if (seen.has(item)) return new Refusal(`events: ${item} is listed more than once`);
    seen.add(item);
  }
  return SUBSCRIBABLE_EVENT_TYPES.filter((type) => seen.has(type));
}

/** A value from a request, echoed in a refusal: as JSON, and cut, so a long one cannot fill a log line. */
function quoted(value: string): string {
  const chars = [...value];
  return JSON.stringify(chars.length > 40 ? `${chars.slice(0, 40).join('')}…` : value);
}

/** 9999-12-31T23:59:59Z: past it ISO 8601 needs a six-digit, signed year that few readers parse. */
const MAX_TIMESTAMP_S = 253_402_300_799;

/**
 * The body of a delivery: `{"type","timestamp","data"}`, keys in that order, no spaces (the body is
 * signed as sent, so it is made once and never re-serialised). `timestamp` is when the event
 * happened, not when it is sent (the `webhook-timestamp` header is that), in ISO 8601 UTC with a
 * `Z`, as the specification's example writes it, but to the second (`2022-11-03T20:26:10Z`): the
 * event's time is whole Unix seconds, and a `.000` would claim a precision it does not have.
 * `data` is JSON text as the outbox keeps it (made by `JSON.stringify`, its keys in the order they
 * were built), put in as it is rather than parsed to be serialised again; a type and a timestamp
 * need no escaping (`[a-z._]`, digits and `-:TZ`).
 */
export function eventBody(type: EventType, timestamp: number, data: string): string {
  if (!isEventType(type)) throw new TypeError('eventBody needs a known event type');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP_S)
    throw new RangeError('an event timestamp must be whole Unix seconds from 1970 to 9999');
  const iso = new Date(timestamp * 1000).toISOString().replace('.000Z', 'Z');
  return `{"type":"${type}","timestamp":"${iso}","data":${data}}`;
}
