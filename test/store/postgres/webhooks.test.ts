/**
 * Webhooks on PostgreSQL (docs/postgres.md, webhooks): subscriptions added, listed and removed with
 * their rows; a create, an edit, a delete and a counted visit writing one outbox row per
 * subscription that wants them (domain, event list, disabled), in the change's own statement or
 * transaction (a change that fails, or loses its code to another create, writes none); the visit
 * that reaches a limit; the plain redirect's statement unchanged while nobody listens; the click
 * cap; the copy of the subscriptions on another instance; the migration. Claims, settling and the
 * list of deliveries are in `webhooks-claims.test.ts`.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { openPostgresStore, type PostgresOpenOptions } from '../../../src/store/postgres/connect.ts';
import { HOOKED, PLAIN } from '../../../src/store/postgres/redirect-sql.ts';
import { MIGRATIONS, migrate } from '../../../src/store/postgres/schema.ts';
import { PostgresStore } from '../../../src/store/postgres/store.ts';
import type { WebhookBodies, WebhookSubscription } from '../../../src/store/webhook-store.ts';
import type { EventType } from '../../../src/store/webhook-store.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { pgServer } from '../../support/pg.ts';
import { linkRecord, T, webhookSubscription } from '../../support/records.ts';

const quiet = createLogger('silent');
const server = await pgServer();
const QUIET_JOBS = { readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 } as const;

/** Bodies a test can read back: what the service would render, reduced to what is checked. */
const bodies: WebhookBodies = {
  link: (r) => JSON.stringify({ code: r.code, url: r.url, visits: r.visits, maxVisits: r.maxVisits, title: r.title ?? null }),
  clicked: (key, domain, v) => JSON.stringify({ key, domain, time: v.time, referrer: v.referrer }),
};

const rec = linkRecord;

const ev = (time: number): VisitEvent => ({ time, referrer: 'news.example', country: null, browser: null, os: null, device: null, bot: false, visitor: 7 });

const sub = (name: string, events: EventType[], domain: string | null = null, over: Partial<WebhookSubscription> = {}): WebhookSubscription =>
  webhookSubscription(`wh_${name.padEnd(16, '0')}`, { url: `https://hooks.example/${name}`, events, domain, ...over });

