/**
 * A routing the PostgreSQL store cannot read (a newer build's part, a damaged value) fails closed
 * on the redirect (docs/postgres.md): a 503 refusal, never the link's target, which for a
 * password-protected link would hand it to whoever asks. A link without routing is untouched.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError } from '../../../src/store/link-store.ts';
import { openPostgresStore } from '../../../src/store/postgres/connect.ts';
import { pgServer } from '../../support/pg.ts';
import { linkRecord as rec, T } from '../../support/records.ts';

const server = await pgServer();
const QUIET_JOBS = { readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 } as const;

test('an unreadable routing is a refusal of the redirect, counted nothing; a plain link redirects', { skip: !server }, async (t) => {
  const url = await server!.createDatabase();
  const db = postgres(url, { max: 1, onnotice: () => undefined });
  const store = await openPostgresStore({ url, poolSize: 2, log: createLogger('silent'), ...QUIET_JOBS });
  t.after(async () => {
    await store.close();
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  const hash = `scrypt$N=16384,r=8,p=1$${'a'.repeat(22)}$${'b'.repeat(43)}`;
  assert.equal(await store.insert(rec('lock01', { routing: { passwordHash: hash } }), T), true);
  assert.equal(await store.insert(rec('open01'), T), true);
  // What a newer build might write: a part this one does not know beside the password.
  await db`UPDATE links SET routing = ${db.json({ passwordHash: hash, geofence: ['FR'] })} WHERE code = 'lock01'`;
  for (const count of [true, false]) {
    await assert.rejects(Promise.resolve(store.countVisit('lock01', () => T, count)), (err: unknown) => err instanceof StoreUnavailableError, `count ${count}`);
  }
  const [row] = await db<{ visit_count: string }[]>`SELECT visit_count FROM links WHERE code = 'lock01'`;
  assert.equal(row!.visit_count, '0');
  const plain = await store.countVisit('open01', () => T, true);
  assert.deepEqual(plain.kind === 'found' ? plain.url : plain.kind, rec('open01').url);
});
