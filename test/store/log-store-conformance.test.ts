/** The log store passes the `LinkStore` conformance suite (a fresh data dir per test). */
import { rm } from 'node:fs/promises';
import { createLogger } from '../../src/log.ts';
import { LogStore } from '../../src/store/log-store.ts';
import { Store } from '../../src/store/store.ts';
import { tempDir } from '../support/helpers.ts';
import { runStoreConformance } from '../support/store-conformance.ts';

const quiet = createLogger('silent');

runStoreConformance('log store', async () => {
  const dir = tempDir();
  return {
    open: async () => new LogStore(new Store({ dir, fsync: 'always', log: quiet })),
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
});
