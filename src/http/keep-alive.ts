/**
 * The keep-alive timeout of the self-hosting server, kept by its connection table (connections.ts)
 * instead of by node:http. node:http arms a timer on the socket when a response has been sent and
 * disarms it when the next request arrives: two timer-list updates and a new `Timeout` per request,
 * about 880 instructions of a redirect's 64,000, and side by side 3–4 % of its throughput
 * (docs/performance.md). The table instead looks at its connections a few times a second and
 * closes the ones that have been idle long enough; a request costs nothing for it.
 *
 * What counts as idle is what node:http counts: a connection that has had a response sent and sits
 * with no request in flight and no byte arriving (a byte of a next request, even one that never
 * completes, starts the wait again, as it refreshes node's socket timer). A connection that has
 * never sent a complete request is not kept-alive: node:http answers it `408` after
 * `headers_timeout_ms`, as before.
 *
 * When: never before the timeout announced in `Keep-Alive: timeout=N` (seconds), so that a client
 * that trusts it never sends on a connection the server has closed; like node:http, a second later
 * (`GRACE_MS`), give or take a look's interval (`lookEvery`).
 */

/** Added to the timeout, as node:http adds it: a client reusing a connection at the last moment still finds it open. */
export const GRACE_MS = 1000;

/** How often the table looks: a tenth of the timeout, between 25 ms and half a second. */
export function lookEvery(keepAliveMs: number): number {
  return Math.max(25, Math.min(500, Math.floor(keepAliveMs / 10)));
}

/** What a look sees of one connection. */
export interface Seen {
  /** It has had a complete request (it is kept alive, not merely connected). */
  served: boolean;
  /** It has a request in flight. */
  busy: boolean;
  /** The stamp of its latest request (connections.ts), and its bytes read so far: either changes when it does anything. */
  latest: number;
  bytesRead: number;
}

/** What the table keeps of a connection between looks. */
export interface Quiet {
  latest: number;
  bytesRead: number;
  /** When it was last seen doing something (or busy). */
  since: number;
}

/** A connection not looked at yet: the first look starts its wait. */
export function unseen(): Quiet {
  return { latest: -1, bytesRead: -1, since: 0 };
}

/**
 * Whether a connection seen as `seen` at `now` has been idle for `limitMs`; `quiet` is updated. A
 * busy, unserved or changed connection starts its wait anew. `since` is a look at which it was busy
 * or had just changed, so it lies within one look of when it went idle: a connection is closed
 * after between `limitMs - interval` and `limitMs + 2 × interval` of idleness.
 */
export function overdue(seen: Seen, quiet: Quiet, now: number, limitMs: number): boolean {
  if (!seen.served || seen.busy || seen.latest !== quiet.latest || seen.bytesRead !== quiet.bytesRead) {
    quiet.latest = seen.latest;
    quiet.bytesRead = seen.bytesRead;
    quiet.since = now;
    return false;
  }
  return now - quiet.since >= limitMs;
}
