/**
 * The door conformance suite (test/support/door-conformance.ts) on PostgreSQL: every case through
 * REST, MCP, Shlink's REST v3 and YOURLS' API against one server on a throwaway database
 * (`pg.ts`). The store is down when the database server is stopped: reads and writes fail alike.
 */
import { after } from 'node:test';
import { openOnDatabase } from '../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';
import { runDoorConformance } from '../support/door-conformance.ts';

const teardown: (() => Promise<void>)[] = [];
const pg = await pgServer(undefined, { own: true, after: (step) => teardown.push(step) });

runDoorConformance({
  name: 'PostgreSQL',
  skip: pg ? undefined : NO_POSTGRES,
  outageReason: 'database unavailable',
  readsDuringOutage: false,
  async open(settings) {
    const app = await openOnDatabase(settings, await pg!.createDatabase());
    return { port: app.port, down: () => pg!.stop(), up: () => pg!.start(), close: () => app.close() };
  },
});

// Registered after the suite's own: the database server stops once the shortener on it is closed.
after(async () => {
  for (const step of teardown.reverse()) await step();
});
