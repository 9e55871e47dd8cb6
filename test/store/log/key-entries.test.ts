/**
 * The log entries of stored API keys (format 5, docs/storage.md): a key added (`A`), revoked (`W`)
 * and used (`U`), one line each. What the writer writes the reader reads back, every field over its
 * whole range; what no reader reads back is never written; a line of no known shape is no entry;
 * replay applies them in order, the last entry for a key winning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { MAX_COUNT } from '../../../src/store/record-limits.ts';
import { checksummedLine } from '../../support/log-entries.ts';
import { anyChar } from '../../support/any-char.ts';

const T = 1_790_000_000;
const DIGEST = 'ab'.repeat(32);

const key = (id: string, extra: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  name: `key ${id}`,
  role: 'creator',
  domain: null,
  digest: DIGEST,
  createdAt: T,
  expiresAt: null,
  lastUsedAt: null,
  ...extra,
});

/** The payload of a line, without its checksum and newline. */
const payloadOf = (line: Buffer): string => line.toString('utf8', 9, line.length - 1);

test('a key added, revoked and used are one line each, in the shapes the format names', () => {
  const added = encodeEntry({ op: 'A', key: key('AbC-_123', { name: 'Share\tX "laptop"\n', role: 'admin', expiresAt: T + 60, lastUsedAt: T + 5 }) });
  assert.equal(payloadOf(added), `A\tAbC-_123\tadmin\t${T}\t${T + 60}\t${T + 5}\t${DIGEST}\t["Share\\tX \\"laptop\\"\\n",null]`);
  assert.equal(added.indexOf('\n'), added.length - 1, "the name's line break is escaped");
  assert.equal(payloadOf(encodeEntry({ op: 'A', key: key('k1', { domain: 's.example' }) })), `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}\t["key k1","s.example"]`);
  assert.equal(payloadOf(encodeEntry({ op: 'W', id: 'k1' })), 'W\tk1');
  assert.equal(payloadOf(encodeEntry({ op: 'U', id: 'k1', at: T + 61 })), `U\tk1\t${T + 61}`);
  assert.deepEqual(decodePayload(payloadOf(added)), {
    op: 'A',
    key: key('AbC-_123', { name: 'Share\tX "laptop"\n', role: 'admin', expiresAt: T + 60, lastUsedAt: T + 5 }),
  });
});

const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
const second = fc.oneof(fc.constantFrom(0, 1, T, MAX_COUNT), fc.integer({ min: 0, max: MAX_COUNT }));
const keyRecord: fc.Arbitrary<KeyRecord> = fc
  .record({
    id,
    // Any text: every code point but a surrogate (fast-check's `binary` unit never drew one), tabs and line
    // breaks included.
    name: fc.string({ unit: anyChar, maxLength: 64 }),
    role: fc.constantFrom('creator', 'viewer', 'editor', 'admin'),
    domain: fc.option(fc.string({ unit: anyChar, maxLength: 40 })),
    digest: fc.stringMatching(/^[0-9a-f]{64}$/),
    createdAt: second,
    expiresAt: fc.option(second),
    lastUsedAt: fc.option(second),
  })
  // A plain object, as the service makes one.
  .map((k) => ({ ...k }));

test('property: every key entry, each field over its whole range, is read back as written, one line each', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        keyRecord.map((k) => ({ op: 'A' as const, key: k })),
        id.map((i) => ({ op: 'W' as const, id: i })),
        fc.tuple(id, second).map(([i, at]) => ({ op: 'U' as const, id: i, at })),
      ),
      (entry) => {
        const bytes = encodeEntry(entry);
        assert.equal(bytes.indexOf('\n'), bytes.length - 1, 'one line');
        assert.deepEqual(decodePayload(payloadOf(bytes)), entry);
      },
    ),
    { numRuns: 2000 },
  );
});

test('a key no reader reads back is never written: the write throws, and nothing is encoded', () => {
  const bad: KeyRecord[] = [
    key(''),
    key('has space'),
    key('k'.repeat(65)),
    key('k1', { role: 'owner' as KeyRecord['role'] }),
    key('k1', { digest: 'AB'.repeat(32) }),
    key('k1', { digest: 'ab' }),
    key('k1', { createdAt: -1 }),
    key('k1', { expiresAt: 1.5 }),
    key('k1', { lastUsedAt: MAX_COUNT + 1 }),
  ];
  for (const k of bad) assert.throws(() => encodeEntry({ op: 'A', key: k }), RangeError, JSON.stringify(k));
  assert.throws(() => encodeEntry({ op: 'W', id: 'a\tb' }), RangeError);
  assert.throws(() => encodeEntry({ op: 'U', id: 'k1', at: -5 }), RangeError);
});

test('a key line of no known shape is no entry: replay stops at it as an unknown entry, and applies nothing of it', () => {
  const shapes = [
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}`,
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}\t["n",null]\textra`,
    `A\tk1\towner\t${T}\t-\t-\t${DIGEST}\t["n",null]`,
    `A\tk1\tcreator\t${T}\t0x1\t-\t${DIGEST}\t["n",null]`,
    `A\tk1\tcreator\t${T}\t-\t\t${DIGEST}\t["n",null]`,
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST.toUpperCase()}\t["n",null]`,
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}\t["n"]`,
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}\t[1,null]`,
    `A\tk1\tcreator\t${T}\t-\t-\t${DIGEST}\tnot json`,
    `A\t\tcreator\t${T}\t-\t-\t${DIGEST}\t["n",null]`,
    'W\tbad id',
    'W\tk1\textra',
    'U\tk1',
    'U\tk1\t-',
    'U\tk1\t01',
  ];
  for (const text of shapes) {
    assert.equal(decodePayload(text), undefined, text);
    const r = replay(Buffer.concat([HEADER, encodeEntry({ op: 'A', key: key('k0') }), checksummedLine(text)]));
    assert.deepEqual(r.damage, { line: 3, reason: 'unknown entry', unknown: true }, text);
    assert.deepEqual(r.records.accessKeys.list(), [key('k0')], text);
  }
});

test('replay applies key entries in order: oldest first, the last entry for a key wins, a revoke or use of a key not there changes nothing', () => {
  const r = replay(
    Buffer.concat([
      HEADER,
      encodeEntry({ op: 'A', key: key('k1') }),
      encodeEntry({ op: 'A', key: key('k2', { role: 'viewer' }) }),
      encodeEntry({ op: 'U', id: 'k1', at: T + 100 }),
      encodeEntry({ op: 'A', key: key('k3', { role: 'editor' }) }),
      encodeEntry({ op: 'W', id: 'k2' }),
      // A use after its key was revoked, a revoke of a key never added: nothing.
      encodeEntry({ op: 'U', id: 'k2', at: T + 200 }),
      encodeEntry({ op: 'W', id: 'nokey' }),
      encodeEntry({ op: 'U', id: 'k1', at: T + 300 }),
    ]),
  );
  assert.equal(r.damage, undefined);
  assert.equal(r.entries, 8);
  assert.deepEqual(r.records.accessKeys.list(), [key('k1', { lastUsedAt: T + 300 }), key('k3', { role: 'editor' })]);
  assert.equal(r.records.size, 0, 'no link');
});
