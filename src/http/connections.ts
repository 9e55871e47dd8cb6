/**
 * The open connections of the self-hosting server, for two decisions node:http cannot make
 * (docs/operations.md, connections and shutdown). Like `http-options.ts` this is the wrapper's business: an
 * embedder's server owns its own sockets.
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
 *
 * A connection that never sends a byte is not kept forever below the cap either: node:http answers
 * it `408` after `headers_timeout_ms`, like a client dripping its headers.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What the table asks of a response; node:http's `ServerResponse` is one. Asked, not told: a
 * response reports nothing to the table on the redirect path (no listener per response). Whether
 * a connection has a request in flight is read from its latest response only when it matters: at
 * the cap and on shutdown.
 */
export interface Pending {
  /** Sent whole: handed to the kernel (node:http's `writableFinished`). */
  readonly writableFinished: boolean;
  /** `'close'` comes once the response is sent, or abandoned with its connection. */
  once(event: 'close', listener: () => void): unknown;
}

/**
 * One connection's place in the table. The caller keeps it with the connection (on the socket),
 * so a request's events reach it without a lookup: nothing on the redirect path hashes.
 */
export interface Slot<T> {
  readonly conn: T;
  /**
   * The latest response handed to the handler on this connection, null before the first. node:http
   * sends pipelined responses in order, so the latest one sent means every one sent.
   */
  pending: Pending | null;
  /** Neighbours in the list of connections, ordered by when their latest request began. */
  prev: Slot<T> | null;
  next: Slot<T> | null;
  /** Closed and out of the table: later events about it change nothing. */
  gone: boolean;
}

/** A connection has a request in flight while its latest response is not sent whole. */
function hasRequestInFlight(slot: Slot<unknown>): boolean {
  return slot.pending !== null && !slot.pending.writableFinished;
}

/**
 * The open connections, in the order their latest request began (a silent one: when it connected).
 * Pure: it closes connections only through the `close` it is given. A request costs two links of a
 * list and a field (`started`); whether a connection is in flight is read only at the cap (from the
 * oldest end, passing over long requests still in flight: at most the whole table, and only at the
 * cap) and on shutdown. An idle connection keeps its last response referenced until its next
 * request or its end. No Map or Set, whose deletes leave holes to rehash.
 */
export class ConnectionTable<T> {
  private head: Slot<T> | null = null;
  private tail: Slot<T> | null = null;
  private open = 0;
  private draining = false;

  /** `close` ends a connection; the caller reports its end with `closed` (a repeat is harmless). */
  constructor(
    private readonly max: number,
    private readonly close: (conn: T) => void,
  ) {}

  get size(): number {
    return this.open;
  }

  /** Connections with a request in flight (a walk over the table: for shutdown's log lines). */
  get inFlight(): number {
    let n = 0;
    for (let slot = this.head; slot !== null; slot = slot.next) if (hasRequestInFlight(slot)) n++;
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
    if (this.open >= this.max) {
      let oldest = this.head;
      while (oldest !== null && hasRequestInFlight(oldest)) oldest = oldest.next;
      if (oldest === null) return undefined;
      this.drop(oldest);
      this.close(oldest.conn);
    }
    const slot: Slot<T> = { conn, pending: null, prev: null, next: null, gone: false };
    this.open++;
    this.append(slot);
    return slot;
  }

  /** A complete request head arrived on the connection and goes to the handler, to answer with `res`. */
  started(slot: Slot<T>, res: Pending): void {
    if (slot.gone) return;
    slot.pending = res;
    if (slot !== this.tail) {
      this.unlink(slot);
      this.append(slot);
    }
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
    for (let slot = this.head; slot !== null; slot = slot.next) {
      if (hasRequestInFlight(slot)) this.closeWhenSent(slot, slot.pending!);
      else idle.push(slot);
    }
    for (const slot of idle) {
      this.drop(slot);
      this.close(slot.conn);
    }
  }

  /** Closes a draining connection once `res`, its latest response, is sent (or a later one, if pipelined). */
  private closeWhenSent(slot: Slot<T>, res: Pending): void {
    res.once('close', () => {
      if (slot.gone) return;
      // A pipelined request that began meanwhile: wait for its response too.
      if (slot.pending !== res && hasRequestInFlight(slot)) return this.closeWhenSent(slot, slot.pending!);
      this.drop(slot);
      this.close(slot.conn);
    });
  }

  /** Out of the table for good. */
  private drop(slot: Slot<T>): void {
    slot.gone = true;
    this.open--;
    this.unlink(slot);
  }

  private append(slot: Slot<T>): void {
    slot.prev = this.tail;
    slot.next = null;
    if (this.tail === null) this.head = slot;
    else this.tail.next = slot;
    this.tail = slot;
  }

  private unlink(slot: Slot<T>): void {
    if (slot.prev === null) this.head = slot.next;
    else slot.prev.next = slot.next;
    if (slot.next === null) this.tail = slot.prev;
    else slot.next.prev = slot.prev;
    slot.prev = slot.next = null;
  }
}

/** Where a socket keeps its slot. */
const SLOT = Symbol('connection slot');
type TrackedSocket = Socket & { [SLOT]?: Slot<Socket> };

export interface TrackedConnections {
  readonly table: ConnectionTable<Socket>;
  /**
   * `handler` as the server's request handler, each request noted in the table before it runs.
   * One listener rather than a second one for noting: node:http copies its listener list on
   * every emit when there are two.
   */
  serve(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
}

/** Keeps `server`'s connections in a table with `max` slots, closing sockets as it decides. */
export function trackConnections(server: Server, max: number): TrackedConnections {
  // Closing at once loses nothing: a connection without a request in flight has nothing owed, and
  // a finished response is already with the kernel, which sends it before the FIN.
  const table = new ConnectionTable<Socket>(max, (socket) => socket.destroy());

  function forget(this: TrackedSocket): void {
    const slot = this[SLOT];
    if (slot) table.closed(slot);
  }

  server.on('connection', function admitConnection(socket: TrackedSocket) {
    const slot = table.admit(socket);
    if (slot === undefined) {
      socket.destroy();
      return;
    }
    socket[SLOT] = slot;
    socket.on('close', forget);
  });
  return {
    table,
    serve(handler) {
      server.on('request', function notedRequest(req: IncomingMessage, res: ServerResponse) {
        const slot = (req.socket as TrackedSocket)[SLOT];
        if (slot) table.started(slot, res);
        // While draining, say so: the client will not send another request on this connection.
        if (table.isDraining) res.shouldKeepAlive = false;
        handler(req, res);
      });
    },
  };
}
