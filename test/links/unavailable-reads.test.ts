/**
 * A store that cannot be read (a database down) is the `unavailable` outcome of every read of the
 * service, never a thrown error a door must know the storage contract to catch: `get`, `lookup`,
 * `listing`, `list`, `stats` and `visits`, over a store that throws at once and over one that
 * rejects, as a database does. A refused query is refused before the store is asked. Pure: a fake
 * store, no socket.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { unavailableOf } from '../../src/links/outcomes.ts';
import { createService } from '../../src/links/service.ts';
import { StoreUnavailableError, type LinkPage, type LinkStore } from '../../src/store/link-store.ts';

const DOWN = 'database unavailable';

/**
 * A store whose every method fails with `StoreUnavailableError`, at once (`throws`) or as a
 * rejected promise; `asked` counts the calls. A `list` may instead answer a page whose slices fail.
 */
function downStore(how: 'throws' | 'rejects', page?: LinkPage): { store: LinkStore; asked: () => number } {
  let asked = 0;
  const fail = (): never | Promise<never> => {
    asked++;
    const err = new StoreUnavailableError(DOWN);
    if (how === 'throws') throw err;
    return Promise.reject(err);
  };
  const store = new Proxy({} as LinkStore, {
    get(_, name) {
      // No synchronous redirect: the store is asked through `countVisit`, like a database.
      if (name === 'countVisitIn' || name === 'then') return undefined;
      if (name === 'list' && page !== undefined) return () => page;
      return fail;
    },
  });
  return { store, asked: () => asked };
}

function service(store: LinkStore) {
  return createService({
    store,
    baseUrl: 'https://s.example',
    minShortLength: 6,
    maxShortLength: 12,
    maxUrlLength: 2048,
    apiKeys: [],
    now: () => 1_790_000_000_000,
    randomCode: () => 'code01',
    log: createLogger('silent'),
  });
}

const UNAVAILABLE = { ok: false, error: 'unavailable', detail: DOWN };

for (const how of ['throws', 'rejects'] as const) {
  test(`a store that ${how}: every read answers unavailable`, async () => {
    const s = service(downStore(how).store);
    assert.deepEqual(await s.get('code01'), UNAVAILABLE);
    assert.deepEqual(await s.lookup('https://example.com/'), UNAVAILABLE);
    assert.deepEqual(await s.listing({ q: 'x', tags: ['a'] }), UNAVAILABLE);
    assert.deepEqual(await s.list({ limit: 10 }), UNAVAILABLE);
    assert.deepEqual(await s.stats('code01', {}), UNAVAILABLE);
    assert.deepEqual(await s.stats(null, {}), UNAVAILABLE);
    assert.deepEqual(await s.visits('code01', {}, { limit: 5 }), UNAVAILABLE);
    // And the writes, as before.
    assert.deepEqual(await s.update('code01', { title: 'T' }), UNAVAILABLE);
    assert.deepEqual(await s.remove('code01'), UNAVAILABLE);
    assert.deepEqual(await s.deleteVisits('code01'), UNAVAILABLE);
    assert.deepEqual(await s.shorten({ url: 'https://example.com/' }), UNAVAILABLE);
  });
}

test('a refused query, a code no code can be and a bad URL are answered before the store is asked', async () => {
  const { store, asked } = downStore('throws');
  const s = service(store);
  assert.deepEqual(await s.list({ q: 'a\0b' }), { ok: false, error: 'invalid', detail: 'q must not contain a NUL character' });
  assert.deepEqual(await s.listing({ limit: '0' }), { ok: false, error: 'invalid', detail: 'limit must be an integer from 1 to 1000' });
  assert.deepEqual(await s.visits('code01', {}, { offset: -1 }), { ok: false, error: 'invalid', detail: 'offset must be an integer of 0 or more' });
  assert.deepEqual(await s.get('no/such'), { ok: false, error: 'not_found' });
  assert.deepEqual(await s.lookup('not a url'), { ok: false, error: 'invalid', detail: 'url must be an absolute URL such as https://example.com/page' });
  assert.deepEqual(await s.update('code01', { tags: ['\0'] }), { ok: false, error: 'invalid', detail: 'a tag must not contain a NUL character' });
  assert.equal(asked(), 0);
});

test("a page whose slices a database can no longer read: list answers unavailable; a listing's slice rejects with what unavailableOf tells", async () => {
  const page: LinkPage = {
    total: 3,
    count: 3,
    slice: () => Promise.reject(new StoreUnavailableError(DOWN)),
    release: () => undefined,
  };
  let released = 0;
  const counted: LinkPage = { ...page, release: () => void released++ };
  const s = service(downStore('rejects', counted).store);
  assert.deepEqual(await s.list({}), UNAVAILABLE);
  assert.equal(released, 1, 'the page is released');
  const listing = await s.listing({});
  assert.ok(listing.ok);
  const err = await Promise.resolve(listing.slice(0, 3)).then(
    () => assert.fail('the slice was read'),
    (e: unknown) => e,
  );
  listing.release();
  assert.deepEqual(unavailableOf(err), UNAVAILABLE);
  assert.equal(unavailableOf(new TypeError('a bug')), undefined, 'anything else is a bug for the door to throw on');
});

test('anything else a store throws is a bug: thrown on, never an outcome', async () => {
  const store = new Proxy({} as LinkStore, {
    get(_, name) {
      if (name === 'countVisitIn' || name === 'then') return undefined;
      return () => {
        throw new TypeError('a bug');
      };
    },
  });
  const s = service(store);
  await assert.rejects(s.get('code01'), TypeError);
  await assert.rejects(s.list({}), TypeError);
  await assert.rejects(s.stats(null, {}), TypeError);
});
