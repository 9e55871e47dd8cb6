/**
 * The open connections of the self-hosting server, for decisions node:http cannot make, or makes
 * at a price on every request (docs/operations.md, connections and shutdown). Like
 * `http-options.ts` this is the wrapper's business: an embedder's server owns its own sockets.
 *
 * - **The cap.** At `max_connections` a new connection is admitted by closing, of those with no
 *   request in flight (silent: connected, nothing sent; part of a request sent; idle between
 *   kept-alive requests), the one whose latest request began longest ago (a silent one: that
 *   connected longest ago). A client holding slots without sending complete requests can then never
 *   lock others out, whatever its address (a per-address cap would starve every user behind one
 *   proxy). Only when every slot has a request in flight is the new connection refused. node:http's
 *   own `server.maxConnections` refuses every new connection instead, so it is not used.
 * - **Shutdown.** Every connection without a request in flight is closed at once; each other one
 *   as soon as its last response has been sent.
 * - **Keep-alive.** An idle kept-alive connection is closed after `keep_alive_timeout_ms`, by the
 *   table rather than by a timer node:http re-arms on every request (keep-alive.ts).
 *
 * A connection that never sends a byte is not kept forever below the cap either: node:http answers
 * it `408` after `headers_timeout_ms`, like a client dripping its headers.
 */
import { unseen, type Quiet } from './keep-alive.ts';

/**
 * What the table asks of a response; node:http's `ServerResponse` is one. Asked, not told: a
 * response reports nothing to the table on the redirect path (no listener per response), and the
 * table keeps none (see `InFlight`). Whether a connection has a request in flight is read only
 * when it matters: at the cap and on shutdown.
 */
export interface Pending {
  /** Sent whole: handed to the kernel (node:http's `writableFinished`). */
  readonly writableFinished: boolean;
  /** `'close'` comes once the response is sent, or abandoned with its connection. */
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The response a connection is sending or owes, null when it owes none. node:http answers
 * pipelined requests in order, one response on the socket at a time and the next once it is sent,
 * so while any request of a connection is in flight its first unsent response is here.
 *
 * Read from the connection rather than noted per request: a table that kept each connection's
 * latest response would keep every idle connection's request and response alive until its next
 * request, enough at load for the young generation to grow fourfold, and every redirect paid for
 * that fresh memory in cache misses (docs/performance.md).
 */
export type InFlight<T> = (conn: T) => Pending | null;

/**
 * One connection's place in the table. The caller keeps it with the connection (on the socket),
 * so a request's events reach it without a lookup: nothing on the redirect path hashes.
 */
export interface Slot<T> {
  readonly conn: T;
  /** When its latest request began (a silent connection: when it was admitted), on the table's clock. */
  latest: number;
  /** `latest` when it was admitted: the two differ once it has started a request. */
  readonly born: number;
  /** What the keep-alive looks saw of it (keep-alive.ts). */
  readonly quiet: Quiet;
  /** `latest` as it was when the slot was last put in the eviction queue (see `ConnectionTable`). */
  queued: number;
  /** Its index in the table's array of open connections. */
  at: number;
  /** Closed and out of the table: later events about it change nothing. */
  gone: boolean;
}

/**
 * The open connections, each stamped with when its latest request began (a silent one: when it
 * connected). Pure: it closes connections only through the `close` it is given.
 *
 * A request costs one stamp (`started`): a counter and a store, nothing relinked. Order is needed
 * only at the cap, where the connection to close is, of those with no request in flight, the one
 * with the oldest stamp. For that the table keeps an eviction queue: the open connections sorted by
 * stamp when it was last built. An entry whose connection has closed or started a request since is
 * stale; every other one is older than any connection stamped since, so the first entry that is
 * neither stale nor in flight is the one to close. Only when no such entry is left, some
 * connection is not in the queue as it stands and some connection has no request in flight, is the
 * queue built again (a refusal costs a walk over the table, as it always did). Whether a
 * connection has a request in flight is read only there and on shutdown. Below the cap the queue
 * is dropped, so it never keeps a closed connection alive for long.
 */
export class ConnectionTable<T> {
  /** The open connections, in no order: a closed one's place goes to the last one. */
  private readonly open: Slot<T>[] = [];
  /** Advances with every admission and every request. */
  private clock = 0;
  /** The eviction queue (see above), from `front` on; stale entries before `front` are passed for good. */
  private queue: Slot<T>[] = [];
  private front = 0;
  private draining = false;

  /**
   * `close` ends a connection; the caller reports its end with `closed` (a repeat is harmless).
   * `inFlightOn` reads the response a connection owes.
   */
  constructor(
    private readonly max: number,
    private readonly close: (conn: T) => void,
    private readonly inFlightOn: InFlight<T>,
  ) {}

  /** The response the connection owes and has not sent whole, if any: then it has a request in flight. */
  private unsent(slot: Slot<T>): Pending | null {
    const res = this.inFlightOn(slot.conn);
    return res !== null && !res.writableFinished ? res : null;
  }

