/**
 * The settings (docs/operations.md) as data: one row each, with its file key, environment variable,
 * `--kebab-case` flag, parser, default and `--help` line. Resolution (`config.ts`) and `--help`
 * (`help.ts`) are computed from this table.
 */
import { LOG_LEVELS, type LogLevel } from '../log.ts';
import type { FsyncMode } from '../store/log/log-engine.ts';
import {
  bearerToken,
  boolean,
  databaseUrl,
  headerName,
  integer,
  list,
  nonEmpty,
  oneOf,
  optionalText,
  origins,
  publicUrl,
  rate,
  type Parser,
} from './parsers.ts';

export type { FsyncMode } from '../store/log/log-engine.ts';

/** `events`: one private event per counted visit (docs/analytics.md); `counts`: the count alone. */
export type VisitTracking = 'events' | 'counts';
export const VISIT_TRACKING: readonly VisitTracking[] = ['events', 'counts'];

export interface Config {
  /** Public address without a trailing slash (`https://s.example/x`); undefined = `http://localhost:<port>`. */
  baseUrl: string | undefined;
  host: string;
  port: number;
  production: boolean;
  minShortLength: number;
  maxShortLength: number;
  apiKeys: readonly string[];
  apiToken: string;
  /** With the gate on, `GET`/`HEAD /<code>` need no token (docs/security.md). */
  publicRedirects: boolean;
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
  // The limits of the node:http server of `server.ts` (see http-options.ts); the handler ignores them.
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  maxConnections: number;
  /** How long `server.ts` lets requests in flight finish after SIGTERM; the handler ignores it. */
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

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export const SETTINGS = [
  setting({
    prop: 'baseUrl',
    file: 'base_url',
    env: 'BASE_URL',
    flag: '--base-url',
    parse: publicUrl,
    default: undefined,
    shownDefault: 'http://localhost:<port>',
    help: 'public address; its path prefixes every route',
  }),
  setting({ prop: 'host', file: 'host', env: 'HOST', flag: '--host', parse: nonEmpty, default: '127.0.0.1', help: 'listen address' }),
  setting({ prop: 'port', file: 'port', env: 'PORT', flag: '--port', parse: integer(0, 65535), default: 3000, help: 'listen port; 0 picks a free one' }),
  setting({
    prop: 'production',
    file: 'production',
    env: 'PRODUCTION',
    flag: '--production',
    boolean: true,
    parse: boolean,
    default: false,
    help: 'true: GET / is 404 instead of the web UI',
  }),
  setting({
    prop: 'minShortLength',
    file: 'min_short_length',
    env: 'MIN_SHORT_LENGTH',
    flag: '--min-short-length',
    parse: integer(1, 64),
    default: 6,
    help: 'length of the first code tried',
  }),
  setting({
    prop: 'maxShortLength',
    file: 'max_short_length',
    env: 'MAX_SHORT_LENGTH',
    flag: '--max-short-length',
    parse: integer(1, 64),
    default: 12,
    relation: { must: 'at least', other: 'minShortLength' },
    help: 'longest code length tried',
  }),
  setting({
    prop: 'apiKeys',
    file: 'api_keys',
    env: 'API_KEYS',
    flag: '--api-keys',
    secret: true,
    parse: list,
    default: [],
    help: 'comma-separated admin keys: list, edit, delete, export, import, stats and visits',
  }),
  setting({
    prop: 'apiToken',
    file: undefined,
    env: 'API_TOKEN',
    flag: '--api-token',
    secret: true,
    parse: bearerToken,
    default: '',
    help: 'bearer token for the gate; empty disables it (prefer the env var: flags show in ps)',
  }),
  setting({
    prop: 'publicRedirects',
    file: 'public_redirects',
    env: 'PUBLIC_REDIRECTS',
    flag: '--public-redirects',
    boolean: true,
    parse: boolean,
    default: false,
    help: 'with API_TOKEN set, anyone may open short links (GET/HEAD /<code>); the rest stays gated',
  }),
  setting({
    prop: 'dataDir',
    file: 'data_dir',
    env: 'DATA_DIR',
    flag: '--data-dir',
    parse: nonEmpty,
    default: './data',
    help: 'directory of the append-only log urls.log',
  }),
  setting({
    prop: 'fsync',
    file: 'fsync',
    env: 'FSYNC',
    flag: '--fsync',
    parse: oneOf<FsyncMode>(['always', 'off']),
    default: 'always',
    help: 'always: acknowledge writes only once on disk; off: never fsync',
  }),
  setting({
    prop: 'databaseUrl',
    file: 'database_url',
    env: 'DATABASE_URL',
    flag: '--database-url',
    secret: true,
    parse: databaseUrl,
    default: '',
    help: 'postgres://… keeps the links in PostgreSQL (data_dir is then unused); empty: the log store',
  }),
  setting({
    prop: 'dbPoolSize',
    file: 'db_pool_size',
    env: 'DB_POOL_SIZE',
    flag: '--db-pool-size',
    parse: integer(1, 100),
    default: 10,
    help: 'connections per process to PostgreSQL',
  }),
  setting({
    prop: 'maxUrlLength',
    file: 'max_url_length',
    env: 'MAX_URL_LENGTH',
    flag: '--max-url-length',
    parse: integer(16, 65536),
    default: 8192,
    help: 'longest accepted original URL, in characters',
  }),
  setting({
    prop: 'logLevel',
    file: 'log_level',
    env: 'LOG_LEVEL',
    flag: '--log-level',
    parse: oneOf<LogLevel>(LOG_LEVELS),
    default: 'info',
    help: 'the least severe level logged',
  }),
  setting({
    prop: 'mcpAllowedOrigins',
    file: 'mcp_allowed_origins',
    env: 'MCP_ALLOWED_ORIGINS',
    flag: '--mcp-allowed-origins',
    parse: origins,
    default: [],
    help: 'extra browser origins allowed to call /mcp',
  }),
  setting({
    prop: 'maxBodyBytes',
    file: 'max_body_bytes',
    env: 'MAX_BODY_BYTES',
    flag: '--max-body-bytes',
    parse: integer(1024, 16 * 1024 * 1024),
    default: 64 * 1024,
    help: 'largest accepted request body, bytes (413 past it)',
  }),
  // Server limits: safe against slow or flooding clients, far above what a real client needs.
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
  // Visits and analytics (docs/analytics.md).
  setting({
    prop: 'visitTracking',
    file: 'visit_tracking',
    env: 'VISIT_TRACKING',
    flag: '--visit-tracking',
    parse: oneOf<VisitTracking>(VISIT_TRACKING),
    default: 'events',
    help: 'events: record one private event per counted visit (stats); counts: only count visits',
  }),
  setting({
    prop: 'visitRetentionDays',
    file: 'visit_retention_days',
    env: 'VISIT_RETENTION_DAYS',
    flag: '--visit-retention-days',
    parse: integer(0, 36500),
    default: 0,
    help: 'delete visit events older than this many days; 0 keeps them',
  }),
  setting({
    prop: 'trustProxy',
    file: 'trust_proxy',
    env: 'TRUST_PROXY',
    flag: '--trust-proxy',
    parse: integer(0, 10),
    default: 0,
    help: 'proxies in front; the client address is the N-th entry from the right of X-Forwarded-For (0: the socket)',
  }),
  setting({
    prop: 'geoipDb',
    file: 'geoip_db',
    env: 'GEOIP_DB',
    flag: '--geoip-db',
    parse: optionalText,
    default: '',
    help: 'a MaxMind DB (.mmdb) country or city file for visit countries (a regular file, at most 256 MiB), re-read when it changes; empty: none',
  }),
  setting({
    prop: 'geoipHeader',
    file: 'geoip_header',
    env: 'GEOIP_HEADER',
    flag: '--geoip-header',
    parse: headerName,
    default: '',
    help: "a trusted proxy's country header (e.g. CF-IPCountry), used instead of GEOIP_DB; only with TRUST_PROXY > 0",
  }),
  // Abuse controls for an open instance (docs/security.md).
  setting({
    prop: 'createRateLimit',
    file: 'create_rate_limit',
    env: 'CREATE_RATE_LIMIT',
    flag: '--create-rate-limit',
    parse: rate,
    default: '',
    help: 'at most N creates per client address (the one TRUST_PROXY gives) per second, minute or hour, e.g. 60/min; per instance; empty: no limit',
  }),
  // The peers' APIs (docs/compat.md): off by default, each a door of its own onto the same links.
  setting({
    prop: 'shlinkApi',
    file: 'shlink_api',
    env: 'SHLINK_API',
    flag: '--shlink-api',
    boolean: true,
    parse: boolean,
    default: false,
    help: "serve Shlink's REST API v3 under /rest/ (its web client and SDKs); rest is then reserved",
  }),
  setting({
    prop: 'yourlsApi',
    file: 'yourls_api',
    env: 'YOURLS_API',
    flag: '--yourls-api',
    boolean: true,
    parse: boolean,
    default: false,
    help: "serve YOURLS' API at /yourls-api.php (ShareX, WordPress plugins); its signature is an API_KEYS key",
  }),
] as const;

export type AnySetting = Setting<keyof Config>;
/** The table as rows of any setting, for code that walks every row. */
export const TABLE = SETTINGS as readonly AnySetting[];

/** The environment variable of `prop`: how messages and `--help` name a setting by default. */
export function envName(prop: keyof Config): string {
  return TABLE.find((s) => s.prop === prop)!.env;
}

export function defaults(): Config {
  const config = {} as Record<keyof Config, unknown>;
  for (const s of TABLE) config[s.prop] = s.default;
  return config as Config;
}
