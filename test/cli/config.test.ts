/**
 * Configuration (docs/operations.md, configuration): the pure resolver (defaults, precedence, flag
 * forms, the JSON file, every configuration error) and the CLI wrapper over a real child process
 * (exit 2 with one line, --help, --version, the start-up log line, SIGTERM).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createShortener } from '../../src/app.ts';
import { helpText } from '../../src/cli/help.ts';
import type { Config } from '../../src/config/config.ts';
import { configFromOptions, resolveConfig, type Resolved } from '../../src/config/resolve.ts';
import { SETTINGS } from '../../src/config/settings.ts';
import { ConfigError } from '../../src/errors.ts';
import { request, tempDir } from '../support/helpers.ts';
import { serverBundle } from '../support/server-entry.ts';

const ROOT = new URL('../..', import.meta.url);
const CONFIG_FILE = 'settings.json';

/** `resolveConfig` with an in-memory file system: `files` maps a path to its text. */
function resolve(argv: readonly string[], env: Record<string, string> = {}, files: Record<string, string> = {}): Resolved {
  return resolveConfig({
    argv,
    env,
    readFile(path) {
      const text = files[path];
      if (text === undefined) {
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
      }
      return text;
    },
  });
}

/** `resolve` with `--config settings.json` holding `file` as JSON. */
function withFile(file: Record<string, unknown>, argv: readonly string[] = [], env: Record<string, string> = {}): Config {
  return resolve(['--config', CONFIG_FILE, ...argv], env, { [CONFIG_FILE]: JSON.stringify(file) }).config;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a ConfigError, nothing was thrown');
}

// The settings table of the README (configuration), as a reader of it would write it.
const DOCUMENTED_DEFAULTS: Config = {
  baseUrl: undefined,
  domains: [],
  host: '127.0.0.1',
  port: 3000,
  production: false,
  minShortLength: 6,
  maxShortLength: 12,
  apiKeys: [],
  apiToken: '',
  publicRedirects: false,
  webhookAllowPrivate: false,
  dataDir: './data',
  fsync: 'always',
  databaseUrl: '',
  dbPoolSize: 10,
  maxUrlLength: 8192,
  logLevel: 'info',
  mcpAllowedOrigins: [],
  shutdownTimeoutMs: 10_000,
  workers: 1,
  // The body limit and the server limits (README, configuration).
  maxBodyBytes: 65536,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderBytes: 16_384,
  maxConnections: 1024,
  // Visits (README, configuration).
  visitTracking: 'events',
  visitRetentionDays: 0,
  trustProxy: 0,
  geoipDb: '',
  geoipHeader: '',
  // Abuse controls (README, configuration).
  createRateLimit: '',
  createAccess: 'open',
  initialApiKey: '',
  // The peers' APIs (README, configuration).
  shlinkApi: false,
  yourlsApi: false,
};

const DOCUMENTED_ENV_NAMES = [
  'BASE_URL',
  'HOST',
  'PORT',
  'PRODUCTION',
  'MIN_SHORT_LENGTH',
  'MAX_SHORT_LENGTH',
  'API_KEYS',
  'API_TOKEN',
  'PUBLIC_REDIRECTS',
  'DATA_DIR',
  'FSYNC',
  'DATABASE_URL',
  'DB_POOL_SIZE',
  'MAX_URL_LENGTH',
  'LOG_LEVEL',
  'MCP_ALLOWED_ORIGINS',
  'SHUTDOWN_TIMEOUT_MS',
  'MAX_BODY_BYTES',
  'HEADERS_TIMEOUT_MS',
  'REQUEST_TIMEOUT_MS',
  'KEEP_ALIVE_TIMEOUT_MS',
  'MAX_HEADER_BYTES',
  'MAX_CONNECTIONS',
  'VISIT_TRACKING',
  'VISIT_RETENTION_DAYS',
  'TRUST_PROXY',
  'GEOIP_DB',
  'GEOIP_HEADER',
  'CREATE_RATE_LIMIT',
  'SHLINK_API',
  'YOURLS_API',
];

describe('defaults', () => {
  test("no flags, no env, no file: exactly the README's table", () => {
    const resolved = resolve([]);
    assert.equal(resolved.command, 'run');
    assert.deepEqual(resolved.config, DOCUMENTED_DEFAULTS);
    assert.equal(resolved.switches.size, 0);
  });

  test('an undefined base_url means http://localhost:<port>', async (t) => {
    const dir = tempDir();
    const shortener = createShortener({ port: 4321, dataDir: dir, fsync: 'off', logLevel: 'silent' });
    t.after(async () => {
      await shortener.close();
      rmSync(dir, { recursive: true, force: true });
    });
    assert.equal(shortener.config.baseUrl, 'http://localhost:4321');
    assert.equal(shortener.service.shortUrl('abc123'), 'http://localhost:4321/abc123');
  });

  test('--help and --version are commands, not settings', () => {
    assert.equal(resolve(['--help']).command, 'help');
    assert.equal(resolve(['-h']).command, 'help');
    assert.equal(resolve(['--version']).command, 'version');
    assert.equal(resolve(['-v']).command, 'version');
    assert.equal(resolve(['--port', '1']).command, 'run');
  });
});

