/**
 * An orphan visit's log line (`orphan-log.ts`): what is written reads back the same, a field no
 * reader would read back is refused before it is written, and a row that is none is refused when
 * read. `orphanVisit` makes the visit of an event with exactly its fields.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { OrphanTable, orphanOf } from '../../../src/store/log/orphan-log.ts';
import { orphanVisit, type OrphanVisit } from '../../../src/store/orphan-store.ts';
import { bareOrphan } from '../../support/records.ts';

const FULL: OrphanVisit = {
  time: 1_790_000_000,
  type: 'expired',
  domain: 'go.example',
  referrer: 'news.example',
  country: 'DE',
  browser: 'Firefox',
  os: 'Linux',
  device: 'desktop',
  bot: true,
  visitor: -123_456,
};

/** The payload of an encoded line: after the checksum and tab, before the newline. */
const payloadOf = (line: Buffer): string => line.toString('utf8', 9, line.length - 1);

test('an orphan visit is written and read back field for field', () => {
  for (const visit of [FULL, bareOrphan(1_700_000_000)]) {
    const decoded = decodePayload(payloadOf(encodeEntry({ op: 'O', visit })));
    assert.deepEqual(decoded, { op: 'O', visit });
  }
});

/** One bad value a field at a time: each would not read back (the reader's rules). */
const BAD: readonly (readonly [keyof OrphanVisit, unknown])[] = [
  ['time', -1],
  ['time', 1.5],
  ['time', '1790000000'],
  ['type', 'missing'],
  ['domain', 5],
  ['referrer', false],
  ['country', 49],
  ['browser', 'Netscape'],
  ['os', 'BeOS'],
  ['device', 'watch'],
  ['bot', 'yes'],
  ['visitor', 1.5],
  ['visitor', '7'],
];

test('a field no reader reads back is refused before it is written, and such a row is refused when read', () => {
  for (const [field, value] of BAD) {
    const visit = { ...FULL, [field]: value } as unknown as OrphanVisit;
    assert.throws(() => encodeEntry({ op: 'O', visit }), RangeError, `${field}: ${String(value)}`);
    const row = [FULL.time, FULL.type, FULL.domain, FULL.referrer, FULL.country, FULL.browser, FULL.os, FULL.device, FULL.bot, FULL.visitor];
    const at = ['time', 'type', 'domain', 'referrer', 'country', 'browser', 'os', 'device', 'bot', 'visitor'].indexOf(field);
    row[at] = value as never;
    assert.equal(orphanOf(row), undefined, `row with ${field}: ${String(value)}`);
    assert.equal(decodePayload(`O\t${JSON.stringify(row)}`), undefined);
  }
  assert.equal(orphanOf([...Object.values(FULL), 'extra']), undefined, 'eleven fields');
  assert.equal(orphanOf({ ...FULL }), undefined, 'an object, not a row');
});

test('orphanVisit: the event fields, the type and the domain, and nothing else of the event', () => {
  const event = { time: 5, referrer: 'r.example', country: 'FR', browser: 'Chrome', os: 'Android', device: 'mobile', bot: false, visitor: 9, rule: 2 } as const;
  const visit = orphanVisit(event, 'invalid_short_url', null);
  assert.deepEqual(visit, {
    time: 5,
    referrer: 'r.example',
    country: 'FR',
    browser: 'Chrome',
    os: 'Android',
    device: 'mobile',
    bot: false,
    visitor: 9,
    type: 'invalid_short_url',
    domain: null,
  });
  assert.ok(!('rule' in visit));
});

test('the table keeps each visit frozen, so no reader can change what a page shows', () => {
  const table = new OrphanTable();
  const visit = { ...FULL };
  table.apply({ op: 'O', visit });
  const [kept] = table.all();
  assert.deepEqual(kept, FULL);
  assert.ok(Object.isFrozen(kept));
});
