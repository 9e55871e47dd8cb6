/**
 * The first admin key (docs/security.md): an instance with no admin key at all — none in
 * `API_KEYS`, none stored — would answer every list, stats page and import with a 403 and leave a
 * newcomer no way in. At start-up the log store gets one stored admin key named `initial`, whose
 * secret is written once to `DATA_DIR/initial-admin-key` (readable by its owner only) and never
 * logged; a database gets `INITIAL_API_KEY` as that key, or a line saying how to make one.
 */
import { chmodSync, writeFileSync } from 'node:fs';
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
  try {
    if (config.databaseUrl !== '') {
      if (config.initialApiKey !== '') {
        if ((await keys.initialAdmin(config.initialApiKey)) !== undefined) log.info('INITIAL_API_KEY stored as the admin key "initial"');
        return;
      }
      const listed = await keys.list();
      if (config.apiKeys.length === 0 && listed.ok && !listed.keys.some((k) => k.role === 'admin')) {
        log.warn(
          'no admin key (API_KEYS is empty, none is stored): make one with node dist/server.js keys create --name admin --role admin, or set INITIAL_API_KEY',
        );
      }
      return;
    }
    const secret = await keys.initialAdmin();
    if (secret === undefined) {
      const listed = await keys.list();
      if (config.apiKeys.length === 0 && listed.ok && !listed.keys.some((k) => k.role === 'admin')) {
        log.warn('no admin key (API_KEYS is empty, none is stored): the routes that need one (list, edit, delete, stats, visits, export, import) answer 403');
      }
      return;
    }
    const file = join(config.dataDir, INITIAL_KEY_FILE);
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    // A file left by an earlier run keeps its mode through writeFileSync: set it.
    chmodSync(file, 0o600);
    log.warn('no admin key existed: one was made, named "initial"; its secret is in this file, readable by its owner only', { file });
  } catch (err) {
    log.error('could not make the first admin key', { error: (err as Error).message });
  }
}
