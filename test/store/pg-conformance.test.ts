/** The PostgreSQL store passes the `LinkStore` conformance suite (a fresh database per test). */
import { createLogger } from '../../src/log.ts';
import { openPostgresStore } from '../../src/store/postgres-connect.ts';
import { pgServer } from '../support/pg.ts';
import { runStoreConformance } from '../support/store-conformance.ts';

const quiet = createLogger('silent');
const server = await pgServer();

if (server) {
  runStoreConformance('PostgreSQL store', async () => {
    const url = await server.createDatabase();
    return {
      // Reopening is a new pool on the same database: nothing survives in the process.
      open: () => openPostgresStore({ url, poolSize: 10, log: quiet }),
      destroy: () => server.dropDatabase(url),
    };
  });
}