describe('--help, generated from the settings table', () => {
  /** The three lines of one setting: flag and variable, what it does, default and allowed values. */
  function block(flag: string): [string, string, string] {
    const lines = helpText().split('\n');
    const at = lines.findIndex((l) => l.startsWith(`  ${flag} `));
    assert.notEqual(at, -1, `--help lists ${flag}`);
    return [lines[at]!, lines[at + 1]!, lines[at + 2]!];
  }

  test('every setting of the table appears once, with its variable, a default and its allowed values', () => {
    const text = helpText();
    for (const s of SETTINGS) {
      assert.equal(text.split(`\n  ${s.flag} `).length, 2, `${s.flag} once`);
      const [head, help, values] = block(s.flag);
      assert.match(head, new RegExp(`^  ${s.flag} (VALUE|\\[BOOL\\]) +${s.env}$`), s.flag);
      assert.equal(help, `      ${s.help}`, s.flag);
      assert.match(values, /^ {6}default: \S.*; allowed: \S/, s.flag);
    }
  });

  // The README's settings table, written out by hand: default and allowed values.
  const EXPECTED: Record<string, [flag: string, defaultShown: string, allowed: string]> = {
    BASE_URL: ['--base-url VALUE', 'http://localhost:<port>', 'an http:// or https:// URL, without a query or fragment'],
    HOST: ['--host VALUE', '127.0.0.1', 'any non-empty text'],
    PORT: ['--port VALUE', '3000', 'an integer from 0 to 65535'],
    PRODUCTION: ['--production [BOOL]', 'false', 'true or false (also 1/0, yes/no, on/off)'],
    MIN_SHORT_LENGTH: ['--min-short-length VALUE', '6', 'an integer from 1 to 64'],
    MAX_SHORT_LENGTH: ['--max-short-length VALUE', '12', 'an integer from 1 to 64, at least MIN_SHORT_LENGTH'],
    API_KEYS: ['--api-keys VALUE', 'empty', 'a comma-separated list'],
    API_TOKEN: ['--api-token VALUE', 'empty', 'printable ASCII without spaces, or empty'],
    PUBLIC_REDIRECTS: ['--public-redirects [BOOL]', 'false', 'true or false (also 1/0, yes/no, on/off)'],
    DATA_DIR: ['--data-dir VALUE', './data', 'any non-empty text'],
    FSYNC: ['--fsync VALUE', 'always', 'one of always, off'],
    MAX_URL_LENGTH: ['--max-url-length VALUE', '8192', 'an integer from 16 to 65536'],
    LOG_LEVEL: ['--log-level VALUE', 'info', 'one of debug, info, warn, error, silent'],
    MCP_ALLOWED_ORIGINS: ['--mcp-allowed-origins VALUE', 'empty', 'comma-separated http(s) origins'],
    MAX_BODY_BYTES: ['--max-body-bytes VALUE', '65536', 'an integer from 1024 to 16777216'],
    HEADERS_TIMEOUT_MS: ['--headers-timeout-ms VALUE', '10000', 'an integer from 100 to 600000, at most REQUEST_TIMEOUT_MS'],
    REQUEST_TIMEOUT_MS: ['--request-timeout-ms VALUE', '30000', 'an integer from 100 to 3600000'],
    KEEP_ALIVE_TIMEOUT_MS: ['--keep-alive-timeout-ms VALUE', '5000', 'an integer from 100 to 600000'],
    MAX_HEADER_BYTES: ['--max-header-bytes VALUE', '16384', 'an integer from 1024 to 1048576'],
    MAX_CONNECTIONS: ['--max-connections VALUE', '1024', 'an integer from 1 to 1000000'],
    VISIT_TRACKING: ['--visit-tracking VALUE', 'events', 'one of events, counts'],
    VISIT_RETENTION_DAYS: ['--visit-retention-days VALUE', '0', 'an integer from 0 to 36500'],
    TRUST_PROXY: ['--trust-proxy VALUE', '0', 'an integer from 0 to 10'],
    GEOIP_DB: ['--geoip-db VALUE', 'empty', 'any text, or empty'],
    GEOIP_HEADER: ['--geoip-header VALUE', 'empty', "an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), or empty"],
    CREATE_RATE_LIMIT: ['--create-rate-limit VALUE', 'empty', 'N/s, N/min or N/h with N from 1 to 1000000 (e.g. 60/min), or empty (off)'],
    SHLINK_API: ['--shlink-api [BOOL]', 'false', 'true or false (also 1/0, yes/no, on/off)'],
    YOURLS_API: ['--yourls-api [BOOL]', 'false', 'true or false (also 1/0, yes/no, on/off)'],
  };
  for (const [env, [flag, shown, allowed]] of Object.entries(EXPECTED)) {
    test(`${env}: ${flag}, default ${shown}, allowed ${allowed}`, () => {
      const [head, , values] = block(flag.split(' ')[0]!);
      assert.equal(head, `  ${flag.padEnd(34)} ${env}`);
      assert.equal(values, `      default: ${shown}; allowed: ${allowed}`);
    });
  }

  test('the allowed values shown are the ones the parser enforces, at both ends', () => {
    for (const s of SETTINGS) {
      const m = /an integer from (\d+) to (\d+)/.exec(s.parse.accepts);
      if (!m) continue;
      const [min, max] = [Number(m[1]), Number(m[2])];
      assert.equal(s.parse(String(min)), min, s.env);
      assert.equal(s.parse(String(max)), max, s.env);
      assert.throws(() => s.parse(String(max + 1)), s.env);
      if (min > 0) assert.throws(() => s.parse(String(min - 1)), s.env);
    }
  });
});

