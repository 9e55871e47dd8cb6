/**
 * The log format as pure functions: `replay()` over hand-written logs (built with `encodeEntry`,
 * plus raw text for damage), `decodePayload` on malformed shapes, and the CRC-32 fallback.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { test } from 'node:test';
import { crc32, crc32Fallback } from '../../../src/store/log/crc32.ts';
import { encodeEntry, FORMAT_VERSION, HEADER, type Entry } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { replay, Replayer, salvage, type ReplayResult } from '../../../src/store/log/replay.ts';

const create = (
  code: string,
  url = `https://example.com/${code}`,
  visits = 0,
  createdAt = 1_700_000_000,
  retentionDays = 0,
  maxVisits: number | null = null,
): Entry => ({
  op: 'C',
  code,
  url,
  createdAt,
  retentionDays,
  visits,
  maxVisits,
});
const edit = (code: string, url: string, retentionDays = 0, maxVisits: number | null = null): Entry => ({ op: 'E', code, url, retentionDays, maxVisits });
const del = (code: string): Entry => ({ op: 'D', code });
const visits = (...counts: [string, number][]): Entry => ({ op: 'V', counts });

const log = (...parts: (Entry | string | Buffer)[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.isBuffer(p) ? p : encodeEntry(p))));

/** A well-formed line whose checksum does not match its payload. */
const badChecksum = (entry: Entry): Buffer => {
  const line = Buffer.from(encodeEntry(entry));
  // Flip one hex digit of the checksum.
  line[0] = line[0] === 0x30 ? 0x31 : 0x30;
  return line;
};

/** The payload text of an entry, as the checksum covers it. */
const payloadOf = (entry: Entry): string => {
  const line = encodeEntry(entry).toString('utf8');
  return line.slice(9, -1);
};

test('encodeEntry writes "<crc32 hex8> <payload>\\n" with the checksum over the payload', () => {
  const line = encodeEntry(create('abc123', 'https://example.com/x', 3, 1_700_000_000, 7));
  const text = line.toString('utf8');
  assert.match(text, /^[0-9a-f]{8} C\tabc123\t1700000000\t7\t3\thttps:\/\/example\.com\/x\n$/);
  const body = line.subarray(9, line.length - 1);
  assert.equal(text.slice(0, 8), crc32Fallback(body).toString(16).padStart(8, '0'));
});

test('creates replay in order, with every field', () => {
  const r = replay(log(create('aaa111', 'https://a.example/', 0, 100, 0), create('bbb222', 'https://b.example/', 4, 200, 30), create('ccc333')));
  assert.deepEqual([...r.records.keys()], ['aaa111', 'bbb222', 'ccc333']);
  assert.deepEqual(r.records.get('bbb222'), {
    code: 'bbb222',
    url: 'https://b.example/',
    createdAt: 200,
    retentionDays: 30,
    visits: 4,
    untracked: 4,
    maxVisits: null,
  });
  assert.equal(r.entries, 3);
  assert.equal(r.tornTail, undefined);
  assert.equal(r.damage, undefined);
});

test('validBytes of an intact log is its whole length', () => {
  const buf = log(create('aaa111'), del('aaa111'), create('bbb222'));
  assert.equal(replay(buf).validBytes, buf.length);
});

test('a tombstone removes its record', () => {
  const r = replay(log(create('aaa111'), create('bbb222'), del('aaa111')));
  assert.deepEqual([...r.records.keys()], ['bbb222']);
  assert.equal(r.entries, 3);
});

test('a tombstone for an unknown code changes nothing', () => {
  const r = replay(log(create('aaa111'), del('zzz999')));
  assert.deepEqual([...r.records.keys()], ['aaa111']);
});

test('a code re-created after its delete moves to the end, with the new record', () => {
  const r = replay(
    log(
      create('aaa111', 'https://old.example/'),
      create('bbb222'),
      visits(['aaa111', 9]),
      del('aaa111'),
      create('aaa111', 'https://new.example/', 0, 500),
      create('ccc333'),
    ),
  );
  assert.deepEqual([...r.records.keys()], ['bbb222', 'aaa111', 'ccc333']);
  const rec = r.records.get('aaa111');
  assert.equal(rec?.url, 'https://new.example/');
  assert.equal(rec?.createdAt, 500);
  assert.equal(rec?.visits, 0, 'the visits of the deleted link do not carry over');
});

