/** The event part of the storage contract, run against the log store (the same suite runs on PostgreSQL). */
import { rm } from 'node:fs/promises';
import { createLogger } from '../../../src/log.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { runEventConformance } from '../../support/event-conformance.ts';
import { tempDir } from '../../support/helpers.ts';

const quiet = createLogger('silent');

runEventConformance('log store', async () => {
  const dir = tempDir();
  return {
    open: async () => new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet })),
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
});
