/**
 * What a configuration is (docs/operations.md): the `Config` every part of the service is built from,
 * and what one setting of the table (`settings.ts`) holds. Below the command line: the library's
 * options (`createShortener`) and the server's flags, environment and file all end in a `Config`.
 */
import type { LogLevel } from '../log.ts';
import type { FsyncMode } from '../store/log/log-engine.ts';
import type { Parser } from './parsers.ts';

export type { FsyncMode } from '../store/log/log-engine.ts';

/** `events`: one private event per counted visit (docs/analytics.md); `counts`: the count alone. */
export type VisitTracking = 'events' | 'counts';
export const VISIT_TRACKING: readonly VisitTracking[] = ['events', 'counts'];

/** Who may create links (docs/security.md): anyone past the gate, or only a key whose role may create. */
export type CreateAccess = 'open' | 'key';
export const CREATE_ACCESS: readonly CreateAccess[] = ['open', 'key'];

export interface Config {
  /** Public address without a trailing slash (`https://s.example/x`); undefined = `http://localhost:<port>`. */
  baseUrl: string | undefined;
  /** Extra short domains besides the host of `baseUrl`, lower case (docs/api.md, domains). */
  domains: readonly string[];
  host: string;
  port: number;
  production: boolean;
  minShortLength: number;
  maxShortLength: number;
  apiKeys: readonly string[];
  apiToken: string;
  /** With the gate on, `GET`/`HEAD /<code>` need no token (docs/security.md). */
  publicRedirects: boolean;
  /** `webhook_allow_private`: webhook receivers may be on loopback, private or link-local addresses. */
  webhookAllowPrivate: boolean;
  dataDir: string;
  fsync: FsyncMode;
  /** `postgres://…`: the links live in PostgreSQL (docs/postgres.md); empty: the log store in `dataDir`. */
  databaseUrl: string;
  /** Connections of this process's pool to PostgreSQL. */
  dbPoolSize: number;
  maxUrlLength: number;
  logLevel: LogLevel;
  mcpAllowedOrigins: readonly string[];
  /** Largest accepted request body, bytes (the handler's own limit: it applies to embedders too). */
  maxBodyBytes: number;
  // The limits of the node:http server of `main.ts` (see http-options.ts); the handler ignores them.
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  maxConnections: number;
  /** How long `main.ts` lets requests in flight finish after SIGTERM; the handler ignores it. */
  shutdownTimeoutMs: number;
  /** Processes serving the port with `node:cluster` (`src/cli/cluster.ts`); more than 1 needs a database. */
  workers: number;
  /** What a counted visit records (docs/analytics.md). */
  visitTracking: VisitTracking;
  /** Events older than this many days are deleted; 0 keeps them. */
  visitRetentionDays: number;
  /** Proxies in front: the client address is the N-th entry from the right of `X-Forwarded-For`. */
  trustProxy: number;
  /** A MaxMind DB (`.mmdb`) file for visit countries; empty = none. */
  geoipDb: string;
  /** A trusted proxy's country header, lower case (`cf-ipcountry`); empty = none. Read only when `trustProxy` > 0. */
  geoipHeader: string;
  /** At most this many creates per client address (`60/min`, links/create-limit.ts); empty = no limit. */
  createRateLimit: string;
  /** With a database that has no admin key: stored as the admin key `initial` (docs/security.md). */
  initialApiKey: string;
  /** `open`: anyone past the gate creates; `key`: a create needs a key whose role may create. */
  createAccess: CreateAccess;
  /** Serve Shlink's REST API v3 under `/rest/` (docs/compat.md); `rest` is then a reserved word. */
  shlinkApi: boolean;
  /** Serve YOURLS' `/yourls-api.php` for its clients (docs/compat.md). */
  yourlsApi: boolean;
}

export interface Setting<K extends keyof Config> {
  prop: K;
  /** snake_case key of the JSON config file; undefined for secrets, which never live in a file. */
  file: string | undefined;
  env: string;
  flag: string;
  /** Boolean flags may stand alone (`--production`). */
  boolean?: true;
  secret?: true;
  parse: Parser<Config[K]>;
  default: Config[K];
  /** How `--help` shows a default that is computed (`http://localhost:<port>`). */
  shownDefault?: string;
  /** A rule against another number setting, checked by `check()` and shown by `--help`. */
  relation?: Relation;
  help: string;
}

/** This setting `must` be at least, or at most, the setting `other`. */
export interface Relation {
  must: 'at least' | 'at most';
  other: { [K in keyof Config]: Config[K] extends number ? K : never }[keyof Config];
}

export function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export type AnySetting = Setting<keyof Config>;
