/**
 * The log store's side of visit events (docs/storage.md, format 3): a visit and its event are one
 * line, so replay, a torn tail, a compaction and the copies a limited link's writes make keep the
 * invariant events + untracked = visits exactly; events belong to the link, not its code.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, FORMAT_VERSION } from '../../../src/store/log/format.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { FLUSH_EVENTS } from '../../../src/store/log/visit-counts.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { tempDir } from '../../support/helpers.ts';
import { bareOrphan } from '../../support/records.ts';
import { logEntries } from '../../support/log-entries.ts';

const T = 1_790_000_000;
const quiet = createLogger('silent');
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
const ALL = { from: 0, to: 2 ** 32, bots: 'include' as const };

const rec = (code: string, maxVisits: number | null = null, visits = 0): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: T,
  retentionDays: 0,
  visits,
  untracked: visits,
  maxVisits,
});

const ev = (time: number, referrer: string | null = 'news.example', visitor: number | null = 7): VisitEvent => ({
  time,
  referrer,
  country: 'DE',
  browser: 'Firefox',
  os: 'Linux',
  device: 'desktop',
  bot: false,
  visitor,
});

function open(
  dir: string,
  options: { fsync?: 'always' | 'off'; now?: () => number; visitRetentionDays?: number } = {},
): { store: LogLinkStore; raw: LogEngine } {
  const raw = new LogEngine({
    dir,
    fsync: options.fsync ?? 'off',
    log: quiet,
    ...MANUAL,
    ...(options.now && { now: options.now }),
    ...(options.visitRetentionDays && { visitRetentionDays: options.visitRetentionDays }),
  });
  return { store: new LogLinkStore(raw), raw };
}

/** Counts `n` visits of `code` with events at times T+1, T+2, … */
async function visit(store: LogLinkStore, code: string, n: number, from = 1): Promise<void> {
  for (let i = from; i < from + n; i++)
    await store.countVisit(
      code,
      () => T + i,
      true,
      () => ev(T + i),
    );
}

function check(store: LogLinkStore, code: string, visits: number, untracked: number, events: number): void {
  const rec = store.get(code, T);
  assert.ok(rec, `${code} is live`);
  assert.equal(rec.visits, visits, 'visits');
  assert.equal(rec.untracked, untracked, 'untracked');
  assert.equal(store.listVisits(code, ALL, 1000, 0, T)?.total, events, 'events');
  assert.equal(rec.visits, rec.untracked + events, 'the invariant');
}

test('visits with events survive a restart as events; visits without as untracked; both add up to the count', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('evt001', null, 4), T);
  await visit(store, 'evt001', 3);
  store.countVisit('evt001', () => T, true);
  await store.close();
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'evt001', 8, 5, 3);
  const page = store.listVisits('evt001', ALL, 2, 0, T)!;
  assert.deepEqual(
    page.events.map((e) => e.time),
    [T + 3, T + 2],
    'newest first',
  );
  assert.deepEqual(page.events[0], { ...ev(T + 3), visitor: null }, 'every field back, the visitor id never shown');
  const lines = logEntries(dir).map((e) => e.op);
  assert.deepEqual(
    lines.filter((op) => op === 'R'),
    ['R'],
    'a referrer host is written once',
  );
});

test('a torn last line cuts a visit and its event together', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('torn01'), T);
  await visit(store, 'torn01', 2);
  await store.close();
  // One more visit, written alone, then torn.
  ({ store } = open(dir));
  await visit(store, 'torn01', 1, 3);
  await store.close();
  const path = join(dir, LOG_FILE);
  const size = readFileSync(path).length;
  const last = readFileSync(path, 'utf8').trimEnd().split('\n').pop()!;
  assert.match(last, /\tX\t|^\w{8} X\t/, 'the last line is the visit with its event');
  truncateSync(path, size - 5);
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'torn01', 2, 0, 2);
});

test('compaction writes each link’s events once, and lines written meanwhile are not counted twice', async (t) => {
  const dir = tempDir(t);
  let { store, raw } = open(dir);
  await store.insert(rec('cmp001', null, 2), T);
  await store.insert(rec('cmp002'), T);
  await visit(store, 'cmp001', 5000);
  await visit(store, 'cmp002', 3);
  // Recorded but not flushed when the compaction takes its snapshot: the flush that follows
  // writes them again after the compacted lines.
  await raw.compact();
  await raw.flushVisits();
  await visit(store, 'cmp002', 2, 10);
  await store.close();
  const ops = logEntries(dir).map((e) => e.op);
  assert.ok(ops.includes('K') && ops.includes('J'), 'a long run of events is a K line and J lines');
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'cmp001', 5002, 2, 5000);
  check(store, 'cmp002', 5, 0, 5);
});

