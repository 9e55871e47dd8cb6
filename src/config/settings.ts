/**
 * The settings (docs/operations.md) as data: one row each, with its file key, environment variable,
 * `--kebab-case` flag, parser, default and `--help` line. Resolution (`resolve.ts`) and `--help`
 * (`src/cli/help.ts`) are computed from this table; what a row holds is `config.ts`'s `Setting`.
 */
import { LOG_LEVELS, type LogLevel } from '../log.ts';
import { CREATE_ACCESS, setting, VISIT_TRACKING, type AnySetting, type CreateAccess, type Config, type FsyncMode, type VisitTracking } from './config.ts';
import { bearerToken, boolean, databaseUrl, headerName, hosts, integer, list, nonEmpty, oneOf, optionalText, origins, publicUrl, rate } from './parsers.ts';
import { SERVER_SETTINGS } from './server-settings.ts';

const SERVICE_SETTINGS = [
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
  setting({
    prop: 'domains',
    file: 'domains',
    env: 'DOMAINS',
    flag: '--domains',
    parse: hosts,
    default: [],
    help: "extra short domains (host[:port], comma-separated) besides base_url's host, the default one",
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
    prop: 'webhookAllowPrivate',
    file: 'webhook_allow_private',
    env: 'WEBHOOK_ALLOW_PRIVATE',
    flag: '--webhook-allow-private',
    boolean: true,
    parse: boolean,
    default: false,
    help: 'let webhooks be delivered to this machine and private networks (for tests and private receivers)',
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
    prop: 'initialApiKey',
    file: undefined,
    env: 'INITIAL_API_KEY',
    flag: '--initial-api-key',
    secret: true,
    parse: optionalText,
    default: '',
    help: 'with DATABASE_URL: stored as an admin key named initial when the database has no admin key (prefer the env var)',
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
] as const;

const VISIT_AND_DOOR_SETTINGS = [
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
  setting({
    prop: 'createAccess',
    file: 'create_access',
    env: 'CREATE_ACCESS',
    flag: '--create-access',
    parse: oneOf<CreateAccess>(CREATE_ACCESS),
    default: 'open',
    help: 'open: anyone past the gate creates links; key: a create needs an API key whose role may create (on every door)',
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
    help: "serve YOURLS' API at /yourls-api.php (ShareX, WordPress plugins); its signature is an API key whose role allows the action",
  }),
] as const;

export const SETTINGS = [...SERVICE_SETTINGS, ...SERVER_SETTINGS, ...VISIT_AND_DOOR_SETTINGS] as const;

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
