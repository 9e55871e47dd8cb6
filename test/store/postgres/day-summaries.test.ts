/**
 * One link's stats from day summaries on PostgreSQL (src/store/postgres/day-summaries.ts): for
 * random events and random questions (time zones 15, 30 and 45 minutes off the hour and across a
 * DST change, every interval, every bots filter) the answer equals the raw statement's; whatever
 * adds or removes events of a summarised day (an import, a redirect whose clock is behind, the
 * deletion of the link's events or of the link, retention) leaves it equal; and a redirect still
 * uncommitted keeps its day from being summarised without it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import postgres from 'postgres';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { openPostgresStore, type PostgresOpenOptions } from '../../../src/store/postgres/connect.ts';
import type { PostgresStore } from '../../../src/store/postgres/store.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { INTERVALS, parseStatsRange, RangeRefusal, type StatsRange } from '../../../src/visits/range.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';

const quiet = createLogger('silent');
const server = await pgServer();
const skip = server ? {} : { skip: NO_POSTGRES };

/** 2026-10-28T10:00:00Z: Berlin left summer time on the 25th, within the events' days. */
const NOW = Date.UTC(2026, 9, 28, 10) / 1000;
const DAY = 86400;
/** The events' first day: 2026-10-20. */
const START = Date.UTC(2026, 9, 20) / 1000;
const ZONES = ['UTC', 'Europe/Berlin', 'Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu'];

const rec = (code: string): LinkRecord => ({
  code,
  url: `https://example.com/${code}`,
  createdAt: START - 400 * DAY,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits: null,
});
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

async function setup(t: TestContext, options: Partial<PostgresOpenOptions> = {}): Promise<{ store: PostgresStore; db: postgres.Sql; url: string }> {
  const url = await server!.createDatabase();
  const store = await openPostgresStore({
    url,
    poolSize: 4,
    log: quiet,
    now: () => NOW * 1000,
    readyCheckMs: 0,
    reapIntervalMs: 0,
    countRefreshMs: 0,
    visitJobsMs: 0,
    timeoutMs: 20_000,
    ...options,
  });
  const db = postgres(url, { max: 2, onnotice: () => undefined });
  t.after(async () => {
    await store.close();
    await db.end({ timeout: 1 });
    await server!.dropDatabase(url);
  });
  return { store, db, url };
}

function question(params: { from: number; to: number; interval?: string; tz?: string; bots?: string }, now = NOW): StatsRange {
  const r = parseStatsRange({ ...params, from: String(params.from), to: String(params.to) }, now);
  if (r instanceof RangeRefusal) assert.fail(`refused: ${r.detail}`);
  return r;
}

/** The link's events, inserted as they are (the summaries do not exist yet). */
async function insertEvents(db: postgres.Sql, code: string, events: readonly VisitEvent[]): Promise<void> {
  const [link] = await db<{ seq: string }[]>`SELECT seq FROM links WHERE code = ${code}`;
  const family = (name: string | null, names: readonly string[]): number | null => (name === null ? null : names.indexOf(name));
  const rows = events.map((e) => ({
    link_seq: link!.seq,
    time: e.time,
    referrer: e.referrer,
    country: e.country,
    browser: family(e.browser, ['Chrome', 'Safari', 'Firefox', 'Edge', 'Opera', 'Samsung Internet', 'Other']),
    os: family(e.os, ['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'ChromeOS', 'Other']),
    device: family(e.device, ['desktop', 'mobile', 'tablet', 'other']),
    bot: e.bot,
    visitor: e.visitor,
  }));
  for (let i = 0; i < rows.length; i += 1000) await db`INSERT INTO visits ${db(rows.slice(i, i + 1000))}`;
  await db`UPDATE links SET visit_count = visit_count + ${events.length} WHERE code = ${code}`;
}

/** Both answers, and that they agree. */
async function agrees(store: PostgresStore, code: string, q: StatsRange, now = NOW, label = ''): Promise<void> {
  const summarised = await store.visitStats(code, q, now);
  const raw = await store.rawVisitStats(code, q, now);
  assert.deepEqual(summarised, raw, `${label} ${q.tz} ${q.interval} ${q.bots} [${q.edges[0]}, ${q.edges.at(-1)})`);
}

const summaryDays = async (db: postgres.Sql, code: string): Promise<number[]> =>
  (
    await db<
      { day: number }[]
    >`SELECT v.day FROM visit_days v JOIN links l ON l.seq = v.link_seq AND v.epoch = l.events_epoch WHERE l.code = ${code} ORDER BY v.day`
  ).map((r) => r.day);

const anEvent = fc.record({
  time: fc.integer({ min: START, max: NOW - 1 }),
  referrer: fc.constantFrom(null, 'a.example', 'b.example', 'z.example', 'é.example'),
  country: fc.constantFrom(null, 'DE', 'FR', 'IN', 'NP'),
  browser: fc.constantFrom(null, 'Chrome', 'Firefox', 'Other'),
  os: fc.constantFrom(null, 'Windows', 'Android'),
  device: fc.constantFrom(null, 'desktop', 'mobile'),
  bot: fc.boolean(),
  visitor: fc.option(fc.integer({ min: -3, max: 8 }), { freq: 4 }),
});

const aQuestion = fc.record({
  from: fc.integer({ min: START - 2 * DAY, max: NOW + DAY }),
  span: fc.integer({ min: 1, max: 12 * DAY }),
  interval: fc.constantFrom(...INTERVALS),
  tz: fc.constantFrom(...ZONES),
  bots: fc.constantFrom('exclude', 'include', 'only'),
});

test('random events, random questions: the summaries and the raw events give the same stats', skip, async (t) => {
  const { store, db } = await setup(t);
  let link = 0;
  let used = 0;
  let asked = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(anEvent, { minLength: 0, maxLength: 300 }), fc.array(aQuestion, { minLength: 1, maxLength: 8 }), async (events, questions) => {
      const code = `prop${++link}`;
      assert.equal(await store.insert(rec(code), NOW), true);
      await insertEvents(db, code, events);
      // Every whole closed day of the events, in daily buckets of each zone, first: the summaries.
      await agrees(store, code, question({ from: START, to: NOW - (NOW % DAY), interval: 'day', tz: 'UTC', bots: 'include' }));
      for (const q of questions) {
        const to = q.from + q.span;
        const r = parseStatsRange({ from: String(q.from), to: String(to), interval: q.interval, tz: q.tz, bots: q.bots }, NOW);
        if (r instanceof RangeRefusal) continue;
        await agrees(store, code, r);
        asked++;
      }
      if ((await summaryDays(db, code)).length > 0) used++;
    }),
    { numRuns: 80, seed: 20261028 },
  );
  assert.ok(used >= 60, `summaries were built and read in ${used} of 80 runs`);
  assert.ok(asked >= 200, `${asked} random questions answered`);
  t.diagnostic(`${asked} random questions, summaries in ${used} of 80 runs`);
});

