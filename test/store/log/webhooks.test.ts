/**
 * Webhooks in the log store (`log-webhooks.ts`, `webhook-format.ts`, format 8): each change's outbox
 * rows are written in the change's own write, after its line; a visit's `link.clicked` rows with
 * the flush that writes its event, a limited link's with its count, and `link.limit_reached` with
 * the visit that used the limit up; the cap; subscriptions, rows owed and attempts survive a
 * reopen, a compaction and a start from its checkpoint; every entry reads back as it was written.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { LOG_FILE } from '../../../src/store/log/files.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { ClickRow } from '../../../src/store/log/click-row.ts';
import type { WebhookEntry } from '../../../src/store/log/webhook-format.ts';
import { EVENT_TYPES, newEventId, type WebhookSubscription } from '../../../src/store/webhook-store.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { faultyDisk } from '../../support/disk-full.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { linkRecord, T, webhookSubscription } from '../../support/records.ts';

// The log store renders a click's body itself, from the packed row (`click-event.ts`): `clicked` is
// never asked, and a click's data below is the real one.
const BODIES = {
  link: (rec: LinkRecord) => JSON.stringify({ code: rec.code, visits: rec.visits }),
  clicked: () => assert.fail('the log store makes a click body of its own'),
};

function open(dir: string, logs = new LogCapture()) {
  const engine = new LogEngine({
    dir,
    fsync: 'off',
    log: createLogger('info', logs),
    now: () => T * 1000,
    checkpointMinBytes: 0,
    visitFlushMs: 60_000,
    webhookBodies: BODIES,
  });
  return { engine, store: new LogLinkStore(engine), logs };
}

const sub = (id: string, extra: Partial<WebhookSubscription> = {}): WebhookSubscription =>
  webhookSubscription(id, { events: ['link.created', 'link.updated', 'link.deleted', 'link.clicked', 'link.limit_reached'], ...extra });
const link = linkRecord;

const EVENT: VisitEvent = {
  time: T,
  referrer: 'news.example',
  country: 'DE',
  browser: 'Firefox',
  os: 'Linux',
  device: 'desktop',
  bot: false,
  visitor: 7,
  rule: 2,
};

/** A click's data, as the service's `clickedData` makes it: the visitor id and the rule never in it. */
const clicked = (code: string, domain: string | null = null) =>
  JSON.stringify({
    short_code: code,
    domain,
    visit: { time: T, referrer: 'news.example', country: 'DE', browser: 'Firefox', os: 'Linux', device: 'desktop', bot: false },
  });

/** The payloads of the log, in order, each with its op. */
function lines(dir: string): string[] {
  return readFileSync(join(dir, LOG_FILE), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(9));
}

/** What a store owes, as [subscription, type, data] in outbox order. */
async function owed(store: LogLinkStore): Promise<[string, string, string][]> {
  const rows = await store.webhooks.due(Number.MAX_SAFE_INTEGER, 1000);
  const all: [string, string, string][] = [];
  // `due` hands each subscription's oldest row; settle it delivered to reach the next.
  for (let batch = rows; batch.length > 0; batch = await store.webhooks.due(Number.MAX_SAFE_INTEGER, 1000)) {
    for (const row of batch) {
      all.push([row.subscription, row.event.type, row.event.data]);
      await store.webhooks.settle(
        row,
        { at: 0, eventId: row.event.id, type: row.event.type, status: 200, durationMs: 1, error: null, outcome: 'delivered' },
        null,
      );
    }
  }
  return all;
}

