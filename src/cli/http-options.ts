/**
 * The limits of the node:http server that `main.ts` runs, as a pure mapping from the settings.
 * They are the wrapper's business: `createShortener()` is a handler, and an embedder sets these on
 * its own server.
 */
import type { ServerOptions } from 'node:http';
import type { Config } from '../config/config.ts';

export type ServerLimits = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxHeaderBytes' | 'maxConnections'>;

export interface HttpServerSettings {
  /** For `http.createServer(options)`. */
  options: ServerOptions;
  /**
   * For `trackConnections` (tracking.ts), not `server.maxConnections`: past it the oldest
   * connection without a request in flight is closed to admit the new one.
   */
  maxConnections: number;
}

/**
 * Node looks for connections past `headersTimeout`/`requestTimeout` only once per
 * `connectionsCheckingInterval` (30 s by default), so a cut-off can come that much late. A tenth of
 * the shorter timeout, at most a second, keeps it close to the configured time for the price of a
 * walk over the open connections.
 */
export function checkingInterval(limits: Pick<ServerLimits, 'headersTimeoutMs' | 'requestTimeoutMs'>): number {
  const tenth = Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10);
  return Math.max(25, Math.min(1000, tenth));
}

export function serverOptions(limits: ServerLimits): HttpServerSettings {
  return {
    options: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // `trackConnections` takes it over from node:http (keep-alive.ts); an embedder's server keeps it.
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      connectionsCheckingInterval: checkingInterval(limits),
    },
    maxConnections: limits.maxConnections,
  };
}