test('a warm answer is read from the summaries, not the events', skip, async (t) => {
  const { store, db } = await setup(t);
  await store.insert(rec('warm01'), NOW);
  await insertEvents(db, 'warm01', [ev(START + 3600, { visitor: 1 }), ev(START + DAY + 60, { visitor: 1, referrer: 'r.example' })]);
  const q = question({ from: START, to: START + 3 * DAY, interval: 'day' });
  const before = await store.visitStats('warm01', q, NOW);
  assert.deepEqual(await summaryDays(db, 'warm01'), [START / DAY, START / DAY + 1, START / DAY + 2]);
  // Behind the store's back (no epoch moves): the summaries still answer, the raw statement not.
  await db`DELETE FROM visits`;
  assert.deepEqual(await store.visitStats('warm01', q, NOW), before);
  assert.equal(before?.visits, 2);
  assert.equal((await store.rawVisitStats('warm01', q, NOW))?.visits, 0);
});

test('an import, a late redirect, deleting the events, deleting the link: the stats stay those of the events', skip, async (t) => {
  const { store, db } = await setup(t);
  await store.insert(rec('inval1'), NOW);
  await insertEvents(db, 'inval1', [ev(START + 100, { visitor: 5 }), ev(START + 2 * DAY + 7200, { bot: true, referrer: 'x.example' })]);
  const questions = ['exclude', 'include', 'only'].flatMap((bots) =>
    ZONES.map((tz) => question({ from: START, to: START + 5 * DAY, interval: 'day', tz, bots })),
  );
  for (const q of questions) await agrees(store, 'inval1', q, NOW, 'built');
  assert.ok((await summaryDays(db, 'inval1')).length >= 5);

  // An imported event in a summarised day.
  assert.equal(await store.importVisit('inval1', ev(START + DAY + 900, { visitor: 9, country: 'DE' }), NOW), 'imported');
  for (const q of questions) await agrees(store, 'inval1', q, NOW, 'after an import');
  assert.equal((await store.visitStats('inval1', questions[0]!, NOW))?.visits, 2);

  // A redirect whose clock is a day behind: its event lands in a summarised day.
  const late = START + 2 * DAY + 30;
  assert.equal(
    (
      await store.countVisit(
        'inval1',
        () => late,
        true,
        () => ev(late, { visitor: 7, referrer: 'late.example' }),
      )
    ).kind,
    'found',
  );
  for (const q of questions) await agrees(store, 'inval1', q, NOW, 'after a late redirect');
  assert.equal((await store.visitStats('inval1', questions[0]!, NOW))?.visits, 3);

  // DELETE …/visits.
  assert.equal(await store.deleteVisits('inval1', NOW), 4);
  for (const q of questions) await agrees(store, 'inval1', q, NOW, 'after deleting the events');
  assert.equal((await store.visitStats('inval1', questions[0]!, NOW))?.visits, 0);

  // The link: its summaries go with it.
  await insertEvents(db, 'inval1', [ev(START + 100)]);
  await store.visitStats('inval1', questions[0]!, NOW);
  assert.ok((await db`SELECT 1 FROM visit_days`).length > 0);
  assert.equal(await store.delete('inval1', NOW), true);
  assert.equal((await db`SELECT link_seq FROM visit_days`).length, 0);
  assert.equal(await store.visitStats('inval1', questions[0]!, NOW), undefined);
});

