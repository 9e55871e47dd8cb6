/**
 * The first admin key (docs/security.md): an instance with no admin key at all — none in
 * `API_KEYS`, none stored — would answer every list, stats page and import with a 403 and leave a
 * newcomer no way in. At start-up the log store gets one stored admin key named `initial`, whose
 * secret is written once to `DATA_DIR/initial-admin-key` (readable by its owner only) and never
 * logged; a database gets `INITIAL_API_KEY` as that key, or a line saying how to make one.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '../log.ts';
import type { Keys } from '../links/keys.ts';

/** The file of the first admin key's secret, in the data dir. */
export const INITIAL_KEY_FILE = 'initial-admin-key';

export async function ensureFirstAdmin(
  keys: Pick<Keys, 'initialAdmin' | 'list'>,
  config: Pick<Config, 'apiKeys' | 'databaseUrl' | 'dataDir' | 'initialApiKey'>,
  log: Logger,
): Promise<void> {
  const database = config.databaseUrl !== '';
  try {
    // A database takes INITIAL_API_KEY as its first key; a log store makes one and writes it down.
    const secret = database && config.initialApiKey === '' ? undefined : await keys.initialAdmin(database ? config.initialApiKey : undefined);
    if (secret !== undefined && database) log.info('INITIAL_API_KEY stored as the admin key "initial"');
    else if (secret !== undefined) writeKeyFile(config.dataDir, secret, log);
    else if (config.apiKeys.length === 0 && !(await hasAdmin(keys))) {
      log.warn(
        database
          ? 'no admin key (API_KEYS is empty, none is stored): make one with node dist/server.js keys create --name admin --role admin, or set INITIAL_API_KEY'
          : 'no admin key (API_KEYS is empty, none is stored): the routes that need one (list, edit, delete, stats, visits, export, import) answer 403',
      );
    }
  } catch (err) {
    log.error('could not make the first admin key', { error: (err as Error).message });
  }
}

async function hasAdmin(keys: Pick<Keys, 'list'>): Promise<boolean> {
  const listed = await keys.list();
  return !listed.ok || listed.keys.some((k) => k.role === 'admin' && k.domain === null);
}

function writeKeyFile(dataDir: string, secret: string, log: Logger): void {
  const file = join(dataDir, INITIAL_KEY_FILE);
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  // A file left by an earlier run keeps its mode through writeFileSync: set it.
  chmodSync(file, 0o600);
  log.warn('no admin key existed: one was made, named "initial"; its secret is in this file, readable by its owner only', { file });
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `handler`, holding each request until `first` (the first admin key's making) has settled: whoever
 * waits for the port, then reads `initial-admin-key` or sends a key, finds it. Once settled, one
 * check a request.
 */
export function heldUntil(first: Promise<void>, handler: Handler): Handler {
  let waiting: Promise<void> | undefined = first.finally(() => (waiting = undefined));
  return (req, res) => (waiting === undefined ? handler(req, res) : void waiting.then(() => handler(req, res)));
}