const ALL: EventType[] = ['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'link.limit_reached'];

/** A clock a test moves: the store's milliseconds. */
interface Clock {
  ms: number;
}

interface Setup {
  url: string;
  db: postgres.Sql;
  open(options?: Partial<PostgresOpenOptions>): Promise<PostgresStore>;
}

/** A fresh database, a pool of the test's own on it, and stores on it (closed after the test). */
async function setup(t: TestContext): Promise<Setup> {
  const url = await server!.createDatabase();
  const db = postgres(url, { max: 2, onnotice: () => undefined });
  const stores: PostgresStore[] = [];
  t.after(async () => {
    for (const s of stores) await s.close();
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  const open = async (options: Partial<PostgresOpenOptions> = {}): Promise<PostgresStore> => {
    const store = await openPostgresStore({ url, poolSize: 4, log: quiet, now: () => T * 1000, webhookBodies: bodies, ...QUIET_JOBS, ...options });
    stores.push(store);
    return store;
  };
  return { url, db, open };
}

interface Outbox {
  sub: string;
  type: string;
  data: string;
  time: number;
  id: string;
}

/** The outbox in order, each row shortened to the subscription's name. */
async function outbox(db: postgres.Sql): Promise<Outbox[]> {
  const rows = await db<{ subscription_id: string; type: string; data: string; time: string; event_id: string }[]>`
    SELECT subscription_id, type, data, time, event_id FROM webhook_outbox ORDER BY seq`;
  return rows.map((r) => ({ sub: r.subscription_id.slice(3).replace(/0+$/, ''), type: r.type, data: r.data, time: Number(r.time), id: r.event_id }));
}

/** Who got what: `name type` per row, in order. */
const who = (rows: readonly Outbox[]): string[] => rows.map((r) => `${r.sub} ${r.type}`);

const visit = (store: PostgresStore, code: string, time = T): Promise<unknown> =>
  store.countVisit(
    code,
    () => time,
    true,
    () => ev(time),
  );

test('subscriptions: added, listed oldest first, removed with their rows and attempts; unknown ids answer false or undefined', { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  const store = await open();
  const hooks = store.webhooks;
  assert.deepEqual(await hooks.subscriptions(), []);
  const a = sub('a', ['link.created'], null, { createdAt: T + 5 });
  const b = sub('b', ['link.created', 'link.clicked'], 'x.example');
  const c = sub('c', ['link.deleted'], '');
  for (const s of [a, b, c]) await hooks.addSubscription(s);
  assert.deepEqual(await hooks.subscriptions(), [b, c, a], 'oldest first; the same second in the order added');
  await assert.rejects(hooks.addSubscription(a), { code: '23505' }, 'ids are unique');

  const ping = { id: 'msg_01', type: 'ping', time: T, data: '{}' } as const;
  assert.equal(await hooks.enqueue(a.id, ping, T * 1000), true);
  assert.equal(await hooks.enqueue('wh_nonenonenonenone', ping, T * 1000), false);
  const [row] = await hooks.due(T * 1000, 10);
  assert.deepEqual(row?.event, ping);
  await hooks.settle(row!, { at: T * 1000, eventId: ping.id, type: 'ping', status: 500, durationMs: 12, error: 'boom', outcome: 'retry' }, T * 1000 + 5000);
  assert.equal((await hooks.deliveries(a.id))?.length, 1);
  assert.deepEqual(await hooks.deliveries(b.id), [], 'a subscription without attempts has an empty list');
  assert.equal(await hooks.deliveries('wh_nonenonenonenone'), undefined);

  assert.equal(await hooks.removeSubscription(a.id), true);
  assert.equal(await hooks.removeSubscription(a.id), false, 'removed once');
  assert.deepEqual(await hooks.subscriptions(), [b, c]);
  assert.equal(await hooks.deliveries(a.id), undefined);
  const [left] = await db<{ rows: string; attempts: string }[]>`
    SELECT (SELECT count(*) FROM webhook_outbox) AS rows, (SELECT count(*) FROM webhook_attempts) AS attempts`;
  assert.deepEqual(left, { rows: '0', attempts: '0' }, 'its rows and attempts went with it');
  assert.deepEqual(await hooks.backlog(), { pending: 0, dropped: 0 });
});

/**
 * A removal of subscription `id` that has taken its first lock, the subscription's row (as the
 * DELETE's own first step would), and goes on with the DELETE when told.
 */
async function removalAtItsFirstLock(db: postgres.Sql, id: string): Promise<{ goOn(): void; removal: Promise<unknown> }> {
  let locked!: () => void;
  let goOn!: () => void;
  const lockTaken = new Promise<void>((r) => (locked = r));
  const told = new Promise<void>((r) => (goOn = r));
  const removal = db.begin(async (tx) => {
    await tx`SELECT id FROM webhook_subscriptions WHERE id = ${id} FOR UPDATE`;
    locked();
    await told;
    await tx`DELETE FROM webhook_subscriptions WHERE id = ${id}`;
  });
  await lockTaken;
  return { goOn, removal };
}

test('an attempt settled while its subscription is being removed waits on the subscription first, holding no row of its own: the two never deadlock', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const hooks = (await open()).webhooks;
  const a = sub('a', ['link.created']);
  await hooks.addSubscription(a);
  const ping = { id: 'msg_01', type: 'ping', time: T, data: '{}' } as const;
  await hooks.enqueue(a.id, ping, T * 1000);
  const [row] = await hooks.due(T * 1000, 10);
  const { goOn, removal } = await removalAtItsFirstLock(db, a.id);
  const settled = hooks.settle(
    row!,
    { at: T * 1000, eventId: ping.id, type: 'ping', status: 500, durationMs: 3, error: 'boom', outcome: 'retry' },
    T * 1000 + 5000,
  );
  // Once the attempt waits on a lock, its outbox row is still free: another may lock it at once.
  for (;;) {
    const [waiting] = await db<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%webhook_attempts%'`;
    if (waiting!.n > 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await db.begin((tx) => tx`SELECT seq FROM webhook_outbox WHERE seq = ${row!.seq} FOR UPDATE NOWAIT`);
  goOn();
  await removal;
  await settled;
  const [left] = await db<{ rows: string; attempts: string }[]>`
    SELECT (SELECT count(*) FROM webhook_outbox) AS rows, (SELECT count(*) FROM webhook_attempts) AS attempts`;
  assert.deepEqual(left, { rows: '0', attempts: '0' }, 'the removal took its row; the attempt of a removed subscription added nothing');
});

test('a create, an edit, a counted visit and a ping that race the removal of a subscription that wants them are made, and write nothing for it', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const store = await open();
  const a = sub('a', ALL);
  await store.webhooks.addSubscription(a);
  assert.equal(await store.insert(rec('old'), T), true);
  const { goOn, removal } = await removalAtItsFirstLock(db, a.id);
  // Each waits on the subscription's row; before, each then failed its key check (23503) once
  // the removal was done, and the change was lost.
  const changes = Promise.all([
    store.insert(rec('new'), T),
    store.update('old', { title: 'Hello' }, T + 1),
    visit(store, 'old', T + 2),
    store.webhooks.enqueue(a.id, { id: 'msg_01', type: 'ping', time: T, data: '{}' }, T * 1000),
  ]);
  for (;;) {
    const [waiting] = await db<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
    if (waiting!.n >= 4) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  goOn();
  await removal;
  const [inserted, updated, counted, pinged] = await changes;
  assert.equal(inserted, true);
  assert.equal(updated?.title, 'Hello');
  assert.ok(counted, 'the visit was counted');
  assert.equal(pinged, false, 'no ping for a removed subscription');
  assert.deepEqual(await outbox(db), [], 'nothing for the removed subscription');
  const [row] = await db<{ n: number }[]>`SELECT visit_count::int AS n FROM links WHERE code = 'old'`;
  assert.equal(row!.n, 1);
});

test('a create, an edit, a delete and a counted visit write one row per subscription that wants them, and none for the others', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const store = await open();
  await store.webhooks.addSubscription(sub('every', ALL));
  await store.webhooks.addSubscription(sub('dflt', ['link.created', 'link.updated'], ''));
  await store.webhooks.addSubscription(sub('other', ALL, 'x.example'));
  await store.webhooks.addSubscription(sub('clicks', ['link.clicked']));
  await store.webhooks.addSubscription(sub('off', ALL, null, { disabled: true }));

  assert.equal(await store.insert(rec('abc'), T), true);
  assert.equal(await store.insert(rec('x.example/abc', { createdAt: T - 60 }), T), true);
  let rows = await outbox(db);
  assert.deepEqual(who(rows), ['every link.created', 'dflt link.created', 'every link.created', 'other link.created']);
  assert.equal(rows[0]!.data, bodies.link(rec('abc')));
  assert.equal(rows[2]!.data, bodies.link(rec('x.example/abc', { createdAt: T - 60 })));
  assert.deepEqual(
    rows.map((r) => r.time),
    [T, T, T - 60, T - 60],
    "a creation's time is the link's",
  );
  assert.equal(rows[0]!.id, rows[1]!.id, 'one event, one id for every subscription');
  assert.notEqual(rows[0]!.id, rows[2]!.id);
  assert.match(rows[0]!.id, /^msg_[0-9A-Z]{26}$/);

  await db`DELETE FROM webhook_outbox`;
  const updated = await store.update('abc', { title: 'Hello' }, T + 10);
  assert.equal(updated?.title, 'Hello');
  rows = await outbox(db);
  assert.deepEqual(who(rows), ['every link.updated', 'dflt link.updated']);
  assert.equal(rows[0]!.data, bodies.link(updated!), 'the data is the record as the edit left it');
  assert.equal(rows[0]!.time, T + 10);

  await db`DELETE FROM webhook_outbox`;
  await visit(store, 'abc', T + 20);
  await visit(store, 'x.example/abc', T + 21);
  await store.countVisit(
    'abc',
    () => T,
    false,
    () => ev(T),
  );
  await visit(store, 'nothere');
  rows = await outbox(db);
  assert.deepEqual(who(rows), ['every link.clicked', 'clicks link.clicked', 'every link.clicked', 'other link.clicked', 'clicks link.clicked']);
  assert.deepEqual(JSON.parse(rows[0]!.data), { key: 'abc', domain: null, time: T + 20, referrer: 'news.example' });
  assert.deepEqual(JSON.parse(rows[2]!.data), { key: 'x.example/abc', domain: 'x.example', time: T + 21, referrer: 'news.example' });
  assert.equal(rows[0]!.time, T + 20);

  await db`DELETE FROM webhook_outbox`;
  const before = await store.get('abc', T);
  assert.equal(await store.delete('abc', T + 30), true);
  assert.equal(await store.delete('abc', T + 30), false);
  rows = await outbox(db);
  assert.deepEqual(who(rows), ['every link.deleted']);
  assert.equal(rows[0]!.data, bodies.link(before!), 'the data is the record as it was deleted, its visit count included');
  assert.equal(rows[0]!.time, T + 30);
});

test('the visit that reaches a limit writes link.limit_reached with the count it made, once, however many visits race for it', { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  const one = await open();
  const two = await open();
  await one.webhooks.addSubscription(sub('limit', ['link.limit_reached']));
  await one.webhooks.addSubscription(sub('clicks', ['link.clicked']));
  await one.insert(rec('lim2', { maxVisits: 2 }), T);
  await one.insert(rec('free'), T);
  await db`DELETE FROM webhook_outbox`;

  assert.equal(((await visit(one, 'lim2')) as { kind: string }).kind, 'found');
  assert.deepEqual(who(await outbox(db)), ['clicks link.clicked'], 'a visit that leaves visits is no limit event');
  assert.equal(((await visit(one, 'lim2')) as { kind: string }).kind, 'found');
  assert.equal(((await visit(one, 'lim2')) as { kind: string }).kind, 'limit_reached');
  await visit(one, 'free');
  const rows = await outbox(db);
  assert.deepEqual(who(rows), ['clicks link.clicked', 'clicks link.clicked', 'limit link.limit_reached', 'clicks link.clicked']);
  assert.deepEqual(JSON.parse(rows[2]!.data), { code: 'lim2', url: 'https://example.com/lim2', visits: 2, maxVisits: 2, title: null });
  assert.equal(rows[2]!.time, T);

  await db`DELETE FROM webhook_outbox`;
  await one.insert(rec('quiet', { maxVisits: 1 }), T);
  await db`DELETE FROM webhook_outbox`;
  // `visit_tracking: counts`: no event, so no click to tell of; the limit is still told.
  assert.equal((await one.countVisit('quiet', () => T + 5, true)).kind, 'found');
  assert.deepEqual(who(await outbox(db)), ['limit link.limit_reached']);
  assert.equal(JSON.parse((await outbox(db))[0]!.data).visits, 1);

  await db`DELETE FROM webhook_outbox`;
  await one.insert(rec('race', { maxVisits: 5 }), T);
  const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => visit(i % 2 === 0 ? one : two, 'race') as Promise<{ kind: string }>));
  assert.equal(decisions.filter((d) => d.kind === 'found').length, 5, 'the limit is exact');
  const raced = await outbox(db);
  assert.equal(raced.filter((r) => r.type === 'link.clicked').length, 5, 'one click per counted visit');
  const reached = raced.filter((r) => r.type === 'link.limit_reached');
  assert.equal(reached.length, 1, 'one limit event');
  assert.equal(JSON.parse(reached[0]!.data).visits, 5);
});

test('no subscription wants a visit: the redirect sends the plain statement alone; a hooked one only while one does', { skip: !server }, async (t) => {
  const { url, db, open } = await setup(t);
  const texts: string[] = [];
  // One connection: no second one opens (and asks for the array types) in the middle of a visit.
  const sql = postgres(url, { max: 1, onnotice: () => undefined, debug: (_c, query) => void texts.push(query) });
  await migrate(sql);
  const store = await PostgresStore.open({ sql, log: quiet, now: () => T * 1000, webhookBodies: bodies, ...QUIET_JOBS });
  t.after(() => store.close());
  const other = await open();
  await store.insert(rec('plain'), T);
  await store.insert(rec('lim1', { maxVisits: 1 }), T);
  const sent = async (code: string): Promise<string[]> => {
    texts.length = 0;
    await visit(store, code);
    return texts.map((q) => q.trim());
  };
  assert.deepEqual(await sent('plain'), [PLAIN.withEvent.trim()], 'one statement, the plain text');
  await store.countVisit('plain', () => T, true);
  assert.equal(texts.at(-1)?.trim(), PLAIN.untracked.trim());

  await store.webhooks.addSubscription(sub('clicks', ['link.clicked'], 'x.example'));
  const reread = await sent('plain');
  assert.equal(reread.length, 2, 'the copy is read again after a change of this instance');
  assert.deepEqual(await sent('plain'), [PLAIN.withEvent.trim()], "another domain's subscription: still the plain text");

  await store.webhooks.addSubscription(sub('every', ['link.clicked']));
  await sent('plain');
  assert.deepEqual(await sent('plain'), [HOOKED.plain.any.withEvent.trim()], 'one statement with the clicks');

  await store.webhooks.addSubscription(sub('limit', ['link.limit_reached']));
  await sent('plain');
  assert.deepEqual(await sent('plain'), [HOOKED.plain.below.withEvent.trim()], 'a visit short of a limit: still one statement');
  await db`DELETE FROM webhook_outbox`;
  const last = await sent('lim1');
  assert.equal(last[0], HOOKED.plain.below.withEvent.trim());
  assert.ok(last.includes(HOOKED.plain.any.withEvent.trim()), 'the visit that reaches the limit is counted again');
  assert.ok(last.some((q) => /^begin/i.test(q)) && last.some((q) => /^commit/i.test(q)), 'in a transaction');
  assert.deepEqual(
    (await other.webhooks.due(T * 1000, 10)).map((r) => r.event.type).sort(),
    ['link.clicked', 'link.limit_reached'],
    'the click and the limit event, once each',
  );
});

test('a create that loses its code to another writes no event; nor does a code in use; taking over an expired link writes one', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const one = await open();
  const two = await open();
  await one.webhooks.addSubscription(sub('created', ['link.created']));
  const codes = Array.from({ length: 20 }, (_, i) => `race${i}`);
  const won = await Promise.all(
    codes.flatMap((code) => [
      one.insert(rec(code, { url: `https://one.example/${code}` }), T),
      two.insert(rec(code, { url: `https://two.example/${code}` }), T),
    ]),
  );
  assert.equal(won.filter(Boolean).length, codes.length, 'one winner per code');
  const rows = await outbox(db);
  assert.equal(rows.length, codes.length, 'one event per link made');
  for (const code of codes) {
    const link = await one.get(code, T);
    assert.deepEqual(
      rows.filter((r) => JSON.parse(r.data).code === code).map((r) => r.data),
      [bodies.link(link!)],
      `${code}: the winner's event alone`,
    );
  }
  assert.equal(await one.insert(rec('race0'), T), false);
  await one.insert(rec('old', { createdAt: T - 3 * 86400, retentionDays: 1 }), T - 3 * 86400);
  await db`DELETE FROM webhook_outbox`;
  assert.equal(await one.insert(rec('old', { url: 'https://example.com/new' }), T), true, 'the code of an expired link is free');
  assert.deepEqual(
    (await outbox(db)).map((r) => JSON.parse(r.data).url),
    ['https://example.com/new'],
  );
});

