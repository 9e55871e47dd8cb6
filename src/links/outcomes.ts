/**
 * What the service's operations answer: `{ ok: true, … }` or a `Failure`, plain values every door
 * translates into its own shape (REST's status table in `api/outcomes.ts`, MCP's `isError`
 * results, Shlink's problem details, YOURLS' error fields). Only bugs are thrown.
 *
 * This is also where a store's refusal (`StoreUnavailableError`) becomes the `unavailable` outcome
 * it stands for: the doors never learn the storage contract's error type.
 */
import { StoreUnavailableError } from '../store/link-store.ts';
import type { UrlRecord } from './record.ts';
import type { Refusal } from './validate.ts';

/** The input was refused; `detail` tells the sender why (a 400). */
export type Invalid = { ok: false; error: 'invalid'; detail: string };
/** No live link (unknown, expired or deleted): a 404. */
export type NotFound = { ok: false; error: 'not_found' };
/**
 * Nothing was read or changed and a retry may succeed: storage not readable or writable, code
 * space exhausted (a 503).
 */
export type Unavailable = { ok: false; error: 'unavailable'; detail: string };
/** The custom code asked for is held by a live link (a 409). */
export type Conflict = { ok: false; error: 'conflict'; detail: string };
/**
 * The client has used up its creates of the window (`create_rate_limit`, a 429): nothing was
 * created; `retryAfter` whole seconds from now it may create again.
 */
export type RateLimited = { ok: false; error: 'rate_limited'; detail: string; retryAfter: number };
export type Failure = Invalid | NotFound | Unavailable | Conflict | RateLimited;

export type Found = { ok: true; record: UrlRecord };

export const NOT_FOUND: NotFound = { ok: false, error: 'not_found' };

/** A rule's refusal as the outcome a door answers. */
export const refused = (refusal: Refusal): Invalid => ({ ok: false, error: 'invalid', detail: refusal.detail });

/**
 * A store's refusal thrown where no outcome could carry it — a slice of a long list read from a
 * database, the redirect's counted visit of a limited link — as the outcome it stands for;
 * undefined for anything else, which is a bug for the door to throw on.
 */
export function unavailableOf(err: unknown): Unavailable | undefined {
  return err instanceof StoreUnavailableError ? { ok: false, error: 'unavailable', detail: err.message } : undefined;
}

/** A read or a change the store could not make, as an outcome; anything else is a bug (the generic 500). */
export function outage(err: unknown): Unavailable {
  const unavailable = unavailableOf(err);
  if (unavailable === undefined) throw err;
  return unavailable;
}

/** `read`'s answer, or `unavailable` when the store cannot answer now. */
export async function guarded<T>(read: () => T | Promise<T>): Promise<T | Unavailable> {
  try {
    return await read();
  } catch (err) {
    return outage(err);
  }
}