test('a second create of a live code replaces it (the last entry wins) and moves to the end', () => {
  const r = replay(log(create('aaa111', 'https://old.example/', 4), create('bbb222'), create('aaa111', 'https://new.example/', 0)));
  assert.deepEqual([...r.records.keys()], ['bbb222', 'aaa111']);
  assert.equal(r.records.get('aaa111')?.url, 'https://new.example/');
  assert.equal(r.records.get('aaa111')?.visits, 0);
});

test('visit batches set absolute counts and the last one wins', () => {
  const r = replay(log(create('aaa111'), create('bbb222', undefined, 2), visits(['aaa111', 3], ['bbb222', 5]), visits(['aaa111', 7]), visits(['bbb222', 6])));
  assert.equal(r.records.get('aaa111')?.visits, 7);
  assert.equal(r.records.get('bbb222')?.visits, 6);
});

test('replaying the same visit batch twice changes nothing (counts are absolute)', () => {
  const r = replay(log(create('aaa111'), visits(['aaa111', 4]), visits(['aaa111', 4])));
  assert.equal(r.records.get('aaa111')?.visits, 4);
});

test('visit counts for unknown or deleted codes are ignored', () => {
  const r = replay(
    log(
      visits(['aaa111', 5]), // before its create
      create('aaa111'),
      create('bbb222'),
      del('bbb222'),
      visits(['bbb222', 8], ['zzz999', 3], ['aaa111', 2]),
    ),
  );
  assert.deepEqual([...r.records.keys()], ['aaa111']);
  assert.equal(r.records.get('aaa111')?.visits, 2);
  assert.equal(r.damage, undefined);
  assert.equal(r.entries, 5);
});

test('an empty buffer replays to nothing', () => {
  const r = replay(Buffer.alloc(0));
  assert.equal(r.records.size, 0);
  assert.equal(r.entries, 0);
  assert.equal(r.validBytes, 0);
  assert.equal(r.tornTail, undefined);
  assert.equal(r.damage, undefined);
});

const tornTails: { name: string; tail: Buffer; reason: RegExp }[] = [
  {
    name: 'a last line without newline (the entry cut short)',
    tail: encodeEntry(create('ccc333')).subarray(0, 20),
    reason: /no newline|incomplete/,
  },
  {
    name: 'a whole last entry missing only its newline',
    tail: encodeEntry(create('ccc333')).subarray(0, encodeEntry(create('ccc333')).length - 1),
    reason: /no newline|incomplete/,
  },
  { name: 'a last line of garbage without newline', tail: Buffer.from('garbage'), reason: /no newline|incomplete/ },
];

for (const { name, tail, reason } of tornTails) {
  test(`torn tail: ${name} is reported at its start and not applied`, () => {
    const good = log(create('aaa111'), create('bbb222'));
    const r = replay(Buffer.concat([good, tail]));
    assert.deepEqual([...r.records.keys()], ['aaa111', 'bbb222']);
    assert.equal(r.entries, 2);
    assert.equal(r.validBytes, good.length);
    assert.equal(r.damage, undefined);
    assert.equal(r.tornTail?.line, 3);
    assert.match(r.tornTail?.reason ?? '', reason);
  });
}

// A write lands as a prefix of its bytes, so a crash can leave a last line without its newline,
// never a complete line that does not check out: that one is damage (docs/storage.md, recovery),
// and start-up stops.
const completeBadTails: { name: string; tail: Buffer; reason: RegExp }[] = [
  { name: 'a complete last line with a bad checksum', tail: badChecksum(create('ccc333')), reason: /checksum/ },
  { name: 'a complete last tombstone with a bad checksum', tail: badChecksum(del('aaa111')), reason: /checksum/ },
  { name: 'a last line of garbage with a newline', tail: Buffer.from('garbage\n'), reason: /not an entry/ },
  { name: 'a lone newline at the end', tail: Buffer.from('\n'), reason: /not an entry/ },
];

