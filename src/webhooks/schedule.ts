/**
 * When a delivery is tried again, what an answer means, and what of it is kept (the
 * Standard Webhooks specification's "Deliverability and reliability"). Pure: the caller passes the
 * time and the attempt's result, and does the waiting and the sending itself.
 */

/**
 * The waits before each retry, in seconds: after the first failed attempt 5 s, after the second
 * 5 min, … after the seventh 10 h; an eighth failure gives the event up (about 27.6 hours after
 * the first attempt). No random jitter is added: a subscription's events are sent in order, one
 * at a time, so only its oldest event waits, and receivers that fail together are different
 * hosts that a synchronised retry does not overload; a fixed table is also what a test can hold.
 */
export const RETRY_DELAYS_S: readonly number[] = Object.freeze([5, 300, 1800, 7200, 18000, 36000, 36000]);

/** How long an attempt may take, connection and answer together, before it counts as failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** How much of a receiver's answer is kept for the list of deliveries: enough to read an error. */
export const MAX_RESPONSE_BYTES = 1024;

/** Pending `link.clicked` events per subscription beyond which new ones are dropped and counted: the store's. */
export { CLICK_CAP } from '../store/webhook-store.ts';

/**
 * When to try again after `failedAttempts` attempts have failed (1 after the first), in the unit of
 * `nowMs`: milliseconds, the injected clock's; or `'failed'` once every delay of the table has
 * been waited out. A count below 1 is a bug of the caller: nothing has failed yet.
 */
export function nextAttemptAt(failedAttempts: number, nowMs: number): number | 'failed' {
  if (!Number.isSafeInteger(failedAttempts) || failedAttempts < 1) throw new RangeError('failedAttempts must be a whole number of at least 1');
  const delay = RETRY_DELAYS_S[failedAttempts - 1];
  return delay === undefined ? 'failed' : nowMs + delay * 1000;
}

/** What one attempt came to: an answer's status, or the error or timeout that stopped it. */
export interface AttemptResult {
  readonly status?: number;
  readonly error?: string;
  readonly timedOut?: boolean;
}

/**
 * `delivered` for a 2xx; `disable` for `410 Gone` (the receiver says it wants no more); `retry` for
 * anything else. An error or a timeout wins over a status already read: an answer cut off is not
 * one the receiver finished, and delivery is at least once. A 3xx is a failure, not a redirect to
 * follow: the specification says so, and following one would let a receiver send this service to
 * an address the subscription's checks never saw. 429, 502, 503 and 504 are retried like any
 * failure (the table already backs off; `Retry-After` is not read).
 */
export function outcomeOf(result: AttemptResult): 'delivered' | 'retry' | 'disable' {
  if (result.timedOut === true || result.error !== undefined) return 'retry';
  const { status } = result;
  if (status === undefined || !Number.isInteger(status)) return 'retry';
  if (status >= 200 && status <= 299) return 'delivered';
  return status === 410 ? 'disable' : 'retry';
}

/**
 * The part of a receiver's answer that is kept: at most `MAX_RESPONSE_BYTES` of UTF-8, cut before
 * the character the limit would split, as text every store can hold (a NUL, a lone surrogate and
 * a byte that is not UTF-8 become U+FFFD, counted as its three bytes). A Buffer is decoded only up
 * to the limit, so a large answer costs nothing more than a small one.
 */
export function keptResponse(body: Buffer | string): string {
  return cutText(typeof body === 'string' ? body : decodeHead(body), MAX_RESPONSE_BYTES);
}

/** The bytes before the limit, decoded; a character the limit splits is left out whole. */
function decodeHead(body: Buffer): string {
  if (body.length <= MAX_RESPONSE_BYTES) return body.toString('utf8');
  let end = MAX_RESPONSE_BYTES;
  // A UTF-8 character has at most 3 continuation bytes (10xxxxxx) after its first: step back to
  // that first byte. Decoded cut, the character would become a U+FFFD that could still fit, and
  // the kept text would show a replacement the receiver never sent.
  while (end > MAX_RESPONSE_BYTES - 3 && (body[end]! & 0xc0) === 0x80) end--;
  return body.subarray(0, end).toString('utf8');
}

/** `text` up to `maxBytes` of UTF-8, whole characters only, with nothing a store cannot hold. */
function cutText(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    // `for…of` pairs valid surrogates, so one seen alone here is a lone surrogate.
    const unstorable = cp === 0 || (cp >= 0xd800 && cp <= 0xdfff);
    const size = unstorable ? 3 : cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) break;
    bytes += size;
    out += unstorable ? '\uFFFD' : char;
  }
  return out;
}
