/**
 * The event half of the `LinkStore` contract (src/store/link-store.ts, src/visits/event.ts,
 * docs/analytics.md) as tests, run over every backend like `store-conformance.ts`: each backend's
 * test file calls `runEventConformance` with a factory for a fresh store. Nothing here may know a
 * backend's internals: only the contract's methods are used.
 *
 * The invariant of every store, checked after every kind of operation: a link's events +
 * `untracked` = `visits`.
 */
import assert from 'node:assert/strict';
import { describe, test as nodeTest, type TestContext } from 'node:test';
import type { LinkRecord, LinkStore, MaybePromise, VisitDecision } from '../../src/store/link-store.ts';
import type { BotFilter, CodedEvent, StatsQuery, VisitEvent, VisitStats } from '../../src/visits/event.ts';
import type { StoreFactory } from './store-conformance.ts';

const DAY = 86400;
const HOUR = 3600;
/** Unix seconds of the tests' "now". */
const T = 1_790_000_000;
/** The UTC midnight before `T`. */
const D0 = Math.floor(T / DAY) * DAY;
/** A range holding every event of the tests. */
const ALL = { from: 0, to: 2 ** 32, bots: 'include' as BotFilter };

const rec = (code: string, over: Partial<LinkRecord> = {}): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T - DAY,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits: null,
  ...over,
});

/** An event at `time`: nothing known but what `over` says. */
const ev = (time: number, over: Partial<VisitEvent> = {}): VisitEvent => ({
  time,
  referrer: null,
  country: null,
  browser: null,
  os: null,
  device: null,
  bot: false,
  visitor: null,
  ...over,
});

/** An event as the routes show it: without the visitor id, which no route shows. */
const shown = (e: VisitEvent): Omit<VisitEvent, 'visitor'> => {
  const { visitor: _, ...rest } = e;
  return { ...rest };
};

/** Buckets of `step` seconds from `from` to `to`. */
const query = (from: number, to: number, step: number, bots: BotFilter = 'exclude'): StatsQuery => {
  const edges: number[] = [];
  for (let t = from; t < to; t += step) edges.push(t);
  edges.push(to);
  return { from, to, bots, edges };
};

const settle = <V>(value: MaybePromise<V>): Promise<V> => Promise.resolve(value);

/**
 * Registers the suite for a backend. With `skip` (the backend cannot run here: its reason) every
 * test is registered as skipped, so that the run lists each one as not run.
 */
