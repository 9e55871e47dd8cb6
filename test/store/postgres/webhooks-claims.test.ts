/**
 * The webhook outbox's deliveries on PostgreSQL (docs/postgres.md, webhooks): `due` hands out each
 * subscription's oldest row only, in order; instances claiming at the same moment are never handed
 * the same row; a claim not settled (its instance died) is handed out again once its lease is
 * over, and the late settle of the first holder leaves the row to the new one; each way of settling
 * a row; the list of deliveries, newest first, trimmed to 100. The clocks are the tests': every
 * `now` is passed in.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import { openPostgresStore, type PostgresOpenOptions } from '../../../src/store/postgres/connect.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import type { DeliveryAttempt, DeliveryOutcome, OutboxEvent, PendingDelivery, WebhookSubscription } from '../../../src/store/webhook-store.ts';
import type { EventType } from '../../../src/store/webhook-store.ts';
import { pgServer } from '../../support/pg.ts';
import { T, webhookSubscription } from '../../support/records.ts';

const quiet = createLogger('silent');
const server = await pgServer();
const NOW = T * 1000;
const LEASE = 30_000;
const QUIET_JOBS = { readyCheckMs: 0, reapIntervalMs: 0, countRefreshMs: 0, visitJobsMs: 0 } as const;

const subId = (name: string): string => `wh_${name.padEnd(16, '_')}`;

const sub = (name: string, events: EventType[] = ['link.created'], over: Partial<WebhookSubscription> = {}): WebhookSubscription =>
  webhookSubscription(subId(name), { url: `https://hooks.example/${name}`, events, ...over });

/** A ping labelled `label` (its data, and its id after `msg_`). */
const event = (label: string, type: EventType = 'ping'): OutboxEvent => ({ id: `msg_${label.replace('.', '_')}`, type, time: T, data: JSON.stringify(label) });

const attempt = (row: PendingDelivery, outcome: DeliveryOutcome, at = NOW, over: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  at,
  eventId: row.event.id,
  type: row.event.type,
  status: outcome === 'delivered' ? 200 : outcome === 'disabled' ? 410 : 500,
  durationMs: 42,
  error: null,
  outcome,
  ...over,
});

/** What a row says: its data (the label it was enqueued with). */
const labels = (rows: readonly PendingDelivery[]): string[] => rows.map((r) => JSON.parse(r.event.data) as string);

interface Setup {
  db: postgres.Sql;
  open(options?: Partial<PostgresOpenOptions>): Promise<PostgresStore>;
}

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
    const store = await openPostgresStore({ url, poolSize: 4, log: quiet, now: () => NOW, ...QUIET_JOBS, ...options });
    stores.push(store);
    return store;
  };
  return { db, open };
}

test("due: each subscription's oldest row, in order; the next waits while the first is out or waits for its retry; a disabled subscription's wait", {
  skip: !server,
}, async (t) => {
  const { open } = await setup(t);
  const hooks = (await open()).webhooks;
  for (const name of ['a', 'b', 'c']) await hooks.addSubscription(sub(name));
  for (const label of ['a1', 'a2', 'a3']) await hooks.enqueue(subId('a'), event(label), NOW);
  for (const label of ['b1', 'b2']) await hooks.enqueue(subId('b'), event(label), NOW);
  for (const label of ['c1', 'c2']) await hooks.enqueue(subId('c'), event(label), NOW);
  assert.deepEqual(await hooks.due(NOW - 1, 10), [], 'nothing is due before its time');
  assert.deepEqual(labels(await hooks.due(NOW, 1)), ['a1'], 'at most `limit`, oldest first');
  const first = await hooks.due(NOW, 10);
  assert.deepEqual(labels(first), ['b1', 'c1'], "each subscription's oldest; a1 is out already");
  assert.deepEqual(first[0]!.subscription, subId('b'));
  assert.deepEqual(first[0]!.attempts, 0);
  assert.deepEqual(first[0]!.nextAt, NOW);
  assert.deepEqual(await hooks.due(NOW, 10), [], 'the second row of a subscription waits while its first is out');

  await hooks.settle(first[1]!, attempt(first[1]!, 'disabled'), null);
  assert.equal((await hooks.subscriptions()).find((s) => s.id === subId('c'))?.disabled, true);
  const back = await hooks.due(NOW + LEASE, 10);
  assert.deepEqual(labels(back), ['a1', 'b1'], 'handed out again once their lease ended; c2 is not sent');
  await hooks.settle(back[0]!, attempt(back[0]!, 'delivered'), null);
  await hooks.settle(back[1]!, attempt(back[1]!, 'retry'), NOW + LEASE + 5000);
  const next = await hooks.due(NOW + LEASE, 10);
  assert.deepEqual(labels(next), ['a2'], "b's first waits for its retry, and its second behind it; c2 stays unsent");
  const retried = await hooks.due(NOW + LEASE + 5000, 10);
  assert.deepEqual(labels(retried), ['b1']);
  assert.equal(retried[0]!.attempts, 1);
  assert.equal(retried[0]!.nextAt, NOW + LEASE + 5000);
  assert.deepEqual(await hooks.backlog(), { pending: 5, dropped: 0 }, 'a2, a3, b1, b2 and the disabled c2');
});

