import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { searchSnapshot } from '../../../src/store/log/snapshot.ts';
import { Keydir, type StoredRecord } from '../../../src/store/log/keydir.ts';
import type { Found } from '../../../src/store/log/remembered-paths.ts';

const codesOf = (k: Keydir): string[] => [...k.keys()];
const urlCodes = (k: Keydir, url: string): string[] => [...k.slotsWithUrl(url)].map((s) => k.code(s));

test('add, find, get, delete: a record round-trips through the columns', () => {
  const k = new Keydir();
  k.add('abc123', 'https://example.com/a', 1_700_000_000, 30, 4);
  assert.deepEqual(k.get('abc123'), {
    code: 'abc123',
    url: 'https://example.com/a',
    createdAt: 1_700_000_000,
    retentionDays: 30,
    visits: 4,
    untracked: 4,
    maxVisits: null,
  });
  assert.equal(k.has('abc123'), true);
  assert.equal(k.has('abc12'), false, 'a prefix is another code');
  assert.equal(k.has('abc1234'), false, 'so is an extension');
  assert.equal(k.get('nope'), undefined);
  assert.equal(k.size, 1);
  assert.equal(k.delete('abc123'), true);
  assert.equal(k.delete('abc123'), false);
  assert.equal(k.size, 0);
  assert.equal(k.get('abc123'), undefined);
  assert.deepEqual(urlCodes(k, 'https://example.com/a'), []);
});

test('find reads a code from where it starts in a longer text, such as a request path', () => {
  const k = new Keydir();
  k.add('abc123', 'https://example.com/a', 1, 0, 0);
  const s = k.find('abc123');
  assert.notEqual(s, -1);
  assert.equal(k.find('/abc123', 1), s);
  assert.equal(k.find('/s/abc123', 3), s);
  for (const [text, start] of [
    ['/abc1234', 1],
    ['/abc12', 1],
    ['/abc123/', 1],
    ['/xabc123', 1],
    ['/', 1],
    ['abc123', 6],
  ] as const) {
    assert.equal(k.find(text, start), -1, `${text} from ${start}`);
  }
  // U+0133's low byte is 0x33, "3": kept as a byte, it would match.
  assert.equal(k.find('/abc12\u0133', 1), -1, 'a character past latin1 is in no code');
  const long = 'L'.repeat(100);
  k.add(long, 'https://example.com/long', 2, 0, 0);
  assert.equal(k.code(k.find(`/${long}`, 1)), long, 'a code longer than the lookup row is found');
  assert.equal(k.find('/abc123', 1), s, 'and a short one still is after it');
});

/** The slot `findIn` answers, -1 for none: what `find` answers for the same code. */
const slotIn = (k: Keydir, text: string, start: number, allowed?: Uint8Array): number => k.findIn(text, start, allowed)?.slot ?? -1;