for (const { name, tail, reason } of completeBadTails) {
  test(`regression: ${name} is damage, not a torn tail`, () => {
    const good = log(create('aaa111'), create('bbb222'));
    const r = replay(Buffer.concat([good, tail]));
    assert.equal(r.tornTail, undefined, 'not cut off as a torn write');
    assert.equal(r.damage?.line, 3);
    assert.match(r.damage?.reason ?? '', reason);
    assert.equal(r.validBytes, good.length);
    assert.deepEqual([...r.records.keys()], ['aaa111', 'bbb222'], 'the bad line is not applied');
  });
}

test('torn tail: a torn tombstone does not delete', () => {
  const good = log(create('aaa111'));
  const r = replay(Buffer.concat([good, encodeEntry(del('aaa111')).subarray(0, 14)]));
  assert.deepEqual([...r.records.keys()], ['aaa111']);
  assert.equal(r.tornTail?.line, 2);
  assert.equal(r.validBytes, good.length);
});

test('torn tail: a torn visit batch does not change counts', () => {
  const good = log(create('aaa111'), visits(['aaa111', 2]));
  const r = replay(Buffer.concat([good, encodeEntry(visits(['aaa111', 9])).subarray(0, 15)]));
  assert.equal(r.records.get('aaa111')?.visits, 2);
  assert.equal(r.tornTail?.line, 3);
});

test('torn tail: a log that is only a torn line has validBytes 0', () => {
  const r = replay(Buffer.from('0123abcd C\tabc'));
  assert.equal(r.records.size, 0);
  assert.equal(r.validBytes, 0);
  assert.equal(r.tornTail?.line, 1);
  assert.equal(r.damage, undefined);
});

