/**
 * The `LinkStore` contract (src/store/link-store.ts) as tests, run over every backend: each
 * backend's test file calls `runStoreConformance` with a factory, and passes this file unchanged.
 * Nothing here may know a backend's internals: only the contract's methods are used.
 */
import assert from 'node:assert/strict';
import { describe, test as nodeTest, type TestContext } from 'node:test';
import type { DomainRedirects } from '../../src/store/domain-store.ts';
import type { LinkRecord, LinkStore, MaybePromise, Routing, VisitDecision } from '../../src/store/link-store.ts';

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

const rec = (code: string, url = `https://example.com/${code}`, createdAt = T, retentionDays = 0, visits = 0, maxVisits: number | null = null): LinkRecord => ({
  code,
  url,
  createdAt,
  retentionDays,
  visits,
  untracked: visits,
  maxVisits,
});

/** The decision's fields, copied at once (a store may reuse the object). */
async function decide(store: LinkStore, code: string, now: number, count: boolean): Promise<{ kind: VisitDecision['kind']; url?: string }> {
  const d = await store.countVisit(code, () => now, count);
  return d.kind === 'found' ? { kind: d.kind, url: d.url } : { kind: d.kind };
}

async function pageCodes(
  store: LinkStore,
  query: { limit?: number; offset?: number; now?: number; q?: string; tags?: string[]; author?: string; domain?: string | null } = {},
): Promise<{ total: number; count: number; codes: string[] }> {
  const page = await store.list({
    limit: query.limit,
    offset: query.offset ?? 0,
    now: query.now ?? T,
    ...(query.q !== undefined && { q: query.q }),
    ...(query.tags !== undefined && { tags: query.tags }),
    ...(query.author !== undefined && { author: query.author }),
    ...(query.domain !== undefined && { domain: query.domain }),
  });
  try {
    const records = await page.slice(0, page.count);
    return { total: page.total, count: page.count, codes: records.map((r) => r.code) };
  } finally {
    page.release();
  }
}

async function exported(store: LinkStore, now = T, author?: string): Promise<LinkRecord[]> {
  const out: LinkRecord[] = [];
  for await (const r of store.exportAll(now, author)) out.push({ ...r });
  return out;
}

/** Every read gives back `expected` as they are: get, the list (newest first) and the export (oldest first). */
async function readsBack(store: LinkStore, expected: readonly LinkRecord[], label: string): Promise<void> {
  for (const r of expected) assert.deepEqual(await Promise.resolve(store.get(r.code, T)), r, `${label}: get ${r.code}`);
  const page = await store.list({ offset: 0, now: T });
  try {
    assert.deepEqual(await page.slice(0, page.count), [...expected].reverse(), label);
  } finally {
    page.release();
  }
  assert.deepEqual(await exported(store), expected, label);
}

async function inserted(store: LinkStore, record: LinkRecord, now = record.createdAt): Promise<boolean> {
  return store.insert(record, now);
}

/**
 * Registers the suite for a backend. With `skip` (the backend cannot run here: its reason) every
 * test is registered as skipped, so that the run lists each one as not run.
 */