test('retention removes the summaries of the days it empties or cuts: the stats stay those of the events', skip, async (t) => {
  const { store, db } = await setup(t, { visitRetentionDays: 40 });
  // Months from August on, as if the store had run since then: August goes whole (a dropped
  // partition), September in part (deleted rows).
  await store.ensurePartitions(NOW - 80 * DAY);
  const august = Date.UTC(2026, 7, 1) / 1000;
  await store.insert(rec('keep01'), NOW);
  const today = NOW - (NOW % DAY);
  const events = Array.from({ length: (today - august) / (3 * 3600) }, (_, i) =>
    ev(august + i * 3 * 3600 + 17, { visitor: i % 5, bot: i % 7 === 0, referrer: i % 3 ? null : 'r.example' }),
  );
  await insertEvents(db, 'keep01', events);
  const questions = ['exclude', 'include'].flatMap((bots) => ZONES.map((tz) => question({ from: august, to: today, interval: 'day', tz, bots })));
  for (const q of questions) await agrees(store, 'keep01', q, NOW, 'built');
  const cutoffDay = Math.floor((NOW - 40 * DAY) / DAY);
  const built = await summaryDays(db, 'keep01');
  assert.ok(built.includes(august / DAY) && built.includes(cutoffDay));
  assert.ok((await store.applyRetention(NOW)) > 0);
  assert.ok(!(await summaryDays(db, 'keep01')).some((d) => d <= cutoffDay), 'no summary of a day retention touched');
  for (const q of questions) await agrees(store, 'keep01', q, NOW, 'after retention');
});

test('a redirect not yet committed keeps its day from being summarised without it', skip, async (t) => {
  const { store, db, url } = await setup(t);
  await store.insert(rec('open01'), NOW);
  await insertEvents(db, 'open01', [ev(START + 60, { visitor: 1 })]);
  const day = START / DAY + 3;
  const q = question({ from: START, to: START + 5 * DAY, interval: 'day' });
  // A second connection holds a redirect of day `day` (its clock is that day) open: the row lock
  // and the event, as the redirect's statement takes and inserts them.
  const other = postgres(url, { max: 1, onnotice: () => undefined });
  t.after(() => other.end({ timeout: 1 }));
  let commit!: () => void;
  const committed = new Promise<void>((resolve) => (commit = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const time = day * DAY + 1800;
  const redirect = other.begin(async (tx) => {
    await tx`WITH hit AS (
        UPDATE links SET visit_count = visit_count + 1, events_epoch = events_epoch + (${time}::bigint < events_closed::bigint * 86400)::int
        WHERE code = 'open01' RETURNING seq
      ) INSERT INTO visits (link_seq, time, bot, visitor) SELECT seq, ${time}, false, 42 FROM hit`;
    held();
    await committed;
  });
  await holding;
  // The question cannot close the days while the redirect holds the link: it reads them raw.
  const during = await store.visitStats('open01', q, NOW);
  assert.deepEqual(during, await store.rawVisitStats('open01', q, NOW));
  assert.equal(during?.visits, 1, 'the uncommitted event is not counted');
  assert.ok(!(await summaryDays(db, 'open01')).includes(day), 'no summary of its day');
  commit();
  await redirect;
  const after = await store.visitStats('open01', q, NOW);
  assert.equal(after?.visits, 2);
  assert.deepEqual(after, await store.rawVisitStats('open01', q, NOW));
  assert.ok((await summaryDays(db, 'open01')).includes(day), 'its day is summarised now, with it');
  const [row] = await db<{ slots: number[] }[]>`SELECT slots FROM visit_days WHERE day = ${day}`;
  assert.equal(row!.slots[2], 1, 'its quarter hour holds it');

  // Days already closed: a summary built while another redirect of a closed day is open is
  // retired by its commit.
  let commit2!: () => void;
  const committed2 = new Promise<void>((resolve) => (commit2 = resolve));
  let held2!: () => void;
  const holding2 = new Promise<void>((resolve) => (held2 = resolve));
  await db`DELETE FROM visit_days`;
  const redirect2 = other.begin(async (tx) => {
    await tx`WITH hit AS (
        UPDATE links SET visit_count = visit_count + 1, events_epoch = events_epoch + (${time + 60}::bigint < events_closed::bigint * 86400)::int
        WHERE code = 'open01' RETURNING seq
      ) INSERT INTO visits (link_seq, time, bot, visitor) SELECT seq, ${time + 60}, false, 43 FROM hit`;
    held2();
    await committed2;
  });
  await holding2;
  assert.equal((await store.visitStats('open01', q, NOW))?.visits, 2);
  assert.ok((await summaryDays(db, 'open01')).includes(day), 'built without the open event');
  commit2();
  await redirect2;
  assert.ok(!(await summaryDays(db, 'open01')).includes(day), 'retired by its commit');
  const last = await store.visitStats('open01', q, NOW);
  assert.equal(last?.visits, 3);
  assert.deepEqual(last, await store.rawVisitStats('open01', q, NOW));
});
