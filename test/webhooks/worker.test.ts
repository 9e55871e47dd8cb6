/**
 * Delivery (`src/webhooks/worker.ts`) over a real log store, with a fake clock and a sender of the
 * test's: the retry schedule to the second and the give-up after it, the same `webhook-id` and body
 * on every attempt (signed anew), order per subscription with no subscription holding back
 * another, a `410` disabling only its own, and a restart resuming what was owed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import type { LinkRecord } from '../../src/store/link-store.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../src/store/log/log-link-store.ts';
import type { WebhookSubscription } from '../../src/store/webhook-store.ts';
import { RETRY_DELAYS_S } from '../../src/webhooks/schedule.ts';
import type { SendRequest, SendResult } from '../../src/webhooks/send.ts';
import { startWorker, type Worker } from '../../src/webhooks/worker.ts';
import { tempDir } from '../support/helpers.ts';

const T0 = 1_800_000_000_000;

/** A clock the test moves, and timers that run when it says. */
function fakeTime() {
  let now = T0;
  let timers: { at: number; f: () => void }[] = [];
  return {
    now: () => now,
    timer(f: () => void, ms: number): () => void {
      const entry = { at: now + ms, f };
      timers.push(entry);
      return () => {
        timers = timers.filter((e) => e !== entry);
      };
    },
    set(ms: number) {
      now = ms;
      const due = timers.filter((e) => e.at <= now);
      timers = timers.filter((e) => e.at > now);
      for (const e of due) e.f();
    },
  };
}

type Answer = (req: SendRequest, n: number) => Partial<SendResult>;

function setUp(t: { after: (f: () => Promise<void> | void) => void }, dir = tempDir(t)) {
  const time = fakeTime();
  const engine = new LogEngine({
    dir,
    fsync: 'off',
    log: createLogger('silent'),
    now: time.now,
    webhookBodies: { link: (rec) => JSON.stringify({ code: rec.code }), clicked: (code) => JSON.stringify({ code }) },
  });
  const store = new LogLinkStore(engine);
  const sent: { url: string; id: string; timestamp: string; signature: string; body: string; at: number }[] = [];
  let answer: Answer = () => ({ status: 200 });
  let worker: Worker | undefined;
  const api = {
    time,
    store,
    webhooks: store.webhooks,
    sent,
    answer(f: Answer) {
      answer = f;
    },
    start(busy?: () => boolean): Worker {
      worker = startWorker({
        ...(busy === undefined ? {} : { busy }),
        store: store.webhooks,
        allowPrivate: true,
        now: time.now,
        timer: time.timer,
        pollMs: 3_600_000_000,
        async send(req) {
          const h = new Map(req.headers);
          sent.push({
            url: req.url,
            id: h.get('webhook-id')!,
            timestamp: h.get('webhook-timestamp')!,
            signature: h.get('webhook-signature')!,
            body: req.body,
            at: time.now(),
          });
          return { response: '', durationMs: 1, ...answer(req, sent.length) };
        },
      });
      return worker;
    },
    async subscribe(id: string, url = `https://${id}.example/in`): Promise<WebhookSubscription> {
      const sub = { id, url, events: ['link.created' as const], domain: null, secret: `whsec_${'A'.repeat(32)}`, createdAt: T0 / 1000, disabled: false };
      await store.webhooks.addSubscription(sub);
      return sub;
    },
    async create(code: string): Promise<void> {
      const rec: LinkRecord = { code, url: `https://example.com/${code}`, createdAt: T0 / 1000, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null };
      assert.equal(await store.insert(rec, T0 / 1000), true);
    },
    /** Moves the clock to `ms` and lets the worker do all that is due then. */
    async at(ms: number): Promise<void> {
      time.set(ms);
      await worker!.idle();
    },
    async close() {
      await worker?.stop();
      await store.close();
    },
  };
  t.after(() => api.close());
  return api;
}

test('a failing receiver is tried again on the schedule, to the second, then given up; every attempt is the same message', async (t) => {
  const s = setUp(t);
  await s.subscribe('wh_AAAAAAAAAAAAAAAA');
  await s.create('aaa');
  s.answer(() => ({ status: 503 }));
  s.start();
  await s.at(T0);
  let expected = T0;
  for (const delay of RETRY_DELAYS_S) {
    await s.at(expected + delay * 1000 - 1);
    assert.equal(s.sent.at(-1)!.at, expected, `not before its ${delay} s`);
    expected += delay * 1000;
    await s.at(expected);
    assert.equal(s.sent.at(-1)!.at, expected, `tried again ${delay} s later`);
  }
  assert.equal(s.sent.length, RETRY_DELAYS_S.length + 1);
  await s.at(expected + 365 * 86_400_000);
  assert.equal(s.sent.length, RETRY_DELAYS_S.length + 1, 'given up: never sent again');
  assert.equal(new Set(s.sent.map((d) => d.id)).size, 1, 'one webhook-id on every attempt');
  assert.equal(new Set(s.sent.map((d) => d.body)).size, 1, 'one body on every attempt');
  assert.equal(new Set(s.sent.map((d) => d.signature)).size, s.sent.length, 'each attempt signed anew, with its own timestamp');
  const list = await s.webhooks.deliveries('wh_AAAAAAAAAAAAAAAA');
  assert.deepEqual(
    list!.map((a) => a.outcome),
    ['failed', ...RETRY_DELAYS_S.map(() => 'retry')],
  );
  assert.deepEqual(await s.webhooks.backlog(), { pending: 0, dropped: 0 });
});

