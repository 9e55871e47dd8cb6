/**
 * Configuration (SPEC §2): one table of settings, each with its file key, environment variable and
 * `--kebab-case` flag, and one parser that validates a raw value. Precedence: flag > env > file >
 * default. A bad value is a `ConfigError` whose message names the setting as the user spelled it.
 *
 * The same parsers validate the options of `createShortener()`, so the library and the server
 * accept exactly the same values.
 */
import { ConfigError } from '../errors.ts';
import { LOG_LEVELS, type LogLevel } from '../log.ts';
import { closestName } from './suggest.ts';

export type FsyncMode = 'always' | 'off';

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
  /** With the gate on, `GET`/`HEAD /<code>` need no token (SPEC §5.3). */
  publicRedirects: boolean;
  dataDir: string;
  fsync: FsyncMode;
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
}

/** A value parser, carrying the values it accepts as `--help` shows them. */
interface Parser<T> {
  (raw: unknown): T;
  readonly accepts: string;
}

function parser<T>(accepts: string, parse: (raw: unknown) => T): Parser<T> {
  return Object.assign(parse, { accepts });
}

interface Setting<K extends keyof Config> {
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
  /** A rule against another setting, checked by `check()` and shown by `--help`. */
  relation?: string;
  help: string;
}

// ---- value parsers: each throws a plain message; the caller prefixes the setting's name ----

class BadValue extends Error {}

function text(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw new BadValue('must be a string');
}

function integer(min: number, max: number): Parser<number> {
  return parser(`an integer from ${min} to ${max}`, (raw) => {
    const s = text(raw).trim();
    if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
      throw new BadValue(`must be an integer from ${min} to ${max}`);
    }
    return Number(s);
  });
}

const boolean = parser('true or false (also 1/0, yes/no, on/off)', (raw) => {
  const s = text(raw).trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  throw new BadValue('must be true or false');
});

function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return parser(`one of ${values.join(', ')}`, (raw) => {
    const s = text(raw).trim().toLowerCase();
    if (!(values as readonly string[]).includes(s)) throw new BadValue(`must be one of ${values.join(', ')}`);
    return s as T;
  });
}

/** Comma-separated in env and flags; a JSON array or a comma-separated string in the file. */
const list = parser('a comma-separated list', (raw): string[] => {
  const items = Array.isArray(raw) ? raw.map(text) : text(raw).split(',');
  return items.map((s) => s.trim()).filter((s) => s.length > 0);
});

const nonEmpty = parser('any non-empty text', (raw) => {
  const s = text(raw).trim();
  if (s === '') throw new BadValue('must not be empty');
  return s;
});

/**
 * A gate token must arrive unchanged in an `Authorization` header: the HTTP parser strips spaces at
 * the ends of a header value and reads bytes as latin1, so a token with spaces, control characters
 * or non-ASCII could never match, and the gate would refuse everyone.
 */
const bearerToken = parser('printable ASCII without spaces, or empty', (raw) => {
  const s = text(raw);
  if (s !== '' && !/^[\x21-\x7e]+$/.test(s)) {
    throw new BadValue('must be printable ASCII without spaces (RFC 6750 suggests letters, digits and - . _ ~ + / =)');
  }
  return s;
});

/** An absolute http(s) URL without userinfo, query or fragment; returned without a trailing slash. */
const publicUrl = parser('an http:// or https:// URL, without a query or fragment', (raw) => parseBaseUrl(raw));