describe('precedence: flag > env > file > default', () => {
  interface Layered {
    fileKey: string;
    fileValue: unknown;
    env: string;
    envValue: string;
    flag: string;
    flagValue: string;
    read: (c: Config) => unknown;
    expected: { default: unknown; file: unknown; env: unknown; flag: unknown };
  }
  const table: Layered[] = [
    {
      fileKey: 'port',
      fileValue: 4001,
      env: 'PORT',
      envValue: '4002',
      flag: '--port',
      flagValue: '4003',
      read: (c) => c.port,
      expected: { default: 3000, file: 4001, env: 4002, flag: 4003 },
    },
    {
      fileKey: 'log_level',
      fileValue: 'warn',
      env: 'LOG_LEVEL',
      envValue: 'error',
      flag: '--log-level',
      flagValue: 'debug',
      read: (c) => c.logLevel,
      expected: { default: 'info', file: 'warn', env: 'error', flag: 'debug' },
    },
    {
      fileKey: 'data_dir',
      fileValue: './from-file',
      env: 'DATA_DIR',
      envValue: './from-env',
      flag: '--data-dir',
      flagValue: './from-flag',
      read: (c) => c.dataDir,
      expected: { default: './data', file: './from-file', env: './from-env', flag: './from-flag' },
    },
    {
      fileKey: 'min_short_length',
      fileValue: 7,
      env: 'MIN_SHORT_LENGTH',
      envValue: '8',
      flag: '--min-short-length',
      flagValue: '9',
      read: (c) => c.minShortLength,
      expected: { default: 6, file: 7, env: 8, flag: 9 },
    },
    {
      fileKey: 'base_url',
      fileValue: 'https://file.example',
      env: 'BASE_URL',
      envValue: 'https://env.example',
      flag: '--base-url',
      flagValue: 'https://flag.example',
      read: (c) => c.baseUrl,
      expected: { default: undefined, file: 'https://file.example', env: 'https://env.example', flag: 'https://flag.example' },
    },
    {
      fileKey: 'fsync',
      fileValue: 'off',
      env: 'FSYNC',
      envValue: 'always',
      flag: '--fsync',
      flagValue: 'off',
      read: (c) => c.fsync,
      expected: { default: 'always', file: 'off', env: 'always', flag: 'off' },
    },
  ];

  for (const row of table) {
    test(`${row.fileKey}: each source overrides the ones below it`, () => {
      const file = { [row.fileKey]: row.fileValue };
      const env = { [row.env]: row.envValue };
      const flags = [row.flag, row.flagValue];
      assert.equal(row.read(resolve([]).config), row.expected.default);
      assert.equal(row.read(withFile(file)), row.expected.file);
      assert.equal(row.read(withFile(file, [], env)), row.expected.env);
      assert.equal(row.read(withFile(file, flags, env)), row.expected.flag);
      // Without a file the env still loses to the flag.
      assert.equal(row.read(resolve(flags, env).config), row.expected.flag);
    });
  }

  test('all four sources at once, each winning a different setting', () => {
    const config = withFile({ port: 4001, host: '0.0.0.0', data_dir: './file-dir', log_level: 'warn' }, ['--port', '4003'], {
      PORT: '4002',
      HOST: '10.0.0.1',
      LOG_LEVEL: 'error',
    });
    assert.equal(config.port, 4003); // flag
    assert.equal(config.host, '10.0.0.1'); // env
    assert.equal(config.logLevel, 'error'); // env over file
    assert.equal(config.dataDir, './file-dir'); // file
    assert.equal(config.fsync, 'always'); // default
    assert.equal(config.maxUrlLength, 8192); // default
  });

  test('--config may come after the flags it loses to', () => {
    const config = resolve(['--port', '4003', '--config', CONFIG_FILE], {}, { [CONFIG_FILE]: '{"port": 4001, "host": "::1"}' }).config;
    assert.equal(config.port, 4003);
    assert.equal(config.host, '::1');
  });
});