test("a change's rows are written after its line, in the same write; only to subscriptions that want it", async (t) => {
  const dir = tempDir(t);
  let { store, engine } = open(dir);
  t.after(() => engine.close());
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0'));
  await store.webhooks.addSubscription(sub('wh_GOGOGOGOGOGOGOG0', { domain: 'go.example', events: ['link.created'] }));
  await store.webhooks.addSubscription(sub('wh_DEFAULTDEFAULT00', { domain: '', events: ['link.deleted'] }));
  assert.equal(await store.insert(link('abc'), T), true);
  assert.equal(await store.insert(link('go.example/xyz'), T), true);
  await store.update('abc', { title: 'T' }, T);
  assert.equal(await store.delete('abc', T), true);
  const written = lines(dir).slice(4);
  assert.deepEqual(
    written.map((l) => l.split('\t')[0]),
    ['C', 'N', 'C', 'N', 'E', 'N', 'D', 'N'],
  );
  const rows = written
    .filter((l) => l.startsWith('N'))
    .map((l) => (decodePayload(l) as Extract<WebhookEntry, { op: 'N' }>).rows.map((r) => [r.subscription, r.event.type]));
  assert.deepEqual(rows, [
    [['wh_ALLALLALLALLALL0', 'link.created']],
    [
      ['wh_ALLALLALLALLALL0', 'link.created'],
      ['wh_GOGOGOGOGOGOGOG0', 'link.created'],
    ],
    [['wh_ALLALLALLALLALL0', 'link.updated']],
    [
      ['wh_ALLALLALLALLALL0', 'link.deleted'],
      ['wh_DEFAULTDEFAULT00', 'link.deleted'],
    ],
  ]);
  // A disabled subscription is owed nothing new; a deleted one loses what it was owed.
  await store.webhooks.settle(
    (await store.webhooks.due(Number.MAX_SAFE_INTEGER, 10)).find((r) => r.subscription === 'wh_GOGOGOGOGOGOGOG0')!,
    {
      at: 0,
      eventId: 'x',
      type: 'link.created',
      status: 410,
      durationMs: 1,
      error: null,
      outcome: 'disabled',
    },
    null,
  );
  await store.insert(link('go.example/more'), T);
  assert.equal(await store.webhooks.removeSubscription('wh_DEFAULTDEFAULT00'), true);
  // The rows `due` handed out above are held by this process until settled; a new one holds none.
  await engine.close();
  ({ store, engine } = open(dir));
  assert.equal(await store.webhooks.removeSubscription('wh_DEFAULTDEFAULT00'), false);
  assert.deepEqual(
    (await owed(store)).map(([s, type]) => `${s.slice(3, 6)} ${type}`),
    ['ALL link.created', 'ALL link.created', 'ALL link.updated', 'ALL link.deleted', 'ALL link.created'],
  );
});

test("visits: clicks ride the flush with their events; a limited link's with its count, and the visit that uses it up says so", async (t) => {
  const dir = tempDir(t);
  const { store, engine } = open(dir);
  t.after(() => engine.close());
  await store.insert(link('plain'), T);
  await store.insert(link('lim', { maxVisits: 2 }), T);
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0'));
  const clock = () => T;
  for (let i = 0; i < 3; i++) store.countVisit('plain', clock, true, () => EVENT);
  assert.deepEqual((await store.webhooks.backlog()).pending, 0, 'nothing before the flush writes the events');
  await engine.flushVisits();
  const flushed = lines(dir).at(-1)!;
  assert.ok(flushed.startsWith('L\t'), 'the rows are the last line of the flush, in the short form of clicks');
  assert.ok(!flushed.includes('"visit"'), 'a click row holds its packed words, not its body');
  await store.countVisit('lim', clock, true, () => EVENT);
  await store.countVisit('lim', clock, true, () => EVENT);
  assert.deepEqual(
    store.countVisit('lim', clock, true, () => EVENT),
    { kind: 'limit_reached' },
  );
  assert.deepEqual(
    (await owed(store)).map(([, type, data]) => `${type} ${data}`),
    [
      `link.clicked ${clicked('plain')}`,
      `link.clicked ${clicked('plain')}`,
      `link.clicked ${clicked('plain')}`,
      `link.clicked ${clicked('lim')}`,
      `link.clicked ${clicked('lim')}`,
      'link.limit_reached {"code":"lim","visits":2}',
    ],
  );
});

test("a limited link's visit whose write may have landed (a failed fsync): its click once, with one id, also after a restart", async (t) => {
  const dir = tempDir(t);
  const d = faultyDisk();
  const openFaulty = () =>
    new LogEngine({ dir, fsync: 'always', log: createLogger('silent'), now: () => T * 1000, visitFlushMs: 60_000, webhookBodies: BODIES, fs: d.fs });
  let engine = openFaulty();
  let store = new LogLinkStore(engine);
  t.after(() => engine.close());
  await store.insert(link('lim', { maxVisits: 5 }), T);
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0', { events: ['link.clicked'] }));
  d.faults.fsync = 'EIO';
  await assert.rejects(
    Promise.resolve(
      store.countVisit(
        'lim',
        () => T,
        true,
        () => EVENT,
      ),
    ),
  );
  d.faults.fsync = undefined;
  // The next flush writes the event again (replay keeps one), and its row as it was: no second row.
  await engine.flushVisits();
  const ids = async () => (await store.webhooks.due(Number.MAX_SAFE_INTEGER, 10)).map((r) => r.event.id);
  const before = await ids();
  assert.equal((await store.webhooks.backlog()).pending, 1);
  await engine.close();
  engine = openFaulty();
  store = new LogLinkStore(engine);
  assert.deepEqual(await ids(), before);
  assert.equal((await store.webhooks.backlog()).pending, 1, 'one row for the one visit after a restart');
});

