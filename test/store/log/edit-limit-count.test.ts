/**
 * An edit that leaves a link with a visit limit makes its visit count durable with it (docs/storage.md,
 * visit limits): the visits of a link without a limit are counted in memory and written in a count
 * batch within a second, so the edit's own write carries the count, before the edit entry; visits
 * counted while that write ran are written before the edit is answered. The crash itself is
 * `crash-edit-limit.test.ts`; these are the entries, with no flush in between (a minute away).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';
import { logEntries } from '../../support/log-entries.ts';
import { heldWrites } from '../../support/held-writes.ts';

const T = 1_790_000_000;
const quiet = createLogger('silent');
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
const rec = (code: string, maxVisits: number | null): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits,
});

function visits(store: LogLinkStore, code: string, n: number): void {
  for (let i = 0; i < n; i++) assert.equal((store.countVisit(code, () => T, true) as { kind: string }).kind, 'found');
}

test('an edit that gives a link a limit writes its count so far in the same write, before the edit entry', async (t) => {
  const dir = tempDir(t);
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('edit08', null), T);
  visits(store, 'edit08', 8);
  const edited = await store.update('edit08', { maxVisits: 10 }, T);
  assert.equal(edited?.visits, 8);
  assert.deepEqual(logEntries(dir).slice(-2), [
    { op: 'V', counts: [['edit08', 8]] },
    { op: 'E', code: 'edit08', url: 'https://example.com/edit08', retentionDays: 0, maxVisits: 10 },
  ]);
});

test('visits counted while that write runs are written too, before the edit is answered', async (t) => {
  const dir = tempDir(t);
  const { fs, ctl, held, release } = heldWrites();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('race01', null), T);
  visits(store, 'race01', 3);
  ctl.hold = true;
  const editing = store.update('race01', { maxVisits: 10 }, T);
  await held();
  // Still a link without a limit: counted in memory, answered at once.
  visits(store, 'race01', 2);
  release();
  assert.equal((await editing)?.visits, 5);
  assert.deepEqual(logEntries(dir).slice(-3), [
    { op: 'V', counts: [['race01', 3]] },
    { op: 'E', code: 'race01', url: 'https://example.com/race01', retentionDays: 0, maxVisits: 10 },
    { op: 'V', counts: [['race01', 5]] },
  ]);
});

test('an edit that leaves no limit writes the edit entry alone: counting stays batched', async (t) => {
  const dir = tempDir(t);
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('free01', null), T);
  await store.insert(rec('lift01', 20), T);
  visits(store, 'free01', 4);
  await store.update('free01', { url: 'https://example.com/moved' }, T);
  await store.update('lift01', { maxVisits: null }, T);
  assert.deepEqual(
    logEntries(dir).map((e) => e.op),
    ['C', 'C', 'E', 'E'],
  );
});