describe('flag forms', () => {
  test('--flag value and --flag=value give the same config', () => {
    const spaced = resolve(['--port', '8080', '--host', '0.0.0.0', '--api-keys', 'k1,k2', '--log-level', 'warn']).config;
    const joined = resolve(['--port=8080', '--host=0.0.0.0', '--api-keys=k1,k2', '--log-level=warn']).config;
    assert.deepEqual(spaced, joined);
    assert.equal(spaced.port, 8080);
    assert.equal(spaced.host, '0.0.0.0');
    assert.deepEqual(spaced.apiKeys, ['k1', 'k2']);
    assert.equal(spaced.logLevel, 'warn');
  });

  test('--flag=value keeps every = after the first in the value', () => {
    assert.equal(resolve(['--data-dir=./a=b']).config.dataDir, './a=b');
  });

  test('base URL: trailing slash dropped, path kept', () => {
    assert.equal(resolve(['--base-url=https://s.example/x/']).config.baseUrl, 'https://s.example/x');
    assert.equal(resolve(['--base-url', 'http://s.example']).config.baseUrl, 'http://s.example');
  });

  const production: [readonly string[], Record<string, string>, boolean][] = [
    [['--production'], {}, true],
    [['--production', '--port', '1'], {}, true],
    [['--port', '1', '--production'], {}, true],
    [['--production=false'], {}, false],
    [['--production', 'false'], {}, false],
    [['--production=yes'], {}, true],
    [['--production=false'], { PRODUCTION: 'true' }, false],
    [['--production'], { PRODUCTION: 'false' }, true],
    [[], { PRODUCTION: 'true' }, true],
    [[], { PRODUCTION: '0' }, false],
  ];
  for (const [argv, env, expected] of production) {
    test(`production: ${JSON.stringify(argv)} with env ${JSON.stringify(env)} → ${expected}`, () => {
      assert.equal(resolve(argv, env).config.production, expected);
    });
  }

  test('bare --production does not swallow the next flag', () => {
    const config = resolve(['--production', '--port', '1234']).config;
    assert.equal(config.production, true);
    assert.equal(config.port, 1234);
  });

  test('create_access: open by default; key from env, flag, file key and library option; anything else refused', () => {
    assert.equal(resolve([]).config.createAccess, 'open');
    assert.equal(resolve([], { CREATE_ACCESS: 'key' }).config.createAccess, 'key');
    assert.equal(resolve(['--create-access', 'key']).config.createAccess, 'key');
    assert.equal(withFile({ create_access: 'key' }).createAccess, 'key');
    assert.equal(configFromOptions({ createAccess: 'key' }).createAccess, 'key');
    assert.match(configError(() => resolve([], { CREATE_ACCESS: 'closed' })).message, /^invalid CREATE_ACCESS "closed"/);
  });

  test('initial_api_key: from the environment or the flag only, never from a file', () => {
    assert.equal(resolve([], { INITIAL_API_KEY: 'k-from-env' }).config.initialApiKey, 'k-from-env');
    assert.match(configError(() => withFile({ initial_api_key: 'k' })).message, /initial_api_key/);
  });

  test('yourls_api: false by default; env, bare flag, file key and library option', () => {
    assert.equal(resolve([]).config.yourlsApi, false);
    assert.equal(resolve([], { YOURLS_API: 'true' }).config.yourlsApi, true);
    assert.equal(resolve(['--yourls-api', '--port', '1']).config.yourlsApi, true);
    assert.equal(resolve(['--yourls-api=false'], { YOURLS_API: 'true' }).config.yourlsApi, false);
    assert.equal(withFile({ yourls_api: true }).yourlsApi, true);
    assert.equal(configFromOptions({ yourlsApi: true }).yourlsApi, true);
    assert.match(configError(() => resolve([], { YOURLS_API: 'maybe' })).message, /^invalid YOURLS_API "maybe": must be true or false$/);
  });

  test('public_redirects: false by default; env, bare flag, flag value, file key and library option', () => {
    const rows: [argv: string[], env: Record<string, string>, file: Record<string, unknown> | undefined, expected: boolean][] = [
      [[], {}, undefined, false],
      [[], { PUBLIC_REDIRECTS: 'true' }, undefined, true],
      [[], { PUBLIC_REDIRECTS: 'ON' }, undefined, true],
      [[], { PUBLIC_REDIRECTS: '0' }, undefined, false],
      [[], { PUBLIC_REDIRECTS: '' }, undefined, false],
      [['--public-redirects'], {}, undefined, true],
      [['--public-redirects', '--port', '1'], {}, undefined, true],
      [['--public-redirects=false'], { PUBLIC_REDIRECTS: 'true' }, undefined, false],
      [['--public-redirects', 'no'], {}, undefined, false],
      [[], {}, { public_redirects: true }, true],
      [[], { PUBLIC_REDIRECTS: 'false' }, { public_redirects: true }, false],
      [[], {}, { public_redirects: 'yes' }, true],
    ];
    for (const [argv, env, file, expected] of rows) {
      const config = file ? withFile(file, argv, env) : resolve(argv, env).config;
      assert.equal(config.publicRedirects, expected, `${JSON.stringify(argv)} ${JSON.stringify(env)} ${JSON.stringify(file)}`);
    }
    assert.match(configError(() => resolve([], { PUBLIC_REDIRECTS: 'maybe' })).message, /^invalid PUBLIC_REDIRECTS "maybe": must be true or false$/);
    assert.match(configError(() => resolve(['--public-redirects=sometimes'])).message, /^invalid --public-redirects "sometimes": must be true or false$/);
    assert.match(configError(() => withFile({ public_redirects: 'x' })).message, /^invalid public_redirects \(in settings\.json\) "x": must be true or false$/);
  });

  test('list settings from env and flags are comma-separated and trimmed', () => {
    assert.deepEqual(resolve([], { API_KEYS: ' a , b,,c ' }).config.apiKeys, ['a', 'b', 'c']);
    assert.deepEqual(resolve(['--mcp-allowed-origins', 'https://app.example/path, http://localhost:5173']).config.mcpAllowedOrigins, [
      'https://app.example',
      'http://localhost:5173',
    ]);
  });
});

describe('config file', () => {
  test("every snake_case key of the README's table", () => {
    const config = withFile({
      base_url: 'https://s.example/x',
      domains: ['go.example', 'Short.Example:8443'],
      host: '0.0.0.0',
      port: 8081,
      production: true,
      min_short_length: 4,
      max_short_length: 20,
      api_keys: ['k1', 'k2'],
      public_redirects: true,
      webhook_allow_private: true,
      data_dir: '/srv/shortener',
      fsync: 'off',
      database_url: 'postgres://app@db.example:5433/links',
      db_pool_size: 25,
      max_url_length: 2048,
      log_level: 'error',
      mcp_allowed_origins: ['https://app.example'],
      max_body_bytes: 4096,
      headers_timeout_ms: 2000,
      request_timeout_ms: 4000,
      keep_alive_timeout_ms: 1500,
      max_header_bytes: 8192,
      max_connections: 50,
      shutdown_timeout_ms: 0,
      workers: 4,
      visit_tracking: 'counts',
      visit_retention_days: 400,
      trust_proxy: 2,
      geoip_db: '/srv/geo/country.mmdb',
      geoip_header: 'CF-IPCountry',
      create_rate_limit: ' 30 / MIN ',
      create_access: 'key',
      shlink_api: true,
      yourls_api: true,
    });
    assert.deepEqual(config, {
      baseUrl: 'https://s.example/x',
      // Lower case, as a Host header is compared.
      domains: ['go.example', 'short.example:8443'],
      host: '0.0.0.0',
      port: 8081,
      production: true,
      minShortLength: 4,
      maxShortLength: 20,
      apiKeys: ['k1', 'k2'],
      apiToken: '',
      publicRedirects: true,
      webhookAllowPrivate: true,
      dataDir: '/srv/shortener',
      fsync: 'off',
      databaseUrl: 'postgres://app@db.example:5433/links',
      dbPoolSize: 25,
      maxUrlLength: 2048,
      logLevel: 'error',
      mcpAllowedOrigins: ['https://app.example'],
      maxBodyBytes: 4096,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 4000,
      keepAliveTimeoutMs: 1500,
      maxHeaderBytes: 8192,
      maxConnections: 50,
      shutdownTimeoutMs: 0,
      workers: 4,
      visitTracking: 'counts',
      visitRetentionDays: 400,
      trustProxy: 2,
      geoipDb: '/srv/geo/country.mmdb',
      // Lower case: node:http's key in req.headers.
      geoipHeader: 'cf-ipcountry',
      // One spelling, whatever the file wrote.
      createRateLimit: '30/min',
      createAccess: 'key',
      initialApiKey: '',
      shlinkApi: true,
      yourlsApi: true,
    });
  });

  test('api_keys as an array or as a comma-separated string', () => {
    assert.deepEqual(withFile({ api_keys: ['a', 'b'] }).apiKeys, ['a', 'b']);
    assert.deepEqual(withFile({ api_keys: 'a, b,' }).apiKeys, ['a', 'b']);
    assert.deepEqual(withFile({ api_keys: 'solo' }).apiKeys, ['solo']);
    assert.deepEqual(withFile({ api_keys: [] }).apiKeys, []);
  });

  test('numbers and booleans may be JSON values or strings', () => {
    assert.equal(withFile({ port: '8082' }).port, 8082);
    assert.equal(withFile({ production: 'true' }).production, true);
    assert.equal(withFile({ production: false }).production, false);
  });

  test('the file is read through the injected readFile, by the path given', () => {
    const read: string[] = [];
    resolveConfig({ argv: ['--config=conf/a.json'], env: {}, readFile: (p) => (read.push(p), '{}') });
    assert.deepEqual(read, ['conf/a.json']);
  });
});