export function parseBaseUrl(raw: unknown): string {
  const s = text(raw).trim();
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new BadValue('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue('must use http:// or https://');
  if (url.username || url.password) throw new BadValue('must not contain a user name or password');
  if (url.search || url.hash || s.includes('?') || s.includes('#')) {
    throw new BadValue('must not have a query or fragment');
  }
  if (url.pathname.split('/').some((seg) => seg === '.' || seg === '..' || /%2f|%00/i.test(seg))) {
    throw new BadValue('must have a plain path');
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}

const origins = parser('comma-separated http(s) origins', (raw): string[] =>
  list(raw).map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new BadValue(`"${item}" is not an origin like https://app.example`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`"${item}" is not an http(s) origin`);
    return url.origin;
  }),
);

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export const SETTINGS = [
  setting({ prop: 'baseUrl', file: 'base_url', env: 'BASE_URL', flag: '--base-url', parse: publicUrl, default: undefined, shownDefault: 'http://localhost:<port>', help: 'public address; its path prefixes every route' }),
  setting({ prop: 'host', file: 'host', env: 'HOST', flag: '--host', parse: nonEmpty, default: '127.0.0.1', help: 'listen address' }),
  setting({ prop: 'port', file: 'port', env: 'PORT', flag: '--port', parse: integer(0, 65535), default: 3000, help: 'listen port; 0 picks a free one' }),
  setting({ prop: 'production', file: 'production', env: 'PRODUCTION', flag: '--production', boolean: true, parse: boolean, default: false, help: 'true: GET / is 404 instead of the web UI' }),
  setting({ prop: 'minShortLength', file: 'min_short_length', env: 'MIN_SHORT_LENGTH', flag: '--min-short-length', parse: integer(1, 64), default: 6, help: 'length of the first code tried' }),
  setting({ prop: 'maxShortLength', file: 'max_short_length', env: 'MAX_SHORT_LENGTH', flag: '--max-short-length', parse: integer(1, 64), default: 12, relation: 'at least MIN_SHORT_LENGTH', help: 'longest code length tried' }),
  setting({ prop: 'apiKeys', file: 'api_keys', env: 'API_KEYS', flag: '--api-keys', secret: true, parse: list, default: [], help: 'comma-separated admin keys for list/delete' }),
  setting({ prop: 'apiToken', file: undefined, env: 'API_TOKEN', flag: '--api-token', secret: true, parse: bearerToken, default: '', help: 'bearer token for the gate; empty disables it (prefer the env var: flags show in ps)' }),
  setting({ prop: 'publicRedirects', file: 'public_redirects', env: 'PUBLIC_REDIRECTS', flag: '--public-redirects', boolean: true, parse: boolean, default: false, help: 'with API_TOKEN set, anyone may open short links (GET/HEAD /<code>); the rest stays gated' }),
  setting({ prop: 'dataDir', file: 'data_dir', env: 'DATA_DIR', flag: '--data-dir', parse: nonEmpty, default: './data', help: 'directory of the append-only log urls.log' }),
  setting({ prop: 'fsync', file: 'fsync', env: 'FSYNC', flag: '--fsync', parse: oneOf<FsyncMode>(['always', 'off']), default: 'always', help: 'always: acknowledge writes only once on disk; off: never fsync' }),
  setting({ prop: 'maxUrlLength', file: 'max_url_length', env: 'MAX_URL_LENGTH', flag: '--max-url-length', parse: integer(16, 65536), default: 8192, help: 'longest accepted original URL, in characters' }),
  setting({ prop: 'logLevel', file: 'log_level', env: 'LOG_LEVEL', flag: '--log-level', parse: oneOf<LogLevel>(LOG_LEVELS), default: 'info', help: 'the least severe level logged' }),
  setting({ prop: 'mcpAllowedOrigins', file: 'mcp_allowed_origins', env: 'MCP_ALLOWED_ORIGINS', flag: '--mcp-allowed-origins', parse: origins, default: [], help: 'extra browser origins allowed to call /mcp' }),
  setting({ prop: 'maxBodyBytes', file: 'max_body_bytes', env: 'MAX_BODY_BYTES', flag: '--max-body-bytes', parse: integer(1024, 16 * 1024 * 1024), default: 64 * 1024, help: 'largest accepted request body, bytes (413 past it)' }),
  // Server limits: safe against slow or flooding clients, far above what a real client needs.
  setting({ prop: 'headersTimeoutMs', file: 'headers_timeout_ms', env: 'HEADERS_TIMEOUT_MS', flag: '--headers-timeout-ms', parse: integer(100, 600_000), default: 10_000, relation: 'at most REQUEST_TIMEOUT_MS', help: 'time a client has to send the request headers, ms (408 past it)' }),
  setting({ prop: 'requestTimeoutMs', file: 'request_timeout_ms', env: 'REQUEST_TIMEOUT_MS', flag: '--request-timeout-ms', parse: integer(100, 3_600_000), default: 30_000, help: 'time a client has to send the whole request, ms' }),
  setting({ prop: 'keepAliveTimeoutMs', file: 'keep_alive_timeout_ms', env: 'KEEP_ALIVE_TIMEOUT_MS', flag: '--keep-alive-timeout-ms', parse: integer(100, 600_000), default: 5_000, help: 'idle time before a kept-alive connection is closed, ms' }),
  setting({ prop: 'maxHeaderBytes', file: 'max_header_bytes', env: 'MAX_HEADER_BYTES', flag: '--max-header-bytes', parse: integer(1024, 1024 * 1024), default: 16 * 1024, help: 'largest request line and headers, bytes (431 past it)' }),
  setting({ prop: 'maxConnections', file: 'max_connections', env: 'MAX_CONNECTIONS', flag: '--max-connections', parse: integer(1, 1_000_000), default: 1024, help: 'open connections at most; past it the oldest one without a request in flight is closed' }),
  setting({ prop: 'shutdownTimeoutMs', file: 'shutdown_timeout_ms', env: 'SHUTDOWN_TIMEOUT_MS', flag: '--shutdown-timeout-ms', parse: integer(0, 600_000), default: 10_000, help: 'time SIGTERM gives requests in flight before closing them, ms' }),
] as const;

