/**
 * The self-hosting server's sockets in a `ConnectionTable` (connections.ts): admitted, stamped per
 * request, closed as the table decides, and looked at a few times a second for the keep-alive
 * timeout (keep-alive.ts). Like the table, the wrapper's business: an embedder's server owns its
 * own sockets.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ConnectionTable, type InFlight, type Slot } from './connections.ts';
import { GRACE_MS, lookEvery, overdue } from './keep-alive.ts';

/** Where a socket keeps its slot. */
const SLOT = Symbol('connection slot');
/**
 * `_httpMessage` is where node:http keeps the response a socket is sending (null once it is sent,
 * then the next pipelined one); its own `closeIdleConnections` reads it to tell idle connections
 * from busy ones, as this table does.
 */
type TrackedSocket = Socket & { [SLOT]?: Slot<Socket>; _httpMessage?: ServerResponse | null };
/** node:http announces `Keep-Alive: timeout=N` from this field, which it sets from `server.keepAliveTimeout`. */
type Announcing = ServerResponse & { _keepAliveTimeout: number };

const owed: InFlight<TrackedSocket> = (socket) => socket._httpMessage ?? null;

export interface TrackedConnections {
  readonly table: ConnectionTable<Socket>;
  /**
   * `handler` as the server's request handler, each request noted in the table before it runs.
   * One listener rather than a second one for noting: node:http copies its listener list on
   * every emit when there are two.
   */
  serve(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
}

/**
 * Keeps `server`'s connections in a table with `max` slots, closing sockets as it decides. It takes
 * the keep-alive timeout over from node:http: the server's `keepAliveTimeout` as configured, set
 * to 0 on the server.
 */
export function trackConnections(server: Server, max: number): TrackedConnections {
  // Closing at once loses nothing: a connection without a request in flight has nothing owed, and
  // a finished response is already with the kernel, which sends it before the FIN.
  const table = new ConnectionTable<Socket>(max, (socket) => socket.destroy(), owed);
  const keepAliveMs = server.keepAliveTimeout;
  if (keepAliveMs > 0) {
    server.keepAliveTimeout = 0;
    const limitMs = keepAliveMs + GRACE_MS;
    const looks = setInterval(() => {
      const now = Date.now();
      table.closeWhere((slot, busy) =>
        overdue({ served: slot.latest !== slot.born, busy, latest: slot.latest, bytesRead: slot.conn.bytesRead }, slot.quiet, now, limitMs),
      );
    }, lookEvery(keepAliveMs));
    looks.unref();
    server.once('close', () => clearInterval(looks));
  }

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
        if (slot) table.started(slot);
        // The timeout node:http would have announced: the table keeps it (see above).
        (res as Announcing)._keepAliveTimeout = keepAliveMs;
        // While draining, say so: the client will not send another request on this connection.
        if (table.isDraining) res.shouldKeepAlive = false;
        handler(req, res);
      });
    },
  };
}
