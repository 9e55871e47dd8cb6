/**
 * The log store's events in memory (link-events.ts): staged on `add` and placed in their links'
 * arrays in batches, they read and change exactly as if each were placed at once. Checked against
 * a plain model (one array of events per slot) over random sequences of every operation, with a
 * stage of a few events so that batches fill, and with the default stage over more events than it holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LinkEvents } from '../../../src/store/log/link-events.ts';
import { STRIDE } from '../../../src/visits/packed.ts';

type Event = [time: number, visitor: number, referrer: number, attrs: number];

/** What the events should be: each slot's in time order (ties in the order added), its next number, the total. */
class Model {
  slots: Event[][] = [];
  seqs: number[] = [];

  add(s: number, e: Event): number {
    const list = (this.slots[s] ??= []);
    let at = list.length;
    while (at > 0 && list[at - 1]![0] > e[0]) at--;
    list.splice(at, 0, e);
    const seq = this.seqs[s] ?? 0;
    this.seqs[s] = seq + 1;
    return seq;
  }

  takeBack(s: number, e: Event): boolean {
    const list = this.slots[s] ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i]!.every((v, k) => v === e[k])) {
        list.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  cut(s: number, before: number): number {
    const list = this.slots[s] ?? [];
    const k = list.filter(([time]) => time < before).length;
    this.slots[s] = list.slice(k);
    return k;
  }

  clear(s: number): number {
    const n = this.slots[s]?.length ?? 0;
    this.slots[s] = [];
    return n;
  }

  get total(): number {
    return this.slots.reduce((n, list) => n + (list?.length ?? 0), 0);
  }
}

const SLOTS = 4;

const event = fc.tuple(
  fc.integer({ min: 100, max: 104 }),
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.integer({ min: 0, max: 3 }),
  fc.integer({ min: 0, max: 7 }),
);
const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const operation = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('add' as const), s: slot, e: event }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('addAll' as const), s: slot, es: fc.array(event, { maxLength: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('read' as const), s: slot }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('takeBack' as const), s: slot, e: event, existing: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cut' as const), s: slot, before: fc.integer({ min: 100, max: 105 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const), s: slot }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('drop' as const), s: slot }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('renumber' as const), rotate: fc.integer({ min: 1, max: SLOTS - 1 }) }) },
);

function read(events: LinkEvents, s: number): Event[] {
  const n = events.length(s);
  const data = events.data(s);
  const out: Event[] = [];
  for (let i = 0; i < n; i++) out.push([...data!.subarray(i * STRIDE, (i + 1) * STRIDE)] as Event);
  return out;
}

test('staged events read, number and change as events placed one by one do, through every operation', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }), fc.array(operation, { maxLength: 80 }), (stage, ops) => {
      const events = new LinkEvents(undefined, stage);
      const model = new Model();
      for (const o of ops) {
        switch (o.op) {
          case 'add':
            assert.equal(events.add(o.s, ...o.e), model.add(o.s, o.e));
            break;
          case 'addAll': {
            const words = Uint32Array.from(o.es.flat());
            events.addAll(o.s, words);
            for (const e of o.es) model.add(o.s, e);
            break;
          }
          case 'read':
            assert.deepEqual(read(events, o.s), model.slots[o.s] ?? []);
            break;
          case 'takeBack': {
            // Half the time an event the slot holds (maybe still staged), else any.
            const held = model.slots[o.s] ?? [];
            const e = held.length > 0 && o.existing % 2 === 0 ? held[o.existing % held.length]! : o.e;
            assert.equal(events.takeBack(o.s, ...e), model.takeBack(o.s, e));
            break;
          }
          case 'cut':
            assert.equal(events.cut(o.s, o.before), model.cut(o.s, o.before));
            break;
          case 'clear':
            assert.equal(events.clear(o.s), model.clear(o.s));
            break;
          case 'drop':
            events.drop(o.s);
            model.clear(o.s);
            model.seqs[o.s] = 0;
            break;
          case 'renumber': {
            // Every slot moves `rotate` places on; the last one is gone (its events dropped first, as a vacuum does).
            const gone = SLOTS - 1;
            events.drop(gone);
            model.clear(gone);
            model.seqs[gone] = 0;
            // An event staged after the drop still names its slot by the old number.
            assert.equal(events.add(0, 104, 7, 0, 0), model.add(0, [104, 7, 0, 0]));
            const map = Int32Array.from({ length: SLOTS }, (_, s) => (s === gone ? -1 : (s + o.rotate) % SLOTS));
            events.renumber(map);
            const slots: Event[][] = [];
            const seqs: number[] = [];
            for (let s = 0; s < SLOTS; s++) {
              if (map[s] === -1) continue;
              slots[map[s]!] = model.slots[s] ?? [];
              seqs[map[s]!] = model.seqs[s] ?? 0;
            }
            model.slots = slots;
            model.seqs = seqs;
            break;
          }
        }
        assert.equal(events.total, model.total);
        for (let s = 0; s < SLOTS; s++) {
          assert.equal(events.length(s), model.slots[s]?.length ?? 0, `length of ${s}`);
          assert.equal(events.nextSeq(s), model.seqs[s] ?? 0, `next number of ${s}`);
        }
      }
      for (let s = 0; s < SLOTS; s++) assert.deepEqual(read(events, s), model.slots[s] ?? []);
    }),
    { numRuns: 400 },
  );
});

test('with the default stage, more events than it holds are all placed, in order, and counted at any moment', () => {
  const events = new LinkEvents();
  const n = 40_000;
  for (let i = 0; i < n; i++) {
    assert.equal(events.add(i % 3, 1000 + i, i, 0, 0), Math.floor(i / 3));
    // The length a limited redirect reads is right at any moment: asking places what is staged.
    if (i % 997 === 0) assert.equal(events.length(i % 3), Math.floor(i / 3) + 1);
  }
  assert.equal(events.total, n);
  for (let s = 0; s < 3; s++) {
    const got = read(events, s);
    assert.equal(got.length, Math.ceil((n - s) / 3));
    assert.ok(got.every(([time], k) => time === 1000 + s + 3 * k));
  }
});
