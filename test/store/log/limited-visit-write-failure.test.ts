/**
 * A counted visit of a link with a visit limit whose count cannot be made durable (docs/storage.md,
 * visit limits): it is refused either way; if the write itself was refused (no space, quota,
 * read-only: the bytes never reached the file) the visit is given back, so a full disk does not use
 * a one-time link up without a redirect; if the fsync failed (the outcome is unknown) it stays used.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type LinkRecord, type VisitDecision } from '../../../src/store/link-store.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { faultyDisk, fillableDisk } from '../../support/disk-full.ts';
import { tempDir } from '../../support/helpers.ts';
import { logEntries } from '../../support/log-entries.ts';

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
const visit = (store: LogLinkStore, code: string): Promise<VisitDecision> => Promise.resolve(store.countVisit(code, () => T, true));

/** A one-time link, one visit refused by `fail`, the disk healed; what the store then holds, before and after a restart. */
async function oneTimeVisitRefused(
  t: TestContext,
  fail: (d: ReturnType<typeof faultyDisk>) => void,
): Promise<{ after: number; decision: string; reopened: number }> {
  const dir = tempDir(t);
  const d = faultyDisk();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs: d.fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('once01', 1), T);
  fail(d);
  await assert.rejects(visit(store, 'once01'), StoreUnavailableError);
  const after = store.get('once01', T)!.visits;
  d.disk.full = false;
  d.faults.write = undefined;
  d.faults.fsync = undefined;
  const decision = (await visit(store, 'once01')).kind;
  await store.close();
  const reopened = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => reopened.close());
  return { after, decision, reopened: reopened.get('once01', T)!.visits };
}

for (const code of ['ENOSPC', 'EDQUOT', 'EROFS']) {
  test(`a write refused with ${code}: the visit is 503 and given back, and the link redirects once the disk is back`, async (t) => {
    const result = await oneTimeVisitRefused(t, (d) => {
      if (code === 'ENOSPC') d.disk.full = true;
      else d.faults.write = code;
    });
    assert.deepEqual(result, { after: 0, decision: 'found', reopened: 1 });
  });
}

test('a write that failed otherwise (EIO): the outcome is unknown, the visit stays used', async (t) => {
  const result = await oneTimeVisitRefused(t, (d) => (d.faults.write = 'EIO'));
  assert.deepEqual(result, { after: 1, decision: 'limit_reached', reopened: 1 });
});

for (const code of ['EIO', 'ENOSPC']) {
  test(`a failed fsync (${code}): the outcome is unknown, the visit stays used, also after a restart`, async (t) => {
    const result = await oneTimeVisitRefused(t, (d) => (d.faults.fsync = code));
    assert.deepEqual(result, { after: 1, decision: 'limit_reached', reopened: 1 });
  });
}

test('visits refused together by a full disk are all given back; the limit stays exact', async (t) => {
  const dir = tempDir(t);
  const { fs, disk } = fillableDisk();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('three1', 3), T);
  assert.equal((await visit(store, 'three1')).kind, 'found');
  disk.full = true;
  const refused = await Promise.allSettled(Array.from({ length: 5 }, () => visit(store, 'three1')));
  // Two had visits left and were refused by the disk; the three others found the limit reached meanwhile.
  assert.deepEqual(
    refused.map((r) => (r.status === 'fulfilled' ? r.value.kind : (r.reason as Error).name)),
    ['StoreUnavailableError', 'StoreUnavailableError', 'limit_reached', 'limit_reached', 'limit_reached'],
  );
  assert.equal(store.get('three1', T)!.visits, 1, 'both given back');
  disk.full = false;
  const kinds = [];
  for (let i = 0; i < 3; i++) kinds.push((await visit(store, 'three1')).kind);
  assert.deepEqual(kinds, ['found', 'found', 'limit_reached']);
  assert.deepEqual(logEntries(dir).at(-1), { op: 'V', counts: [['three1', 3]] });
});