test('a change whose statement or transaction fails writes no row, and is not made; a change of a missing link writes none', { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  const store = await open();
  await store.insert(rec('keep'), T);
  await store.insert(rec('boomdel'), T);
  await store.insert(rec('boomvisit'), T);
  await store.webhooks.addSubscription(sub('every', ALL));
  // The outbox refuses any row whose data says "boom": the change's own write then fails.
  await db`ALTER TABLE webhook_outbox ADD CONSTRAINT no_boom CHECK (position('boom' in data) = 0)`;

  await assert.rejects(store.insert(rec('boomnew'), T), { code: '23514' });
  assert.equal(await store.get('boomnew', T), undefined, 'the link is not made without its event');
  await assert.rejects(store.update('keep', { url: 'https://example.com/boom' }, T), { code: '23514' });
  assert.equal((await store.get('keep', T))?.url, 'https://example.com/keep', 'the edit is not made without its event');
  await assert.rejects(store.delete('boomdel', T), { code: '23514' });
  assert.ok(await store.get('boomdel', T), 'the link is not deleted without its event');
  await assert.rejects(visit(store, 'boomvisit'), { code: '23514' });
  assert.equal((await store.get('boomvisit', T))?.visits, 0, 'the visit is not counted without its event');
  const [events] = await db<{ n: string }[]>`SELECT count(*) AS n FROM visits`;
  assert.equal(events?.n, '0', 'nor its visit event recorded');

  assert.equal(await store.update('nothere', { title: 'x' }, T), undefined);
  assert.equal(await store.delete('nothere', T), false);
  assert.deepEqual(await outbox(db), [], 'no row for any of them');
  assert.equal(await store.insert(rec('fine'), T), true, 'and the store goes on');
  assert.deepEqual(who(await outbox(db)), ['every link.created']);
});