test('a limited link writes its events at once, after copies of the ones pending; replay keeps one of each', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir, { fsync: 'always' });
  await store.insert(rec('lim001'), T);
  await visit(store, 'lim001', 3);
  // Gaining a limit writes the pending events with the edit; the flush at close writes them again.
  await store.update('lim001', { maxVisits: 10 }, T);
  await visit(store, 'lim001', 2, 4);
  await store.close();
  const xs = logEntries(dir).filter((e) => e.op === 'X');
  assert.ok(xs.length >= 3, 'the pending events were copied');
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'lim001', 5, 0, 5);
});

test('deleting a link’s visits is durable, and lines of its old events written later stay deleted', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('del001', 3, 1), T);
  await visit(store, 'del001', 2);
  assert.equal((await store.countVisit('del001', () => T, true)).kind, 'limit_reached');
  assert.equal(await store.deleteVisits('del001', T), 2);
  check(store, 'del001', 0, 0, 0);
  assert.equal(
    (
      await store.countVisit(
        'del001',
        () => T + 9,
        true,
        () => ev(T + 9),
      )
    ).kind,
    'found',
    'a used-up link can be visited again',
  );
  await store.close();
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'del001', 1, 0, 1);
  assert.equal(await store.deleteVisits('nope01', T), undefined);
});

test('an imported event takes an untracked visit’s place, then adds a visit', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('imp001', null, 2), T);
  for (const time of [T - 30, T - 20, T - 10]) assert.equal(await store.importVisit('imp001', ev(time), T), 'imported');
  assert.equal(await store.importVisit('nope01', ev(T), T), 'unknown_code');
  check(store, 'imp001', 3, 0, 3);
  await store.close();
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'imp001', 3, 0, 3);
  assert.deepEqual(
    store.listVisits('imp001', ALL, 10, 0, T)!.events.map((e) => e.time),
    [T - 10, T - 20, T - 30],
    'in time order wherever they came',
  );
});

test('retention turns old events into untracked visits, in memory and in the log', async (t) => {
  const dir = tempDir(t);
  const DAY = 86_400;
  let clock = (T + 1) * 1000;
  let { store, raw } = open(dir, { now: () => clock });
  await store.insert(rec('ret001'), T);
  await visit(store, 'ret001', 3);
  for (let i = 0; i < 2; i++)
    await store.countVisit(
      'ret001',
      () => T + 10 * DAY,
      true,
      () => ev(T + 10 * DAY + i),
    );
  clock = (T + 12 * DAY) * 1000;
  assert.equal(await raw.expireEvents(T + 5 * DAY), 3);
  check(store, 'ret001', 5, 3, 2);
  await store.close();
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'ret001', 5, 3, 2);
});

test('retention removes the orphan visits older too, in memory and in the log (a replay of it included)', async (t) => {
  const dir = tempDir(t);
  const DAY = 86_400;
  let { store, raw } = open(dir);
  await Promise.all([T, T + DAY, T + 10 * DAY, T + 11 * DAY].map((time) => raw.orphans.recordOrphan(bareOrphan(time))));
  const times = (engine: LogEngine): number[] => engine.orphans.listOrphans(0, 2 ** 32, 'include', 10, 0).visits.map((v) => v.time);
  // No link has an event to remove: the orphan visits alone make the T line.
  assert.equal(await raw.expireEvents(T + 5 * DAY), 0);
  assert.deepEqual(times(raw), [T + 11 * DAY, T + 10 * DAY]);
  await store.close();
  // A start from the whole log replays the T line; none from a checkpoint.
  rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
  ({ store, raw } = open(dir));
  t.after(() => store.close());
  assert.deepEqual(times(raw), [T + 11 * DAY, T + 10 * DAY]);
});

test('a code deleted and created again starts with no events, also after a restart', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('re0001'), T);
  await visit(store, 're0001', 3);
  assert.equal(await store.delete('re0001', T), true);
  await store.insert(rec('re0001'), T);
  await visit(store, 're0001', 1, 20);
  await store.close();
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 're0001', 1, 0, 1);
});

test('a log of format 2 starts: its counts are untracked visits, and it is rewritten in the current format before anything is appended', async (t) => {
  const dir = tempDir(t);
  const v2 = [
    '00000000 F\turl-shortener-log\t2',
    encodeEntry({ op: 'C', code: 'old001', url: 'https://example.com/old', createdAt: T, retentionDays: 0, visits: 6 }).toString().trimEnd(),
    encodeEntry({ op: 'V', counts: [['old001', 9]] })
      .toString()
      .trimEnd(),
  ];
  // The version line of format 2, checksummed as that build wrote it.
  v2[0] = encodeEntry({ op: 'F', name: 'url-shortener-log', version: 2 }).toString().trimEnd();
  writeFileSync(join(dir, LOG_FILE), `${v2.join('\n')}\n`);
  let { store } = open(dir);
  check(store, 'old001', 9, 9, 0);
  await visit(store, 'old001', 1);
  await store.close();
  assert.match(readFileSync(join(dir, LOG_FILE), 'utf8').split('\n')[0]!, new RegExp(`url-shortener-log\\t${FORMAT_VERSION}$`));
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'old001', 10, 9, 1);
});

