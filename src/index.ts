/** The package entry: the handler factory and its types. */
export {
  createShortener,
  createShortenerAsync,
  openShortener,
  openShortenerAsync,
  type Shortener,
  type OpenedShortener,
  type ShortenerOptions,
  type Handler,
} from './app.ts';
export type { Config } from './config/config.ts';
export { resolveConfig, configFromOptions } from './config/resolve.ts';
export { HttpError, ConfigError } from './errors.ts';
export { createLogger, type Logger, type LogLevel } from './log.ts';
export type { UrlRecord, UrlList } from './links/record.ts';
export type { Failure, ShortenOutcome, GetOutcome, LookupOutcome, RemoveOutcome, Visit } from './links/service.ts';
export type { StoreFs } from './store/log/fs.ts';
export type { CompactReport } from './store/log/log-engine.ts';
export { DriverMissingError, DatabaseOpenError } from './store/postgres/connect.ts';
export { ALPHABET, RESERVED_SEGMENTS } from './links/codes.ts';
export type { DeprecationNoticeNotification } from './published/deprecations.ts';