test('the click cap: past it a subscription hears of no more clicks, the drops are counted for every instance, and room comes back as rows leave', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const store = await open({ webhookClickCap: 3 });
  const other = await open({ webhookClickCap: 3 });
  await store.webhooks.addSubscription(sub('slow', ['link.clicked', 'link.updated']));
  await store.webhooks.addSubscription(sub('fast', ['link.clicked']));
  await store.insert(rec('hot'), T);
  for (let i = 0; i < 5; i++) await visit(store, 'hot', T + i);
  let rows = await outbox(db);
  assert.deepEqual(
    rows.map((r) => `${r.sub} ${JSON.parse(r.data).time}`),
    ['slow 1790000000', 'fast 1790000000', 'slow 1790000001', 'fast 1790000001', 'slow 1790000002', 'fast 1790000002'],
    'three each, the first three',
  );
  assert.deepEqual(await store.webhooks.backlog(), { pending: 6, dropped: 4 });
  assert.deepEqual(
    await other.webhooks.backlog(),
    { pending: 6, dropped: 0 },
    "the rows owed are the database's; the drops, each instance its own (/metrics adds them up)",
  );
  assert.equal((await store.get('hot', T))?.visits, 5, 'a dropped click is still a counted visit');

  await store.update('hot', { title: 'still told' }, T);
  assert.equal((await outbox(db)).filter((r) => r.type === 'link.updated').length, 1, 'the cap is for clicks only');
  // "fast" delivers two of its clicks: it has room for two more, "slow" none.
  for (let i = 0; i < 2; i++) {
    const due = (await store.webhooks.due(T * 1000, 10)).filter((r) => r.subscription === sub('fast', []).id);
    for (const r of due)
      await store.webhooks.settle(
        r,
        { at: T * 1000, eventId: r.event.id, type: r.event.type, status: 200, durationMs: 1, error: null, outcome: 'delivered' },
        null,
      );
    await db`UPDATE webhook_outbox SET claimed_until = NULL`;
  }
  for (let i = 5; i < 8; i++) await visit(other, 'hot', T + i);
  rows = await outbox(db);
  assert.deepEqual(
    rows.filter((r) => r.type === 'link.clicked').map((r) => `${r.sub} ${JSON.parse(r.data).time - T}`),
    ['slow 0', 'slow 1', 'slow 2', 'fast 2', 'fast 5', 'fast 6'],
  );
  assert.deepEqual(await other.webhooks.backlog(), { pending: 7, dropped: 4 });
  assert.deepEqual((await store.webhooks.backlog()).dropped, 4);
  await store.close();
  const [counter] = await db<{ dropped_clicks: string }[]>`SELECT dropped_clicks FROM webhook_counters`;
  assert.equal(counter?.dropped_clicks, '8', 'a closing instance writes what it counted');
});

