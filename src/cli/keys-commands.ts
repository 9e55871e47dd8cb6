/**
 * `url-shortener keys create|list|revoke` (docs/operations.md): the stored API keys of
 * `POST/GET /api/keys` and `DELETE /api/keys/<id>` (docs/security.md), from the command line. It is
 * the way to a key when no admin key is at hand (a lost `initial-admin-key`, a database started
 * without `INITIAL_API_KEY`), and a script's way to make one without a server.
 *
 * The service's own `keys` make, list and revoke them, so its checks and its log lines are the
 * routes'. Only the answer goes to stdout (`create`'s key with its secret, this once; `list`'s
 * keys, never a secret); the log goes to stderr, as the transfer commands' does. On the log store
 * the commands open the data dir like a server does, so they refuse while a server holds it: a
 * key written beside a running server would be a line its log never replays. With
 * `--database-url` (or `DATABASE_URL`) they work on PostgreSQL, beside any number of servers,
 * which see a new or revoked key within a second.
 */
import { ConfigError } from '../errors.ts';
import { commandConfig, readCommandOptions } from './command-options.ts';
import { createDomains } from '../links/domains.ts';
import { createKeys, type KeyInput } from '../links/keys.ts';
import { createLogger, type Logger } from '../log.ts';
import type { KeyStore } from '../store/key-store.ts';
import type { LinkStore } from '../store/link-store.ts';
import { LogEngine, StoreOpenError } from '../store/log/log-engine.ts';
import { LogLinkStore } from '../store/log/log-link-store.ts';
import { DatabaseOpenError, DriverMissingError, openPostgresStore } from '../store/postgres/connect.ts';
import type { Config } from '../config/config.ts';
import type { CommandIo } from './transfer-commands.ts';

export type KeysAction = 'create' | 'list' | 'revoke';

export interface KeysCommand {
  action: KeysAction;
  /** `create --name N --role R --domain H --expires-at T`, as given. */
  name?: string;
  role?: string;
  domain?: string;
  expiresAt?: string;
  /** `revoke ID`. */
  id?: string;
  /** The other arguments: settings, read as the server reads them. */
  settings: string[];
}

const ACTIONS: ReadonlySet<string> = new Set(['create', 'list', 'revoke']);
/** The options of `create`, and the field each one fills. */
const CREATE_OPTIONS: Readonly<Record<string, 'name' | 'role' | 'domain' | 'expiresAt'>> = {
  '--name': 'name',
  '--role': 'role',
  '--domain': 'domain',
  '--expires-at': 'expiresAt',
};
const USAGE = 'node dist/server.js keys create --name NAME --role creator|viewer|editor|admin [--domain HOST] [--expires-at T] | keys list | keys revoke ID';

/** `keys create …`, `keys list …` or `keys revoke ID …`; undefined when argv is no `keys` command. Throws `ConfigError`. */
export function parseKeysCommand(argv: readonly string[]): KeysCommand | undefined {
  const [first, action, ...rest] = argv;
  if (first !== 'keys') return undefined;
  if (action === undefined || !ACTIONS.has(action)) throw new ConfigError(`keys needs one of create, list, revoke: ${USAGE}`);
  const parsed: KeysCommand = { action: action as KeysAction, settings: [] };
  if (parsed.action === 'revoke') {
    // The id comes first, whatever it starts with: an id is base64url, and may start with `-`.
    const id = rest.shift();
    if (id === undefined || id === '') throw new ConfigError('keys revoke needs the id of the key: node dist/server.js keys revoke ID [options]');
    parsed.id = id;
  }
  readCommandOptions(rest, parsed.action === 'create' ? CREATE_OPTIONS : {}, parsed, parsed.settings);
  if (parsed.action === 'create' && (parsed.name === undefined || parsed.role === undefined)) {
    throw new ConfigError('keys create needs --name NAME and --role creator|viewer|editor|admin');
  }
  return parsed;
}

/** The fields `POST /api/keys` would get: `--expires-at` is a number when it is written as one, so that the service's check names anything else. */
function keyInput(cmd: KeysCommand): KeyInput {
  const at = cmd.expiresAt;
  return { name: cmd.name, role: cmd.role, domain: cmd.domain, expires_at: at !== undefined && /^-?\d+$/.test(at) ? Number(at) : at };
}

/** Runs the command; resolves with the exit code (0 done, 1 failed or no such key, 2 bad usage or a key the service refuses). */
export async function runKeysCommand(cmd: KeysCommand, io: CommandIo): Promise<number> {
  const label = `url-shortener keys ${cmd.action}`;
  const config = commandConfig(`keys ${cmd.action}`, cmd.settings, io, label);
  if (config === 2) return 2;
  const log = createLogger(config.logLevel, io.stderr);
  const opened = await openStore(config, log, io, label);
  if (typeof opened === 'number') return opened;
  try {
    return await act(cmd, opened.accessKeys, config, log, io);
  } finally {
    await opened.close();
  }
}

/** The command's work on the opened store's keys. */
async function act(cmd: KeysCommand, keyStore: KeyStore | undefined, config: Config, log: Logger, io: CommandIo): Promise<number> {
  // The domains a key may be limited to are the server's, from the same settings.
  const { hostOf } = createDomains(config.baseUrl ?? `http://localhost:${config.port}`, config.domains);
  const keys = createKeys({ keyStore, apiKeys: config.apiKeys, seconds: () => Math.floor(io.now() / 1000), log, hostOf });
  if (cmd.action === 'create') {
    const made = await keys.create(keyInput(cmd));
    if (made.ok) io.stdout.write(`${JSON.stringify(made.key)}\n`);
    // The input's refusal, in the words the route answers a 400 with: bad usage.
    else if (made.error === 'invalid') io.stderr.write(`url-shortener keys create: ${made.detail}\n`);
    else log.error(made.detail);
    return made.ok ? 0 : made.error === 'invalid' ? 2 : 1;
  }
  if (cmd.action === 'list') {
    const listed = await keys.list();
    if (!listed.ok) log.error(listed.detail);
    else io.stdout.write(`${JSON.stringify({ count: listed.keys.length, keys: listed.keys })}\n`);
    return listed.ok ? 0 : 1;
  }
  const gone = await keys.revoke(cmd.id!);
  if (!gone.ok) log.error(gone.error === 'not_found' ? 'no stored API key has this id; nothing was revoked' : gone.detail, { key: cmd.id });
  return gone.ok ? 0 : 1;
}

/**
 * The store of `config`, opened as a server opens it (the keys and webhooks commands), or the exit code of its failure: a data dir
 * another process holds (the message names it), an unreachable database (1), no driver (2).
 */
export async function openStore(config: Config, log: Logger, io: CommandIo, label: string): Promise<LinkStore | number> {
  if (config.databaseUrl === '') {
    try {
      return new LogLinkStore(new LogEngine({ dir: config.dataDir, fsync: config.fsync, log, now: io.now }));
    } catch (err) {
      if (!(err instanceof StoreOpenError)) throw err;
      log.error(err.message);
      return 1;
    }
  }
  try {
    return await openPostgresStore({
      url: config.databaseUrl,
      poolSize: 2,
      log,
      now: io.now,
      ...(io.driverModule !== undefined ? { driverModule: io.driverModule } : {}),
    });
  } catch (err) {
    if (err instanceof DriverMissingError) {
      io.stderr.write(`${label}: ${err.message}\n`);
      return 2;
    }
    if (!(err instanceof DatabaseOpenError)) throw err;
    log.error(err.message);
    return 1;
  }
}