export function runEventConformance(name: string, factory: StoreFactory, { skip }: { skip?: string } = {}): void {
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

  async function add(store: LinkStore, ...records: LinkRecord[]): Promise<void> {
    for (const r of records) assert.equal(await store.insert(r, T), true, r.code);
  }

  /** A counted GET at `now` with `event` (none: a visit without an event); the decision's kind and how often the event was made. */
  async function visit(store: LinkStore, code: string, event?: VisitEvent, now = T): Promise<{ kind: VisitDecision['kind']; made: number }> {
    let made = 0;
    // A second call that says 'counted' makes nothing: it tells the metric of the one made quietly.
    const source = event && ((mode?: 'quiet' | 'counted'): VisitEvent => (mode === 'counted' ? event : (made++, event)));
    const d = await store.countVisit(code, () => now, true, source);
    return { kind: d.kind, made };
  }

  async function found(store: LinkStore, code: string, event?: VisitEvent): Promise<void> {
    assert.deepEqual(await visit(store, code, event), { kind: 'found', made: event ? 1 : 0 }, code);
  }

  async function events(store: LinkStore, code: string, now = T): Promise<Omit<VisitEvent, 'visitor'>[] | undefined> {
    const page = await settle(store.listVisits(code, ALL, 1000, 0, now));
    return page?.events.map(shown);
  }

  async function exported(
    store: LinkStore,
    filter: Partial<typeof ALL> & { code?: string; author?: string } = {},
    now = T,
  ): Promise<{ code: string; event: Omit<VisitEvent, 'visitor'> }[]> {
    const out: { code: string; event: Omit<VisitEvent, 'visitor'> }[] = [];
    for await (const e of store.exportVisits({ ...ALL, ...filter }, now) as AsyncIterable<CodedEvent>) out.push({ code: e.code, event: shown(e.event) });
    return out;
  }

  /** The invariant for each code: its events + untracked = visits; returns [visits, untracked, events] of each. */
  async function invariant(store: LinkStore, codes: string[], label: string, now = T): Promise<[number, number, number][]> {
    const out: [number, number, number][] = [];
    for (const code of codes) {
      const r = await settle(store.get(code, now));
      assert.ok(r, `${label}: ${code} is live`);
      const page = await settle(store.listVisits(code, ALL, 1, 0, now));
      assert.ok(page, `${label}: ${code} has a page`);
      assert.equal(page.total + r.untracked, r.visits, `${label}: ${code}: events ${page.total} + untracked ${r.untracked} = visits ${r.visits}`);
      out.push([r.visits, r.untracked, page.total]);
    }
    return out;
  }

  async function stats(store: LinkStore, code: string | null, q: StatsQuery, now = T): Promise<VisitStats | undefined> {
    return settle(store.visitStats(code, q, now));
  }

  describe(`LinkStore events conformance: ${name}`, () => {
    test('a counted visit records its event, made once; without one it is untracked; HEAD, 404, 410 record nothing', async (t) => {
      const { store, reopen } = await fresh(t);
      await add(store, rec('plain1'), rec('limit1', { maxVisits: 1 }), rec('expir1', { createdAt: T - 2 * DAY, retentionDays: 1 }));
      const e1 = ev(T - 5, { referrer: 'news.example', country: 'DE', browser: 'Firefox', os: 'Linux', device: 'desktop', visitor: 12345 });
      await found(store, 'plain1', e1);
      await found(store, 'plain1');
      // HEAD: answered, never counted, its event never made.
      assert.equal(
        (
          await settle(
            store.countVisit(
              'plain1',
              () => T,
              false,
              () => assert.fail('a HEAD made an event'),
            ),
          )
        ).kind,
        'found',
      );
      assert.equal((await visit(store, 'nosuch', ev(T))).kind, 'missing');
      assert.equal((await visit(store, 'expir1', ev(T))).kind, 'expired');
      await found(store, 'limit1', ev(T - 4, { bot: true }));
      assert.equal((await visit(store, 'limit1', ev(T - 3))).kind, 'limit_reached');
      assert.deepEqual(await events(store, 'plain1'), [shown(e1)]);
      assert.deepEqual(await events(store, 'limit1'), [shown(ev(T - 4, { bot: true }))]);
      assert.deepEqual(await invariant(store, ['plain1', 'limit1'], 'before reopen'), [
        [2, 1, 1],
        [1, 0, 1],
      ]);
      assert.equal(await settle(store.listVisits('expir1', ALL, 10, 0, T)), undefined, 'an expired link has no events to show');
      assert.equal(await settle(store.listVisits('nosuch', ALL, 10, 0, T)), undefined);
      // Durable with their counts.
      const again = await reopen();
      assert.deepEqual(await events(again, 'plain1'), [shown(e1)]);
      assert.deepEqual(await invariant(again, ['plain1', 'limit1'], 'after reopen'), [
        [2, 1, 1],
        [1, 0, 1],
      ]);
    });

    test('every field of an event reads back as it was recorded, nulls included', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('fields'));
      const all: VisitEvent[] = [
        ev(T - 9, { referrer: 'a.example', country: 'FR', browser: 'Chrome', os: 'Windows', device: 'desktop', visitor: -2147483648 }),
        ev(T - 8, { referrer: 'xn--bcher-kva.example', country: 'JP', browser: 'Safari', os: 'iOS', device: 'mobile', visitor: 2147483647 }),
        ev(T - 7, { country: 'BR', browser: 'Samsung Internet', os: 'Android', device: 'tablet', visitor: 0 }),
        ev(T - 6, { browser: 'Edge', os: 'macOS', device: 'other', bot: true }),
        ev(T - 5, { browser: 'Opera', os: 'ChromeOS' }),
        ev(T - 4, { browser: 'Other', os: 'Other' }),
        ev(T - 3),
      ];
      for (const e of all) await found(store, 'fields', e);
      assert.deepEqual(await events(store, 'fields'), all.map(shown).reverse());
      assert.deepEqual(
        (await exported(store)).map((e) => e.event),
        all.map(shown),
      );
    });

    test('of 200 concurrent visits on maxVisits 30, exactly 30 are found and recorded, each with its event', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('burst1', { maxVisits: 30 }), rec('burst2'));
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => visit(store, i % 2 ? 'burst1' : 'burst2', ev(T - 1000 + i, { visitor: i }))));
      const limited = results.filter((_, i) => i % 2 === 1);
      assert.equal(limited.filter((r) => r.kind === 'found').length, 30);
      assert.equal(limited.filter((r) => r.kind === 'limit_reached').length, 70);
      for (const r of results) if (r.kind === 'found') assert.equal(r.made, 1, 'a counted visit makes its event once');
      assert.deepEqual(await invariant(store, ['burst1', 'burst2'], 'after the burst'), [
        [30, 0, 30],
        [100, 0, 100],
      ]);
    });

    test('stats: buckets with zeros, the bots filter, unique visitors by UTC day, and the link counts', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('stats1', { visits: 3, untracked: 3 }), rec('other1'));
      const day0 = [
        ev(D0 + 1 * HOUR, { visitor: 1 }),
        ev(D0 + 2 * HOUR, { visitor: 1 }),
        ev(D0 + 3 * HOUR, { visitor: 2 }),
        ev(D0 + 4 * HOUR),
        ev(D0 + 5 * HOUR, { visitor: 3, bot: true }),
      ];
      // The same visitor on the next UTC day counts again; an event without an id counts one.
      const day1 = [ev(D0 + DAY + HOUR, { visitor: 1 }), ev(D0 + DAY + 2 * HOUR), ev(D0 + DAY + 3 * HOUR, { bot: true })];
      const outside = [ev(D0 - 1, { visitor: 9 }), ev(D0 + 3 * DAY, { visitor: 9 })];
      for (const e of [...day0, ...day1, ...outside]) await found(store, 'stats1', e);
      await found(store, 'other1', ev(D0 + HOUR, { visitor: 1 }));
      await found(store, 'stats1');
      const q = query(D0, D0 + 3 * DAY, DAY);
      const s = await stats(store, 'stats1', q);
      assert.ok(s);
      assert.deepEqual(
        { visitCount: s.visitCount, untracked: s.untracked, visits: s.visits, uniqueVisitors: s.uniqueVisitors, bots: s.bots, series: s.series },
        {
          visitCount: 14,
          untracked: 4,
          visits: 6,
          uniqueVisitors: 5,
          bots: 2,
          series: [
            { visits: 4, uniqueVisitors: 3 },
            { visits: 2, uniqueVisitors: 2 },
            { visits: 0, uniqueVisitors: 0 },
          ],
        },
      );
      const include = await stats(store, 'stats1', { ...q, bots: 'include' });
      assert.deepEqual([include?.visits, include?.uniqueVisitors, include?.bots, include?.series.map((b) => b.visits)], [8, 7, 2, [5, 3, 0]]);
      const only = await stats(store, 'stats1', { ...q, bots: 'only' });
      assert.deepEqual([only?.visits, only?.uniqueVisitors, only?.bots, only?.series.map((b) => b.uniqueVisitors)], [2, 2, 2, [1, 1, 0]]);
      // A total is not the sum of its series: visitor 1 in two hours of one day is one visitor.
      const hours = await stats(store, 'stats1', query(D0, D0 + 3 * HOUR, HOUR));
      assert.deepEqual(
        [hours?.visits, hours?.uniqueVisitors, hours?.series],
        [
          2,
          1,
          [
            { visits: 0, uniqueVisitors: 0 },
            { visits: 1, uniqueVisitors: 1 },
            { visits: 1, uniqueVisitors: 1 },
          ],
        ],
      );
      // Buckets of any widths (a DST day is 23 or 25 hours).
      const uneven = await stats(store, 'stats1', {
        from: D0,
        to: D0 + DAY + 3 * HOUR,
        bots: 'exclude',
        edges: [D0, D0 + 2 * HOUR + 1, D0 + 23 * HOUR, D0 + DAY + 3 * HOUR],
      });
      assert.deepEqual(
        uneven?.series.map((b) => b.visits),
        [2, 2, 2],
      );
      assert.equal(s.links, undefined, 'one link has no links list');
      const empty = await stats(store, 'other1', query(D0 + DAY, D0 + 2 * DAY, HOUR));
      assert.deepEqual(
        [empty?.visits, empty?.uniqueVisitors, empty?.series.length, empty?.series.every((b) => b.visits === 0), empty?.referrers],
        [0, 0, 24, true, { top: [], others: 0 }],
      );
      assert.equal(await stats(store, 'nosuch', q), undefined);
    });

    test('stats: each top list is the 10 largest, ties by value with null first, and the rest as others', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('tops01'));
      const at = (i: number): number => D0 + i;
      let i = 0;
      for (let n = 0; n < 3; n++)
        await found(store, 'tops01', ev(at(i++), { referrer: 'z.example', country: 'US', browser: 'Safari', os: 'iOS', device: 'mobile' }));
      await found(store, 'tops01', ev(at(i++)));
      // Twelve referrers seen once each, inserted out of order.
      for (const r of ['b2', 'a3', 'a1', 'b0', 'a9', 'a2', 'a5', 'b1', 'a4', 'a8', 'a7', 'a6'])
        await found(store, 'tops01', ev(at(i++), { referrer: `${r}.example` }));
      // Ties by value as strings compare: 'Linux' before 'iOS', 'CH' before 'DE'.
      await found(store, 'tops01', ev(at(i++), { country: 'DE', browser: 'Chrome', os: 'Linux', device: 'desktop' }));
      await found(store, 'tops01', ev(at(i++), { country: 'CH', browser: 'Firefox', os: 'Linux', device: 'tablet' }));
      // A bot, left out of every list by the default filter.
      await found(store, 'tops01', ev(at(i++), { referrer: 'bot.example', country: 'ZZ', browser: 'Other', bot: true }));
      const s = await stats(store, 'tops01', query(D0, D0 + DAY, DAY));
      assert.ok(s);
      assert.equal(s.visits, 18);
      assert.deepEqual(s.referrers, {
        top: [
          { value: null, visits: 3 },
          { value: 'z.example', visits: 3 },
          ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'].map((r) => ({ value: `${r}.example`, visits: 1 })),
        ],
        others: 4,
      });
      assert.deepEqual(s.countries, {
        top: [
          { value: null, visits: 13 },
          { value: 'US', visits: 3 },
          { value: 'CH', visits: 1 },
          { value: 'DE', visits: 1 },
        ],
        others: 0,
      });
      assert.deepEqual(s.browsers, {
        top: [
          { value: null, visits: 13 },
          { value: 'Safari', visits: 3 },
          { value: 'Chrome', visits: 1 },
          { value: 'Firefox', visits: 1 },
        ],
        others: 0,
      });
      assert.deepEqual(s.os, {
        top: [
          { value: null, visits: 13 },
          { value: 'iOS', visits: 3 },
          { value: 'Linux', visits: 2 },
        ],
        others: 0,
      });
      assert.deepEqual(s.devices, {
        top: [
          { value: null, visits: 13 },
          { value: 'mobile', visits: 3 },
          { value: 'desktop', visits: 1 },
          { value: 'tablet', visits: 1 },
        ],
        others: 0,
      });
      const bots = await stats(store, 'tops01', query(D0, D0 + DAY, DAY, 'only'));
      assert.deepEqual(
        [bots?.referrers, bots?.countries.top, bots?.browsers.top],
        [{ top: [{ value: 'bot.example', visits: 1 }], others: 0 }, [{ value: 'ZZ', visits: 1 }], [{ value: 'Other', visits: 1 }]],
      );
      // Events 2 to 16: one iOS, one Linux.
      const ties = await stats(store, 'tops01', { from: at(2), to: at(17), bots: 'exclude', edges: [at(2), at(17)] });
      assert.deepEqual(ties?.os, {
        top: [
          { value: null, visits: 13 },
          { value: 'Linux', visits: 1 },
          { value: 'iOS', visits: 1 },
        ],
        others: 0,
      });
    });

    test('stats over every live link: sums, the links top 10 with ties by code; expired and deleted links left out', async (t) => {
      const { store } = await fresh(t);
      const codes = ['lnk-k', 'lnk-b', 'lnk-a', 'lnk-c', 'lnk-d', 'lnk-e', 'lnk-f', 'lnk-g', 'lnk-h', 'lnk-i', 'lnk-j', 'lnk-l'];
      await add(
        store,
        ...codes.map((code) => rec(code)),
        rec('lnk-old', { createdAt: T - 2 * DAY, retentionDays: 1, visits: 7, untracked: 7 }),
        rec('lnk-del', { visits: 2, untracked: 2 }),
        rec('lnk-u', { visits: 4, untracked: 4 }),
      );
      // lnk-k: 5 visits; lnk-b and lnk-a: 3 each (a tie, by code); the others 1 each.
      const visitsOf = (code: string): number => (code === 'lnk-k' ? 5 : code === 'lnk-b' || code === 'lnk-a' ? 3 : 1);
      for (const [i, code] of codes.entries()) for (let n = 0; n < visitsOf(code); n++) await found(store, code, ev(D0 + n, { visitor: i * 10 + n }));
      for (let n = 0; n < 20; n++) await found(store, 'lnk-del', ev(D0 + n));
      // Visited while it was live; expired now.
      assert.deepEqual(await visit(store, 'lnk-old', ev(D0 + 1), T - 2 * DAY + 10), { kind: 'found', made: 1 });
      assert.equal(await store.delete('lnk-del', T), true);
      const s = await stats(store, null, query(D0, D0 + DAY, DAY));
      assert.ok(s);
      assert.deepEqual(s.links, [
        { code: 'lnk-k', visits: 5 },
        { code: 'lnk-a', visits: 3 },
        { code: 'lnk-b', visits: 3 },
        ...['lnk-c', 'lnk-d', 'lnk-e', 'lnk-f', 'lnk-g', 'lnk-h', 'lnk-i'].map((code) => ({ code, visits: 1 })),
      ]);
      assert.deepEqual([s.visits, s.visitCount, s.untracked, s.uniqueVisitors], [20, 24, 4, 20], 'the expired and the deleted link count for nothing');
      assert.deepEqual(s.series, [{ visits: 20, uniqueVisitors: 20 }]);
      assert.deepEqual(s.referrers, { top: [{ value: null, visits: 20 }], others: 0 });
      // Seen from before its expiry, the expired link is there.
      const before = await stats(store, null, query(D0, D0 + DAY, DAY), T - 2 * DAY + 20);
      assert.deepEqual([before?.visits, before?.visitCount, before?.untracked], [21, 32, 11]);
    });

    test('listVisits: newest first by time then arrival, paged, filtered, with the total', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('list01'));
      const e = [
        ev(T - 40, { referrer: 'a' }),
        ev(T - 20, { referrer: 'b' }),
        ev(T - 20, { referrer: 'c', bot: true }),
        ev(T - 30, { referrer: 'd' }),
        ev(T - 20, { referrer: 'e' }),
      ];
      for (const x of e) await found(store, 'list01', x);
      const page = async (
        filter: { from?: number; to?: number; bots?: BotFilter },
        limit: number,
        offset: number,
      ): Promise<[number, (string | null)[]] | undefined> => {
        const p = await settle(store.listVisits('list01', { ...ALL, ...filter }, limit, offset, T));
        return p && [p.total, p.events.map((x) => x.referrer)];
      };
      assert.deepEqual(await page({}, 100, 0), [5, ['e', 'c', 'b', 'd', 'a']]);
      assert.deepEqual(await page({}, 2, 1), [5, ['c', 'b']]);
      assert.deepEqual(await page({}, 2, 4), [5, ['a']]);
      assert.deepEqual(await page({}, 2, 5), [5, []]);
      assert.deepEqual(await page({ bots: 'exclude' }, 100, 0), [4, ['e', 'b', 'd', 'a']]);
      assert.deepEqual(await page({ bots: 'only' }, 100, 0), [1, ['c']]);
      assert.deepEqual(await page({ from: T - 30, to: T - 20 }, 100, 0), [1, ['d']], '[from, to)');
      assert.deepEqual(await page({ from: T - 30, to: T - 19, bots: 'exclude' }, 1, 1), [3, ['b']]);
    });

    test('deleteVisits removes the events and zeroes the counts: a used-up link can be visited again', async (t) => {
      const { store, reopen } = await fresh(t);
      await add(store, rec('used01', { maxVisits: 2 }), rec('mixed1', { visits: 5, untracked: 5 }), rec('keep01'));
      await found(store, 'used01', ev(T - 2));
      await found(store, 'used01', ev(T - 1));
      assert.equal((await visit(store, 'used01', ev(T))).kind, 'limit_reached');
      await found(store, 'mixed1', ev(T - 3));
      await found(store, 'keep01', ev(T - 3));
      assert.equal(await store.deleteVisits('used01', T), 2);
      assert.equal(await store.deleteVisits('mixed1', T), 1);
      assert.deepEqual(await invariant(store, ['used01', 'mixed1', 'keep01'], 'after deleteVisits'), [
        [0, 0, 0],
        [0, 0, 0],
        [1, 0, 1],
      ]);
      await found(store, 'used01', ev(T + 1));
      assert.deepEqual(await events(store, 'used01'), [shown(ev(T + 1))]);
      assert.equal(await store.deleteVisits('nosuch', T), undefined);
      assert.equal(await store.deleteVisits('keep01', T + 1), 1);
      const again = await reopen();
      assert.deepEqual(await invariant(again, ['used01', 'mixed1', 'keep01'], 'after a reopen'), [
        [1, 0, 1],
        [0, 0, 0],
        [0, 0, 0],
      ]);
    });

    test('exportVisits: every event of live links oldest first (time, then arrival), filtered by code, range and bots', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('exp-a'), rec('exp-b'), rec('exp-old', { createdAt: T - 2 * DAY, retentionDays: 3 }));
      await found(store, 'exp-a', ev(T - 10, { referrer: '1' }));
      await found(store, 'exp-b', ev(T - 30, { referrer: '2' }));
      await found(store, 'exp-a', ev(T - 20, { referrer: '3', bot: true }));
      await found(store, 'exp-b', ev(T - 20, { referrer: '4' }));
      await found(store, 'exp-old', ev(T - 25, { referrer: '5' }));
      const refs = async (filter: Partial<typeof ALL> & { code?: string; author?: string }, now = T): Promise<string[]> =>
        (await exported(store, filter, now)).map((e) => `${e.code}:${e.event.referrer}`);
      assert.deepEqual(await refs({}), ['exp-b:2', 'exp-old:5', 'exp-a:3', 'exp-b:4', 'exp-a:1']);
      assert.deepEqual(await refs({}, T + 2 * DAY), ['exp-b:2', 'exp-a:3', 'exp-b:4', 'exp-a:1'], 'an expired link exports nothing');
      assert.deepEqual(await refs({ code: 'exp-a' }), ['exp-a:3', 'exp-a:1']);
      assert.deepEqual(await refs({ code: 'nosuch' }), []);
      assert.deepEqual(await refs({ bots: 'exclude' }), ['exp-b:2', 'exp-old:5', 'exp-b:4', 'exp-a:1']);
      assert.deepEqual(await refs({ bots: 'only' }), ['exp-a:3']);
      assert.deepEqual(await refs({ from: T - 25, to: T - 10 }), ['exp-old:5', 'exp-a:3', 'exp-b:4']);
      // An author's links alone (an editor's export), with the other filters.
      await add(store, rec('exp-mine', { author: 'keyA' }), rec('exp-theirs', { author: 'keyB' }));
      await found(store, 'exp-mine', ev(T - 15, { referrer: '6' }));
      await found(store, 'exp-theirs', ev(T - 14, { referrer: '7' }));
      await found(store, 'exp-mine', ev(T - 12, { referrer: '8', bot: true }));
      assert.deepEqual(await refs({ author: 'keyA' }), ['exp-mine:6', 'exp-mine:8']);
      assert.deepEqual(await refs({ author: 'keyA', bots: 'exclude' }), ['exp-mine:6']);
      assert.deepEqual(await refs({ author: 'keyA', code: 'exp-theirs' }), [], "another author's code is as unknown");
      assert.deepEqual(await refs({ author: 'nokey' }), []);
      // Many events, past any chunk a store reads them in.
      for (let i = 0; i < 2500; i++) await found(store, 'exp-b', ev(T + (i % 7)));
      const many = await exported(store, { code: 'exp-b', from: T });
      assert.equal(many.length, 2500);
      assert.ok(
        many.every((e, i) => i === 0 || e.event.time >= many[i - 1]!.event.time),
        'oldest first',
      );
    });

    test('importVisit turns untracked visits into events first, then adds visits; unknown and expired codes are refused', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('imp001', { visits: 2, untracked: 2 }), rec('imp002', { createdAt: T - 2 * DAY, retentionDays: 1 }));
      const rows = [
        ev(T - 300, { referrer: 'x.example', country: 'NL' }),
        ev(T - 200, { bot: true }),
        ev(T - 100, { browser: 'Edge', os: 'Windows', device: 'desktop' }),
      ];
      assert.equal(await settle(store.importVisit('imp001', rows[0]!, T)), 'imported');
      assert.deepEqual(await invariant(store, ['imp001'], 'one imported'), [[2, 1, 1]]);
      assert.equal(await settle(store.importVisit('imp001', rows[1]!, T)), 'imported');
      assert.deepEqual(await invariant(store, ['imp001'], 'the untracked used up'), [[2, 0, 2]]);
      assert.equal(await settle(store.importVisit('imp001', rows[2]!, T)), 'imported');
      assert.deepEqual(await invariant(store, ['imp001'], 'past them'), [[3, 0, 3]]);
      assert.deepEqual(await events(store, 'imp001'), rows.map(shown).reverse());
      assert.equal(await settle(store.importVisit('nosuch', rows[0]!, T)), 'unknown_code');
      assert.equal(await settle(store.importVisit('imp002', rows[0]!, T)), 'unknown_code', 'an expired link is no link');
      // What an export gives, an import takes back.
      const place = await factory();
      const other = await place.open();
      t.after(async () => {
        await other.close();
        await place.destroy();
      });
      await add(other, rec('imp001', { visits: 3, untracked: 3 }));
      for await (const e of store.exportVisits(ALL, T) as AsyncIterable<CodedEvent>)
        assert.equal(await settle(other.importVisit(e.code, e.event, T)), 'imported');
      assert.deepEqual(await events(other, 'imp001'), rows.map(shown).reverse());
      assert.deepEqual(await invariant(other, ['imp001'], 'moved'), [[3, 0, 3]]);
    });

    test('events belong to the link, not its code: a code deleted or expired and taken again starts with none', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('again1'), rec('again2', { createdAt: T - DAY, retentionDays: 2 }));
      for (let i = 0; i < 3; i++) {
        await found(store, 'again1', ev(D0 + i, { referrer: 'old.example' }));
        await found(store, 'again2', ev(D0 + i, { referrer: 'old.example' }));
      }
      assert.equal(await store.delete('again1', T), true);
      assert.equal(await settle(store.visitStats('again1', query(D0, D0 + DAY, DAY), T)), undefined, 'a deleted link has no stats');
      assert.equal(await store.insert(rec('again1', { createdAt: T }), T), true);
      const later = T + DAY;
      assert.equal(await settle(store.visitStats('again2', query(D0, D0 + DAY, DAY), later)), undefined, 'an expired link has no stats');
      assert.equal(await settle(store.deleteVisits('again2', later)), undefined);
      assert.equal(await store.insert(rec('again2', { createdAt: later }), later), true);
      for (const code of ['again1', 'again2']) {
        assert.deepEqual(await events(store, code, later), [], code);
        const s = await stats(store, code, query(D0, D0 + DAY, DAY), later);
        assert.deepEqual([s?.visits, s?.visitCount, s?.referrers.top], [0, 0, []], code);
      }
      assert.deepEqual(await exported(store, {}, later), []);
      const all = await stats(store, null, query(D0, D0 + DAY, DAY), later);
      assert.deepEqual([all?.visits, all?.links], [0, []]);
      await found(store, 'again1', ev(D0 + 5));
      assert.deepEqual(await invariant(store, ['again1', 'again2'], 'the new links', later), [
        [1, 0, 1],
        [0, 0, 0],
      ]);
    });

    test('edits keep the events and the invariant', async (t) => {
      const { store } = await fresh(t);
      await add(store, rec('edit01', { visits: 1, untracked: 1 }));
      await found(store, 'edit01', ev(T - 1));
      await store.update('edit01', { url: 'https://example.com/new', maxVisits: 5 }, T);
      await found(store, 'edit01', ev(T));
      await found(store, 'edit01');
      assert.deepEqual(await invariant(store, ['edit01'], 'after the edit'), [[4, 2, 2]]);
      const [r] = await Promise.all([settle(store.get('edit01', T))]);
      assert.equal(r?.untracked, 2);
    });
  });
}