test('an event line of a code that is not there is ignored, like a count of one', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('here01'), T);
  await store.close();
  appendFileSync(join(dir, LOG_FILE), encodeEntry({ op: 'X', code: 'gone01', seq: 0, events: Uint32Array.of(T, 1, 0, 0) }));
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'here01', 0, 0, 0);
});

test('event lines read on bytes give what the entry decoder gives, a time going back included', async (t) => {
  const dir = tempDir(t);
  let { store } = open(dir);
  await store.insert(rec('byt001'), T);
  await store.close();
  const events = Uint32Array.of(T + 5, 0xfffffffe, 0, 0x1fffff, T + 2, 1, 0, 0);
  appendFileSync(join(dir, LOG_FILE), encodeEntry({ op: 'X', code: 'byt001', seq: 0, events }));
  const line = readFileSync(join(dir, LOG_FILE), 'utf8').trimEnd().split('\n').pop()!;
  assert.match(line, /,-3,|\t-3,/, 'the second event is written as a step back');
  ({ store } = open(dir));
  t.after(() => store.close());
  check(store, 'byt001', 2, 0, 2);
  const page = store.listVisits('byt001', ALL, 10, 0, T)!;
  assert.deepEqual(
    page.events.map((e) => e.time),
    [T + 5, T + 2],
  );
  assert.deepEqual(logEntries(dir).pop(), { op: 'X', code: 'byt001', seq: 0, events });
});

test('a flush’s worth of events is written as it fills, not a second later', async (t) => {
  const dir = tempDir(t);
  const { store } = open(dir);
  t.after(() => store.close());
  await store.insert(rec('busy01'), T);
  // The flush interval is a minute here: only the fill can write them.
  for (let i = 0; i < FLUSH_EVENTS; i++)
    store.countVisit(
      'busy01',
      () => T,
      true,
      () => ev(T + 1),
    );
  // Events in the log; -1 while a write is under way (the file then ends inside a line).
  const written = (): number => {
    const log = readFileSync(join(dir, LOG_FILE));
    if (log.length > 0 && log[log.length - 1] !== 0x0a) return -1;
    return logEntries(log)
      .filter((e) => e.op === 'X')
      .reduce((n, e) => n + (e as { events: Uint32Array }).events.length / 4, 0);
  };
  // Waits for the write the fill started (a few event-loop turns), never for the minute.
  const deadline = Date.now() + 5000;
  while (written() < FLUSH_EVENTS && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(written(), FLUSH_EVENTS);
});

test('visitRetentionDays: the store moves events past their days to untracked visits by itself', async (t) => {
  const dir = tempDir(t);
  const DAY = 86_400;
  // Start-up's check finds nothing old; the clock then moves on 12 days, past the next check.
  let clock = (T + DAY) * 1000;
  const raw = new LogEngine({
    dir,
    fsync: 'off',
    log: quiet,
    compactMinBytes: Number.MAX_SAFE_INTEGER,
    visitFlushMs: 5,
    now: () => clock,
    visitRetentionDays: 5,
  });
  const store = new LogLinkStore(raw);
  t.after(() => store.close());
  await store.insert(rec('auto01'), T);
  await visit(store, 'auto01', 3);
  await store.countVisit(
    'auto01',
    () => T + 11 * DAY,
    true,
    () => ev(T + 11 * DAY),
  );
  clock = (T + 12 * DAY) * 1000;
  // The wait is for the timer's next tick (5 ms), never for the clock.
  const deadline = Date.now() + 5000;
  while (store.get('auto01', T)!.untracked < 3 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  check(store, 'auto01', 4, 3, 1);
});

test('a flush waits for the flush already under way: the visits counted before it are in the log once it resolves', async (t) => {
  const dir = tempDir(t);
  const { store, raw } = open(dir);
  t.after(() => store.close());
  await store.insert(rec('evt010'), T);
  await visit(store, 'evt010', 5);
  // The first flush takes the five events and is writing them; the second has nothing left to
  // write, and must not resolve before they are durable: in the log, and known in memory to be
  // there (else a checkpoint would leave out the referrer host their lines named).
  const first = raw.flushVisits();
  await raw.flushVisits();
  const lines = logEntries(dir).filter((e) => e.op === 'X');
  assert.equal(
    lines.reduce((n, e) => n + ('events' in e ? e.events.length / 4 : 0), 0),
    5,
  );
  assert.deepEqual([...raw.keydir.events.referrers.inLog()], [[1, 'news.example']]);
  await first;
});
