/**
 * The copy of the stored keys (src/store/postgres/keys.ts) when its reads end out of order. Two
 * reads can be in flight at once (a caller a second after a read began gets one of its own), and
 * the database may answer the later one first. No database here: the reads are answered by hand,
 * in the order each test chooses; keys.test.ts runs the copy against a real server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { PostgresKeys } from '../../../src/store/postgres/keys.ts';
import { callsByHand } from '../../support/calls-by-hand.ts';

const T = 1_790_000_000_000;

const row = (id: string) => ({ id, name: id, role: 'admin', domain: null, digest: 'd'.repeat(64), created_at: '1', expires_at: null, last_used_at: null });

/** Keys whose every read waits until the test answers it (`callsByHand`). */
function keysAnsweredByHand(clock: () => number) {
  const { sql, calls, answer, asked } = callsByHand();
  return { keys: new PostgresKeys(sql, calls, createLogger('silent', { write: () => true }), clock, 1000), answer, asked };
}

test('a read answered after a later one keeps neither its older keys nor its older time in the copy', async () => {
  let clock = T;
  const { keys, answer, asked } = keysAnsweredByHand(() => clock);
  const older = keys.keys();
  clock += 1000;
  const later = keys.keys();
  assert.equal(asked(), 2, 'a caller a second after the first read began reads again');
  await answer(1, []);
  assert.deepEqual(await later, []);
  // The earlier read, answered last, saw a key the later one no longer did.
  await answer(0, [row('REVOKED1')]);
  assert.deepEqual(
    (await older).map((k: KeyRecord) => k.id),
    ['REVOKED1'],
    'its own callers get what it read',
  );
  const now = keys.keys();
  assert.deepEqual(now, [], 'the copy is the later read, from memory');
  assert.equal(asked(), 2, 'and nothing is read again');
});

test('reads answered in order: the copy is the last one', async () => {
  let clock = T;
  const { keys, answer, asked } = keysAnsweredByHand(() => clock);
  const first = keys.keys();
  clock += 1000;
  const second = keys.keys();
  await answer(0, [row('KEPT0001')]);
  await answer(1, [row('KEPT0001'), row('NEW00001')]);
  await first;
  await second;
  assert.deepEqual(
    (keys.keys() as readonly KeyRecord[]).map((k) => k.id),
    ['KEPT0001', 'NEW00001'],
  );
  assert.equal(asked(), 2);
});