test("a subscription's events go one at a time in order; a failing receiver holds back only its own", async (t) => {
  const s = setUp(t);
  await s.subscribe('wh_AAAAAAAAAAAAAAAA', 'https://down.example/in');
  await s.subscribe('wh_BBBBBBBBBBBBBBBB', 'https://up.example/in');
  for (const code of ['one', 'two', 'three']) await s.create(code);
  let down = true;
  s.answer((req) => (req.url.startsWith('https://down') && down ? { error: 'ECONNREFUSED' } : { status: 204 }));
  s.start();
  await s.at(T0);
  const to = (host: string) => s.sent.filter((d) => d.url.includes(host)).map((d) => JSON.parse(d.body).data.code as string);
  assert.deepEqual(to('up.'), ['one', 'two', 'three'], 'the working receiver got all three, in order');
  assert.deepEqual(to('down.'), ['one'], 'the failing one only its first, waiting for its retry');
  down = false;
  await s.at(T0 + 5000);
  assert.deepEqual(to('down.'), ['one', 'one', 'two', 'three'], 'then the rest, in order, after the first');
});

test('a 410 disables its subscription only; a restart resumes what was owed, with the same ids', async (t) => {
  const dir = tempDir(t);
  const first = setUp(t, dir);
  await first.subscribe('wh_AAAAAAAAAAAAAAAA', 'https://gone.example/in');
  await first.subscribe('wh_BBBBBBBBBBBBBBBB', 'https://later.example/in');
  await first.create('one');
  first.answer((req) => (req.url.startsWith('https://gone') ? { status: 410 } : { timedOut: true }));
  first.start();
  await first.at(T0);
  const subs = await first.webhooks.subscriptions();
  assert.deepEqual(
    subs.map((sub) => [sub.id, sub.disabled]),
    [
      ['wh_AAAAAAAAAAAAAAAA', true],
      ['wh_BBBBBBBBBBBBBBBB', false],
    ],
  );
  await first.create('two');
  await first.at(T0 + 1);
  const firstIds = first.sent.filter((d) => d.url.startsWith('https://later')).map((d) => d.id);
  assert.equal(firstIds.length, 1, 'the timed-out row waits for its retry; the second waits behind it');
  await first.close();

  const second = setUp(t, dir);
  second.start();
  await second.at(T0 + 5000);
  const resumed = second.sent.map((d) => [new URL(d.url).host, JSON.parse(d.body).data.code, d.id]);
  assert.deepEqual(
    resumed.map(([host, code]) => [host, code]),
    [
      ['later.example', 'one'],
      ['later.example', 'two'],
    ],
  );
  assert.equal(resumed[0]![2], firstIds[0], 'the same webhook-id as before the restart');
  assert.deepEqual(
    (await second.webhooks.subscriptions()).map((sub) => sub.disabled),
    [true, false],
    'still disabled after the restart',
  );
  assert.deepEqual(
    (await second.webhooks.deliveries('wh_BBBBBBBBBBBBBBBB'))!.map((a) => a.outcome),
    ['delivered', 'delivered', 'retry'],
    'the attempts before the restart are still listed',
  );
});

test('while the process is busy, attempts trickle, one a 250 ms, and go at full pace again once it is not', async (t) => {
  const s = setUp(t);
  await s.subscribe('wh_AAAAAAAAAAAAAAAA', 'https://one.example/in');
  await s.subscribe('wh_BBBBBBBBBBBBBBBB', 'https://two.example/in');
  for (const code of ['a', 'b', 'c']) await s.create(code);
  let busy = true;
  s.start(() => busy);
  await s.at(T0);
  assert.equal(s.sent.length, 1, 'busy: one attempt');
  await s.at(T0 + 249);
  assert.equal(s.sent.length, 1, 'and no other within 250 ms');
  await s.at(T0 + 250);
  assert.equal(s.sent.length, 2, 'then the next');
  busy = false;
  await s.at(T0 + 300);
  assert.equal(s.sent.length, 6, 'not busy: every row owed, at once');
});