describe('configuration errors', () => {
  interface Bad {
    name: string;
    argv?: readonly string[];
    env?: Record<string, string>;
    /** The text of `settings.json`; `--config settings.json` is added to argv. */
    file?: string;
    /** Each must appear in the message: the setting as the user spelled it. */
    names: readonly string[];
  }
  const json = (value: unknown): string => JSON.stringify(value);
  const table: Bad[] = [
    { name: 'min > max (env)', env: { MIN_SHORT_LENGTH: '9', MAX_SHORT_LENGTH: '3' }, names: ['MIN_SHORT_LENGTH', 'MAX_SHORT_LENGTH'] },
    { name: 'min > max (flags)', argv: ['--min-short-length', '9', '--max-short-length', '3'], names: ['--min-short-length', '--max-short-length'] },
    { name: 'min > max (file)', file: json({ min_short_length: 9, max_short_length: 3 }), names: ['min_short_length', 'max_short_length'] },
    { name: 'min above the default max (flag)', argv: ['--min-short-length=13'], names: ['--min-short-length'] },
    { name: 'non-numeric port (env)', env: { PORT: 'abc' }, names: ['PORT'] },
    { name: 'non-numeric port (flag)', argv: ['--port', 'eighty'], names: ['--port'] },
    { name: 'non-numeric port (file)', file: json({ port: 'abc' }), names: ['port'] },
    { name: 'port 70000', argv: ['--port=70000'], names: ['--port'] },
    { name: 'negative port', env: { PORT: '-1' }, names: ['PORT'] },
    { name: 'base_url not http(s)', env: { BASE_URL: 'ftp://x' }, names: ['BASE_URL'] },
    { name: 'base_url not a URL', argv: ['--base-url', 'localhost:3000'], names: ['--base-url'] },
    { name: 'base_url with a query (flag)', argv: ['--base-url', 'https://s.example/x?y=1'], names: ['--base-url'] },
    { name: 'base_url with a query (file)', file: json({ base_url: 'https://s.example/?' }), names: ['base_url'] },
    { name: 'base_url with a fragment', env: { BASE_URL: 'https://s.example/#top' }, names: ['BASE_URL'] },
    { name: 'unknown fsync value', env: { FSYNC: 'sometimes' }, names: ['FSYNC'] },
    { name: 'bad log level', argv: ['--log-level', 'verbose'], names: ['--log-level'] },
    { name: 'bad log level (file)', file: json({ log_level: 'trace' }), names: ['log_level'] },
    { name: 'bad production value', env: { PRODUCTION: 'maybe' }, names: ['PRODUCTION'] },
    { name: 'bad production value (flag)', argv: ['--production=maybe'], names: ['--production'] },
    { name: 'max_url_length 0', file: json({ max_url_length: 0 }), names: ['max_url_length'] },
    { name: 'max_url_length not a number', env: { MAX_URL_LENGTH: '8k' }, names: ['MAX_URL_LENGTH'] },
    { name: 'bad mcp origin', env: { MCP_ALLOWED_ORIGINS: 'https://ok.example,not-an-origin' }, names: ['MCP_ALLOWED_ORIGINS'] },
    { name: 'non-http mcp origin', argv: ['--mcp-allowed-origins=ftp://files.example'], names: ['--mcp-allowed-origins'] },
    { name: 'empty data dir', env: { DATA_DIR: ' ' }, names: ['DATA_DIR'] },
    { name: 'unknown flag', argv: ['--colour', 'red'], names: ['--colour'] },
    { name: 'unknown flag with =', argv: ['--colour=red'], names: ['--colour'] },
    { name: 'flag without value', argv: ['--data-dir'], names: ['--data-dir'] },
    { name: '--config without value', argv: ['--config'], names: ['--config'] },
    { name: 'unknown file key', file: json({ port: 3001, colour: 'red' }), names: ['colour'] },
    { name: 'camelCase file key', file: json({ minShortLength: 4 }), names: ['minShortLength'] },
    { name: 'api_token in the file', file: json({ api_token: 't' }), names: ['api_token', 'API_TOKEN environment variable'] },
    { name: 'file not JSON', file: '{ port: 3000 ', names: ['--config', CONFIG_FILE] },
    { name: 'file not an object', file: '[1, 2]', names: ['--config', CONFIG_FILE] },
    { name: 'max_body_bytes below 1 KiB', env: { MAX_BODY_BYTES: '1023' }, names: ['MAX_BODY_BYTES'] },
    { name: 'max_body_bytes above 16 MiB', argv: ['--max-body-bytes', String(16 * 1024 * 1024 + 1)], names: ['--max-body-bytes'] },
    { name: 'headers timeout 0', env: { HEADERS_TIMEOUT_MS: '0' }, names: ['HEADERS_TIMEOUT_MS'] },
    { name: 'request timeout in seconds', argv: ['--request-timeout-ms=30s'], names: ['--request-timeout-ms'] },
    { name: 'keep-alive timeout 0 (would never close idle connections)', file: json({ keep_alive_timeout_ms: 0 }), names: ['keep_alive_timeout_ms'] },
    { name: 'max header bytes below 1 KiB', env: { MAX_HEADER_BYTES: '512' }, names: ['MAX_HEADER_BYTES'] },
    { name: 'max connections 0', env: { MAX_CONNECTIONS: '0' }, names: ['MAX_CONNECTIONS'] },
    { name: 'shutdown timeout above 10 min', env: { SHUTDOWN_TIMEOUT_MS: '600001' }, names: ['SHUTDOWN_TIMEOUT_MS'] },
    { name: 'shutdown timeout negative', argv: ['--shutdown-timeout-ms=-1'], names: ['--shutdown-timeout-ms'] },
    {
      name: 'headers timeout above the request timeout (env)',
      env: { HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '4000' },
      names: ['HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS'],
    },
    { name: 'unknown visit_tracking (env)', env: { VISIT_TRACKING: 'all' }, names: ['VISIT_TRACKING'] },
    { name: 'unknown visit_tracking (file)', file: json({ visit_tracking: 'none' }), names: ['visit_tracking'] },
    { name: 'visit retention above 36500 days', argv: ['--visit-retention-days', '36501'], names: ['--visit-retention-days'] },
    { name: 'visit retention negative', env: { VISIT_RETENTION_DAYS: '-1' }, names: ['VISIT_RETENTION_DAYS'] },
    { name: 'visit retention in weeks', file: json({ visit_retention_days: '4w' }), names: ['visit_retention_days'] },
    { name: 'trust_proxy above 10', env: { TRUST_PROXY: '11' }, names: ['TRUST_PROXY'] },
    { name: 'trust_proxy true', argv: ['--trust-proxy=true'], names: ['--trust-proxy'] },
    { name: 'geoip_header with a space', env: { GEOIP_HEADER: 'CF IPCountry' }, names: ['GEOIP_HEADER'] },
    { name: 'create_rate_limit without a unit', env: { CREATE_RATE_LIMIT: '60' }, names: ['CREATE_RATE_LIMIT'] },
    { name: 'create_rate_limit per day', env: { CREATE_RATE_LIMIT: '60/d' }, names: ['CREATE_RATE_LIMIT'] },
    { name: 'create_rate_limit of 0', env: { CREATE_RATE_LIMIT: '0/min' }, names: ['CREATE_RATE_LIMIT'] },
    { name: 'geoip_header with a colon (file)', file: json({ geoip_header: 'CF-IPCountry:' }), names: ['geoip_header'] },
    {
      name: 'headers timeout above the default request timeout (flag)',
      argv: ['--headers-timeout-ms', '40000'],
      names: ['--headers-timeout-ms', 'REQUEST_TIMEOUT_MS'],
    },
  ];

  for (const row of table) {
    test(`${row.name}: ConfigError naming ${row.names.join(', ')}`, () => {
      const argv = row.file === undefined ? (row.argv ?? []) : ['--config', CONFIG_FILE, ...(row.argv ?? [])];
      const files = row.file === undefined ? {} : { [CONFIG_FILE]: row.file };
      const err = configError(() => resolve(argv, row.env ?? {}, files));
      for (const name of row.names) assert.ok(err.message.includes(name), `"${err.message}" should name ${name}`);
      assert.doesNotMatch(err.message, /\n/, 'one line');
    });
  }

  test('file missing: ConfigError naming --config and the path', (t) => {
    const dir = tempDir(t);
    const path = join(dir, 'missing.json');
    const err = configError(() => resolveConfig({ argv: ['--config', path], env: {}, readFile: (p) => readFileSync(p, 'utf8') }));
    assert.ok(err.message.includes('--config'), err.message);
    assert.ok(err.message.includes(path), err.message);
    assert.match(err.message, /ENOENT/);
  });

  test('an invalid env value fails even when flags set other settings', () => {
    const err = configError(() => resolve(['--port', '1'], { FSYNC: 'never' }));
    assert.ok(err.message.includes('FSYNC'), err.message);
  });
});

