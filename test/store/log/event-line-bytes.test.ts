/**
 * Event lines are written straight as bytes (`writeEventsPayload`), never as text first. They must
 * be the text the format defines (event-format.ts, written out below apart from the code under
 * test): random entries of every op that carries events, including times that go back, the largest
 * words and empty event lists, give that line and decode to the entry again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32 } from '../../../src/store/log/crc32.ts';
import { decodeEventFields, type EventsEntry } from '../../../src/store/log/event-format.ts';
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

/** The events as the format defines them: base 36, the time after the first as a difference. */
function eventsText(events: Uint32Array): string {
  const parts: string[] = [];
  for (let w = 0; w < events.length; w += 4) {
    const time = w === 0 ? events[0]! : events[w]! - events[w - 4]!;
    parts.push([time, events[w + 1]!, events[w + 2]!, events[w + 3]!].map((n) => n.toString(36)).join(','));
  }
  return parts.map((p) => `\t${p}`).join('');
}

/** The line as the text definition makes it: checksum of the payload's bytes, a space, the payload. */
function textLine(e: EventsEntry): string {
  const payload = `${e.op}\t${e.code}${e.op === 'J' ? '' : `\t${e.seq}`}${eventsText(e.events)}`;
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
