/** A visit event as a row of `visits` and back (src/store/postgres/event-row.ts): what is written is what is read. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventColumns, eventOf } from '../../../src/store/postgres/event-row.ts';
import type { Browser, Device, Os, VisitEvent } from '../../../src/visits/event.ts';
import { BROWSERS, DEVICES, SYSTEMS } from '../../../src/visits/packed.ts';

const event = (over: Partial<VisitEvent>): VisitEvent => ({
  time: 1_790_000_000,
  referrer: null,
  country: null,
  browser: null,
  os: null,
  device: null,
  bot: false,
  visitor: null,
  ...over,
});

/** The row the driver would give back for these columns (bigint as text). */
const readBack = (e: VisitEvent): VisitEvent => {
  const c = eventColumns(e);
  return eventOf({ time: String(c.time), referrer: c.referrer, country: c.country, browser: c.browser, os: c.os, device: c.device, bot: c.bot });
};

test('every family of every column, and null, reads back as written; the visitor id is never read back', () => {
  const families: [readonly (string | null)[], keyof VisitEvent][] = [
    [[...BROWSERS, null], 'browser'],
    [[...SYSTEMS, null], 'os'],
    [[...DEVICES, null], 'device'],
  ];
  for (const [values, field] of families) {
    for (const value of values) {
      const e = event({ [field]: value, referrer: 'ref.example', country: 'SE', bot: true, visitor: -7 });
      assert.deepEqual(readBack(e), { ...e, visitor: null }, `${field} ${String(value)}`);
    }
  }
  assert.deepEqual(new Set(BROWSERS.map((b) => eventColumns(event({ browser: b })).browser)).size, BROWSERS.length, 'one number per family');
});

test('a family this version does not know is stored as Other; a number past the lists reads as Other', () => {
  const e = event({ browser: 'Netscape' as Browser, os: 'BeOS' as Os, device: 'watch' as Device });
  assert.deepEqual([readBack(e).browser, readBack(e).os, readBack(e).device], ['Other', 'Other', 'other']);
  assert.deepEqual(
    eventOf({ time: '1', referrer: null, country: null, browser: 99, os: 99, device: 99, bot: false }),
    event({ time: 1, browser: 'Other', os: 'Other', device: 'other' }),
  );
});
