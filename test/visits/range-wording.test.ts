/**
 * Regression: a refused stats range names the parameter that was sent and says what is wrong with
 * it in the form it was sent (docs/analytics.md). `to=0` was refused naming `from`, which nobody
 * had sent; `from=1970-01-01&tz=Asia/Kathmandu` said "must be from 1970 to 2106" of a 1970 date
 * (it is before the epoch there); an 11-digit Unix time was "not Unix seconds". And the echoed
 * range never leaves the times an event can have: a month that ends after 2106 or a Kathmandu day
 * that began before 1970 used to be echoed whole. Pure functions; one answer over HTTP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EARLIEST, LATEST, MAX_TIME, parseEventFilter, parseStatsRange, type RangeParams, RangeRefusal } from '../../src/visits/range.ts';
import { start } from '../support/helpers.ts';

/** 2026-06-01T12:00:00Z. */
const NOW = Date.UTC(2026, 5, 1, 12) / 1000;
const at = (iso: string): number => Date.parse(iso) / 1000;

test('the first and the last time are the bounds of an unsigned 32-bit Unix time', () => {
  assert.equal(EARLIEST, new Date(0).toISOString().replace('.000', ''));
  assert.equal(LATEST, new Date(MAX_TIME * 1000).toISOString().replace('.000', ''));
});