export function runStoreConformance(name: string, factory: StoreFactory, { skip }: { skip?: string } = {}): void {
  const test = (title: string, fn: (t: TestContext) => Promise<void>): void => void nodeTest(title, { skip: skip ?? false }, fn);

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

    test('every count up to 2^53 − 1 is held exactly, through a reopen, and counting stops there', async (t) => {
      const { store, reopen } = await fresh(t);
      const max = Number.MAX_SAFE_INTEGER;
      const counts: [string, number][] = [
        ['cnt16d', 1234567890123456],
        ['cntmax', max - 1],
        ['cntlim', max],
      ];
      for (const [code, visits] of counts) assert.equal(await inserted(store, rec(code, undefined, T, 0, visits, code === 'cntlim' ? 5 : null), T), true);
      assert.deepEqual(await decide(store, 'cntmax', T, true), { kind: 'found', url: 'https://example.com/cntmax' });
      assert.deepEqual(await decide(store, 'cntmax', T, true), { kind: 'found', url: 'https://example.com/cntmax' });
      assert.deepEqual(await decide(store, 'cntlim', T, true), { kind: 'limit_reached' });
      const again = await reopen();
      assert.deepEqual(
        (await exported(again)).map((r) => [r.code, r.visits]),
        [
          ['cnt16d', 1234567890123456],
          ['cntmax', max],
          ['cntlim', max],
        ],
      );
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
        assert.deepEqual(
          parts.map((r) => r.code),
          newest.slice(1, 5),
          'slices read the page in parts, clamped to its count',
        );
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
        assert.deepEqual(
          [...head, ...rest].map((r) => [r.code, r.url]),
          [
            ['snap04', 'https://example.com/snap04'],
            ['snap03', 'https://example.com/snap03'],
            ['snap02', 'https://example.com/snap02'],
            ['snap01', 'https://example.com/snap01'],
          ],
        );
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
      assert.deepEqual(
        (await exported(store)).map((r) => r.code),
        ['kept01'],
      );
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
      assert.deepEqual(
        (await exported(store, end)).map((r) => r.code),
        ['long01', 'ever01'],
      );
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
      const expected = all.filter((r) => r.code !== 'exp0007').map((r) => (r.code === 'exp0010' ? { ...r, visits: 1, untracked: 1 } : r));
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

    test('maxVisits round-trips through insert, get, list, newestByUrl, export and a reopen', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      const limited = rec('limit1', 'https://example.com/l', T, 0, 0, 3);
      const top = rec('limit2', 'https://example.com/l', T, 0, 7, 2_147_483_647);
      const plain = rec('plain1');
      for (const r of [limited, top, plain]) assert.equal(await inserted(store, r), true);
      const check = async (label: string): Promise<void> => {
        assert.deepEqual(await settle(store.get('limit1', T)), limited, label);
        assert.deepEqual(await settle(store.get('limit2', T)), top, label);
        assert.deepEqual(await settle(store.get('plain1', T)), plain, label);
        assert.deepEqual(await settle(store.newestByUrl('https://example.com/l', T)), top, label);
        const page = await store.list({ offset: 0, now: T });
        try {
          assert.deepEqual(await page.slice(0, page.count), [plain, top, limited], label);
        } finally {
          page.release();
        }
        assert.deepEqual(await exported(store), [limited, top, plain], label);
      };
      await check('before reopen');
      store = await handle.reopen();
      await check('after reopen');
    });

    test('visit limits: of 500 concurrent counted visits on maxVisits 50 exactly 50 are found, and nothing more is counted', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      await inserted(store, rec('burst1', 'https://example.com/burst', T, 0, 0, 50));
      const results = await Promise.all(Array.from({ length: 500 }, () => decide(store, 'burst1', T, true)));
      assert.equal(results.filter((d) => d.kind === 'found').length, 50);
      assert.equal(results.filter((d) => d.kind === 'limit_reached').length, 450);
      assert.ok(results.every((d) => d.kind === 'limit_reached' || d.url === 'https://example.com/burst'));
      assert.equal((await settle(store.get('burst1', T)))?.visits, 50);
      // Used up: GET and HEAD alike answer limit_reached, and nothing is counted.
      assert.deepEqual(await decide(store, 'burst1', T, true), { kind: 'limit_reached' });
      assert.deepEqual(await decide(store, 'burst1', T, false), { kind: 'limit_reached' });
      // Still readable: the record stays visible.
      assert.deepEqual(await settle(store.get('burst1', T)), rec('burst1', 'https://example.com/burst', T, 0, 50, 50));
      assert.deepEqual((await pageCodes(store)).codes, ['burst1']);
      assert.equal((await settle(store.newestByUrl('https://example.com/burst', T)))?.visits, 50);
      store = await handle.reopen();
      assert.equal((await settle(store.get('burst1', T)))?.visits, 50, 'the counted visits are durable');
      assert.deepEqual(await decide(store, 'burst1', T, true), { kind: 'limit_reached' });
    });

    test('visit limits: HEAD answers as the next GET would and never counts; a one-time link redirects once', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      await inserted(store, rec('once01', 'https://example.com/once', T, 0, 0, 1));
      await inserted(store, rec('twice1', 'https://example.com/twice', T, 0, 0, 2));
      for (let i = 0; i < 5; i++) assert.deepEqual(await decide(store, 'once01', T, false), { kind: 'found', url: 'https://example.com/once' });
      assert.equal((await settle(store.get('once01', T)))?.visits, 0, 'HEAD counted nothing');
      assert.deepEqual(await decide(store, 'once01', T, true), { kind: 'found', url: 'https://example.com/once' });
      assert.deepEqual(await decide(store, 'once01', T, false), { kind: 'limit_reached' });
      assert.deepEqual(await decide(store, 'once01', T, true), { kind: 'limit_reached' });
      assert.equal((await settle(store.get('once01', T)))?.visits, 1);
      assert.deepEqual(await decide(store, 'twice1', T, true), { kind: 'found', url: 'https://example.com/twice' });
      // Expiry comes before the limit: an expired limited link is expired.
      await inserted(store, rec('expone', 'https://example.com/e', T, 1, 0, 1));
      assert.deepEqual(await decide(store, 'expone', T + DAY, true), { kind: 'expired' });
      store = await handle.reopen();
      assert.equal((await settle(store.get('twice1', T)))?.visits, 1, 'a limited link keeps its count across a reopen');
      assert.deepEqual(await decide(store, 'twice1', T, true), { kind: 'found', url: 'https://example.com/twice' });
      assert.deepEqual(await decide(store, 'twice1', T, true), { kind: 'limit_reached' });
      assert.deepEqual(await decide(store, 'once01', T, false), { kind: 'limit_reached' });
    });

    test('update changes each field, keeps code, created_at, visits and the list position, and survives a reopen', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      await inserted(store, rec('edit01', 'https://example.com/old', T - 10, 0, 0));
      await inserted(store, rec('edit02', 'https://example.com/old', T - 5, 0, 0));
      await inserted(store, rec('edit03'));
      for (let i = 0; i < 4; i++) await decide(store, 'edit01', T, true);
      assert.deepEqual(await store.update('edit01', { url: 'https://example.com/new' }, T), rec('edit01', 'https://example.com/new', T - 10, 0, 4));
      assert.deepEqual(await store.update('edit01', { retentionDays: 30 }, T), rec('edit01', 'https://example.com/new', T - 10, 30, 4));
      assert.deepEqual(await store.update('edit01', { maxVisits: 10 }, T), rec('edit01', 'https://example.com/new', T - 10, 30, 4, 10));
      assert.deepEqual(await store.update('edit01', {}, T), rec('edit01', 'https://example.com/new', T - 10, 30, 4, 10), 'no change is still an answer');
      assert.deepEqual(
        await store.update('edit01', { maxVisits: null, retentionDays: 0, url: 'https://example.com/newer' }, T),
        rec('edit01', 'https://example.com/newer', T - 10, 0, 4),
        'null clears the limit',
      );
      const edited = rec('edit01', 'https://example.com/newer', T - 10, 0, 4);
      const check = async (label: string): Promise<void> => {
        assert.deepEqual(await settle(store.get('edit01', T)), edited, label);
        assert.deepEqual((await pageCodes(store)).codes, ['edit03', 'edit02', 'edit01'], `${label}: an edited link keeps its place`);
        assert.equal((await settle(store.newestByUrl('https://example.com/old', T)))?.code, 'edit02', `${label}: the old URL no longer finds it`);
        assert.equal((await settle(store.newestByUrl('https://example.com/newer', T)))?.code, 'edit01', `${label}: the new URL does`);
        assert.deepEqual(await decide(store, 'edit01', T, false), { kind: 'found', url: 'https://example.com/newer' }, label);
        assert.deepEqual(
          (await exported(store)).map((r) => r.code),
          ['edit01', 'edit02', 'edit03'],
          label,
        );
      };
      await check('before reopen');
      // Onto the URL of a newer link: lookup still gives the newest link of that URL.
      store = await handle.reopen();
      await check('after reopen');
      assert.equal((await store.update('edit01', { url: 'https://example.com/old' }, T))?.code, 'edit01');
      assert.equal((await settle(store.newestByUrl('https://example.com/old', T)))?.code, 'edit02', 'the newest link of a URL, not the last edited');
    });

    test('update of an unknown, deleted or expired code is undefined and changes nothing', async (t) => {
      const { store } = await fresh(t);
      assert.equal(await store.update('nosuch', { url: 'https://example.com/x' }, T), undefined);
      await inserted(store, rec('del001'));
      assert.equal(await store.delete('del001', T), true);
      assert.equal(await store.update('del001', { url: 'https://example.com/x' }, T), undefined);
      await inserted(store, rec('exp001', 'https://example.com/exp', T, 1));
      assert.equal(await store.update('exp001', { retentionDays: 0 }, T + DAY), undefined, 'an expired link is not brought back');
      assert.equal(await settle(store.get('exp001', T + DAY)), undefined);
      assert.deepEqual(await settle(store.get('exp001', T)), rec('exp001', 'https://example.com/exp', T, 1));
    });

    test('update: a shorter retention can expire the link at once; a maxVisits at or below visits uses it up', async (t) => {
      const { store } = await fresh(t);
      await inserted(store, rec('short1', 'https://example.com/s', T - 3 * DAY, 10));
      assert.deepEqual(await store.update('short1', { retentionDays: 2 }, T), rec('short1', 'https://example.com/s', T - 3 * DAY, 2), 'the record as updated');
      assert.equal(await settle(store.get('short1', T)), undefined, 'expired from then on');
      assert.deepEqual(await decide(store, 'short1', T, true), { kind: 'expired' });
      assert.deepEqual((await pageCodes(store)).codes, []);
      await inserted(store, rec('used01', 'https://example.com/u'));
      for (let i = 0; i < 3; i++) await decide(store, 'used01', T, true);
      assert.deepEqual(await store.update('used01', { maxVisits: 3 }, T), rec('used01', 'https://example.com/u', T, 0, 3, 3));
      assert.deepEqual(await decide(store, 'used01', T, true), { kind: 'limit_reached' });
      assert.deepEqual(await decide(store, 'used01', T, false), { kind: 'limit_reached' });
      assert.equal((await settle(store.get('used01', T)))?.visits, 3);
      assert.deepEqual(
        await store.update('used01', { maxVisits: 4 }, T),
        rec('used01', 'https://example.com/u', T, 0, 3, 4),
        'a higher limit gives visits back',
      );
      assert.deepEqual(await decide(store, 'used01', T, true), { kind: 'found', url: 'https://example.com/u' });
      assert.deepEqual(await decide(store, 'used01', T, true), { kind: 'limit_reached' });
      await store.update('used01', { maxVisits: null }, T);
      assert.deepEqual(await decide(store, 'used01', T, true), { kind: 'found', url: 'https://example.com/u' });
      assert.equal((await settle(store.get('used01', T)))?.visits, 5);
    });

    test('concurrent updates of one code all take effect; an update racing a delete never brings the link back', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      await inserted(store, rec('race01'));
      const [a, b, c] = await Promise.all([
        store.update('race01', { url: 'https://example.com/raced' }, T),
        store.update('race01', { retentionDays: 9 }, T),
        store.update('race01', { maxVisits: 7 }, T),
      ]);
      assert.equal(a?.url, 'https://example.com/raced');
      assert.deepEqual(c, rec('race01', 'https://example.com/raced', T, 9, 0, 7), 'the last sees the two before it');
      assert.equal(b?.retentionDays, 9);
      assert.deepEqual(await settle(store.get('race01', T)), c);
      for (let i = 0; i < 5; i++) {
        const code = `racd0${i}`;
        await inserted(store, rec(code));
        // The delete asked first, then the update, then both in the other order.
        const [deleted, updated] =
          i % 2 === 0
            ? await Promise.all([store.delete(code, T), store.update(code, { url: 'https://example.com/late' }, T)])
            : await Promise.all([store.update(code, { url: 'https://example.com/early' }, T), store.delete(code, T)]).then(([u, d]) => [d, u] as const);
        assert.equal(deleted, true, 'the delete wins');
        // Undefined, or the record if the update went first: never the link brought back.
        if (updated !== undefined) assert.equal(updated.code, code);
        assert.equal(await settle(store.get(code, T)), undefined);
      }
      store = await handle.reopen();
      assert.deepEqual(await settle(store.get('race01', T)), rec('race01', 'https://example.com/raced', T, 9, 0, 7));
      for (let i = 0; i < 5; i++) assert.equal(await settle(store.get(`racd0${i}`, T)), undefined, 'deleted for good');
    });

    test('q keeps the links whose code or URL contains it, case-insensitively, with paging, total and expiry', async (t) => {
      const { store } = await fresh(t);
      await inserted(store, rec('Promo1', 'https://shop.example/sale'));
      await inserted(store, rec('abc001', 'https://example.com/PROMO/winter'));
      await inserted(store, rec('abc002', 'https://example.com/other'));
      await inserted(store, rec('promo3', 'https://example.com/promo', T, 1));
      await inserted(store, rec('abc004', 'https://example.com/SaLe/promos?x=1'));
      assert.deepEqual(await pageCodes(store, { q: 'promo' }), { total: 4, count: 4, codes: ['abc004', 'promo3', 'abc001', 'Promo1'] });
      assert.deepEqual(await pageCodes(store, { q: 'PrOmO' }), { total: 4, count: 4, codes: ['abc004', 'promo3', 'abc001', 'Promo1'] });
      assert.deepEqual(
        await pageCodes(store, { q: 'promo', now: T + DAY }),
        { total: 3, count: 3, codes: ['abc004', 'abc001', 'Promo1'] },
        'expired links are left out',
      );
      assert.deepEqual(await pageCodes(store, { q: 'promo', limit: 2, offset: 1 }), { total: 4, count: 2, codes: ['promo3', 'abc001'] });
      assert.deepEqual(await pageCodes(store, { q: 'promo', limit: 2, offset: 4 }), { total: 4, count: 0, codes: [] });
      assert.deepEqual(await pageCodes(store, { q: 'sale' }), { total: 2, count: 2, codes: ['abc004', 'Promo1'] });
      assert.deepEqual(await pageCodes(store, { q: 'abc00' }), { total: 3, count: 3, codes: ['abc004', 'abc002', 'abc001'] });
      assert.deepEqual(await pageCodes(store, { q: '?x=1' }), { total: 1, count: 1, codes: ['abc004'] });
      assert.deepEqual(await pageCodes(store, { q: 'nothing-like-it' }), { total: 0, count: 0, codes: [] });
      // Not across the code and the URL: each is matched on its own.
      assert.deepEqual(await pageCodes(store, { q: 'abc002https' }), { total: 0, count: 0, codes: [] });
      // An edited URL is searched as it now is.
      await store.update('abc002', { url: 'https://example.com/promo-now' }, T);
      assert.deepEqual((await pageCodes(store, { q: 'PROMO-NOW' })).codes, ['abc002']);
    });

    test('title and tags round-trip through insert, get, list, newestByUrl, export, update and a reopen', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      // Any text a title may hold: tabs, line breaks, quotes, backslashes, braces, non-ASCII.
      const titled: LinkRecord = { ...rec('lab001', 'https://example.com/t'), title: 'Säle\t"50%"\n{x}\\ \u{1F600} \u2028', tags: ['a b', 'zeta', 'Émile'] };
      const tagged: LinkRecord = { ...rec('lab002', 'https://example.com/t', T, 0, 3, 9), tags: ['only'] };
      const named: LinkRecord = { ...rec('lab003'), title: 'x' };
      const plain = rec('lab004');
      for (const r of [titled, tagged, named, plain]) assert.equal(await inserted(store, r), true);
      let expected = [titled, tagged, named, plain];
      const check = async (label: string): Promise<void> => {
        await readsBack(store, expected, label);
        assert.deepEqual(await settle(store.newestByUrl('https://example.com/t', T)), expected[1], label);
      };
      await check('before reopen');
      store = await handle.reopen();
      await check('after reopen');
      // Edits: set, change and clear each; an edit of another field keeps them.
      const edited: LinkRecord = { ...rec('lab001', 'https://example.com/t2'), title: 'Säle\t"50%"\n{x}\\ \u{1F600} \u2028', tags: ['a b', 'zeta', 'Émile'] };
      assert.deepEqual(await store.update('lab001', { url: 'https://example.com/t2' }, T), edited, 'an edit of the URL keeps title and tags');
      const retitled: LinkRecord = { ...rec('lab002', 'https://example.com/t', T, 0, 3, 9), title: 'new' };
      assert.deepEqual(await store.update('lab002', { title: 'new', tags: [] }, T), retitled, 'tags [] clears them');
      const untitled = rec('lab003');
      assert.deepEqual(await store.update('lab003', { title: null }, T), untitled, 'title null clears it');
      const retagged: LinkRecord = { ...rec('lab004'), tags: ['p', 'q'] };
      assert.deepEqual(await store.update('lab004', { tags: ['p', 'q'] }, T), retagged);
      expected = [edited, retitled, untitled, retagged];
      await check('after edits');
      store = await handle.reopen();
      await check('after edits and a reopen');
    });

    test('routing round-trips whole through insert, get, list, export, update (parts set, removed, cleared, kept) and a reopen', async (t) => {
      const handle = await fresh(t);
      let store = handle.store;
      // Every part, with text a JSON field must escape: a tab, a quote, a line separator, non-ASCII.
      const routing: Routing = {
        rules: [
          { url: 'https://example.com/ios?a="b"', conditions: [{ type: 'device', key: null, value: 'ios' }] },
          {
            url: 'https://example.com/fr\u2028',
            conditions: [
              { type: 'language', key: null, value: 'fr' },
              { type: 'query-param', key: 'ref\t', value: 'Émile' },
            ],
          },
        ],
        forwardQuery: true,
        validSince: T - 10,
        validUntil: T + 1_000,
        fallbackUrl: 'https://example.com/later',
        passwordHash: `scrypt$N=16384,r=8,p=1$${'a'.repeat(22)}$${'b'.repeat(43)}`,
      };
      const routed: LinkRecord = { ...rec('rte001', 'https://example.com/r'), author: 'keyA', routing };
      const partly: LinkRecord = { ...rec('rte002'), title: 't', routing: { forwardQuery: true } };
      const plain = rec('rte003');
      for (const r of [routed, partly, plain]) assert.equal(await inserted(store, r), true);
      let expected = [routed, partly, plain];
      const check = (label: string): Promise<void> => readsBack(store, expected, label);
      await check('before reopen');
      store = await handle.reopen();
      await check('after reopen');
      const moved: LinkRecord = { ...routed, url: 'https://example.com/r2' };
      assert.deepEqual(await store.update('rte001', { url: 'https://example.com/r2' }, T), moved, 'an edit of another field keeps the routing');
      const { forwardQuery: _, ...unforwarded } = routing;
      const both: LinkRecord = { ...moved, title: 'both', routing: unforwarded };
      assert.deepEqual(await store.update('rte001', { title: 'both', routing: { forwardQuery: null } }, T), both, 'a field and a routing part in one edit');
      assert.deepEqual(await store.update('rte001', { title: null, routing: { forwardQuery: true } }, T), moved, 'and back');
      const merged: LinkRecord = { ...partly, routing: { forwardQuery: true, validUntil: T + 5 } };
      assert.deepEqual(await store.update('rte002', { routing: { validUntil: T + 5 } }, T), merged, 'a part given joins the others');
      const replaced: LinkRecord = { ...partly, routing: { validUntil: T + 5 } };
      assert.deepEqual(await store.update('rte002', { routing: { forwardQuery: null } }, T), replaced, 'a null part is removed');
      const given: LinkRecord = { ...plain, routing: { fallbackUrl: 'https://example.com/f' } };
      assert.deepEqual(await store.update('rte003', { routing: { fallbackUrl: 'https://example.com/f' } }, T), given);
      expected = [moved, replaced, given];
      await check('after edits');
      const cleared = rec('rte003');
      assert.deepEqual(await store.update('rte003', { routing: null }, T), cleared, 'null clears it');
      assert.deepEqual(await store.update('rte002', { routing: {} }, T), replaced, 'an empty change changes nothing');
      assert.deepEqual(await store.update('rte002', { routing: { validUntil: null } }, T), { ...rec('rte002'), title: 't' }, 'no part left: none');
      expected = [moved, { ...rec('rte002'), title: 't' }, cleared];
      store = await handle.reopen();
      await check('after edits and a reopen');
    });

    test('a link with routing is answered routed and counted nothing, until asked with routed; gone says expired or used up', async (t) => {
      const { store } = await fresh(t);
      const routing: Routing = { forwardQuery: true, fallbackUrl: 'https://example.com/fb' };
      await inserted(store, { ...rec('rtv001', 'https://example.com/t', T, 0, 0, 2), routing });
      await inserted(store, { ...rec('rtv002', 'https://example.com/u', T, 1), routing: { validUntil: T + 5 } });
      const routed = async (code: string, now: number, count: boolean, again = false) => {
        const d = await store.countVisit(code, () => now, count, undefined, again);
        return d.kind === 'routed' ? { kind: d.kind, url: d.url, limited: d.limited, routing: d.routing, gone: d.gone } : { kind: d.kind };
      };
      for (const count of [true, false]) {
        assert.deepEqual(await routed('rtv001', T, count), { kind: 'routed', url: 'https://example.com/t', limited: true, routing, gone: null });
      }
      assert.deepEqual(await routed('rtv002', T, true), {
        kind: 'routed',
        url: 'https://example.com/u',
        limited: false,
        routing: { validUntil: T + 5 },
        gone: null,
      });
      assert.equal((await settle(store.get('rtv001', T)))?.visits, 0, 'nothing counted without routed');
      assert.deepEqual(await routed('rtv001', T, true, true), { kind: 'found' });
      assert.deepEqual(await routed('rtv001', T, false, true), { kind: 'found' }, 'HEAD with routed counts nothing');
      assert.deepEqual(await routed('rtv001', T, true, true), { kind: 'found' });
      assert.equal((await settle(store.get('rtv001', T)))?.visits, 2);
      assert.deepEqual(await routed('rtv001', T, true), { kind: 'routed', url: 'https://example.com/t', limited: true, routing, gone: 'limit_reached' });
      assert.deepEqual(await routed('rtv001', T, true, true), { kind: 'limit_reached' });
      assert.deepEqual((await routed('rtv002', T + DAY, true)).gone, 'expired');
      assert.deepEqual(await routed('rtv002', T + DAY, true, true), { kind: 'expired' });
      assert.deepEqual(await routed('rtv003', T, true), { kind: 'missing' });
      // A plain link is as before, asked either way.
      await inserted(store, rec('rtv004', 'https://example.com/p'));
      assert.deepEqual(await decide(store, 'rtv004', T, true), { kind: 'found', url: 'https://example.com/p' });
      // An edit that removes the routing makes the link plain again; one that adds it, routed.
      await store.update('rtv004', { routing: { forwardQuery: true } }, T);
      assert.equal((await routed('rtv004', T, true)).kind, 'routed');
      await store.update('rtv004', { routing: null }, T);
      assert.deepEqual(await decide(store, 'rtv004', T, true), { kind: 'found', url: 'https://example.com/p' });
      assert.equal((await settle(store.get('rtv004', T)))?.visits, 2);
    });

    test('the tag filter keeps links having every tag asked; q also matches titles; they combine, with paging and total', async (t) => {
      const { store } = await fresh(t);
      await inserted(store, { ...rec('tag001'), tags: ['news', 'promo'] });
      await inserted(store, { ...rec('tag002'), tags: ['news'], title: 'Winter PROMO' });
      await inserted(store, { ...rec('tag003', 'https://example.com/x', T, 1), tags: ['news', 'promo'] });
      await inserted(store, { ...rec('tag004'), tags: ['News', 'promo', 'x'] });
      await inserted(store, { ...rec('tag005'), title: 'Sommer' });
      await inserted(store, { ...rec('tag006'), title: 'ÜBER die Straße' });
      assert.deepEqual(await pageCodes(store, { tags: ['news'] }), { total: 3, count: 3, codes: ['tag003', 'tag002', 'tag001'] });
      assert.deepEqual(await pageCodes(store, { tags: ['news', 'promo'] }), { total: 2, count: 2, codes: ['tag003', 'tag001'] }, 'every tag asked');
      assert.deepEqual(
        await pageCodes(store, { tags: ['news', 'promo'], now: T + DAY }),
        { total: 1, count: 1, codes: ['tag001'] },
        'expired links are left out',
      );
      assert.deepEqual(await pageCodes(store, { tags: ['promo'], limit: 1, offset: 1 }), { total: 3, count: 1, codes: ['tag003'] });
      assert.deepEqual(await pageCodes(store, { tags: ['NEWS'] }), { total: 0, count: 0, codes: [] }, 'tags compare exactly');
      assert.deepEqual(
        await pageCodes(store, { tags: [] }),
        { total: 6, count: 6, codes: ['tag006', 'tag005', 'tag004', 'tag003', 'tag002', 'tag001'] },
        'no tag asked: no filter',
      );
      assert.deepEqual(
        await pageCodes(store, { q: 'über die straße' }),
        { total: 1, count: 1, codes: ['tag006'] },
        'a title is folded as toLowerCase folds it, beyond ASCII too',
      );
      assert.deepEqual(await pageCodes(store, { q: 'ÜBER' }), { total: 1, count: 1, codes: ['tag006'] });
      assert.deepEqual(await pageCodes(store, { q: 'promo' }), { total: 1, count: 1, codes: ['tag002'] }, 'q matches a title, case-insensitively');
      assert.deepEqual(await pageCodes(store, { q: 'somm' }), { total: 1, count: 1, codes: ['tag005'] });
      assert.deepEqual(
        await pageCodes(store, { q: 'tag00', tags: ['promo'] }),
        { total: 3, count: 3, codes: ['tag004', 'tag003', 'tag001'] },
        'q and tags together',
      );
      assert.deepEqual(await pageCodes(store, { q: 'winter', tags: ['promo'] }), { total: 0, count: 0, codes: [] }, 'both must match');
      await store.update('tag001', { tags: ['old'] }, T);
      await store.update('tag005', { title: 'Herbst' }, T);
      assert.deepEqual((await pageCodes(store, { tags: ['news'] })).codes, ['tag003', 'tag002'], 'an edited link is filtered as it now is');
      assert.deepEqual((await pageCodes(store, { tags: ['old'] })).codes, ['tag001']);
      assert.deepEqual((await pageCodes(store, { q: 'somm' })).codes, []);
      assert.deepEqual((await pageCodes(store, { q: 'HERBST' })).codes, ['tag005']);
      await store.update('tag006', { title: 'Ärger' }, T);
      assert.deepEqual((await pageCodes(store, { q: 'ärg' })).codes, ['tag006'], 'an edited title is searched as it now is');
    });

    test("author keeps one key's links: in the list with q, tags, paging and total, and in the export", async (t) => {
      const { store } = await fresh(t);
      const made: [code: string, author: string | undefined, tags: string[]][] = [
        ['auth-a1', 'keyA', ['x']],
        ['auth-b1', 'keyB', ['x']],
        ['auth-n1', undefined, ['x']],
        ['auth-a2', 'keyA', []],
        ['auth-a3', 'keyA', ['x']],
        ['other-a', 'keyA', []],
      ];
      for (const [code, author, tags] of made) assert.equal(await inserted(store, { ...rec(code), tags, ...(author !== undefined && { author }) }), true);
      assert.deepEqual(await pageCodes(store, { author: 'keyA' }), { total: 4, count: 4, codes: ['other-a', 'auth-a3', 'auth-a2', 'auth-a1'] });
      assert.deepEqual(await pageCodes(store, { author: 'keyA', limit: 2, offset: 1 }), { total: 4, count: 2, codes: ['auth-a3', 'auth-a2'] });
      assert.deepEqual(await pageCodes(store, { author: 'keyA', q: 'AUTH' }), { total: 3, count: 3, codes: ['auth-a3', 'auth-a2', 'auth-a1'] });
      assert.deepEqual(await pageCodes(store, { author: 'keyA', tags: ['x'] }), { total: 2, count: 2, codes: ['auth-a3', 'auth-a1'] });
      assert.deepEqual(await pageCodes(store, { author: 'keyB' }), { total: 1, count: 1, codes: ['auth-b1'] });
      assert.deepEqual(await pageCodes(store, { author: 'nokey' }), { total: 0, count: 0, codes: [] });
      assert.equal((await pageCodes(store)).total, 6, 'no author: every link');
      assert.deepEqual(
        (await exported(store, T, 'keyA')).map((r) => [r.code, r.author]),
        [
          ['auth-a1', 'keyA'],
          ['auth-a2', 'keyA'],
          ['auth-a3', 'keyA'],
          ['other-a', 'keyA'],
        ],
      );
      assert.deepEqual(await exported(store, T, 'nokey'), []);
      assert.equal((await exported(store)).length, 6);
    });

    test('keys of several domains (<host>/<code>): one link each, the list and newestByUrl filter by domain, a reopen keeps them', async (t) => {
      const { store, reopen } = await fresh(t);
      const url = 'https://example.com/same';
      for (const code of ['same01', 'go.example/same01', 'go.example/other1', 's.example:8443/same01', 'go.exampleX'])
        assert.equal(await inserted(store, rec(code, url)), true, code);
      assert.equal(await inserted(store, rec('go.example/same01')), false, 'one link per (domain, code)');
      assert.deepEqual(await pageCodes(store, { domain: 'go.example' }), { total: 2, count: 2, codes: ['go.example/other1', 'go.example/same01'] });
      assert.deepEqual(await pageCodes(store, { domain: null }), { total: 2, count: 2, codes: ['go.exampleX', 'same01'] });
      assert.deepEqual(await pageCodes(store, { domain: 's.example:8443', q: 'SAME' }), { total: 1, count: 1, codes: ['s.example:8443/same01'] });
      assert.equal((await pageCodes(store)).total, 5);
      assert.equal((await store.newestByUrl(url, T, 'go.example'))?.code, 'go.example/other1');
      assert.equal((await store.newestByUrl(url, T, null))?.code, 'go.exampleX');
      assert.equal((await store.newestByUrl(url, T, 'x.example'))?.code, undefined);
      assert.equal((await store.newestByUrl(url, T))?.code, 'go.exampleX');
      assert.deepEqual(await decide(store, 'go.example/same01', T, true), { kind: 'found', url });
      assert.equal(await store.delete('go.example/same01', T), true);
      assert.equal((await store.get('same01', T))?.code, 'same01', "the default domain's link stays");
      const again = await reopen();
      assert.deepEqual(await pageCodes(again, { domain: 'go.example' }), { total: 1, count: 1, codes: ['go.example/other1'] });
      assert.equal((await again.get('s.example:8443/same01', T))?.url, url);
    });

    test("a domain's redirects: set whole, read back by host ('' the default domain), cleared by three nulls, kept through a reopen", async (t) => {
      const { store, reopen } = await fresh(t);
      const domains = store.domains!;
      assert.ok(domains, 'the store keeps domain redirects');
      assert.deepEqual([...(await domains.domainRedirects())], []);
      const go = { baseUrl: 'https://home.example/', notFound: null, expired: 'https://home.example/gone' };
      await domains.setDomainRedirects('go.example', go);
      await domains.setDomainRedirects('', { baseUrl: null, notFound: 'https://default.example/404', expired: null });
      await domains.setDomainRedirects('s.example', { baseUrl: 'https://s.example/home', notFound: null, expired: null });
      await domains.setDomainRedirects('s.example', { baseUrl: null, notFound: null, expired: null });
      const read = async (s: LinkStore) => new Map([...(await s.domains!.domainRedirects())].map(([host, r]) => [host, { ...r }]));
      const expected = new Map<string, DomainRedirects>([
        ['go.example', go],
        ['', { baseUrl: null, notFound: 'https://default.example/404', expired: null }],
      ]);
      assert.deepEqual(await read(store), expected);
      assert.deepEqual(await read(await reopen()), expected);
    });

    test('a page filtered by q is a snapshot too', async (t) => {
      const { store } = await fresh(t);
      for (const code of ['find01', 'find02', 'skip01', 'find03']) await inserted(store, rec(code));
      const page = await store.list({ offset: 0, now: T, q: 'FIND' });
      try {
        assert.equal(await store.delete('find02', T), true);
        await inserted(store, rec('find04'));
        assert.deepEqual({ total: page.total, count: page.count }, { total: 3, count: 3 });
        assert.deepEqual(
          (await page.slice(0, page.count)).map((r) => r.code),
          ['find03', 'find02', 'find01'],
        );
      } finally {
        page.release();
      }
      assert.deepEqual((await pageCodes(store, { q: 'find' })).codes, ['find04', 'find03', 'find01']);
    });
  });
}