  private hasRequestInFlight(slot: Slot<T>): boolean {
    return this.unsent(slot) !== null;
  }

  get size(): number {
    return this.open.length;
  }

  /** Connections with a request in flight (a walk over the table: for shutdown's log lines). */
  get inFlight(): number {
    let n = 0;
    for (const slot of this.open) if (this.hasRequestInFlight(slot)) n++;
    return n;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * A new connection, and its slot. At the cap the connection without a request in flight whose
   * latest request began longest ago (or that connected longest ago, silent) is closed to make
   * room; undefined when there is none (every slot has a request in flight) or when draining: the
   * caller closes the new one.
   */
  admit(conn: T): Slot<T> | undefined {
    if (this.draining) return undefined;
    if (this.open.length >= this.max) {
      const oldest = this.oldestIdle();
      if (oldest === undefined) return undefined;
      this.drop(oldest);
      this.close(oldest.conn);
    } else if (this.queue.length !== 0) {
      this.queue = [];
      this.front = 0;
    }
    const stamp = ++this.clock;
    const slot: Slot<T> = { conn, latest: stamp, born: stamp, quiet: unseen(), queued: 0, at: this.open.length, gone: false };
    this.open.push(slot);
    return slot;
  }

  /** A complete request head arrived on the connection and goes to the handler. */
  started(slot: Slot<T>): void {
    // A closed slot is in neither the table nor a queue that will be read: its stamp stays unread.
    slot.latest = ++this.clock;
  }

  /** The connection is gone, closed by either side. */
  closed(slot: Slot<T>): void {
    if (!slot.gone) this.drop(slot);
  }

  /**
   * Shutdown: closes every connection without a request in flight now, and from then on each
   * other one once its last response is sent.
   */
  drain(): void {
    this.draining = true;
    const idle: Slot<T>[] = [];
    for (const slot of this.open) {
      const res = this.unsent(slot);
      if (res) this.closeWhenSent(slot, res);
      else idle.push(slot);
    }
    for (const slot of idle) {
      this.drop(slot);
      this.close(slot.conn);
    }
  }

  /**
   * Closes each connection that `expired` picks, told whether it has a request in flight: one walk
   * over the table (for the keep-alive timeout).
   */
  closeWhere(expired: (slot: Slot<T>, busy: boolean) => boolean): void {
    // From the end: a closed connection's place goes to the last one, which has been seen.
    for (let i = this.open.length - 1; i >= 0; i--) {
      const slot = this.open[i]!;
      if (!expired(slot, this.hasRequestInFlight(slot))) continue;
      this.drop(slot);
      this.close(slot.conn);
    }
  }

  /** Closes a draining connection once `res`, the response it owes, is sent, and any pipelined after it. */
  private closeWhenSent(slot: Slot<T>, res: Pending): void {
    res.once('close', () => {
      if (slot.gone) return;
      // A pipelined request: wait for its response too.
      const next = this.unsent(slot);
      if (next) return this.closeWhenSent(slot, next);
      this.drop(slot);
      this.close(slot.conn);
    });
  }

  /** The open connection without a request in flight whose latest request began longest ago. */
  private oldestIdle(): Slot<T> | undefined {
    const first = this.scanQueue();
    if (first.idle !== undefined || first.current === this.open.length) return first.idle;
    // Some open connection is not in the queue as it stands, and may be the one. Sorted again only
    // when one can go: while every connection has a request in flight, each refusal is one walk
    // over the table, never a sort.
    if (this.open.every((slot) => this.hasRequestInFlight(slot))) return undefined;
    this.requeue();
    return this.scanQueue().idle;
  }

  /**
   * The first entry of the queue that is current (neither closed nor stamped since it was queued)
   * and has no request in flight, and how many current entries were passed on the way.
   */
  private scanQueue(): { idle: Slot<T> | undefined; current: number } {
    const queue = this.queue;
    let current = 0;
    for (let i = this.front; i < queue.length; i++) {
      const slot = queue[i]!;
      if (slot.gone || slot.latest !== slot.queued) {
        if (i === this.front) this.front++;
        continue;
      }
      current++;
      if (!this.hasRequestInFlight(slot)) return { idle: slot, current };
    }
    return { idle: undefined, current };
  }

  /** The eviction queue built anew: every open connection, oldest stamp first. */
  private requeue(): void {
    const queue = this.open.slice().sort((a, b) => a.latest - b.latest);
    for (const slot of queue) slot.queued = slot.latest;
    this.queue = queue;
    this.front = 0;
  }

  /** Out of the table for good. */
  private drop(slot: Slot<T>): void {
    slot.gone = true;
    const last = this.open.pop()!;
    if (last !== slot) {
      this.open[slot.at] = last;
      last.at = slot.at;
    }
  }
}
