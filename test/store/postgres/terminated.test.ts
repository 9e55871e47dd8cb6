/**
 * A transaction whose backend is terminated (`pg_terminate_backend`: an operator, a failover, an
 * idle-in-transaction timeout) fails as unavailable, and the process lives on (begin.ts). The
 * driver alone answered each of these with a write to the closed connection, thrown from a timer
 * where nothing could catch it: the process ended, and with it this test file.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError } from '../../../src/store/link-store.ts';
import { PostgresCalls } from '../../../src/store/postgres/calls.ts';
import { pgServer } from '../../support/pg.ts';

const server = await pgServer();

interface Setup {
  calls: PostgresCalls;
  /** Terminates backend `pid` and waits until the server has ended it. */
  terminate(pid: number): Promise<void>;
}

async function setup(t: TestContext): Promise<Setup> {
  const url = await server!.createDatabase();
  const sql = postgres(url, { max: 2, onnotice: () => undefined });
  const admin = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(async () => {
    await sql.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
  });
  const terminate = async (pid: number): Promise<void> => {
    await admin`select pg_terminate_backend(${pid})`;
    while ((await admin`select 1 from pg_stat_activity where pid = ${pid}`).length > 0) await sleep(10);
  };
  return { calls: new PostgresCalls(sql, createLogger('silent'), 10_000), terminate };
}

const pidOf = async (tx: postgres.TransactionSql): Promise<number> => (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;

/** Long enough for anything the driver scheduled on the closed connection to have run. */
const settle = (): Promise<unknown> => sleep(300);

/** The pool still works: a transaction commits. */
async function stillWorks(calls: PostgresCalls): Promise<void> {
  const [row] = await calls.transaction(async (tx) => tx<{ n: number }[]>`select 1 as n`);
  assert.equal(row!.n, 1);
}

test('a statement in flight when its backend is terminated: the transaction fails as unavailable, and the process lives on', { skip: !server }, async (t) => {
  const { calls, terminate } = await setup(t);
  const failed = calls.transaction(async (tx) => {
    const pid = await pidOf(tx);
    setTimeout(() => void terminate(pid), 100);
    await tx`select pg_sleep(5)`;
    return 'committed';
  });
  await assert.rejects(failed, StoreUnavailableError);
  await settle();
  await stillWorks(calls);
});

test('a statement made after its backend was terminated is refused, and nothing is sent', { skip: !server }, async (t) => {
  const { calls, terminate } = await setup(t);
  let refused!: (err: unknown) => void;
  const refusal = new Promise<unknown>((resolve) => (refused = resolve));
  const failed = calls.transaction(async (tx) => {
    await terminate(await pidOf(tx));
    // The body goes on after a pause (any await that is not a statement of its own).
    await settle();
    try {
      await tx`select 1`;
    } catch (err) {
      refused(err);
      throw err;
    }
    refused(undefined);
    return 'committed';
  });
  // Rejected at the close, before the body went on; the statement after it refused as the
  // driver refuses one on a closed connection, which the store reads as unavailable.
  await assert.rejects(failed, StoreUnavailableError);
  assert.equal(((await refusal) as { code?: string } | undefined)?.code, 'CONNECTION_CLOSED');
  await settle();
  await stillWorks(calls);
});

test('a held snapshot whose backend is terminated: its next read is refused, and ending it sends nothing', { skip: !server }, async (t) => {
  const { calls, terminate } = await setup(t);
  const held = await calls.hold();
  await terminate(await pidOf(held.tx));
  await settle();
  assert.throws(() => held.tx`select 1`, StoreUnavailableError);
  held.end();
  await settle();
  await stillWorks(calls);
});