test('each refusal names the parameter sent and says what is wrong with it, exactly', () => {
  const cases: [RangeParams, keyof RangeParams, string][] = [
    // Only `to` was sent: the default `from` cannot precede the earliest time.
    [{ to: 0 }, 'to', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    [{ to: '0' }, 'to', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    [{ to: '1970-01-01' }, 'to', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    // A wall time before the epoch in its zone, said as sent.
    [{ from: '1970-01-01', tz: 'Asia/Kathmandu' }, 'from', 'from: 1970-01-01T00:00:00 in Asia/Kathmandu is before 1970-01-01T00:00:00Z, the earliest time'],
    [{ to: '1970-01-01T05:00', tz: 'Asia/Kathmandu' }, 'to', 'to: 1970-01-01T05:00:00 in Asia/Kathmandu is before 1970-01-01T00:00:00Z, the earliest time'],
    [{ from: '1969-12-31T23:00:00Z' }, 'from', 'from: 1969-12-31T23:00:00Z is before 1970-01-01T00:00:00Z, the earliest time'],
    [{ from: '0075-01-01' }, 'from', 'from: 0075-01-01T00:00:00 in UTC is before 1970-01-01T00:00:00Z, the earliest time'],
    [{ from: -1 }, 'from', 'from: -1 (Unix seconds) is before 1970-01-01T00:00:00Z, the earliest time'],
    // Past the last time, in each form.
    [{ to: '99999999999' }, 'to', 'to: 99999999999 (Unix seconds) is after 2106-02-07T06:28:15Z, the latest time'],
    [{ to: String(MAX_TIME + 1) }, 'to', 'to: 4294967296 (Unix seconds) is after 2106-02-07T06:28:15Z, the latest time'],
    [{ to: '2200-01-01T00:00+0200' }, 'to', 'to: 2200-01-01T00:00:00+02:00 is after 2106-02-07T06:28:15Z, the latest time'],
    [{ to: '2106-02-07T08:00', tz: 'Europe/Berlin' }, 'to', 'to: 2106-02-07T08:00:00 in Europe/Berlin is after 2106-02-07T06:28:15Z, the latest time'],
    // Out of order: with both sent, `from`; with only `from`, `to` is now.
    [{ from: 200, to: 100 }, 'from', 'from: 1970-01-01T00:03:20Z is not before to, 1970-01-01T00:01:40Z'],
    [{ from: '2026-06-01T14:00', to: '2026-06-01T12:00Z', tz: 'Europe/Berlin' }, 'from', 'from: 2026-06-01T12:00:00Z is not before to, 2026-06-01T12:00:00Z'],
    [{ from: NOW + 1 }, 'from', 'from: 2026-06-01T12:00:01Z is not before to, which is now (2026-06-01T12:00:00Z) when not given'],
  ];
  for (const [params, parameter, detail] of cases) {
    const r = parseStatsRange(params, NOW);
    assert.ok(r instanceof RangeRefusal, `accepted ${JSON.stringify(params)}`);
    assert.deepEqual({ parameter: r.parameter, detail: r.detail }, { parameter, detail }, JSON.stringify(params));
  }
});

test('a visit list filter words its refusals the same way', () => {
  const cases: [RangeParams, keyof RangeParams, string][] = [
    [{ to: 0 }, 'to', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    [{ from: 5, to: 5 }, 'from', 'from: 1970-01-01T00:00:05Z is not before to, 1970-01-01T00:00:05Z'],
    [{ from: '1970-01-01', tz: 'Asia/Kathmandu' }, 'from', 'from: 1970-01-01T00:00:00 in Asia/Kathmandu is before 1970-01-01T00:00:00Z, the earliest time'],
  ];
  for (const [params, parameter, detail] of cases) {
    const r = parseEventFilter(params);
    assert.ok(r instanceof RangeRefusal, `accepted ${JSON.stringify(params)}`);
    assert.deepEqual({ parameter: r.parameter, detail: r.detail }, { parameter, detail }, JSON.stringify(params));
  }
  // A second later is taken (Kathmandu was 05:30 ahead of UTC until 1986).
  assert.deepEqual(parseEventFilter({ to: 1 }), { from: 0, to: 1, bots: 'exclude' });
  assert.deepEqual(parseEventFilter({ from: '1970-01-01T05:30', tz: 'Asia/Kathmandu' }), { from: 0, to: MAX_TIME + 1, bots: 'exclude' });
});

test('the echoed range is cut to 0 .. MAX_TIME + 1: never a time before 1970 nor after 2106', () => {
  // A month that ends after the last time: its bucket ends at the end of the last second.
  const months = parseStatsRange({ from: '2106-01-01', to: '2106-02-07', interval: 'month' }, NOW);
  assert.ok(!(months instanceof RangeRefusal));
  assert.deepEqual(
    [months.from, months.to, months.edges],
    [at('2106-01-01T00:00:00Z'), MAX_TIME + 1, [at('2106-01-01T00:00:00Z'), at('2106-02-01T00:00:00Z'), MAX_TIME + 1]],
  );
  const hours = parseStatsRange({ from: MAX_TIME - 3600, to: MAX_TIME, interval: 'hour' }, NOW);
  assert.ok(!(hours instanceof RangeRefusal));
  assert.equal(hours.to, MAX_TIME + 1);
  // A Kathmandu day that began at 1969-12-31T18:30:00Z (+05:30 then) begins at 0.
  const days = parseStatsRange({ from: 0, to: 86_400, interval: 'day', tz: 'Asia/Kathmandu' }, NOW);
  assert.ok(!(days instanceof RangeRefusal));
  assert.deepEqual(days.edges, [0, at('1970-01-01T18:30:00Z'), at('1970-01-02T18:30:00Z')]);
  assert.equal(days.from, 0);
});

test('over HTTP the 400 carries the refusal whole', async (t) => {
  const h = await start(t, { apiKeys: ['k'], now: () => NOW * 1000 });
  const code = await h.shorten('https://example.com/a');
  for (const [query, detail] of [
    ['to=0', 'to: 1970-01-01T00:00:00Z is the earliest time; a range must end after it'],
    ['from=1970-01-01&tz=Asia/Kathmandu', 'from: 1970-01-01T00:00:00 in Asia/Kathmandu is before 1970-01-01T00:00:00Z, the earliest time'],
  ]) {
    const r = await h.req(`/api/urls/${code}/stats?${query}`, { headers: { 'x-api-key': 'k' } });
    assert.equal(r.status, 400, query);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { detail }, query);
  }
  const r = await h.req(`/api/urls/${code}/stats?from=2106-01-01&to=2106-02-07&interval=month`, { headers: { 'x-api-key': 'k' } });
  assert.equal(r.status, 200, r.body);
  const body = JSON.parse(r.body) as { from: number; to: number; series: { start: number }[] };
  assert.deepEqual(
    [body.from, body.to, body.series.map((s) => s.start)],
    [at('2106-01-01T00:00:00Z'), MAX_TIME + 1, [at('2106-01-01T00:00:00Z'), at('2106-02-01T00:00:00Z')]],
  );
});