type AnySetting = Setting<keyof Config>;
const TABLE = SETTINGS as readonly AnySetting[];

export function defaults(): Config {
  const config = {} as Record<keyof Config, unknown>;
  for (const s of TABLE) config[s.prop] = s.default;
  return config as Config;
}

/** How the user spelled each setting that was given (env name, `--flag`, file key), for messages. */
type Spelling = Map<keyof Config, string>;

function apply(config: Config, s: AnySetting, raw: unknown, name: string, spelling?: Spelling): void {
  spelling?.set(s.prop, name);
  try {
    (config as Record<keyof Config, unknown>)[s.prop] = s.parse(raw);
  } catch (err) {
    if (!(err instanceof BadValue)) throw err;
    // Secrets are named, never echoed.
    const shown = s.secret ? '' : ` ${JSON.stringify(typeof raw === 'string' ? raw : JSON.stringify(raw))}`;
    throw new ConfigError(`invalid ${name}${shown}: ${err.message}`);
  }
}

/** Cross-setting rules, checked once every source has been applied. */
function check(config: Config, spelling: Spelling): Config {
  if (config.minShortLength > config.maxShortLength) {
    const min = spelling.get('minShortLength') ?? 'MIN_SHORT_LENGTH';
    const max = spelling.get('maxShortLength') ?? 'MAX_SHORT_LENGTH';
    throw new ConfigError(
      `invalid ${max} ${config.maxShortLength}: must be at least ${min} (${config.minShortLength})`,
    );
  }
  // node:http refuses to start otherwise: the headers are part of the request.
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    const headers = spelling.get('headersTimeoutMs') ?? 'HEADERS_TIMEOUT_MS';
    const request = spelling.get('requestTimeoutMs') ?? 'REQUEST_TIMEOUT_MS';
    throw new ConfigError(
      `invalid ${headers} ${config.headersTimeoutMs}: must be at most ${request} (${config.requestTimeoutMs})`,
    );
  }
  return config;
}

export type Command = 'run' | 'help' | 'version' | 'repair' | 'compact';

export interface Sources {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Reads the `--config` file; injectable for tests. */
  readFile: (path: string) => string;
}

export interface Resolved {
  command: Command;
  config: Config;
  /** Storage maintenance flags (`--repair`, `--compact`) and others that are not settings. */
  switches: ReadonlySet<string>;
}

/** Flags that are not settings. */
const SWITCHES = new Set(['--help', '-h', '--version', '-v', '--repair', '--compact']);

/**
 * Resolves the configuration from flags, environment and an optional JSON file.
 * Pure but for `readFile`; throws `ConfigError` with a one-line message.
 */