test('two instances claiming at once are never handed the same row, and between them deliver every row, in order per subscription', {
  skip: !server,
}, async (t) => {
  const { open } = await setup(t);
  const one = await open();
  const two = await open();
  const subs = Array.from({ length: 30 }, (_, i) => `s${i}`);
  for (const name of subs) await one.webhooks.addSubscription(sub(name));
  for (let n = 0; n < 4; n++) for (const name of subs) await one.webhooks.enqueue(subId(name), event(`${name}.${n}`), NOW);
  const delivered = new Map<string, string[]>();
  let rounds = 0;
  for (;;) {
    // Four claims from each instance at the same moment, each asking for more than there are.
    const asks = [one, two, one, two, one, two, one, two].map(async (store) => ({ store, rows: await store.webhooks.due(NOW, 20) }));
    const answers = await Promise.all(asks);
    const rows = answers.flatMap((a) => a.rows);
    if (rows.length === 0) break;
    assert.equal(new Set(rows.map((r) => r.seq)).size, rows.length, `round ${rounds}: no row handed out twice`);
    assert.equal(new Set(rows.map((r) => r.subscription)).size, rows.length, `round ${rounds}: one row per subscription at a time`);
    for (const { store, rows: mine } of answers) {
      for (const row of mine) {
        await store.webhooks.settle(row, attempt(row, 'delivered'), null);
        const list = delivered.get(row.subscription) ?? [];
        list.push(JSON.parse(row.event.data) as string);
        delivered.set(row.subscription, list);
      }
    }
    rounds++;
  }
  assert.equal(rounds, 4, 'each round delivers every subscription one row');
  for (const name of subs)
    assert.deepEqual(
      delivered.get(subId(name)),
      [0, 1, 2, 3].map((n) => `${name}.${n}`),
      `${name}: in order`,
    );
  assert.deepEqual(await two.webhooks.backlog(), { pending: 0, dropped: 0 });
});

test('a claim whose instance died is handed out again once its lease is over; the late settle of its first holder leaves the row to the new one', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const first = await open();
  const second = await open();
  await first.webhooks.addSubscription(sub('a'));
  await first.webhooks.enqueue(subId('a'), event('a1'), NOW);
  await first.webhooks.enqueue(subId('a'), event('a2'), NOW);
  const [held] = await first.webhooks.due(NOW, 10);
  assert.deepEqual(labels([held!]), ['a1']);
  assert.deepEqual(await second.webhooks.due(NOW + LEASE - 1, 10), [], 'held until the lease ends, 30 s, past a delivery timeout of 10 s');
  const [again] = await second.webhooks.due(NOW + LEASE, 10);
  assert.deepEqual(labels([again!]), ['a1'], 'then handed out again');
  assert.deepEqual(await first.webhooks.due(NOW + LEASE, 10), [], 'and held by its new holder');

  await first.webhooks.settle(held!, attempt(held!, 'delivered', NOW + 1000), null);
  const [row] = await db<{ claimed_until: string }[]>`SELECT claimed_until FROM webhook_outbox WHERE seq = ${held!.seq}`;
  assert.equal(row?.claimed_until, String(NOW + 2 * LEASE), 'the late settle leaves the row to the new holder');
  await second.webhooks.settle(again!, attempt(again!, 'delivered', NOW + LEASE + 10), null);
  assert.deepEqual(
    (await second.webhooks.deliveries(subId('a')))?.map((a) => a.at),
    [NOW + LEASE + 10, NOW + 1000],
    'both attempts are listed',
  );
  assert.deepEqual(labels(await second.webhooks.due(NOW + LEASE + 10, 10)), ['a2']);

  // The first instance goes away holding a2's claim: the other is handed it after the lease.
  await second.close();
  assert.deepEqual(await first.webhooks.due(NOW + LEASE + 10, 10), []);
  assert.deepEqual(labels(await first.webhooks.due(NOW + 2 * LEASE + 10, 10)), ['a2']);
  const short = await open({ webhookLeaseMs: 1000 });
  const at = NOW + 3 * LEASE + 10;
  assert.deepEqual(labels(await short.webhooks.due(at, 10)), ['a2']);
  assert.deepEqual(await short.webhooks.due(at + 999, 10), []);
  assert.deepEqual(labels(await short.webhooks.due(at + 1000, 10)), ['a2'], 'a lease of the length it was opened with');
});

