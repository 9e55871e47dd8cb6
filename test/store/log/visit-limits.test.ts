/**
 * The log store's side of visit limits and edits (docs/storage.md): a counted visit of a link with
 * a limit is granted only once its count entry is durable (a failed write refuses it:
 * `limited-visit-write-failure.test.ts`), links without a limit keep their synchronous, batched
 * counting; an edit is one log entry applied in place, and compaction writes an edited record as a
 * plain create.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { StoreUnavailableError, type LinkRecord, type VisitDecision } from '../../../src/store/link-store.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';
import { logEntries } from '../../support/log-entries.ts';
import { heldWrites } from '../../support/held-writes.ts';

const T = 1_790_000_000;
const quiet = createLogger('silent');
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const rec = (code: string, maxVisits: number | null, url = `https://example.com/${code}`): LinkRecord => ({
  code,
  url,
  createdAt: T,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits,
});

test('a counted visit of a limited link resolves only once its count entry is in the log', async (t) => {
  const dir = tempDir(t);
  const { fs, ctl, release } = heldWrites();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('lim001', 3), T);
  ctl.hold = true;
  let settled = false;
  const visit = Promise.resolve(store.countVisit('lim001', () => T, true)).then((d) => {
    settled = true;
    return d.kind;
  });
  // The decision is taken at once: the count is already used, before it is durable.
  assert.equal(store.get('lim001', T)?.visits, 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(settled, false, 'not granted while its write is held');
  release();
  assert.equal(await visit, 'found');
  // No flush ran (the timer is a minute away): the entry is the visit's own.
  assert.deepEqual(logEntries(dir).at(-1), { op: 'V', counts: [['lim001', 1]] });
});

test('links without a limit keep the synchronous, batched count; HEAD of a limited link answers at once', async (t) => {
  const dir = tempDir(t);
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('free01', null), T);
  await store.insert(rec('lim001', 2), T);
  const before = readFileSync(join(dir, LOG_FILE)).length;
  const free: VisitDecision | Promise<VisitDecision> = store.countVisit('free01', () => T, true);
  assert.ok(!(free instanceof Promise), 'no promise for a link without a limit');
  assert.deepEqual(free, { kind: 'found', url: 'https://example.com/free01', limited: false });
  const head = store.countVisit('lim001', () => T, false);
  assert.ok(!(head instanceof Promise), 'no promise for a HEAD');
  assert.deepEqual(head, { kind: 'found', url: 'https://example.com/lim001', limited: true });
  assert.equal(readFileSync(join(dir, LOG_FILE)).length, before, 'nothing written yet: the count waits for its batch');
  assert.equal(store.get('free01', T)?.visits, 1);
  assert.equal(store.get('lim001', T)?.visits, 0);
});

test('an edit is one log entry, applied in place; compaction writes the edited record as a plain create', async (t) => {
  const dir = tempDir(t);
  const inner = new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL });
  const store = new LogLinkStore(inner);
  t.after(() => store.close());
  await store.insert(rec('edit01', null), T);
  await store.insert(rec('edit02', null), T);
  await store.update('edit01', { url: 'https://example.com/changed', maxVisits: 9, retentionDays: 400 }, T);
  assert.deepEqual(logEntries(dir).at(-1), { op: 'E', code: 'edit01', url: 'https://example.com/changed', retentionDays: 400, maxVisits: 9 });
  await store.update('edit02', { maxVisits: null }, T);
  assert.deepEqual(logEntries(dir).at(-1), { op: 'E', code: 'edit02', url: 'https://example.com/edit02', retentionDays: 0, maxVisits: null });
  const report = await inner.compact();
  assert.equal(report.entriesAfter, 2);
  assert.deepEqual(logEntries(dir), [
    { op: 'C', code: 'edit01', url: 'https://example.com/changed', createdAt: T, retentionDays: 400, visits: 0, maxVisits: 9 },
    { op: 'C', code: 'edit02', url: 'https://example.com/edit02', createdAt: T, retentionDays: 0, visits: 0, maxVisits: null },
  ]);
  await store.close();
  const reopened = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => reopened.close());
  assert.deepEqual(reopened.get('edit01', T), { ...rec('edit01', 9, 'https://example.com/changed'), retentionDays: 400 });
  assert.equal(reopened.newestByUrl('https://example.com/changed', T)?.code, 'edit01');
});

test('an edit whose write fails changes nothing and rejects with StoreUnavailableError', async (t) => {
  const dir = tempDir(t);
  const { fs, ctl } = heldWrites();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, fs, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('edit01', null), T);
  ctl.fail = true;
  await assert.rejects(store.update('edit01', { url: 'https://example.com/never' }, T), StoreUnavailableError);
  ctl.fail = false;
  assert.deepEqual(store.get('edit01', T), rec('edit01', null));
  assert.equal(store.newestByUrl('https://example.com/never', T), undefined);
  assert.equal((await store.update('edit01', { url: 'https://example.com/later' }, T))?.url, 'https://example.com/later', 'the next edit works');
});

test('an update asked while the code is being deleted answers undefined at once, and writes nothing', async (t) => {
  const dir = tempDir(t);
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet, ...MANUAL }));
  t.after(() => store.close());
  await store.insert(rec('gone01', null), T);
  const deleting = store.delete('gone01', T);
  assert.equal(await store.update('gone01', { url: 'https://example.com/late' }, T), undefined);
  assert.equal(await deleting, true);
  assert.deepEqual(
    logEntries(dir).map((e) => e.op),
    ['C', 'D'],
  );
});