test('a subscription made on another instance is heard of within a second; one made here at once', { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  const clock: Clock = { ms: T * 1000 };
  const here = await open({ now: () => clock.ms });
  const there = await open();
  await here.insert(rec('before'), T);
  await there.webhooks.addSubscription(sub('there', ['link.created']));
  await here.insert(rec('stale'), T);
  assert.deepEqual(await outbox(db), [], 'a copy younger than a second does not know it yet');
  clock.ms += 1000;
  await here.insert(rec('fresh'), T);
  assert.deepEqual(
    (await outbox(db)).map((r) => JSON.parse(r.data).code),
    ['fresh'],
  );
  await here.webhooks.removeSubscription(sub('there', []).id);
  await here.webhooks.addSubscription(sub('here', ['link.deleted']));
  assert.equal(await here.delete('fresh', T), true);
  assert.deepEqual(who(await outbox(db)), ['here link.deleted'], 'its own change at once');
});

test('migration 9: a database of migration 8 gets the webhook tables at start-up, its links as they were', { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  assert.deepEqual(MIGRATIONS.map((m) => m.version).slice(-1), [9]);
  assert.equal(MIGRATIONS.at(-1)?.name, 'webhooks');
  assert.deepEqual(await migrate(db, MIGRATIONS.slice(0, 8)), [1, 2, 3, 4, 5, 6, 7, 8]);
  await db`INSERT INTO links (code, url, created_at, retention_days) VALUES ('before', 'https://example.com/before', ${T}, 0)`;
  const store = await open();
  assert.equal((await store.get('before', T))?.url, 'https://example.com/before');
  assert.deepEqual(await store.webhooks.backlog(), { pending: 0, dropped: 0 });
  const tables = await db<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'webhook%' ORDER BY table_name`;
  assert.deepEqual(
    tables.map((r) => r.table_name),
    ['webhook_attempts', 'webhook_counters', 'webhook_outbox', 'webhook_subscriptions'],
  );
  assert.deepEqual(await migrate(db), [], 'the migrations are done once');
});