test('the cap: clicks owed to one subscription past it are dropped and counted; others still get theirs', async (t) => {
  const dir = tempDir(t);
  const { store, engine } = open(dir);
  t.after(() => engine.close());
  await store.insert(link('hot'), T);
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0', { events: ['link.clicked'] }));
  await store.webhooks.addSubscription(sub('wh_SECONDSECOND000', { events: ['link.clicked'] }));
  // The cap is 100,000 rows: a subscription's receiver down for a while, at 2,000 clicks a second, is reached in 50 s.
  const table = (engine as unknown as { records: { webhooks: { cap: number } } }).records.webhooks;
  table.cap = 5;
  for (let i = 0; i < 4; i++)
    store.countVisit(
      'hot',
      () => T,
      true,
      () => EVENT,
    );
  await engine.flushVisits();
  // The second drains; the first keeps its 4 rows.
  for (let row = (await store.webhooks.due(T * 1000, 10)).find((r) => r.subscription === 'wh_SECONDSECOND000'); row; ) {
    await store.webhooks.settle(
      row,
      { at: 0, eventId: row.event.id, type: row.event.type, status: 200, durationMs: 1, error: null, outcome: 'delivered' },
      null,
    );
    row = (await store.webhooks.due(T * 1000, 10)).find((r) => r.subscription === 'wh_SECONDSECOND000');
  }
  for (let i = 0; i < 3; i++)
    store.countVisit(
      'hot',
      () => T,
      true,
      () => EVENT,
    );
  await engine.flushVisits();
  assert.deepEqual(await store.webhooks.backlog(), { pending: 5 + 3, dropped: 2 }, 'the first held at 5, two dropped; the second got its 3');
});

test('subscriptions, rows owed and attempts survive a reopen, a compaction, and a start from its checkpoint and without one', async (t) => {
  const dir = tempDir(t);
  let { store, engine } = open(dir);
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0'));
  await store.webhooks.addSubscription(sub('wh_GONEGONEGONEGON0', { events: ['link.created'] }));
  for (const code of ['a1', 'a2', 'a3']) await store.insert(link(code), T);
  const heads = await store.webhooks.due(T * 1000, 10);
  const first = heads.find((r) => r.subscription === 'wh_ALLALLALLALLALL0')!;
  await store.webhooks.settle(
    first,
    { at: 5, eventId: first.event.id, type: 'link.created', status: 500, durationMs: 3, error: 'boom', outcome: 'retry' },
    T * 1000 + 5000,
  );
  const gone = heads.find((r) => r.subscription === 'wh_GONEGONEGONEGON0')!;
  await store.webhooks.settle(
    gone,
    { at: 6, eventId: gone.event.id, type: 'link.created', status: 410, durationMs: 2, error: null, outcome: 'disabled' },
    null,
  );
  const picture = async () => ({
    subs: await store.webhooks.subscriptions(),
    all: await store.webhooks.deliveries('wh_ALLALLALLALLALL0'),
    gone: await store.webhooks.deliveries('wh_GONEGONEGONEGON0'),
    backlog: await store.webhooks.backlog(),
    head: (await store.webhooks.due(Number.MAX_SAFE_INTEGER, 10)).map((r) => [r.subscription, r.seq, r.attempts, r.nextAt, r.event]),
  });
  const before = await picture();
  assert.equal(before.head.length, 1, 'the disabled one is handed nothing');
  assert.deepEqual(before.head[0]!.slice(2, 4), [1, T * 1000 + 5000]);
  const reopen = async (why: string, fromCheckpoint?: boolean) => {
    await engine.close();
    if (fromCheckpoint === false) rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
    const logs = new LogCapture();
    ({ store, engine } = open(dir, logs));
    if (fromCheckpoint === true) assert.ok(logs.find('log replayed from its start-up checkpoint'), why);
    // `due` held the head rows handed out above; a new process holds none.
    assert.deepEqual(await picture(), before, why);
  };
  await reopen('a reopen', false);
  await engine.compact();
  const { head: _held, ...compacted } = await picture();
  const { head: _head, ...rest } = before;
  assert.deepEqual(compacted, rest, 'compacted, in memory (its head row is still held by the picture before)');
  await reopen('from the compaction checkpoint', true);
  await reopen('without a checkpoint', false);
  // New rows after a compaction still come after the old ones (a fresh process: `picture` held the heads).
  await engine.close();
  ({ store, engine } = open(dir));
  await store.insert(link('a4'), T);
  assert.deepEqual(
    (await owed(store)).map(([, , data]) => JSON.parse(data).code),
    ['a1', 'a2', 'a3', 'a4'],
  );
  await engine.close();
});