test('API_TOKEN: printable ASCII without spaces; empty disables the gate', () => {
  assert.equal(resolve([], { API_TOKEN: '' }).config.apiToken, '');
  for (const token of ['t', 'abc-DEF_123.~+/==', '!#$%&*()<>@[]{}|^`\'";:?,']) {
    assert.equal(resolve([], { API_TOKEN: token }).config.apiToken, token);
  }
  assert.match(configError(() => resolve([], { API_TOKEN: 'a b' })).message, /^invalid API_TOKEN: must be printable ASCII without spaces/);
});

test('api_token in the file: the error says where the token goes, not "unknown key"', () => {
  // A newcomer who writes the token into the settings file has the right name in the wrong place.
  const message = configError(() => withFile({ port: 3001, api_token: 't' })).message;
  assert.equal(message, `invalid --config "${CONFIG_FILE}": "api_token" is never read from a file: set the API_TOKEN environment variable`);
  assert.match(configError(() => withFile({ api_tokens: 't' })).message, /: unknown key "api_tokens"$/, 'a name that is no setting stays unknown');
});

describe('secrets are never echoed in errors', () => {
  const SECRETS = ['S3CRET-TOKEN-value', 'S3CRET-KEY-value'];
  const cases: [string, () => unknown, string][] = [
    ['api_keys as an object in the file', () => withFile({ api_keys: { primary: 'S3CRET-KEY-value' } }), 'api_keys'],
    ['api_keys with a non-string item', () => withFile({ api_keys: ['S3CRET-KEY-value', { nested: 'S3CRET-TOKEN-value' }] }), 'api_keys'],
    ['api_token in the file (secrets have no file key)', () => withFile({ api_token: 'S3CRET-TOKEN-value' }), 'api_token'],
    [
      'another setting fails while the secrets are set by env',
      () => resolve([], { API_TOKEN: 'S3CRET-TOKEN-value', API_KEYS: 'S3CRET-KEY-value', PORT: 'x' }),
      'PORT',
    ],
    [
      'another setting fails while the secrets are set by flags',
      () => resolve(['--api-token=S3CRET-TOKEN-value', '--api-keys', 'S3CRET-KEY-value', '--min-short-length', '9', '--max-short-length', '3']),
      'SHORT',
    ],
    ['a secret flag without its value', () => resolve(['--api-keys=S3CRET-KEY-value', '--api-token']), '--api-token'],
    // regression: `--api-token= s3cret` (a stray space) left the secret as a stray word, echoed as an unknown option.
    ['a secret that lost its flag to a stray space', () => resolve(['--api-token=', 'S3CRET-TOKEN-value']), 'unexpected argument'],
    // A token that cannot arrive unchanged in a header would lock everyone out: refused at start-up.
    ['a token with a space', () => resolve([], { API_TOKEN: 'S3CRET-TOKEN-value more' }), 'API_TOKEN'],
    ['a token with a trailing space', () => resolve(['--api-token', 'S3CRET-TOKEN-value ']), '--api-token'],
    ['a token with a tab', () => resolve([], { API_TOKEN: '\tS3CRET-TOKEN-value' }), 'API_TOKEN'],
    ['a token with a non-ASCII letter', () => resolve([], { API_TOKEN: 'S3CRET-TOKEN-valu\u00e9' }), 'API_TOKEN'],
    ['a token that is only spaces', () => resolve([], { API_TOKEN: '   ' }), 'API_TOKEN'],
  ];
  for (const [name, fn, named] of cases) {
    test(name, () => {
      const err = configError(fn);
      assert.ok(err.message.toUpperCase().includes(named.toUpperCase()), `"${err.message}" should name ${named}`);
      for (const secret of SECRETS) assert.ok(!err.message.includes(secret), `"${err.message}" echoes a secret`);
      assert.doesNotMatch(err.message, /S3CRET/);
    });
  }
});