test('findIn remembers the texts it found a code in, and never answers from a stale one', () => {
  const k = new Keydir();
  const s = k.add('abc', 'https://example.com/a', 1, 0, 0);
  assert.deepEqual(k.findIn('/abc', 1), { slot: s, url: 'https://example.com/a' });
  assert.equal(k.findIn('/abc', 1), k.findIn('/abc', 1), 'remembered: the same answer');
  assert.equal(slotIn(k, '/abc', 0), -1, 'the same text from another start is another code');
  assert.equal(slotIn(k, '/abc', 1), s);
  k.delete('abc');
  assert.equal(k.findIn('/abc', 1), undefined, 'deleted');
  const again = k.add('abc', 'https://example.com/b', 2, 0, 0);
  assert.deepEqual(k.findIn('/abc', 1), { slot: again, url: 'https://example.com/b' }, 're-created');
  // An edit changes what a redirect needs: the answer is read again.
  k.edit(again, 'https://example.com/edited', 0, null);
  assert.deepEqual(k.findIn('/abc', 1), { slot: again, url: 'https://example.com/edited' }, 'edited');
  k.edit(again, 'https://example.com/edited', 7, null);
  assert.deepEqual(k.findIn('/abc', 1), { slot: again, url: null }, 'a retention: the caller checks expiry');
  k.edit(again, 'https://example.com/edited', 0, 3);
  assert.deepEqual(k.findIn('/abc', 1), { slot: again, url: null }, 'a visit limit: the caller checks it');
  k.edit(again, 'https://example.com/edited', 0, null);
  assert.equal(k.findIn('/abc', 1)?.url, 'https://example.com/edited', 'neither any more');
  // Visits change nothing a plain answer says.
  k.visit(again);
  assert.equal(k.findIn('/abc', 1)?.url, 'https://example.com/edited');
  const long = `https://example.com/${'x'.repeat(600)}`;
  const l = k.add('long', long, 1, 0, 0);
  assert.deepEqual(k.findIn('/long', 1), { slot: l, url: null }, 'a long URL is read from the slot, never kept');
  // Past the most it remembers it forgets, and still answers.
  for (let i = 0; i < 5000; i++) k.add(`c${i}`, 'https://example.com/c', 3, 0, 0);
  for (let i = 0; i < 5000; i++) assert.equal(k.code(slotIn(k, `/c${i}`, 1)), `c${i}`);
  assert.equal(k.code(slotIn(k, '/abc', 1)), 'abc');
  // Vacuum renumbers slots: a remembered slot number would now be another code's.
  for (let i = 0; i < 5000; i += 2) k.delete(`c${i}`);
  for (let i = 1; i < 5000; i += 2) slotIn(k, `/c${i}`, 1);
  k.vacuum();
  for (let i = 0; i < 5000; i++) assert.equal(slotIn(k, `/c${i}`, 1), k.find(`c${i}`), `c${i}`);
  assert.equal(k.code(slotIn(k, '/abc', 1)), 'abc');
  const digits = new Uint8Array(256);
  for (const c of '0123456789') digits[c.charCodeAt(0)] = 1;
  assert.equal(slotIn(k, '/abc', 1, digits), -1, 'nor is it a code of other characters');
});

test('re-adding a code replaces its record and moves it to the end', () => {
  const k = new Keydir();
  k.add('a', 'https://a.example/', 1, 0, 0);
  k.add('b', 'https://b.example/', 2, 0, 0);
  k.add('a', 'https://new.example/', 3, 0, 0);
  assert.deepEqual(codesOf(k), ['b', 'a']);
  assert.equal(k.get('a')?.url, 'https://new.example/');
  assert.deepEqual(urlCodes(k, 'https://a.example/'), [], 'the old URL no longer finds it');
  assert.equal(k.size, 2);
  assert.equal(k.end, 3, 'the replaced slot is dead until vacuumed');
});

test('lookups by URL give every live record with exactly that URL, newest first', () => {
  const k = new Keydir(4);
  for (let i = 0; i < 300; i++) k.add(`c${i}`, `https://example.com/${i % 7}`, i, 0, 0);
  k.delete('c290');
  assert.deepEqual(urlCodes(k, 'https://example.com/3').slice(0, 3), ['c297', 'c283', 'c276']);
  assert.equal(urlCodes(k, 'https://example.com/3').length, 42);
  assert.deepEqual(urlCodes(k, 'https://example.com/'), []);
  assert.deepEqual(urlCodes(k, 'https://example.com/33'), []);
});

test('non-ASCII bytes in URLs and codes survive (logs written by other tools)', () => {
  const k = new Keydir();
  k.add('çode', 'https://exämple.com/ü', 1, 0, 0);
  assert.equal(k.get('çode')?.url, 'https://exämple.com/ü');
  assert.deepEqual(urlCodes(k, 'https://exämple.com/ü'), ['çode']);
  assert.equal(k.has('code'), false);
  assert.equal(k.has('ç'), false);
});

