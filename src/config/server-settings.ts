/**
 * The limits of the node:http server of `main.ts` (`src/cli/http-options.ts`), as rows of the
 * settings table (`settings.ts` puts them in their place among the others); the handler ignores them.
 * Safe against slow or flooding clients, far above what a real client needs.
 */
import { setting } from './config.ts';
import { integer } from './parsers.ts';

export const SERVER_SETTINGS = [
  // The headers are part of the request: node:http refuses to start with a headers timeout past the request timeout.
  setting({
    prop: 'headersTimeoutMs',
    file: 'headers_timeout_ms',
    env: 'HEADERS_TIMEOUT_MS',
    flag: '--headers-timeout-ms',
    parse: integer(100, 600_000),
    default: 10_000,
    relation: { must: 'at most', other: 'requestTimeoutMs' },
    help: 'time a client has to send the request headers, ms (408 past it)',
  }),
  setting({
    prop: 'requestTimeoutMs',
    file: 'request_timeout_ms',
    env: 'REQUEST_TIMEOUT_MS',
    flag: '--request-timeout-ms',
    parse: integer(100, 3_600_000),
    default: 30_000,
    help: 'time a client has to send the whole request, ms',
  }),
  setting({
    prop: 'keepAliveTimeoutMs',
    file: 'keep_alive_timeout_ms',
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    flag: '--keep-alive-timeout-ms',
    parse: integer(100, 600_000),
    default: 5_000,
    help: 'idle time before a kept-alive connection is closed, ms',
  }),
  setting({
    prop: 'maxHeaderBytes',
    file: 'max_header_bytes',
    env: 'MAX_HEADER_BYTES',
    flag: '--max-header-bytes',
    parse: integer(1024, 1024 * 1024),
    default: 16 * 1024,
    help: 'largest request line and headers, bytes (431 past it)',
  }),
  setting({
    prop: 'maxConnections',
    file: 'max_connections',
    env: 'MAX_CONNECTIONS',
    flag: '--max-connections',
    parse: integer(1, 1_000_000),
    default: 1024,
    help: 'open connections at most; past it the oldest one without a request in flight is closed',
  }),
  setting({
    prop: 'shutdownTimeoutMs',
    file: 'shutdown_timeout_ms',
    env: 'SHUTDOWN_TIMEOUT_MS',
    flag: '--shutdown-timeout-ms',
    parse: integer(0, 600_000),
    default: 10_000,
    help: 'time SIGTERM gives requests in flight before closing them, ms',
  }),
  setting({
    prop: 'workers',
    file: 'workers',
    env: 'WORKERS',
    flag: '--workers',
    parse: integer(1, 64),
    default: 1,
    help: 'processes serving the port; more than 1 needs DATABASE_URL',
  }),
] as const;
