/**
 * Regression: an impossible zoned date (`2024-02-30T00:00:00Z`) in an import's created_at was stored
 * as 1 March, while the zoneless form was refused. docs/api.md, export and import: a date or time
 * that does not exist is refused in every accepted form (`Z`, `±hh:mm`, `±hhmm`, fractions, a date
 * alone, `YYYY-MM-DD HH:MM:SS`), including `24:00` and a leap second; the row is skipped with its line.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCreatedText } from '../../src/transfer/dates.ts';
import { start } from '../support/helpers.ts';

const KEY = 'admin-key';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800_000;
const DETAIL = 'created_at must be Unix seconds, an ISO 8601 time, or YYYY-MM-DD HH:MM:SS (UTC)';

const s = (...utc: Parameters<typeof Date.UTC>): number => Date.UTC(...utc) / 1000;

/** Dates that exist, in every form, and the Unix seconds they are. */
const POSSIBLE: readonly [text: string, seconds: number][] = [
  ['2024-02-29T00:00:00Z', s(2024, 1, 29)],
  ['2024-02-29', s(2024, 1, 29)],
  ['2024-02-29 23:59:59', s(2024, 1, 29, 23, 59, 59)],
  ['2024-02-29T23:59:59', s(2024, 1, 29, 23, 59, 59)],
  ['2024-02-29T23:59:59.999Z', s(2024, 1, 29, 23, 59, 59)],
  ['2024-02-29T23:59:59.123456+02:00', s(2024, 1, 29, 21, 59, 59)],
  ['2024-02-29T12:00+0200', s(2024, 1, 29, 10)],
  ['2024-02-29T00:30:00-05:30', s(2024, 1, 29, 6)],
  ['2024-03-01T01:00:00+02:00', s(2024, 1, 29, 23)],
  ['2000-02-29T00:00:00Z', s(2000, 1, 29)],
  ['2023-12-31T23:59:59Z', s(2023, 11, 31, 23, 59, 59)],
  ['2024-04-30T00:00:00Z', s(2024, 3, 30)],
  ['2024-01-31T00:00:00+23:59', s(2024, 0, 30, 0, 1)],
  ['1970-01-01T00:00:00Z', 0],
  // The year 75 is not 1975 (`Date.UTC` would read it so); before 1970, the import refuses it.
  ['0075-01-01 00:00:00', -59800377600],
  ['0075-01-01T00:00:00Z', -59800377600],
];

/** Dates and times that do not exist, in every form. */
const IMPOSSIBLE: readonly string[] = [
  // A day past the month's end, zoned and zoneless.
  '2024-02-30T00:00:00Z',
  '2024-02-30',
  '2024-02-30 00:00:00',
  '2024-02-30T00:00:00',
  '2024-02-30T00:00:00.5Z',
  '2024-02-30T12:00:00+02:00',
  '2024-02-30T12:00+0200',
  '2024-04-31T12:00:00-01:00',
  '2024-06-31T00:00:00.123456Z',
  '2024-11-31',
  // 29 February outside a leap year (1900 and 2100 are not leap years; 2000 is).
  '2023-02-29T00:00:00Z',
  '2023-02-29',
  '2023-02-29 12:00:00',
  '1900-02-29T00:00:00Z',
  '2100-02-29T00:00:00Z',
  // No month 0 or 13, no day 0.
  '2024-00-10T00:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-01-00T00:00:00Z',
  // 24:00 (ISO 8601's "end of the day") is refused like 24:00:00 in the zoneless form; no leap second.
  '2024-01-01T24:00:00Z',
  '2024-01-01T24:00Z',
  '2024-01-01 24:00:00',
  '2024-01-01T23:59:60Z',
  '2024-01-01 23:59:60',
  '2024-01-01T12:60:00Z',
  // No offset of a day or more, or of 60 minutes.
  '2024-01-01T12:00:00+24:00',
  '2024-01-01T12:00:00+23:60',
];

test('every form of a date that exists is read as its Unix seconds', () => {
  for (const [text, seconds] of POSSIBLE) assert.equal(parseCreatedText(text), seconds, text);
});

test('a date or time that does not exist is refused in every form, never rolled over', () => {
  for (const text of IMPOSSIBLE) assert.equal(parseCreatedText(text), undefined, text);
});

test('an import skips the rows with impossible dates, by line, and stores the others as given', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW });
  const csv =
    'short_code,original_url,created_at\n' + // 1
    'leap24,https://example.com/a,2024-02-29T00:00:00Z\n' + // 2
    'feb30z,https://example.com/b,2024-02-30T00:00:00Z\n' + // 3
    'feb30o,https://example.com/c,2024-02-30T12:00:00+02:00\n' + // 4
    'leap23,https://example.com/d,2023-02-29T00:00:00Z\n' + // 5
    'endday,https://example.com/e,2024-01-01T24:00:00Z\n' + // 6
    'frac01,https://example.com/f,2024-04-30T23:59:59.75-01:00\n'; // 7
  const r = await h.req('/api/import', { method: 'POST', headers: { 'content-type': 'text/csv', 'x-api-key': KEY }, body: csv });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), {
    imported: 2,
    skipped: 4,
    errors: [3, 4, 5, 6].map((line) => ({ line, detail: DETAIL })),
  });
  const exported = await h.req('/api/export', { headers: { 'x-api-key': KEY } });
  const got = exported.body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    got.map((g) => [g['short_code'], g['created_at']]),
    [
      ['leap24', s(2024, 1, 29)],
      ['frac01', s(2024, 4, 1, 0, 59, 59)],
    ],
  );
});