test('addBytes from a log line equals add from strings', () => {
  const line = encodeEntry({ op: 'C', code: 'xyz789', url: 'https://example.com/q?a=1', createdAt: 5, retentionDays: 2, visits: 9 });
  const text = line.toString('latin1');
  const fields = text.slice(9, -1).split('\t');
  const codeStart = 9 + 2;
  const codeEnd = codeStart + fields[1]!.length;
  const urlStart = line.length - 1 - fields[5]!.length;
  const k = new Keydir();
  k.add('xyz789', 'https://old.example/', 1, 0, 0);
  k.addBytes(line, codeStart, codeEnd, urlStart, line.length - 1, 5, 2, 9, 7);
  assert.deepEqual(k.get('xyz789'), {
    code: 'xyz789',
    url: 'https://example.com/q?a=1',
    createdAt: 5,
    retentionDays: 2,
    visits: 9,
    untracked: 9,
    maxVisits: 7,
  });
  assert.equal(k.size, 1, 'the bytes replaced the record of the same code');
  assert.deepEqual(urlCodes(k, 'https://example.com/q?a=1'), ['xyz789']);
});

test('visits: a count and a dirty mark per slot', () => {
  const k = new Keydir();
  const s = k.add('a', 'https://a.example/', 1, 0, 0);
  assert.equal(k.visit(s), true, 'first visit: was clean');
  assert.equal(k.visit(s), false, 'already dirty');
  assert.equal(k.visits(s), 2);
  assert.equal(k.markDirty(s, false), false, 'it was dirty');
  assert.equal(k.visit(s), true, 'clean again after the flush');
  k.setVisits(s, 40);
  assert.equal(k.get('a')?.visits, 40);
});

test('vacuum squeezes out dead slots, keeps order, and maps old slots to new ones', () => {
  const k = new Keydir(4);
  const slots = new Map<string, number>();
  for (let i = 0; i < 2000; i++) slots.set(`c${i}`, k.add(`c${i}`, `https://example.com/${i % 10}`, i, i % 3, i));
  for (let i = 0; i < 2000; i += 2) k.delete(`c${i}`);
  const map = k.vacuum();
  assert.equal(k.end, 1000);
  assert.equal(k.size, 1000);
  assert.equal(map[slots.get('c0')!], -1);
  assert.equal(k.code(map[slots.get('c1')!]!), 'c1');
  assert.equal(k.code(map[slots.get('c1999')!]!), 'c1999');
  assert.deepEqual(codesOf(k).slice(0, 3), ['c1', 'c3', 'c5']);
  assert.deepEqual(k.get('c1001'), {
    code: 'c1001',
    url: 'https://example.com/1',
    createdAt: 1001,
    retentionDays: 2,
    visits: 1001,
    untracked: 1001,
    maxVisits: null,
  });
  assert.deepEqual(urlCodes(k, 'https://example.com/1').slice(0, 2), ['c1991', 'c1981']);
  // Adding after a vacuum appends after the survivors.
  k.add('later', 'https://example.com/1', 9, 0, 0);
  assert.deepEqual(urlCodes(k, 'https://example.com/1')[0], 'later');
  assert.equal(codesOf(k).at(-1), 'later');
});

/** Operations for the model test: a Map of objects is the obviously right keydir. */
type Op =
  | { op: 'add'; code: string; url: string; n: number }
  | { op: 'delete'; code: string }
  | { op: 'visit'; code: string }
  | { op: 'redirect'; code: string; start: number }
  | { op: 'edit'; code: string; url: string; n: number }
  | { op: 'vacuum' };

const code = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'ab', 'ba', 'abc', 'bca', 'x1', 'x2');
const url = fc.constantFrom('https://a.example/', 'https://b.example/', 'https://a.example/x', 'https://c.example/ü', 'http://a.example/');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('add' as const), code, url, n: fc.nat(1_000_000) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), code }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('visit' as const), code }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('redirect' as const), code, start: fc.constantFrom(1, 1, 1, 0, 3) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('edit' as const), code, url, n: fc.nat(1_000_000) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'vacuum' as const }) },
);

