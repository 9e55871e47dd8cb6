/**
 * The open connections of the self-hosting server, for two decisions node:http cannot make
 * (docs/operations.md, connections and shutdown). Like `http-options.ts` this is the wrapper's business: an
 * embedder's server owns its own sockets.
 *
 * - **The cap.** At `max_connections` a new connection is admitted by closing the oldest one that
 *   has no request in flight: silent (connected, nothing sent), part of a request sent, or idle
 *   between kept-alive requests. A client holding slots without sending complete requests can then
 *   never lock others out, whatever its address (a per-address cap would starve every user behind
 *   one proxy). Only when every slot has a request in flight is the new connection refused.
 *   node:http's own `server.maxConnections` refuses every new connection instead, so it is not used.
 * - **Shutdown.** Every connection without a request in flight is closed at once; each other one
 *   as soon as its last response has been sent.
 *
 * A connection that never sends a byte is not kept forever below the cap either: node:http answers
 * it `408` after `headers_timeout_ms`, like a client dripping its headers.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * One connection's place in the table. The caller keeps it with the connection (on the socket),
 * so a request's events reach it without a lookup: nothing on the redirect path hashes.
 */
export interface Slot<T> {
  readonly conn: T;
  /** Requests in flight: handed to the handler, response not yet sent. */
  busy: number;
  /** Neighbours in the list of connections without a request in flight. */
  prev: Slot<T> | null;
  next: Slot<T> | null;
  /** Closed and out of the table: later events about it change nothing. */
  gone: boolean;
}

/**
 * Which connections have requests in flight, and in what order the others stopped having one.
 * Pure: it closes connections only through the `close` it is given. Each connection or request
 * event is O(1), and a request's own (`started`, `finished`) touches two links of a list and a
 * counter: no Map or Set, whose deletes leave holes to rehash.
 */
export class ConnectionTable<T> {
  /** Connections without a request in flight, oldest first: one that goes busy and back moves to the end. */
  private head: Slot<T> | null = null;
  private tail: Slot<T> | null = null;
  private open = 0;
  private busyConns = 0;
  private draining = false;

  /** `close` ends a connection; the caller reports its end with `closed` (a repeat is harmless). */
  constructor(
    private readonly max: number,
    private readonly close: (conn: T) => void,
  ) {}

  get size(): number {
    return this.open;
  }

  /** Connections with a request in flight. */
  get inFlight(): number {
    return this.busyConns;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * A new connection, and its slot. At the cap the oldest connection without a request in flight
   * is closed to make room; undefined when there is none (every slot has a request in flight) or
   * when draining: the caller closes the new one.
   */
  admit(conn: T): Slot<T> | undefined {
    if (this.draining) return undefined;
    if (this.open >= this.max) {
      const oldest = this.head;
      if (oldest === null) return undefined;
      this.drop(oldest);
      this.close(oldest.conn);
    }
    const slot: Slot<T> = { conn, busy: 0, prev: null, next: null, gone: false };
    this.open++;
    this.append(slot);
    return slot;
  }

  /** A complete request head arrived on the connection and goes to the handler. */
  started(slot: Slot<T>): void {
    if (slot.gone) return;
    // Pipelined requests: node:http hands the next one over before the previous one is answered.
    if (slot.busy++ > 0) return;
    this.unlink(slot);
    this.busyConns++;
  }

  /** A response on the connection was sent (or abandoned). */
  finished(slot: Slot<T>): void {
    if (slot.gone || slot.busy === 0) return;
    if (--slot.busy > 0) return;
    this.busyConns--;
    if (this.draining) {
      this.drop(slot);
      this.close(slot.conn);
    } else this.append(slot);
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
    const idle: T[] = [];
    for (let slot = this.head; slot !== null; slot = slot.next) idle.push(slot.conn);
    while (this.head !== null) this.drop(this.head);
    for (const conn of idle) this.close(conn);
  }

  /** Out of the table for good. */
  private drop(slot: Slot<T>): void {
    slot.gone = true;
    this.open--;
    if (slot.busy > 0) this.busyConns--;
    else this.unlink(slot);
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
   * `handler` as the server's request handler, each request counted in flight before it runs.
   * One listener rather than a second one for counting: node:http copies its listener list on
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
  function responseClosed(this: ServerResponse): void {
    const slot = (this.req.socket as TrackedSocket)[SLOT];
    if (slot) table.finished(slot);
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
      server.on('request', function countedRequest(req: IncomingMessage, res: ServerResponse) {
        const slot = (req.socket as TrackedSocket)[SLOT];
        if (slot) table.started(slot);
        // While draining, say so: the client will not send another request on this connection.
        if (table.isDraining) res.shouldKeepAlive = false;
        // 'close' follows 'finish', and also comes when the connection dies before the response is sent.
        res.on('close', responseClosed);
        handler(req, res);
      });
    },
  };
}