const middleDamage: { name: string; bad: Buffer; reason: RegExp }[] = [
  { name: 'a bad checksum', bad: badChecksum(create('xxx999')), reason: /checksum/ },
  { name: 'a garbage line', bad: Buffer.from('this is not a log line\n'), reason: /not an entry/ },
  { name: 'an empty line', bad: Buffer.from('\n'), reason: /not an entry/ },
  {
    name: 'a truncated entry followed by a newline',
    bad: Buffer.concat([encodeEntry(create('xxx999')).subarray(0, 25), Buffer.from('\n')]),
    reason: /checksum/,
  },
  {
    name: 'a checksummed payload of no known shape',
    bad: (() => {
      const body = Buffer.from('X\tsomething', 'utf8');
      return Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} X\tsomething\n`);
    })(),
    reason: /unknown entry/,
  },
];

for (const { name, bad, reason } of middleDamage) {
  test(`damage in the middle: ${name} is reported with its 1-based line number`, () => {
    const before = log(create('aaa111'), create('bbb222'));
    const r = replay(Buffer.concat([before, bad, encodeEntry(create('ccc333'))]));
    assert.equal(r.tornTail, undefined);
    assert.equal(r.damage?.line, 3);
    assert.match(r.damage?.reason ?? '', reason);
    assert.equal(r.validBytes, before.length);
    assert.equal(r.records.has('ccc333'), false, 'nothing after the damage is applied');
  });
}

test('damage on the first line of a longer log is line 1', () => {
  const r = replay(Buffer.concat([Buffer.from('junk\n'), encodeEntry(create('aaa111'))]));
  assert.equal(r.damage?.line, 1);
  assert.equal(r.tornTail, undefined);
  assert.equal(r.validBytes, 0);
});

test('decodePayload round-trips every entry kind', () => {
  const entries: Entry[] = [
    create('aaa111', 'https://example.com/a?b=c#d', 12, 1_700_000_123, 365),
    create('lim111', 'https://example.com/l', 3, 1_700_000_123, 0, 2_147_483_647),
    edit('aaa111', 'https://example.com/new', 7, 5),
    edit('aaa111', 'https://example.com/new', 0, null),
    { op: 'F', name: 'url-shortener-log', version: 2 },
    del('aaa111'),
    visits(['aaa111', 1]),
    visits(['aaa111', 0], ['bbb222', 42], ['ccc333', 9_007_199_254_740_991]),
  ];
  for (const entry of entries) assert.deepEqual(decodePayload(payloadOf(entry)), entry);
});

test('decodePayload keeps a non-ASCII URL byte-exact through encodeEntry and replay', () => {
  const url = 'https://example.com/%E2%82%AC/ü';
  const r = replay(encodeEntry(create('aaa111', url)));
  assert.equal(r.records.get('aaa111')?.url, url);
});

const malformed: string[] = [
  '',
  'X',
  'X\tabc',
  'c\taaa111\t1\t0\t0\thttps://e.example/',
  'C',
  'C\taaa111\t1\t0\t0',
  'C\taaa111\t1\t0\t0\thttps://e.example/\textra',
  'C\t\t1\t0\t0\thttps://e.example/',
  'C\taaa111\t\t0\t0\thttps://e.example/',
  'C\taaa111\t01\t0\t0\thttps://e.example/',
  'C\taaa111\t-1\t0\t0\thttps://e.example/',
  'C\taaa111\t1.5\t0\t0\thttps://e.example/',
  'C\taaa111\t1\tx\t0\thttps://e.example/',
  'C\taaa111\t1\t0\t1e3\thttps://e.example/',
  'C\taaa111\t1\t0\t0\t',
  'C\taaa111\t12345678901234567\t0\t0\thttps://e.example/',
  'D',
  'D\t',
  'D\taaa111\tbbb222',
  'V',
  'V\t',
  'V\taaa111',
  'V\taaa111\t1\tbbb222',
  'V\t\t1',
  'V\taaa111\tx',
  'V\taaa111\t-1',
  'V\taaa111\t01',
  'V\taaa111\t 1',
  'C\taaa111\t1\t0\t0\tx\thttps://e.example/',
  'C\taaa111\t1\t0\t0\t4294967296\thttps://e.example/',
  'C\taaa111\t1\t0\t0\t5\t',
  'E',
  'E\taaa111',
  'E\taaa111\t0\t0',
  'E\taaa111\t0\t0\t',
  'E\t\t0\t0\thttps://e.example/',
  'E\taaa111\tx\t0\thttps://e.example/',
  'E\taaa111\t0\t-1\thttps://e.example/',
  'E\taaa111\t0\t0\thttps://e.example/\textra',
  'F',
  'F\turl-shortener-log',
  'F\turl-shortener-log\tx',
  'F\t\t2',
];

test('decodePayload rejects malformed shapes', () => {
  for (const text of malformed) {
    assert.equal(decodePayload(text), undefined, JSON.stringify(text));
  }
});

test('crc32Fallback of "123456789" is the CRC-32 check value 0xcbf43926', () => {
  assert.equal(crc32Fallback(Buffer.from('123456789', 'ascii')), 0xcbf43926);
  assert.equal(crc32(Buffer.from('123456789', 'ascii')), 0xcbf43926);
  assert.equal(crc32Fallback(new Uint8Array(0)), 0);
  // Going on from the CRC of the bytes before (the start-up checkpoint checks a block in parts).
  assert.equal(crc32Fallback(Buffer.from('56789', 'ascii'), crc32Fallback(Buffer.from('1234', 'ascii'))), 0xcbf43926);
  assert.equal(crc32(Buffer.from('56789', 'ascii'), crc32(Buffer.from('1234', 'ascii'))), 0xcbf43926);
});

test('crc32Fallback equals zlib.crc32 (when present) on random buffers', () => {
  const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  const sizes = [0, 1, 2, 3, 7, 8, 15, 16, 63, 255, 256, 1000, 4096, 65537];
  for (const size of sizes) {
    for (let i = 0; i < 4; i++) {
      const buf = randomBytes(size);
      const expected = native ? native(buf) : crc32(buf);
      assert.equal(crc32Fallback(buf), expected, `size ${size}`);
      assert.ok(expected >= 0 && expected <= 0xffffffff);
    }
  }
  // The exported crc32 is the native one when Node has it.
  if (native) assert.equal(crc32, native);
});

/** Everything a replay says, with the records as plain rows. */
const summary = (r: ReplayResult) => ({
  records: [...r.records.keys()].map((code) => r.records.get(code)),
  entries: r.entries,
  validBytes: r.validBytes,
  tornTail: r.tornTail,
  damage: r.damage,
});

test('a log fed in chunks of any size replays exactly as the whole buffer does', () => {
  const long = `https://example.com/${'x'.repeat(300)}`;
  const logs = {
    clean: log(create('aaa111'), create('bbb222', long, 3), visits(['aaa111', 2]), del('bbb222'), create('ccc333')),
    'torn tail': log(create('aaa111'), create('bbb222', long), '0123abcd C\tccc'),
    'bad checksum mid-file': log(create('aaa111'), badChecksum(create('bbb222', long)), create('ccc333')),
    'bad checksum on the complete last line': log(create('aaa111'), badChecksum(create('bbb222', long))),
  };
  for (const [name, bytes] of Object.entries(logs)) {
    const whole = summary(replay(bytes));
    // Sizes below one line make a line span several chunks; a fresh copy of each chunk per push,
    // and one reused buffer, as the store reads into.
    for (const size of [1, 2, 7, 64, 100, 333, bytes.length]) {
      const replayer = new Replayer();
      const scratch = Buffer.alloc(size);
      for (let at = 0; at < bytes.length; at += size) {
        const n = bytes.copy(scratch, 0, at, at + size);
        replayer.push(scratch.subarray(0, n));
      }
      assert.deepEqual(summary(replayer.finish()), whole, `${name}, chunks of ${size}`);
    }
  }
});

test('a create with a visit limit carries it as a seventh field; one without keeps the six-field line', () => {
  const limited = encodeEntry(create('lim111', 'https://example.com/l', 2, 1_700_000_000, 3, 50)).toString('utf8');
  assert.match(limited, /^[0-9a-f]{8} C\tlim111\t1700000000\t3\t2\t50\thttps:\/\/example\.com\/l\n$/);
  const plain = encodeEntry(create('pln111', 'https://example.com/p', 0, 1_700_000_000, 0, null)).toString('utf8');
  assert.match(plain, /^[0-9a-f]{8} C\tpln111\t1700000000\t0\t0\thttps:\/\/example\.com\/p\n$/);
  const r = replay(log(HEADER, create('lim111', 'https://example.com/l', 2, 1_700_000_000, 3, 50), create('pln111')));
  assert.equal(r.damage, undefined);
  assert.deepEqual(r.records.get('lim111'), {
    code: 'lim111',
    url: 'https://example.com/l',
    createdAt: 1_700_000_000,
    retentionDays: 3,
    visits: 2,
    untracked: 2,
    maxVisits: 50,
  });
  assert.equal(r.records.get('pln111')?.maxVisits, null);
});

test('an edit changes a record in place: its order stays, the URL index follows the new URL, the last edit wins', () => {
  const r = replay(
    log(
      HEADER,
      create('aaa111', 'https://example.com/same'),
      create('bbb222', 'https://example.com/same'),
      create('ccc333'),
      edit('bbb222', 'https://example.com/moved', 30, 9),
      edit('aaa111', 'https://example.com/other', 0, 5),
      edit('aaa111', 'https://example.com/moved', 2, null),
      edit('zzz999', 'https://example.com/ghost'),
      visits(['aaa111', 4]),
    ),
  );
  assert.equal(r.damage, undefined);
  assert.equal(r.entries, 8, 'the version line is not an entry');
  assert.deepEqual([...r.records.keys()], ['aaa111', 'bbb222', 'ccc333'], 'edits move nothing; an edit of an unknown code is ignored');
  assert.deepEqual(r.records.get('aaa111'), {
    code: 'aaa111',
    url: 'https://example.com/moved',
    createdAt: 1_700_000_000,
    retentionDays: 2,
    visits: 4,
    untracked: 4,
    maxVisits: null,
  });
  assert.deepEqual(r.records.get('bbb222'), {
    code: 'bbb222',
    url: 'https://example.com/moved',
    createdAt: 1_700_000_000,
    retentionDays: 30,
    visits: 0,
    untracked: 0,
    maxVisits: 9,
  });
  const byUrl = (url: string): string[] => [...r.records.slotsWithUrl(url)].map((s) => r.records.code(s));
  assert.deepEqual(byUrl('https://example.com/same'), [], 'the old URL no longer finds them');
  assert.deepEqual(byUrl('https://example.com/moved'), ['bbb222', 'aaa111'], 'newest first, whatever the order of the edits');
});

test('the version line: read first, not an entry; a log without one is version 1; an empty log is the current version', () => {
  const withHeader = replay(log(HEADER, create('aaa111')));
  assert.deepEqual(
    { version: withHeader.version, header: withHeader.header, entries: withHeader.entries, damage: withHeader.damage },
    { version: FORMAT_VERSION, header: true, entries: 1, damage: undefined },
  );
  const v1 = replay(log(create('aaa111'), visits(['aaa111', 3]), del('aaa111'), create('bbb222')));
  assert.deepEqual({ version: v1.version, header: v1.header, damage: v1.damage }, { version: 1, header: false, damage: undefined });
  assert.deepEqual([...v1.records.keys()], ['bbb222']);
  const empty = replay(Buffer.alloc(0));
  assert.deepEqual({ version: empty.version, header: empty.header }, { version: FORMAT_VERSION, header: false });
  assert.match(HEADER.toString('utf8'), new RegExp(`^[0-9a-f]{8} F\turl-shortener-log\t${FORMAT_VERSION}\n$`), 'the version line names the current version');
});

test('a version line naming a newer format stops replay at once: not damage, nothing read', () => {
  const newer = encodeEntry({ op: 'F', name: 'url-shortener-log', version: FORMAT_VERSION + 1 });
  const r = replay(log(newer, create('aaa111'), 'whatever a newer build writes\n'));
  assert.equal(r.version, FORMAT_VERSION + 1);
  assert.equal(r.damage, undefined);
  assert.equal(r.records.size, 0);
  assert.equal(r.validBytes, 0);
  const s = salvage(log(newer, create('aaa111')));
  assert.equal(s.version, FORMAT_VERSION + 1);
  assert.deepEqual(s.lost, []);
});

test('a version line anywhere but first, or of another name, is an unknown entry (intact), never skipped', () => {
  const later = replay(log(create('aaa111'), HEADER));
  assert.deepEqual(later.damage, { line: 2, reason: 'unknown entry', unknown: true });
  const other = replay(log(encodeEntry({ op: 'F', name: 'some-other-log', version: 1 }), create('aaa111')));
  assert.deepEqual(other.damage, { line: 1, reason: 'unknown entry', unknown: true });
  const bad = replay(log(HEADER, badChecksum(create('aaa111'))));
  assert.deepEqual(bad.damage, { line: 2, reason: 'bad checksum' }, 'a bad checksum is damage, not unknown');
});

test('salvage tells intact lines of an unknown shape from damaged ones, and keeps the version line', () => {
  const text = 'Z\tfuture\tentry';
  const future = Buffer.from(`${crc32(Buffer.from(text)).toString(16).padStart(8, '0')} ${text}\n`);
  const s = salvage(log(HEADER, create('aaa111'), future, badChecksum(create('bbb222')), create('ccc333')));
  assert.equal(s.version, FORMAT_VERSION);
  assert.deepEqual(
    s.intact.map((b) => b.toString('utf8')),
    [HEADER, encodeEntry(create('aaa111')), encodeEntry(create('ccc333'))].map((b) => b.toString('utf8')),
  );
  assert.deepEqual(s.lost, [
    { line: 3, reason: 'unknown entry', bytes: future.length, unknown: true },
    { line: 4, reason: 'bad checksum', bytes: encodeEntry(create('bbb222')).length },
  ]);
});