test('click rows keep their ids and bodies through a failed attempt, a reopen, a compaction and a checkpoint', async (t) => {
  const dir = tempDir(t);
  let { store, engine } = open(dir);
  t.after(() => engine.close());
  await store.insert(link('plain'), T);
  await store.insert(link('go.example/hot'), T);
  await store.webhooks.addSubscription(sub('wh_ALLALLALLALLALL0', { events: ['link.clicked'] }));
  for (const code of ['plain', 'go.example/hot', 'plain'])
    store.countVisit(
      code,
      () => T,
      true,
      () => EVENT,
    );
  await engine.flushVisits();
  const [head] = await store.webhooks.due(T * 1000, 10);
  await store.webhooks.settle(
    head!,
    { at: 5, eventId: head!.event.id, type: 'link.clicked', status: 500, durationMs: 3, error: 'boom', outcome: 'retry' },
    T * 1000 + 5000,
  );
  await engine.flushVisits();
  const rows = async () => {
    const out: unknown[] = [];
    for (const row of await store.webhooks.due(Number.MAX_SAFE_INTEGER, 10))
      out.push([row.seq, row.attempts, row.nextAt, row.event.id, row.event.type, row.event.time, row.event.data]);
    return out;
  };
  const reopen = async (fromCheckpoint: boolean) => {
    await engine.close();
    if (!fromCheckpoint) rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
    const logs = new LogCapture();
    ({ store, engine } = open(dir, logs));
    assert.equal(logs.find('log replayed from its start-up checkpoint') !== undefined, fromCheckpoint);
  };
  const before = await rows();
  assert.deepEqual((before[0] as unknown[]).slice(1, 3), [1, T * 1000 + 5000]);
  await reopen(false);
  assert.deepEqual(await rows(), before, 'reopened');
  await engine.compact();
  assert.ok(
    lines(dir).some((l) => l.startsWith('L\t')),
    'the compacted log keeps them in the short form',
  );
  const footer = readFileSync(checkpointPath(join(dir, LOG_FILE)), 'latin1');
  assert.ok(footer.includes('{"click":[') && !footer.includes('short_code'), 'and so does its checkpoint: fields, no body');
  await reopen(false);
  assert.deepEqual(await rows(), before, 'after a compaction');
  await reopen(true);
  assert.deepEqual(await rows(), before, 'from the checkpoint');
  await reopen(true);
  const got = await owed(store);
  assert.deepEqual(
    got.map(([, type, data]) => `${type} ${data}`),
    [`link.clicked ${clicked('plain')}`, `link.clicked ${clicked('hot', 'go.example')}`, `link.clicked ${clicked('plain')}`],
  );
});

test('every webhook entry reads back as it was written', () => {
  const text = fc.string({ maxLength: 40 });
  const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
  const type = fc.constantFrom(...EVENT_TYPES);
  const int = fc.integer({ min: 0, max: 2 ** 40 });
  const entry: fc.Arbitrary<WebhookEntry> = fc.oneof(
    fc.record({
      op: fc.constant('S' as const),
      sub: fc.record({ id, url: fc.webUrl(), events: fc.uniqueArray(type), domain: fc.option(text), secret: text, createdAt: int, disabled: fc.boolean() }),
    }),
    fc.record({ op: fc.constant('Q' as const), id }),
    fc.record({
      op: fc.constant('N' as const),
      rows: fc.array(fc.record({ seq: int, subscription: id, event: fc.record({ id, type, time: int, data: text }), attempts: int, nextAt: int }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    fc
      .record({
        subscription: id,
        attempts: int,
        nextAt: int,
        clicks: fc.array(
          fc.record({
            seq: int,
            // The store keeps an id of its own making in two parts: both kinds read back.
            id: fc.oneof(
              id,
              fc.nat({ max: 2 ** 47 }).map((ms) => newEventId(ms)),
            ),
            key: fc.string({ minLength: 1, maxLength: 20 }),
            time: int,
            referrer: fc.option(fc.string({ minLength: 1 })),
            attrs: fc.nat({ max: 0xffffffff }),
          }),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
      })
      .map(
        ({ subscription, attempts, nextAt, clicks }): WebhookEntry => ({
          op: 'L',
          rows: clicks.map((c) => ClickRow.of(c.seq, subscription, attempts, nextAt, c.id, c.key, c.time, c.referrer, c.attrs)),
        }),
      ),
    fc.record({
      op: fc.constant('M' as const),
      subscription: id,
      seq: int,
      nextAt: fc.option(int),
      attempts: int,
      attempt: fc.record({
        at: int,
        eventId: id,
        type,
        status: fc.option(int),
        durationMs: int,
        error: fc.option(text),
        outcome: fc.constantFrom('delivered', 'retry', 'failed', 'disabled' as const),
      }),
    }),
  );
  fc.assert(
    fc.property(entry, (e) => {
      const line = encodeEntry(e as never).toString('utf8');
      // Through JSON: the arbitraries' objects have no prototype, the decoder's do.
      assert.deepEqual(JSON.parse(JSON.stringify(decodePayload(line.slice(9, -1)))), JSON.parse(JSON.stringify(e)));
    }),
  );
});