export function resolveConfig({ argv, env, readFile }: Sources): Resolved {
  const byFlag = new Map(TABLE.map((s) => [s.flag, s]));
  const flags: [AnySetting, string, string][] = [];
  const switches = new Set<string>();
  let configFile: string | undefined;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq !== -1 ? arg.slice(eq + 1) : undefined;
    if (SWITCHES.has(name) && inline === undefined) {
      switches.add(name === '-h' ? '--help' : name === '-v' ? '--version' : name);
      continue;
    }
    const s = byFlag.get(name);
    if (name !== '--config' && !s) {
      // A stray word may be a secret that lost its flag (`--api-token= s3cret`): never echo it.
      throw new ConfigError(name.startsWith('-') ? `unknown option ${name} (see --help)` : 'unexpected argument: options start with -- (see --help)');
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (s?.boolean && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) throw new ConfigError(`option ${name} needs a value`);
      else value = argv[++i]!;
    }
    if (s) flags.push([s, value, name]);
    else configFile = value;
  }

  if (switches.has('--help')) return { command: 'help', config: defaults(), switches };
  if (switches.has('--version')) return { command: 'version', config: defaults(), switches };

  const config = defaults();
  const spelling: Spelling = new Map();
  if (configFile !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(configFile));
    } catch (err) {
      const why = err instanceof SyntaxError ? 'not valid JSON' : ((err as NodeJS.ErrnoException).code ?? 'unreadable');
      throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: ${why}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: must hold a JSON object`);
    }
    const byFile = new Map(TABLE.filter((s) => s.file).map((s) => [s.file!, s]));
    for (const [key, raw] of Object.entries(parsed)) {
      const s = byFile.get(key);
      if (!s) throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: unknown key "${key}"`);
      apply(config, s, raw, `${key} (in ${configFile})`, spelling);
    }
  }
  for (const s of TABLE) {
    const raw = env[s.env];
    if (raw !== undefined) apply(config, s, raw, s.env, spelling);
  }
  for (const [s, raw, name] of flags) apply(config, s, raw, name, spelling);
  const command = switches.has('--repair') ? 'repair' : switches.has('--compact') ? 'compact' : 'run';
  return { command, config: check(config, spelling), switches };
}

/**
 * Library options: any subset of the settings, validated by the same parsers. A name that is not a
 * setting is a `TypeError` naming it (and the name it was probably meant to be), as an unknown flag
 * or file key stops the CLI (SPEC §2): `{ apiKey: 'k' }` must not run a service without its key.
 * `others`: the caller's own option names, offered as suggestions too (they never arrive here).
 */
export function configFromOptions(options: Readonly<Record<string, unknown>>, others: readonly string[] = []): Config {
  const props: readonly string[] = TABLE.map((s) => s.prop);
  for (const name of Object.keys(options)) {
    if (props.includes(name)) continue;
    const guess = closestName(name, [...props, ...others]);
    throw new TypeError(`unknown option "${name}"${guess === undefined ? '' : `: did you mean "${guess}"?`}`);
  }
  const config = defaults();
  const spelling: Spelling = new Map();
  for (const s of TABLE) {
    const raw = options[s.prop];
    if (raw !== undefined) apply(config, s, raw, s.prop, spelling);
  }
  return check(config, spelling);
}

/** A default as `--help` shows it. */
function shown(s: AnySetting): string {
  if (s.shownDefault !== undefined) return s.shownDefault;
  const value = s.default;
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : value.join(',');
  return value === '' ? 'empty' : String(value);
}

/** `--help`: every setting from the table, with its variable, its default and what it accepts. */
export function helpText(): string {
  const settings = TABLE.flatMap((s) => [
    `  ${`${s.flag} ${s.boolean ? '[BOOL]' : 'VALUE'}`.padEnd(34)} ${s.env}`,
    `      ${s.help}`,
    `      default: ${shown(s)}; allowed: ${s.parse.accepts}${s.relation === undefined ? '' : `, ${s.relation}`}`,
  ]);
  const other = (flag: string, what: string): string => `  ${flag.padEnd(34)} ${what}`;
  return [
    'Usage: url-shortener [options]',
    '',
    'Every option also reads the environment variable named beside it; a JSON file given with',
    '--config may use the snake_case names. Precedence: option > environment > file > default.',
    '',
    ...settings,
    '',
    other('--config FILE', 'JSON settings file'),
    other('--repair', 'keep every intact entry of a damaged log, move the damaged file aside, report, exit'),
    other('--compact', 'rewrite the log to one entry per live link, report, exit'),
    other('--help, --version', 'print this, or the version, and exit'),
  ].join('\n');
}
