/** The log store passes the `LinkStore` conformance suite (a fresh data dir per test). */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';
import { runStoreConformance } from '../../support/store-conformance.ts';

const quiet = createLogger('silent');

runStoreConformance('log store', async () => {
  const dir = tempDir();
  return {
    open: async () => new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet })),
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
});

test('the redirect reads the clock only for a link that can expire', async (t) => {
  const dir = tempDir();
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet }));
  // Closed before the directory goes: hooks run in the order they are added.
  t.after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const T = 1_790_000_000;
  const link = (code: string, retentionDays: number) => ({
    code,
    url: `https://example.com/${code}`,
    createdAt: T,
    retentionDays,
    visits: 0,
    untracked: 0,
    maxVisits: null,
  });
  await store.insert(link('never1', 0), T);
  await store.insert(link('month1', 30), T);
  let reads = 0;
  const clock = (): number => {
    reads++;
    return T + 1;
  };
  assert.deepEqual(store.countVisit('never1', clock, true), { kind: 'found', url: 'https://example.com/never1', limited: false });
  assert.equal(reads, 0);
  assert.deepEqual(store.countVisit('month1', clock, true), { kind: 'found', url: 'https://example.com/month1', limited: false });
  assert.equal(reads, 1);
  assert.deepEqual(
    store.countVisit('month1', () => T + 30 * 86_400, true),
    { kind: 'expired' },
  );
});

test('countVisitIn finds a code in a request path, and only one of the code alphabet, 1 to 64 long', async (t) => {
  const dir = tempDir();
  const T = 1_790_000_000;
  // Codes the service would refuse, as a log written by another tool may hold them.
  const odd = ['a/b', 'a~b', '%41', 'L'.repeat(65)];
  writeFileSync(
    join(dir, 'urls.log'),
    Buffer.concat(
      ['abc123', ...odd].map((code) => encodeEntry({ op: 'C', code, url: `https://example.com/${code.length}`, createdAt: T, retentionDays: 0, visits: 0 })),
    ),
  );
  const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: quiet }));
  // Closed before the directory goes (hooks run in the order they are added): the store rewrites
  // this log, written without a format line, as it opens.
  t.after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const clock = (): number => T;
  assert.deepEqual(store.countVisitIn('/s/abc123', 3, clock, true), { kind: 'found', url: 'https://example.com/6', limited: false });
  assert.deepEqual(store.countVisitIn('/abc123', 1, clock, false), { kind: 'found', url: 'https://example.com/6', limited: false });
  assert.equal(store.get('abc123', T)?.visits, 1, 'a GET counted, a HEAD not');
  for (const code of odd) {
    assert.deepEqual(store.countVisitIn(`/${code}`, 1, clock, true), { kind: 'missing' }, code);
    assert.deepEqual(
      store.countVisit(code, clock, false),
      { kind: 'found', url: `https://example.com/${code.length}`, limited: false },
      `${code}: still there for the general path`,
    );
  }
  assert.deepEqual(store.countVisitIn('/', 1, clock, true), { kind: 'missing' }, 'no empty code');
});
