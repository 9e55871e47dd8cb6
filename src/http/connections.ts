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
 * Which connections have requests in flight, and in what order the others stopped having one.
 * Pure: it closes connections only through the `close` it is given. Each connection or request
 * event is O(1).
 */
export class ConnectionTable<T> {
  /** Requests in flight (handed to the handler, response not yet sent) per connection that has any. */
  private readonly busy = new Map<T, number>();
  /**
   * Connections without a request in flight, oldest first: a `Set` iterates in insertion order,
   * and a connection that goes busy and back is deleted and added again, so it moves to the end.
   */
  private readonly waiting = new Set<T>();
  private draining = false;

  /** `close` ends a connection; the caller reports its end with `closed` (a repeat is harmless). */
  constructor(
    private readonly max: number,
    private readonly close: (conn: T) => void,
  ) {}

  get size(): number {
    return this.busy.size + this.waiting.size;
  }

  /** Connections with a request in flight. */
  get inFlight(): number {
    return this.busy.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * A new connection. At the cap the oldest connection without a request in flight is closed to
   * make room; false when there is none (every slot has a request in flight) or when draining:
   * the caller closes the new one.
   */
  admit(conn: T): boolean {
    if (this.draining) return false;
    if (this.size >= this.max) {
      const oldest = this.waiting.values().next();
      if (oldest.done) return false;
      this.waiting.delete(oldest.value);
      this.close(oldest.value);
    }
    this.waiting.add(conn);
    return true;
  }

  /** A complete request head arrived on `conn` and goes to the handler. */
  started(conn: T): void {
    if (this.waiting.delete(conn)) this.busy.set(conn, 1);
    else {
      // Pipelined requests: node:http hands the next one over before the previous one is answered.
      const n = this.busy.get(conn);
      if (n !== undefined) this.busy.set(conn, n + 1);
    }
  }

  /** A response on `conn` was sent (or abandoned). */
  finished(conn: T): void {
    const n = this.busy.get(conn);
    if (n === undefined) return;
    if (n > 1) {
      this.busy.set(conn, n - 1);
      return;
    }
    this.busy.delete(conn);
    if (this.draining) this.close(conn);
    else this.waiting.add(conn);
  }

  /** `conn` is gone, closed by either side. */
  closed(conn: T): void {
    this.busy.delete(conn);
    this.waiting.delete(conn);
  }

  /**
   * Shutdown: closes every connection without a request in flight now, and from then on each
   * other one once its last response is sent.
   */
  drain(): void {
    this.draining = true;
    const idle = [...this.waiting];
    this.waiting.clear();
    for (const conn of idle) this.close(conn);
  }
}

/**
 * Keeps `server`'s connections in a table with `max` slots, closing sockets as it decides. Call
 * before the request handler is attached, so a request counts as in flight before it runs.
 */
export function trackConnections(server: Server, max: number): ConnectionTable<Socket> {
  // Closing at once loses nothing: a connection without a request in flight has nothing owed, and
  // a finished response is already with the kernel, which sends it before the FIN.
  const table = new ConnectionTable<Socket>(max, (socket) => socket.destroy());

  function forget(this: Socket): void {
    table.closed(this);
  }
  function responseClosed(this: ServerResponse): void {
    table.finished(this.req.socket);
  }

  server.on('connection', function admitConnection(socket: Socket) {
    if (!table.admit(socket)) {
      socket.destroy();
      return;
    }
    socket.on('close', forget);
  });
  server.on('request', function countRequest(req: IncomingMessage, res: ServerResponse) {
    table.started(req.socket);
    // While draining, say so: the client will not send another request on this connection.
    if (table.isDraining) res.shouldKeepAlive = false;
    // 'close' follows 'finish', and also comes when the connection dies before the response is sent.
    res.on('close', responseClosed);
  });
  return table;
}
