/** The event part of the storage contract, run against the log store (the same suite runs on PostgreSQL). */
import { rm } from 'node:fs/promises';
import { createLogger } from '../../../src/log.ts';
import { LogStore } from '../../../src/store/log/log-store.ts';
import { Store } from '../../../src/store/log/store.ts';
import { runEventConformance } from '../../support/event-conformance.ts';
import { tempDir } from '../../support/helpers.ts';

const quiet = createLogger('silent');

runEventConformance('log store', async () => {
  const dir = tempDir();
  return {
    open: async () => new LogStore(new Store({ dir, fsync: 'always', log: quiet })),
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
});