test('redirectUrl keeps recent URLs decoded and stays exact through re-adds and vacuum', () => {
  const k = new Keydir();
  const long = `https://example.com/${'x'.repeat(600)}`;
  const a = k.add('a', 'https://a.example/', 1, 0, 0);
  const l = k.add('long', long, 1, 0, 0);
  assert.equal(k.redirectUrl(a), 'https://a.example/');
  assert.equal(k.redirectUrl(a), 'https://a.example/', 'from the cache');
  assert.equal(k.redirectUrl(l), long, 'a long URL is decoded each time, never kept');
  assert.equal(k.redirectUrl(l), long);
  // A re-added code gets a new slot; the old slot's entry can no longer be reached.
  const a2 = k.add('a', 'https://new.example/', 2, 0, 0);
  assert.equal(k.redirectUrl(a2), 'https://new.example/');
  // 5,000 more records, then vacuum renumbers slots: every slot's URL is its own, cached or not.
  for (let i = 0; i < 5000; i++) k.redirectUrl(k.add(`c${i}`, `https://c.example/${i}`, 3, 0, 0));
  for (let i = 0; i < 5000; i += 2) k.delete(`c${i}`);
  k.delete('long');
  k.vacuum();
  for (let i = 1; i < 5000; i += 2) assert.equal(k.redirectUrl(k.find(`c${i}`)), `https://c.example/${i}`);
  assert.equal(k.redirectUrl(k.find('a')), 'https://new.example/');
  // Slots handed out after the vacuum reuse old numbers.
  for (let i = 0; i < 3000; i++) assert.equal(k.redirectUrl(k.add(`d${i}`, `https://d.example/${i}`, 4, 0, 0)), `https://d.example/${i}`);
  for (let i = 0; i < 3000; i++) assert.equal(k.redirectUrl(k.find(`d${i}`)), `https://d.example/${i}`);
});

/** A `findIn` answer carries the URL exactly when the record needs no other check. */
function assertAnswers(found: Found, rec: StoredRecord): void {
  assert.equal(found.url, rec.retentionDays === 0 && rec.maxVisits === null ? rec.url : null);
}

test('property: after any sequence of operations the keydir agrees with a Map of records', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), fc.integer({ min: 1, max: 64 }), (ops, capacity) => {
      const k = new Keydir(capacity);
      const model = new Map<string, StoredRecord>();
      for (const o of ops) {
        if (o.op === 'add') {
          k.add(o.code, o.url, o.n, o.n % 5, o.n % 7, o.n % 3 === 0 ? null : o.n);
          model.delete(o.code);
          model.set(o.code, {
            code: o.code,
            url: o.url,
            createdAt: o.n,
            retentionDays: o.n % 5,
            visits: o.n % 7,
            untracked: o.n % 7,
            maxVisits: o.n % 3 === 0 ? null : o.n,
          });
        } else if (o.op === 'edit') {
          // In place: the Map keeps the record where it is.
          const s = k.find(o.code);
          const rec = model.get(o.code);
          assert.equal(s !== -1, rec !== undefined);
          if (rec) {
            const maxVisits = o.n % 2 === 0 ? null : o.n;
            k.edit(s, o.url, o.n % 4, maxVisits);
            Object.assign(rec, { url: o.url, retentionDays: o.n % 4, maxVisits });
          }
        } else if (o.op === 'redirect') {
          // As the redirect asks: its request path, from where the code starts (remembered).
          const found = k.findIn(`${'/s/'.slice(0, o.start)}${o.code}`, o.start);
          assert.equal(found?.slot ?? -1, k.find(o.code));
          assert.equal(found !== undefined, model.has(o.code));
          if (found) assertAnswers(found, model.get(o.code)!);
        } else if (o.op === 'delete') {
          assert.equal(k.delete(o.code), model.delete(o.code));
        } else if (o.op === 'visit') {
          const s = k.find(o.code);
          const rec = model.get(o.code);
          assert.equal(s !== -1, rec !== undefined);
          if (rec) {
            k.visit(s);
            rec.visits++;
            rec.untracked++;
          }
        } else k.vacuum();
      }
      assert.equal(k.size, model.size);
      assert.deepEqual(codesOf(k), [...model.keys()]);
      for (const rec of model.values()) {
        assert.deepEqual(k.get(rec.code), rec);
        assert.equal(k.redirectUrl(k.find(rec.code)), rec.url);
        const found = k.findIn(`/${rec.code}`, 1);
        assert.equal(found?.slot, k.find(rec.code));
        assertAnswers(found!, rec);
      }
      for (const u of ['https://a.example/', 'https://b.example/', 'https://a.example/x', 'https://c.example/ü', 'http://a.example/']) {
        const expected = [...model.values()]
          .filter((r) => r.url === u)
          .map((r) => r.code)
          .reverse();
        assert.deepEqual(urlCodes(k, u), expected, `codes of ${u}`);
      }
    }),
    { numRuns: 500 },
  );
});