// ---- the CLI, over a real child process ----

interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function cli(args: readonly string[], env: Record<string, string>): Cli {
  const childEnv: Record<string, string> = { PATH: process.env['PATH'] ?? '' };
  // Keep coverage of the child when the suite runs under c8.
  const coverage = process.env['NODE_V8_COVERAGE'];
  if (coverage !== undefined) childEnv['NODE_V8_COVERAGE'] = coverage;
  const child = spawn(process.execPath, [serverBundle(), ...args], {
    cwd: ROOT,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** The child's exit; a child still running after `ms` is killed and the test fails. */
async function exited(run: Cli, ms = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`still running after ${ms} ms; stdout: ${run.stdout()} stderr: ${run.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([run.exit, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function kill(run: Cli): void {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
}

/** Waits until stdout holds `n` complete JSON lines, and returns them parsed. */
async function jsonLines(run: Cli, n: number, timeoutMs = 15_000): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = run.stdout().split('\n').slice(0, -1);
    if (lines.length >= n) return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    if (run.child.exitCode !== null) assert.fail(`exited ${run.child.exitCode}; stderr: ${run.stderr()}`);
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${n} log lines; stdout: ${run.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function parseLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('CLI', { timeout: 180_000 }, () => {
  const badValues: [string, readonly string[], Record<string, string>, string][] = [
    ['PORT=abc', [], { PORT: 'abc' }, 'PORT'],
    ['--port 70000', ['--port', '70000'], {}, '--port'],
    ['--fsync=sometimes', ['--fsync=sometimes'], {}, '--fsync'],
    ['BASE_URL=ftp://x', [], { BASE_URL: 'ftp://x' }, 'BASE_URL'],
    ['--colour red', ['--colour', 'red'], {}, '--colour'],
  ];
  for (const [name, args, env, setting] of badValues) {
    test(`${name}: exit 2, one line on stderr naming ${setting}, nothing started`, async (t) => {
      const dir = tempDir();
      const dataDir = join(dir, 'data');
      const run = cli(args, { DATA_DIR: dataDir, ...env });
      t.after(() => {
        kill(run);
        rmSync(dir, { recursive: true, force: true });
      });
      const { code } = await exited(run);
      assert.equal(code, 2);
      const stderr = run.stderr();
      assert.match(stderr, /^[^\n]+\n$/, `exactly one line, got ${JSON.stringify(stderr)}`);
      assert.ok(stderr.includes(setting), stderr);
      assert.equal(run.stdout(), '');
      assert.equal(existsSync(dataDir), false, 'no data dir created');
    });
  }

  test('a bad secret in the config file: exit 2, one line, the secret not echoed', async (t) => {
    const dir = tempDir();
    const file = join(dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ api_keys: { admin: 'S3CRET-IN-FILE' } }));
    const run = cli(['--config', file], { DATA_DIR: join(dir, 'data'), API_TOKEN: 'S3CRET-TOKEN' });
    t.after(() => {
      kill(run);
      rmSync(dir, { recursive: true, force: true });
    });
    const { code } = await exited(run);
    assert.equal(code, 2);
    assert.match(run.stderr(), /^[^\n]+\n$/);
    assert.ok(run.stderr().includes('api_keys'), run.stderr());
    assert.doesNotMatch(run.stderr() + run.stdout(), /S3CRET/);
  });

  test('--help exits 0 and lists every environment variable and flag', async (t) => {
    const run = cli(['--help'], {});
    t.after(() => kill(run));
    const { code } = await exited(run);
    assert.equal(code, 0);
    const help = run.stdout();
    for (const env of DOCUMENTED_ENV_NAMES) {
      assert.match(help, new RegExp(`\\b${env}\\b`), `--help should list ${env}`);
      const flag = `--${env.toLowerCase().replace(/_/g, '-')}`;
      assert.ok(help.includes(flag), `--help should list ${flag}`);
    }
    assert.ok(help.includes('--config'));
    assert.equal(run.stderr(), '');
  });

  test('--version prints the package.json version', async (t) => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string };
    const run = cli(['--version'], {});
    t.after(() => kill(run));
    const { code } = await exited(run);
    assert.equal(code, 0);
    const out = run.stdout();
    assert.match(out, /^[^\n]+\n$/, 'one line');
    assert.ok(out.trimEnd().endsWith(` ${pkg.version}`), out);
  });

  test('--port 0: starts, logs listening and the admin key warning, serves, SIGTERM exits 0', async (t) => {
    const dir = tempDir();
    const run = cli(['--port', '0'], { DATA_DIR: dir });
    t.after(() => {
      kill(run);
      rmSync(dir, { recursive: true, force: true });
    });
    const [listening] = await jsonLines(run, 1);
    assert.ok(listening);
    const file = join(dir, 'initial-admin-key');
    // Whoever waits for the port and then reads the key's file finds it: no request is answered before.
    assert.equal((await request(Number(new URL(String(listening['url'])).port), '/healthz')).status, 200);
    assert.ok(existsSync(file), 'a request answered before the first admin key was written');
    const [, warning] = await jsonLines(run, 2);
    assert.ok(warning);
    assert.equal(listening['level'], 'info');
    assert.equal(listening['msg'], 'listening');
    assert.equal(typeof listening['time'], 'string');
    const url = new URL(String(listening['url']));
    const port = Number(url.port);
    assert.ok(port > 0, `a real port, got ${url.port}`);
    assert.equal(listening['url'], `http://127.0.0.1:${port}`);
    assert.equal(listening['base_url'], `http://localhost:${port}`);
    assert.equal(listening['data_file'], join(dir, 'urls.log'));
    assert.equal(listening['records'], 0);
    assert.equal(listening['gate'], false);
    assert.equal(listening['public_redirects'], false);
    assert.equal(listening['api_keys'], false);
    assert.equal(warning['level'], 'warn');
    assert.match(String(warning['msg']), /admin key/);
    // The first admin key (docs/security.md): its secret in a file only its owner reads, never in the log.
    assert.equal(warning['file'], file);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const secret = readFileSync(file, 'utf8').trim();
    assert.match(secret, /^us_[A-Za-z0-9_-]{43}$/);
    assert.ok(!run.stdout().includes(secret), 'the secret is not logged');
    const keys = await request(port, '/api/keys', { headers: { 'x-api-key': secret } });
    assert.equal(keys.status, 200);
    assert.deepEqual(
      (JSON.parse(keys.body) as { keys: { name: string; role: string }[] }).keys.map((k) => [k.name, k.role]),
      [['initial', 'admin']],
    );

    const health = await request(port, '/api/health');
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: 'ok', service: 'url-shortener' });
    const created = await request(port, '/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/kept' }),
    });
    assert.equal(created.status, 201);
    assert.ok(created.body.startsWith(`http://localhost:${port}/`), created.body);

    run.child.kill('SIGTERM');
    const { code, signal } = await exited(run);
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.equal(parseLines(run.stdout()).filter((l) => l['msg'] === 'listening').length, 1);
  });

  test('restart: records counted, gate and api_keys reported as true, their values never logged', async (t) => {
    const dir = tempDir();
    const first = cli(['--port=0', '--fsync', 'off'], { DATA_DIR: dir });
    let second: Cli | undefined;
    t.after(() => {
      kill(first);
      if (second) kill(second);
      rmSync(dir, { recursive: true, force: true });
    });
    const [listening] = await jsonLines(first, 1);
    const port = Number(new URL(String(listening?.['url'])).port);
    const created = await request(port, '/api/shorten?url=https%3A%2F%2Fexample.com%2F', { method: 'POST' });
    assert.equal(created.status, 201);
    first.child.kill('SIGTERM');
    assert.equal((await exited(first)).code, 0);

    second = cli(['--port', '0'], { DATA_DIR: dir, API_TOKEN: 'S3CRET-TOKEN', API_KEYS: 'S3CRET-KEY-1,S3CRET-KEY-2' });
    const [again] = await jsonLines(second, 1);
    assert.equal(again?.['msg'], 'listening');
    assert.equal(again?.['records'], 1);
    assert.equal(again?.['gate'], true);
    assert.equal(again?.['api_keys'], true);
    second.child.kill('SIGTERM');
    assert.equal((await exited(second)).code, 0);
    const lines = parseLines(second.stdout());
    assert.deepEqual(
      lines.filter((l) => l['level'] === 'warn'),
      [],
      'no API_KEYS warning once keys are set',
    );
    assert.doesNotMatch(second.stdout() + second.stderr(), /S3CRET/);
  });
});
