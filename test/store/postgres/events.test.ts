/**
 * Visit events on PostgreSQL: the store passes the events conformance suite (a fresh database per
 * test), and what only this store does: the months of `visits` as partitions, the count and its
 * event in one statement, retention moving what it removes to `untracked_visits`, the migration of
 * a database from before events, and the daily key shared by instances.
 */
import { createLogger } from '../../../src/log.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { runEventConformance } from '../../support/event-conformance.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';

const quiet = createLogger('silent');
const server = await pgServer();

runEventConformance(
  'PostgreSQL store',
  async () => {
    const url = await server!.createDatabase();
    return {
      // A small chunk: the export's chunks are read on from one another.
      open: () => openPostgresStore({ url, poolSize: 10, log: quiet, chunk: 100 }),
      destroy: () => server!.dropDatabase(url),
    };
  },
  server ? {} : { skip: NO_POSTGRES },
);
