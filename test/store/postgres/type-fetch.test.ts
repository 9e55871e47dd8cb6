/**
 * Regression: the driver asked every new connection for the database's array types before its
 * first statement, and nothing awaited that question, so a connection lost while asking (a
 * database restarting just then) rejected a promise nobody held, and the unhandled rejection ended
 * the process. Only the pool's first connection asks now.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { pgServer, tcpProxy } from '../../support/pg.ts';

const T = 1_790_000_000;
/** What the driver's question for the array types holds. */
const TYPE_QUESTION = 'pg_catalog.pg_type';

test('connections opened after the first do not ask for the array types, so none can be lost while asking', { timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  let armed = false;
  let asked = 0;
  // Once armed, a connection that asks for the types is cut as it asks: what a restart does at that moment.
  const url = await tcpProxy(await pg.createDatabase(), (client, upstream) => {
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(TYPE_QUESTION)) {
        asked++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => void unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));

  const store = await openPostgresStore({ url, poolSize: 4, log: createLogger('silent'), readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0 });
  t.after(() => store.close());
  armed = true;
  // Eight reads at once on a pool of four: it opens the connections it has not opened yet.
  const reads = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.get(`code${i}`, T)));
  // A rejection nobody handles is reported once the microtasks of its turn have run.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
  assert.equal(asked, 0, 'no connection after the first asked for the types');
  assert.deepEqual(
    reads.map((r) => r.status),
    Array(8).fill('fulfilled'),
  );
});
