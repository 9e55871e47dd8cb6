/**
 * The service over a store that answers with promises, as a database does: every operation still
 * works, failures come back as typed outcomes (never thrown), and `outcomes.ts` maps each to the
 * status of docs/api.md, errors. The log store's synchronous answers are covered by every HTTP
 * test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { createLogger } from '../../src/log.ts';
import { failureError, FAILURE_STATUS, storeFailure } from '../../src/api/outcomes.ts';
import { HttpError } from '../../src/errors.ts';
import { answerVisit } from '../../src/api/redirect.ts';
import { createService, type LinkEdit } from '../../src/links/service.ts';
import type { Responder } from '../../src/http/respond.ts';
import {
  isExpired,
  isUsedUp,
  StoreUnavailableError,
  type Clock,
  type LinkChanges,
  type LinkPage,
  type LinkRecord,
  type LinkStore,
  type ListQuery,
  type VisitDecision,
} from '../../src/store/link-store.ts';
import { NO_ROUTING } from '../support/no-routing.ts';

const NOW_MS = 1_790_000_000_000;
const NOW = NOW_MS / 1000;

/** A store that keeps records in an array and answers every call with a promise. */
class AsyncStore implements LinkStore {
  records: LinkRecord[] = [];
  /** Codes `insert` refuses as taken. */
  taken = new Set<string>();
  failWrites: Error | undefined;
  get count(): number {
    return this.records.length;
  }
  private live(now: number): LinkRecord[] {
    return this.records.filter((r) => !isExpired(r, now));
  }
  /** The last query `list` was asked. */
  listed: ListQuery | undefined;
  async insert(record: LinkRecord, now: number): Promise<boolean> {
    if (this.failWrites) throw this.failWrites;
    if (this.taken.has(record.code) || this.live(now).some((r) => r.code === record.code)) return false;
    this.records.push({ ...record });
    return true;
  }
  async get(code: string, now: number): Promise<LinkRecord | undefined> {
    return this.live(now).find((r) => r.code === code);
  }
  async newestByUrl(url: string, now: number): Promise<LinkRecord | undefined> {
    return this.live(now)
      .reverse()
      .find((r) => r.url === url);
  }
  async list(query: ListQuery): Promise<LinkPage> {
    this.listed = query;
    const { limit, offset, now, q } = query;
    const needle = q?.toLowerCase();
    const all = this.live(now)
      .reverse()
      .filter((r) => needle === undefined || r.code.toLowerCase().includes(needle) || r.url.toLowerCase().includes(needle));
    const page = all.slice(offset, limit === undefined ? undefined : offset + limit);
    return { total: all.length, count: page.length, slice: async (from, to) => page.slice(from, to), release: () => undefined };
  }
  async delete(code: string, now: number): Promise<boolean> {
    if (this.failWrites) throw this.failWrites;
    const before = this.records.length;
    this.records = this.records.filter((r) => r.code !== code || isExpired(r, now));
    return this.records.length < before;
  }
  async update(code: string, changes: LinkChanges, now: number): Promise<LinkRecord | undefined> {
    if (this.failWrites) throw this.failWrites;
    const r = this.live(now).find((x) => x.code === code);
    if (!r) return undefined;
    Object.assign(r, changes);
    return { ...r };
  }
  async countVisit(code: string, now: Clock, count: boolean): Promise<VisitDecision> {
    const r = this.records.find((x) => x.code === code);
    if (!r) return { kind: 'missing' };
    if (isExpired(r, now())) return { kind: 'expired' };
    if (isUsedUp(r)) return { kind: 'limit_reached' };
    if (count && r.maxVisits !== null && this.failWrites) throw this.failWrites;
    if (count) r.visits++;
    return { kind: 'found', url: r.url, limited: r.maxVisits !== null };
  }
  // Visit events: not built yet on this store.
  visitStats(): never {
    throw new Error('visit events are not implemented yet');
  }
  listVisits(): never {
    throw new Error('visit events are not implemented yet');
  }
  deleteVisits(): never {
    throw new Error('visit events are not implemented yet');
  }
  exportVisits(): never {
    throw new Error('visit events are not implemented yet');
  }
  importVisit(): never {
    throw new Error('visit events are not implemented yet');
  }