test('settle: delivered and failed take the row out, retry keeps it with one more attempt, disabled disables the subscription, whose rows stay unsent', {
  skip: !server,
}, async (t) => {
  const { db, open } = await setup(t);
  const store = await open({ webhookBodies: { link: (r) => JSON.stringify(r.code), clicked: (code) => JSON.stringify(code) } });
  const hooks = store.webhooks;
  await hooks.addSubscription(sub('ok', ['link.deleted']));
  await hooks.addSubscription(sub('gone', ['link.created']));
  for (const label of ['ok1', 'ok2', 'ok3']) await hooks.enqueue(subId('ok'), event(label), NOW);
  for (const label of ['gone1', 'gone2']) await hooks.enqueue(subId('gone'), event(label), NOW);
  const settleHead = async (name: string, outcome: DeliveryOutcome, at: number, nextAt: number | null, over: Partial<DeliveryAttempt> = {}): Promise<void> => {
    const row = (await hooks.due(at, 10)).find((r) => r.subscription === subId(name))!;
    await hooks.settle(row, attempt(row, outcome, at, over), nextAt);
    // The other subscription's head, claimed by the same call, is let go.
    await db`UPDATE webhook_outbox SET claimed_until = NULL`;
  };
  await settleHead('ok', 'retry', NOW, NOW + 5000, { status: null, error: 'connect ECONNREFUSED', durationMs: 3 });
  await settleHead('ok', 'retry', NOW + 5000, NOW + 305_000, { status: 503, error: 'Service Unavailable' });
  const [kept] = await db<{ attempts: number; next_at: string; claimed_until: string | null }[]>`
    SELECT attempts, next_at, claimed_until FROM webhook_outbox WHERE subscription_id = ${subId('ok')} ORDER BY seq LIMIT 1`;
  assert.deepEqual(kept, { attempts: 2, next_at: String(NOW + 305_000), claimed_until: null });
  await settleHead('ok', 'failed', NOW + 305_000, null);
  await settleHead('ok', 'delivered', NOW + 305_000, null);
  await settleHead('gone', 'disabled', NOW + 305_000, null, { status: 410 });

  const left = await db<{ data: string }[]>`SELECT data FROM webhook_outbox ORDER BY seq`;
  assert.deepEqual(
    left.map((r) => JSON.parse(r.data)),
    ['ok3', 'gone2'],
    'failed and delivered rows are out; the disabled one too, its next stays',
  );
  assert.deepEqual(
    (await hooks.subscriptions()).map((s) => [s.id, s.disabled]),
    [
      [subId('ok'), false],
      [subId('gone'), true],
    ],
  );
  assert.deepEqual(labels(await hooks.due(NOW + 305_000, 10)), ['ok3'], 'a disabled subscription is sent nothing');
  assert.equal(
    await store.insert({ code: 'new', url: 'https://example.com/', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null }, T),
    true,
  );
  assert.equal(await hooks.enqueue(subId('gone'), event('ping'), NOW), true, 'it still exists');
  assert.deepEqual(
    (await db<{ data: string }[]>`SELECT data FROM webhook_outbox ORDER BY seq`).map((r) => JSON.parse(r.data)),
    ['ok3', 'gone2'],
    'and the outbox keeps nothing new for it',
  );
  assert.deepEqual(await hooks.deliveries(subId('ok')), [
    { at: NOW + 305_000, eventId: 'msg_ok2', type: 'ping', status: 200, durationMs: 42, error: null, outcome: 'delivered' },
    { at: NOW + 305_000, eventId: 'msg_ok1', type: 'ping', status: 500, durationMs: 42, error: null, outcome: 'failed' },
    { at: NOW + 5000, eventId: 'msg_ok1', type: 'ping', status: 503, durationMs: 42, error: 'Service Unavailable', outcome: 'retry' },
    { at: NOW, eventId: 'msg_ok1', type: 'ping', status: null, durationMs: 3, error: 'connect ECONNREFUSED', outcome: 'retry' },
  ]);
  assert.deepEqual(
    (await hooks.deliveries(subId('gone')))?.map((a) => [a.status, a.outcome]),
    [[410, 'disabled']],
  );
});

test("deliveries: newest first, a subscription's newest 100 kept, the others' untouched", { skip: !server }, async (t) => {
  const { db, open } = await setup(t);
  const hooks = (await open()).webhooks;
  await hooks.addSubscription(sub('busy'));
  await hooks.addSubscription(sub('calm'));
  await hooks.enqueue(subId('busy'), event('busy'), NOW);
  await hooks.enqueue(subId('calm'), event('calm'), NOW);
  const [busy, calm] = await hooks.due(NOW, 10);
  await hooks.settle(calm!, attempt(calm!, 'retry', NOW), NOW + 5000);
  for (let i = 0; i < 105; i++) await hooks.settle(busy!, attempt(busy!, 'retry', NOW + i), NOW + i + 5000);
  const list = await hooks.deliveries(subId('busy'));
  assert.equal(list?.length, 100);
  assert.equal(list?.[0]?.at, NOW + 104, 'newest first');
  assert.equal(list?.[99]?.at, NOW + 5, 'the five oldest dropped');
  const counts = await db<{ subscription_id: string; n: string }[]>`
    SELECT subscription_id, count(*) AS n FROM webhook_attempts GROUP BY subscription_id ORDER BY subscription_id`;
  assert.deepEqual(
    counts.map((c) => [c.subscription_id, c.n]),
    [
      [subId('busy'), '100'],
      [subId('calm'), '1'],
    ],
    'trimmed in the table, not only in the answer',
  );
  const [row] = await db<{ attempts: number }[]>`SELECT attempts FROM webhook_outbox WHERE subscription_id = ${subId('busy')}`;
  assert.equal(row?.attempts, 105);
});
