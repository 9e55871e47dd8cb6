/**
 * JSON-lines logging on a writable stream (stdout by default). One object per line:
 * `time`, `level`, `msg`, then the caller's fields.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  /** True when a line at this level would be written: lets hot paths skip building fields. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LogSink {
  write(chunk: string): unknown;
}

export function createLogger(level: LogLevel = 'info', sink: LogSink = process.stdout): Logger {
  const threshold = RANK[level];
  const line = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < threshold) return;
    sink.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
  };
  return {
    enabled: (lvl) => RANK[lvl] >= threshold,
    debug: (msg, fields) => line('debug', msg, fields),
    info: (msg, fields) => line('info', msg, fields),
    warn: (msg, fields) => line('warn', msg, fields),
    error: (msg, fields) => line('error', msg, fields),
  };
}

/**
 * Keeps the process alive when the reader of its log goes away (`node dist/server.js | head -1`,
 * docs/operations.md): every write to a closed pipe then fails with EPIPE, reported as an 'error' event that
 * would crash the process. Nobody is left to read those lines, so they are dropped; any other
 * error stays fatal, as before.
 */
export function ignoreClosedPipe(stream: NodeJS.WritableStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

/**
 * A query parameter whose name contains `key`, `token`, `signature` or `password`, in any case
 * (docs/security.md): `api_key`, `API_KEY`, `api_key[]`, `x-api-key`, `access_token`, and YOURLS'
 * `signature` and `password` (docs/compat.md). A list of exact names always misses the next
 * spelling a client invents; redacting a harmless `monkey=` costs nothing.
 */
const SECRET_NAME = /key|token|signature|password/i;

/**
 * The request target as it may be logged: the values of secret query parameters become `***`.
 * Works on the raw target text so that a malformed query is still redacted, never echoed.
 */
export function redactTarget(target: string): string {
  const q = target.indexOf('?');
  if (q === -1) return target;
  const parts = target
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // An undecodable name is compared as written.
      }
      return SECRET_NAME.test(name) ? `${rawName}=***` : pair;
    });
  return `${target.slice(0, q)}?${parts.join('&')}`;
}