  async *exportAll(now: number): AsyncGenerator<LinkRecord> {
    yield* this.live(now);
  }
  async ready(): Promise<undefined> {
    return undefined;
  }
  async close(): Promise<void> {}
}

function service(store: LinkStore, codes: string[] = ['code01', 'code02', 'code03', 'code04']) {
  let i = 0;
  return createService({
    store,
    baseUrl: 'https://s.example',
    minShortLength: 6,
    maxShortLength: 6,
    maxUrlLength: 100,
    apiKeys: [],
    now: () => NOW_MS,
    randomCode: () => codes[i++ % codes.length]!,
    log: createLogger('silent'),
  });
}

test('the redirect fast path asks a store without countVisitIn only for a code-shaped, unreserved code', async () => {
  const store = new AsyncStore();
  store.records.push({ code: 'code01', url: 'https://example.com/a', createdAt: NOW, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  const asked: string[] = [];
  const countVisit = store.countVisit.bind(store);
  store.countVisit = (code, now, count) => {
    asked.push(code);
    return countVisit(code, now, count);
  };
  const s = service(store);
  assert.deepEqual(await s.visitIn('/code01', 1, true), { kind: 'found', url: 'https://example.com/a', limited: false });
  assert.deepEqual(await s.visitIn('/s/zzzzzz', 3, true), { kind: 'missing' });
  for (const path of ['/code01/', '/code01?x=1', '/%63ode01', '/metrics', '/Docs', '/', `/${'a'.repeat(65)}`]) {
    assert.equal(s.visitIn(path, 1, true), undefined, path);
  }
  assert.deepEqual(asked, ['code01', 'zzzzzz']);
  assert.equal(store.records[0]!.visits, 1);
});

test('over a store that answers with promises, every operation works and reports typed outcomes', async () => {
  const store = new AsyncStore();
  const s = service(store);
  const record = {
    short_code: 'code01',
    domain: null,
    short_url: 'https://s.example/code01',
    original_url: 'https://example.com/a',
    created_at: NOW,
    visit_count: 0,
    untracked_visits: 0,
    retention_days: 0,
    max_visits: null,
    expires_at: null,
    title: null,
    tags: [],
    author: null,
    ...NO_ROUTING,
  };
  assert.deepEqual(await s.shorten({ url: 'https://example.com/a', retentionDays: 0 }), { ok: true, record });
  const hit = s.visit('code01', true);
  assert.ok(hit instanceof Promise, "the store's promise is passed on, not awaited by the service");
  assert.deepEqual(await hit, { kind: 'found', url: 'https://example.com/a', limited: false });
  const visited = { ...record, visit_count: 1 };
  assert.deepEqual(await s.get('code01'), { ok: true, record: visited });
  assert.deepEqual(await s.lookup('HTTPS://EXAMPLE.COM/a'), { ok: true, record: visited }, 'lookup normalizes its input');
  assert.deepEqual(await s.list({}), { ok: true, total: 1, urls: [visited] });
  const edited = { ...visited, original_url: 'https://example.com/z', retention_days: 2, expires_at: NOW + 2 * 86400, max_visits: 5 };
  assert.deepEqual(await s.update('code01', { url: 'HTTPS://EXAMPLE.COM/z', retentionDays: 2, maxVisits: 5 }), { ok: true, record: edited });
  assert.deepEqual(await s.update('code01', { maxVisits: null }), { ok: true, record: { ...edited, max_visits: null } }, 'null clears the limit');
  assert.deepEqual(await s.get('code01'), { ok: true, record: { ...edited, max_visits: null } });
  assert.deepEqual(await s.remove('code01'), { ok: true });
  assert.deepEqual(await s.update('code01', { maxVisits: 5 }), { ok: false, error: 'not_found' });
  assert.deepEqual(await s.remove('code01'), { ok: false, error: 'not_found' });
  assert.deepEqual(await s.get('code01'), { ok: false, error: 'not_found' });
  assert.deepEqual(await s.lookup('https://example.com/a'), { ok: false, error: 'not_found' });
});

test('a code the store refuses as taken is a collision: the next candidate is tried', async () => {
  const store = new AsyncStore();
  store.taken = new Set(['code01', 'code02']);
  const created = await service(store).shorten({ url: 'https://example.com/b', retentionDays: 0 });
  assert.equal(created.ok && created.record.short_code, 'code03');
});

test('failures are outcomes: invalid input, code space exhausted, storage unavailable', async () => {
  const store = new AsyncStore();
  assert.deepEqual(await service(store).shorten({ url: 'ftp://example.com/', retentionDays: 0 }), {
    ok: false,
    error: 'invalid',
    detail: 'url must use http or https, not ftp',
  });
  assert.deepEqual(await service(store).shorten({ url: 'https://example.com/', retentionDays: -1 }), {
    ok: false,
    error: 'invalid',
    detail: 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever)',
  });
  assert.deepEqual(await service(store).lookup(''), { ok: false, error: 'invalid', detail: 'url is required' });
  store.taken = new Set(['code01']);
  assert.deepEqual(await service(store, ['code01']).shorten({ url: 'https://example.com/', retentionDays: 0 }), {
    ok: false,
    error: 'unavailable',
    detail: 'no free short code up to 6 characters; raise MAX_SHORT_LENGTH',
  });
  store.taken = new Set();
  store.records.push({ code: 'kept01', url: 'https://example.com/k', createdAt: NOW, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null });
  store.failWrites = new StoreUnavailableError('database unavailable');
  assert.deepEqual(await service(store).shorten({ url: 'https://example.com/', retentionDays: 0 }), {
    ok: false,
    error: 'unavailable',
    detail: 'database unavailable',
  });
  assert.deepEqual(await service(store).remove('kept01'), { ok: false, error: 'unavailable', detail: 'database unavailable' });
  // Anything else a store throws is a bug: thrown on, to the generic 500.
  store.failWrites = new TypeError('a bug');
  await assert.rejects(service(store).remove('kept01'), TypeError);
});

test('a custom code is stored as given with its visit limit; a taken one is a conflict, not a collision', async () => {
  const store = new AsyncStore();
  const s = service(store);
  const created = await s.shorten({ url: 'https://example.com/c', code: 'My_Lk1', maxVisits: 3 });
  assert.equal(created.ok && created.record.short_code, 'My_Lk1');
  assert.equal(created.ok && created.record.max_visits, 3);
  assert.deepEqual(await s.shorten({ url: 'https://example.com/d', code: 'My_Lk1' }), { ok: false, error: 'conflict', detail: 'code already in use' });
  // Codes are case-sensitive: another case is another code.
  assert.equal((await s.shorten({ url: 'https://example.com/d', code: 'my_Lk1' })).ok, true);
  // Expired: the code is free again.
  store.records.push({ code: 'gone01', url: 'https://example.com/g', createdAt: NOW - 3 * 86400, retentionDays: 1, visits: 0, untracked: 0, maxVisits: null });
  assert.equal((await s.shorten({ url: 'https://example.com/e', code: 'gone01' })).ok, true);
  for (const [code, detail] of [
    ['a.b', /A-Z and a-z, digits, "-" and "_"/],
    ['ab', /6 to 6 characters/],
    ['STATIC', /reserved/],
    [42, /code must be a string/],
  ] as const) {
    const outcome = await s.shorten({ url: 'https://example.com/f', code });
    assert.equal(outcome.ok, false, String(code));
    assert.match(!outcome.ok && outcome.error === 'invalid' ? outcome.detail : '', detail, String(code));
  }
  // max_visits: numbers in JSON, digits only where the field came as text.
  assert.equal((await s.shorten({ url: 'https://example.com/f', maxVisits: '7', textual: { maxVisits: true } })).ok, true);
  const typed = await s.shorten({ url: 'https://example.com/f', maxVisits: '7', textual: { retentionDays: true } });
  assert.match(!typed.ok && typed.error === 'invalid' ? typed.detail : '', /max_visits must be an integer from 1 to 2147483647/);
  assert.equal(store.records.length, 5, 'nothing stored for a refused create');
});

test('an edit refuses bad values before looking the code up', async () => {
  const store = new AsyncStore();
  const s = service(store);
  await s.shorten({ url: 'https://example.com/a' });
  const cases: [LinkEdit, RegExp][] = [
    [{ url: 'ftp://example.com/' }, /http or https/],
    [{ url: null }, /url is required/],
    [{ retentionDays: '3' }, /retention_days must be an integer/],
    [{ maxVisits: 0 }, /max_visits must be an integer from 1/],
    [{ maxVisits: '5' }, /max_visits must be an integer from 1/],
    [{ title: 'x'.repeat(513) }, /title must be at most 512 characters long, not 513/],
    [{ tags: null }, /^tags must be an array; \[\] clears them$/],
    [{ tags: ['a', 'a\0b'] }, /^a tag must not contain a NUL character$/],
  ];
  for (const [edit, detail] of cases) {
    for (const code of ['code01', 'nosuch']) {
      const outcome = await s.update(code, edit);
      assert.equal(!outcome.ok && outcome.error, 'invalid', JSON.stringify(edit));
      assert.match(!outcome.ok && outcome.error === 'invalid' ? outcome.detail : '', detail, JSON.stringify(edit));
    }
  }
  assert.equal(store.records[0]!.url, 'https://example.com/a', 'nothing changed');
  store.failWrites = new StoreUnavailableError('read-only');
  assert.deepEqual(await s.update('code01', { retentionDays: 0 }), { ok: false, error: 'unavailable', detail: 'read-only' });
});

test('the list passes q to the store, and counts what it keeps', async () => {
  const store = new AsyncStore();
  const s = service(store);
  await s.shorten({ url: 'https://example.com/Alpha' });
  await s.shorten({ url: 'https://example.com/beta' });
  const listed = await s.list({ q: 'ALPHA' });
  assert.equal(store.listed?.q, 'ALPHA');
  assert.ok(listed.ok);
  assert.equal(listed.total, 1);
  assert.deepEqual(
    listed.urls.map((u) => u.short_code),
    ['code01'],
  );
});

test('a counted visit the store cannot make durable is a 503 with its reason; other errors stay bugs', async () => {
  const store = new AsyncStore();
  const s = service(store);
  await s.shorten({ url: 'https://example.com/a', maxVisits: 2 });
  store.failWrites = new StoreUnavailableError('disk full');
  const hit = s.visit('code01', true);
  assert.ok(hit instanceof Promise);
  const err = await hit.then(
    () => assert.fail('the visit was granted'),
    (e: unknown) => storeFailure(e),
  );
  assert.ok(err instanceof HttpError);
  assert.equal(err.status, 503);
  assert.equal(err.detail, 'disk full');
  const bug = new TypeError('a bug');
  assert.equal(storeFailure(bug), bug);
});

test('one table maps each failure to its status: 404 with no body, the others with their detail', () => {
  assert.deepEqual(FAILURE_STATUS, { invalid: 400, not_found: 404, conflict: 409, unavailable: 503, rate_limited: 429 });
  const conflict = failureError({ ok: false, error: 'conflict', detail: 'code already in use' });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.detail, 'code already in use');
  const notFound = failureError({ ok: false, error: 'not_found' });
  assert.equal(notFound.status, 404);
  assert.equal(notFound.detail, undefined);
  const unavailable = failureError({ ok: false, error: 'unavailable', detail: 'disk full' }, [['Deprecation', '@1']]);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.detail, 'disk full');
  assert.deepEqual(unavailable.headers, [['Deprecation', '@1']]);
  // A 429 says when to come back, before any other header it carries.
  const limited = failureError(
    { ok: false, error: 'rate_limited', detail: 'too many links created from this address: try again in 7 seconds', retryAfter: 7 },
    [['Deprecation', '@1']],
  );
  assert.equal(limited.status, 429);
  assert.equal(limited.detail, 'too many links created from this address: try again in 7 seconds');
  assert.deepEqual(limited.headers, [
    ['Retry-After', '7'],
    ['Deprecation', '@1'],
  ]);
});

test('a used-up link answers 410 with its own page (the decision visit limits will return)', () => {
  const sent: unknown[][] = [];
  const reply = { send: (...args: unknown[]) => sent.push(args) } as unknown as Responder;
  const res = {} as ServerResponse;
  answerVisit(reply, res, { kind: 'limit_reached' });
  answerVisit(reply, res, { kind: 'expired' });
  assert.equal(sent[0]![1], 410);
  assert.match(String(sent[0]![3]), /<h1>This link has reached its visit limit<\/h1>/);
  assert.deepEqual(sent[0]![4], ['Cache-Control', 'private, no-store']);
  assert.equal(sent[1]![1], 410);
  assert.match(String(sent[1]![3]), /<h1>This link has expired<\/h1>/);
});