test('property: a search keeps exactly the records whose code or URL contains q as toLowerCase() compares them', async () => {
  // With the characters whose lower case is not a byte-for-byte fold: U+0130 (to "i" and a
  // combining dot), U+212A (the Kelvin sign, to "k"), and others outside ASCII.
  const chars = fc.constantFrom('a', 'B', 'c', 'Z', '/', '?', '=', '%', '1', '\u00fc', '\u00dc', '\u0130', 'i', 'I', '\u212a', 'k', 'K', '\u00df', '\u03a3');
  const text = (min: number, max = 12) => fc.array(chars, { minLength: min, maxLength: max }).map((a) => a.join(''));
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(text(1), text(0)), { maxLength: 30 }), text(1, 3), async (rows, q) => {
      const k = new Keydir();
      const kept: string[] = [];
      rows.forEach(([c, u], i) => {
        const code = `${i}${c.replace(/[^\x00-\xff]/g, 'x')}`; // codes are latin1 in the keydir
        k.add(code, `https://e.example/${u}`, 1, 0, 0);
        if (code.toLowerCase().includes(q.toLowerCase()) || `https://e.example/${u}`.toLowerCase().includes(q.toLowerCase())) kept.unshift(code);
      });
      let released = 0;
      const snapshot = await searchSnapshot(
        k,
        () => true,
        { q },
        () => released++,
      );
      assert.deepEqual(
        snapshot.slice(0, snapshot.length).map((r) => r.code),
        kept,
        JSON.stringify(q),
      );
      snapshot.release();
      snapshot.release();
      assert.equal(released, 1);
    }),
    {
      numRuns: 300,
      examples: [
        [[['x', '\u0130']], 'i'],
        [[['x', '\u212a']], 'k'],
        [[['x', 'k']], '\u212a'],
        [[['x', 'ABC']], 'bc'],
      ],
    },
  );
});

test('a search of 500,000 records lets other work run before it answers', async () => {
  const k = new Keydir(1 << 19);
  for (let i = 0; i < 500_000; i++) k.add(`c${i}`, `https://example.com/some/longer/path/${i}?ref=${i % 1000}`, 1, 0, 0);
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  let released = 0;
  const snapshot = await searchSnapshot(
    k,
    () => true,
    { q: 'REF=999' },
    () => released++,
  );
  counting = false;
  assert.ok(turns > 1, `other work ran while searching (${turns} turns)`);
  assert.equal(snapshot.length, 500);
  assert.equal(snapshot.slice(0, 1)[0]!.code, 'c499999');
  snapshot.release();
  assert.equal(released, 1);
});
