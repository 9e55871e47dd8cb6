/** The PostgreSQL store passes the `LinkStore` conformance suite (a fresh database per test). */
import { createLogger } from '../../../src/log.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';
import { runStoreConformance } from '../../support/store-conformance.ts';

const quiet = createLogger('silent');
const server = await pgServer();

// Registered without a server too: each of its tests is then listed as not run.
runStoreConformance(
  'PostgreSQL store',
  async () => {
    const url = await server!.createDatabase();
    return {
      // Reopening is a new pool on the same database: nothing survives in the process.
      open: () => openPostgresStore({ url, poolSize: 10, log: quiet }),
      destroy: () => server!.dropDatabase(url),
    };
  },
  server ? {} : { skip: NO_POSTGRES },
);
