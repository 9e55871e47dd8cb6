/**
 * The `LinkStore` contract (src/store/link-store.ts) as tests, run over every backend: each
 * backend's test file calls `runStoreConformance` with a factory, and passes this file unchanged.
 * Nothing here may know a backend's internals: only the contract's methods are used.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { LinkRecord, LinkStore, MaybePromise, VisitDecision } from '../../src/store/link-store.ts';

/** Where a store lives: opened empty the first time, and reopened with what it held at close. */
export interface StorePlace {
  open(): Promise<LinkStore>;
  /** Removes the place; its stores are closed by then. */
  destroy(): Promise<void>;
}

export type StoreFactory = () => Promise<StorePlace>;

const DAY = 86400;
/** Unix seconds of the tests' "now". */
const T = 1_790_000_000;

const rec = (code: string, url = `https://example.com/${code}`, createdAt = T, retentionDays = 0, visits = 0): LinkRecord => ({
  code,
  url,
  createdAt,
  retentionDays,
  visits,
  maxVisits: null,
});

/** The decision's fields, copied at once (a store may reuse the object). */
async function decide(store: LinkStore, code: string, now: number, count: boolean): Promise<{ kind: VisitDecision['kind']; url?: string }> {
  const d = await store.countVisit(code, now, count);
  return d.kind === 'found' ? { kind: d.kind, url: d.url } : { kind: d.kind };
}

async function pageCodes(store: LinkStore, query: { limit?: number; offset?: number; now?: number } = {}): Promise<{ total: number; count: number; codes: string[] }> {
  const page = await store.list({ limit: query.limit, offset: query.offset ?? 0, now: query.now ?? T });
  try {
    const records = await page.slice(0, page.count);
    return { total: page.total, count: page.count, codes: records.map((r) => r.code) };
  } finally {
    page.release();
  }
}

async function exported(store: LinkStore, now = T): Promise<LinkRecord[]> {
  const out: LinkRecord[] = [];
  for await (const r of store.exportAll(now)) out.push({ ...r });
  return out;
}

async function inserted(store: LinkStore, record: LinkRecord, now = record.createdAt): Promise<boolean> {
  return store.insert(record, now);
}

