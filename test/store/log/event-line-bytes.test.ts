/**
 * Event lines are written straight as bytes (`writeEventsPayload`), not through the text of
 * `eventPayload`. The two must never differ: the text is the format's definition, and replay
 * reads what the bytes say. Random entries of every op that carries events, including times that
 * go back, the largest words and empty event lists, give the same line both ways and decode to
 * the entry again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32 } from '../../../src/store/log/crc32.ts';
import { decodeEventFields, eventPayload, type EventsEntry } from '../../../src/store/log/event-format.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';

const word = fc.oneof(fc.constantFrom(0, 1, 35, 36, 0x7fffffff, 0xffffffff), fc.nat({ max: 0xffffffff }));
const events = (min: number): fc.Arbitrary<Uint32Array> =>
  fc.array(fc.tuple(word, word, word, word), { minLength: min, maxLength: 40 }).map((list) => Uint32Array.from(list.flat()));
const code = fc.stringMatching(/^[A-Za-z0-9]{1,32}$/);
const seq = fc.oneof(fc.constantFrom(0, Number.MAX_SAFE_INTEGER), fc.nat());

const entry: fc.Arbitrary<EventsEntry> = fc.oneof(
  fc.record({ op: fc.constant('X' as const), code, seq, events: events(1) }),
  fc.record({ op: fc.constant('Y' as const), code, seq, events: events(1) }),
  fc.record({ op: fc.constant('K' as const), code, seq, events: events(0) }),
  fc.record({ op: fc.constant('J' as const), code, events: events(1) }),
);

/** The line as the text definition makes it: checksum of the payload's bytes, a space, the payload. */
function textLine(e: EventsEntry): string {
  const payload = eventPayload(e);
  return `${crc32(Buffer.from(payload)).toString(16).padStart(8, '0')} ${payload}\n`;
}

test('an event line written as bytes is the line its text defines, and decodes to the entry', () => {
  fc.assert(
    fc.property(entry, (e) => {
      const line = encodeEntry(e).toString('latin1');
      assert.equal(line, textLine(e));
      assert.deepEqual(decodeEventFields(line.slice(9, -1).split('\t')), { ...e });
    }),
    { numRuns: 2000 },
  );
});