export function runStoreConformance(name: string, factory: StoreFactory): void {
  /** A fresh store, closed and its place removed when the test ends. */
  async function fresh(t: TestContext): Promise<{ store: LinkStore; reopen: () => Promise<LinkStore> }> {
    const place = await factory();
    let store = await place.open();
    t.after(async () => {
      await store.close();
      await place.destroy();
    });
    return {
      store,
      async reopen() {
        await store.close();
        store = await place.open();
        return store;
      },
    };
  }

  const settle = <V>(value: MaybePromise<V>): Promise<V> => Promise.resolve(value);

  describe(`LinkStore conformance: ${name}`, () => {
    test('a new store is ready and empty', async (t) => {
      const { store } = await fresh(t);
      assert.equal(await settle(store.ready()), undefined);
      assert.equal(store.count, 0);
      assert.deepEqual(await pageCodes(store), { total: 0, count: 0, codes: [] });
      assert.deepEqual(await exported(store), []);
    });

    test('insert stores a record that get returns as it was given; a taken code is refused', async (t) => {
      const { store } = await fresh(t);
      const a = rec('aaaaaa', 'https://example.com/a?x=1', T - 5, 30, 0);
      assert.equal(await inserted(store, a, T), true);
      assert.deepEqual(await settle(store.get('aaaaaa', T)), a);
      assert.equal(await settle(store.get('AAAAAA', T)), undefined, 'codes are case-sensitive');
      assert.equal(await settle(store.get('bbbbbb', T)), undefined);
      assert.equal(await inserted(store, rec('aaaaaa', 'https://example.com/other'), T), false);
      assert.deepEqual(await settle(store.get('aaaaaa', T)), a, 'the refused insert changed nothing');
      assert.equal(store.count, 1);
    });

    test('newestByUrl finds the newest live record of exactly that URL', async (t) => {
      const { store } = await fresh(t);
      const url = 'https://example.com/same';
      await inserted(store, rec('first1', url));
      await inserted(store, rec('other1', 'https://example.com/same/more'));
      await inserted(store, rec('second', url));
      assert.equal((await settle(store.newestByUrl(url, T)))?.code, 'second');
      assert.equal(await settle(store.newestByUrl('https://example.com/sam', T)), undefined, 'no prefix match');
      assert.equal(await settle(store.newestByUrl('https://example.com/nothing', T)), undefined);
      assert.equal(await store.delete('second', T), true);
      assert.equal((await settle(store.newestByUrl(url, T)))?.code, 'first1', 'the next newest once the newest is gone');
    });

    test('list is newest first by insertion, whatever created_at says; ties keep insertion order', async (t) => {
      const { store } = await fresh(t);
      for (const code of ['tie001', 'tie002', 'tie003']) await inserted(store, rec(code, undefined, T));
      // Inserted last with an older created_at (an import): still the newest.
      await inserted(store, rec('older1', undefined, T - 1000), T);
      assert.deepEqual((await pageCodes(store)).codes, ['older1', 'tie003', 'tie002', 'tie001']);
    });

    test('list pages with limit and offset; total counts every live record', async (t) => {
      const { store } = await fresh(t);
      const codes = Array.from({ length: 7 }, (_, i) => `page0${i}`);
      for (const code of codes) await inserted(store, rec(code));
      const newest = [...codes].reverse();
      assert.deepEqual(await pageCodes(store, { limit: 3 }), { total: 7, count: 3, codes: newest.slice(0, 3) });
      assert.deepEqual(await pageCodes(store, { limit: 3, offset: 3 }), { total: 7, count: 3, codes: newest.slice(3, 6) });
      assert.deepEqual(await pageCodes(store, { limit: 3, offset: 6 }), { total: 7, count: 1, codes: newest.slice(6) });
      assert.deepEqual(await pageCodes(store, { offset: 2 }), { total: 7, count: 5, codes: newest.slice(2) });
      assert.deepEqual(await pageCodes(store, { limit: 5, offset: 7 }), { total: 7, count: 0, codes: [] });
      assert.deepEqual(await pageCodes(store, { offset: 1000 }), { total: 7, count: 0, codes: [] });
      const page = await store.list({ limit: 4, offset: 1, now: T });
      try {
        const parts = [...(await page.slice(0, 2)), ...(await page.slice(2, 3)), ...(await page.slice(3, 100))];
        assert.deepEqual(parts.map((r) => r.code), newest.slice(1, 5), 'slices read the page in parts, clamped to its count');
      } finally {
        page.release();
      }
    });

    test('a page is a snapshot: writes made while it is read do not change it', async (t) => {
      const { store } = await fresh(t);
      for (const code of ['snap01', 'snap02', 'snap03', 'snap04']) await inserted(store, rec(code));
      const page = await store.list({ offset: 0, now: T });
      try {
        const head = await page.slice(0, 1);
        await inserted(store, rec('snap05'));
        assert.equal(await store.delete('snap02', T), true);
        assert.equal(await store.delete('snap01', T), true);
        await inserted(store, rec('snap01', 'https://example.com/again'));
        const rest = await page.slice(1, page.count);
        assert.equal(page.total, 4);
        assert.equal(page.count, 4);
        assert.deepEqual([...head, ...rest].map((r) => [r.code, r.url]), [
          ['snap04', 'https://example.com/snap04'],
          ['snap03', 'https://example.com/snap03'],
          ['snap02', 'https://example.com/snap02'],
          ['snap01', 'https://example.com/snap01'],
        ]);
      } finally {
        page.release();
        page.release();
      }
      assert.deepEqual((await pageCodes(store)).codes, ['snap01', 'snap05', 'snap04', 'snap03'], 'a new page sees the writes');
    });

    test('delete: once true, the code is gone from every read and free for a new insert', async (t) => {
      const { store } = await fresh(t);
      await inserted(store, rec('gone01'));
      await inserted(store, rec('kept01'));
      assert.equal(await store.delete('gone01', T), true);
      assert.equal(await settle(store.get('gone01', T)), undefined);
      assert.equal(await settle(store.newestByUrl('https://example.com/gone01', T)), undefined);
      assert.deepEqual((await pageCodes(store)).codes, ['kept01']);
      assert.deepEqual((await exported(store)).map((r) => r.code), ['kept01']);
      assert.deepEqual(await decide(store, 'gone01', T, true), { kind: 'missing' });
      assert.equal(await store.delete('gone01', T), false, 'a second delete finds nothing');
      assert.equal(await store.delete('never1', T), false);
      const again = rec('gone01', 'https://example.com/new-target', T + 1);
      assert.equal(await inserted(store, again), true);
      assert.deepEqual(await settle(store.get('gone01', T + 1)), again);
    });

    test('expiry: an expired record is skipped by every read, cannot be deleted, and gives up its code', async (t) => {
      const { store } = await fresh(t);
      const short = rec('short1', 'https://example.com/short', T, 1);
      await inserted(store, short);
      await inserted(store, rec('long01', 'https://example.com/long', T, 2));
      await inserted(store, rec('ever01', 'https://example.com/short', T - 10, 0), T);
      const last = T + DAY - 1;
      const end = T + DAY;
      // Alive until the second before created_at + retention_days × 86400.
      assert.deepEqual(await settle(store.get('short1', last)), short);
      assert.deepEqual(await decide(store, 'short1', last, false), { kind: 'found', url: 'https://example.com/short' });
      assert.equal(await settle(store.get('short1', end)), undefined);
      assert.equal((await settle(store.newestByUrl('https://example.com/short', end)))?.code, 'ever01', 'the newest live one');
      assert.deepEqual(await pageCodes(store, { now: end }), { total: 2, count: 2, codes: ['ever01', 'long01'] });
      assert.deepEqual((await exported(store, end)).map((r) => r.code), ['long01', 'ever01']);
      assert.deepEqual(await decide(store, 'short1', end, true), { kind: 'expired' });
      assert.deepEqual(await decide(store, 'long01', T + 2 * DAY, true), { kind: 'expired' });
      assert.equal(await store.delete('short1', end), false, 'an expired link is gone for delete too');
      const reused = rec('short1', 'https://example.com/reused', end, 0);
      assert.equal(await inserted(store, reused, end), true, 'an expired link gives its code up');
      assert.deepEqual(await settle(store.get('short1', end)), reused);
      assert.deepEqual(await decide(store, 'short1', end, false), { kind: 'found', url: 'https://example.com/reused' });
    });

    test('countVisit decides and counts exactly: a counted found adds one, an uncounted one nothing', async (t) => {
      const { store } = await fresh(t);
      await inserted(store, rec('visit1', 'https://example.com/v'));
      await inserted(store, rec('visit2', 'https://example.com/w'));
      for (let i = 0; i < 25; i++) assert.deepEqual(await decide(store, 'visit1', T, true), { kind: 'found', url: 'https://example.com/v' });
      for (let i = 0; i < 7; i++) assert.deepEqual(await decide(store, 'visit1', T, false), { kind: 'found', url: 'https://example.com/v' });
      assert.deepEqual(await decide(store, 'visit2', T, true), { kind: 'found', url: 'https://example.com/w' });
      assert.deepEqual(await decide(store, 'nosuch', T, true), { kind: 'missing' });
      assert.equal((await settle(store.get('visit1', T)))?.visits, 25);
      assert.equal((await settle(store.get('visit2', T)))?.visits, 1);
      const concurrent = await Promise.all(Array.from({ length: 100 }, () => decide(store, 'visit2', T, true)));
      assert.ok(concurrent.every((d) => d.kind === 'found'));
      assert.equal((await settle(store.get('visit2', T)))?.visits, 101, 'concurrent visits are all counted');
      const page = await pageCodes(store);
      assert.deepEqual(page.codes, ['visit2', 'visit1']);
    });

    test('of 50 concurrent inserts of one code exactly one is true; of 10 concurrent deletes exactly one', async (t) => {
      const { store } = await fresh(t);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.insert(rec('racer1', `https://example.com/${i}`), T)));
      assert.equal(results.filter((r) => r === true).length, 1);
      const winner = results.indexOf(true);
      assert.equal((await settle(store.get('racer1', T)))?.url, `https://example.com/${winner}`);
      assert.equal(store.count, 1);
      const deletes = await Promise.all(Array.from({ length: 10 }, () => store.delete('racer1', T)));
      assert.equal(deletes.filter((r) => r).length, 1);
      assert.equal(await settle(store.get('racer1', T)), undefined);
    });

    test('exportAll yields every live record, oldest first, with its fields', async (t) => {
      const { store } = await fresh(t);
      const all: LinkRecord[] = [];
      for (let i = 0; i < 2500; i++) {
        const r = rec(`exp${String(i).padStart(4, '0')}`, `https://example.com/e/${i}`, T - 2500 + i, i % 3 === 0 ? 0 : 400);
        all.push(r);
        assert.equal(await inserted(store, r, T), true);
      }
      assert.equal(await store.delete('exp0007', T), true);
      await decide(store, 'exp0010', T, true);
      const expected = all.filter((r) => r.code !== 'exp0007').map((r) => (r.code === 'exp0010' ? { ...r, visits: 1 } : r));
      assert.deepEqual(await exported(store), expected);
    });

    test('after close and reopen, every insert, delete and counted visit is as it was', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      await inserted(store, rec('keep01', 'https://example.com/k', T - 2, 0));
      await inserted(store, rec('keep02', 'https://example.com/k', T - 1, 5));
      await inserted(store, rec('drop01', 'https://example.com/d', T, 0));
      await inserted(store, rec('keep03', 'https://example.com/x', T, 0));
      assert.equal(await store.delete('drop01', T), true);
      for (let i = 0; i < 3; i++) await decide(store, 'keep02', T, true);
      await decide(store, 'keep01', T, true);
      await decide(store, 'keep01', T, false);
      const before = await exported(store);
      store = await handle.reopen();
      assert.equal(await settle(store.ready()), undefined);
      assert.deepEqual(await exported(store), before);
      assert.deepEqual(await settle(store.get('keep01', T)), rec('keep01', 'https://example.com/k', T - 2, 0, 1));
      assert.deepEqual(await settle(store.get('keep02', T)), rec('keep02', 'https://example.com/k', T - 1, 5, 3));
      assert.equal(await settle(store.get('drop01', T)), undefined);
      assert.deepEqual((await pageCodes(store)).codes, ['keep03', 'keep02', 'keep01']);
      assert.equal((await settle(store.newestByUrl('https://example.com/k', T)))?.code, 'keep02');
      assert.equal(await inserted(store, rec('keep01')), false, 'a code stays taken across a restart');
      assert.equal(await inserted(store, rec('drop01', 'https://example.com/d2')), true, 'a deleted code stays free');
    });
  });
}
