/**
 * Titles and tags in the log (format 4, docs/storage.md): the `<labels>` field of a create and an
 * edit, read back by start-up's byte reader and by the text decoder alike, kept by compaction, a
 * damaged one refused as an entry, and a format 3 log rewritten as format 4 before the first
 * labelled line is appended.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { encodeEntry, FORMAT_VERSION, HEADER } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { tempDir } from '../../support/helpers.ts';
import { checksummedLine, logEntries, logVersion } from '../../support/log-entries.ts';
import { linkRecord as rec, T } from '../../support/records.ts';

const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
const TITLE = 'Tab\there, line\nbreak, "quotes", \\ and \u{1F600}';

function openStore(dir: string): LogEngine {
  return new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), ...MANUAL });
}

test('a labelled create and edit are one line each, the labels a JSON field last; both readers read them back', () => {
  const create = encodeEntry({
    op: 'C',
    code: 'lab1',
    url: 'https://example.com/a',
    createdAt: T,
    retentionDays: 3,
    visits: 2,
    title: TITLE,
    tags: ['a b', 'z'],
  });
  const payload = create.toString('utf8', 9, create.length - 1);
  assert.equal(payload, `C\tlab1\t${T}\t3\t2\t0\thttps://example.com/a\t${JSON.stringify([TITLE, ['a b', 'z']])}`);
  assert.equal(create.indexOf('\n'), create.length - 1, "the title's line break is escaped");
  const edit = encodeEntry({ op: 'E', code: 'lab1', url: 'https://example.com/b', retentionDays: 0, maxVisits: 5, tags: ['only'] });
  assert.equal(edit.toString('utf8', 9, edit.length - 1), 'E\tlab1\t0\t5\thttps://example.com/b\t[null,["only"]]');
  assert.deepEqual(decodePayload(payload), {
    op: 'C',
    code: 'lab1',
    url: 'https://example.com/a',
    createdAt: T,
    retentionDays: 3,
    visits: 2,
    maxVisits: null,
    title: TITLE,
    tags: ['a b', 'z'],
  });
  // Without labels nothing changes: the lines an older format wrote.
  assert.equal(
    encodeEntry({ op: 'E', code: 'lab1', url: 'https://example.com/b', retentionDays: 0, maxVisits: null, title: null, tags: [] })
      .toString('utf8', 9)
      .trimEnd(),
    'E\tlab1\t0\t0\thttps://example.com/b',
  );

  const r = replay(
    Buffer.concat([
      HEADER,
      create,
      encodeEntry({ op: 'C', code: 'lab2', url: 'https://example.com/c', createdAt: T, retentionDays: 0, visits: 0, title: 'x' }),
    ]),
  );
  assert.equal(r.damage, undefined);
  assert.deepEqual(
    r.records.get('lab1'),
    rec('lab1', { url: 'https://example.com/a', retentionDays: 3, visits: 2, untracked: 2, title: TITLE, tags: ['a b', 'z'] }),
  );
  assert.deepEqual(r.records.get('lab2'), rec('lab2', { url: 'https://example.com/c', title: 'x' }));
  const edited = replay(Buffer.concat([HEADER, create, edit]));
  assert.deepEqual(
    edited.records.get('lab1'),
    rec('lab1', { url: 'https://example.com/b', visits: 2, untracked: 2, maxVisits: 5, tags: ['only'] }),
    'an edit carries the labels whole',
  );
  const cleared = replay(
    Buffer.concat([HEADER, create, encodeEntry({ op: 'E', code: 'lab1', url: 'https://example.com/a', retentionDays: 3, maxVisits: null })]),
  );
  assert.deepEqual(
    cleared.records.get('lab1'),
    rec('lab1', { url: 'https://example.com/a', retentionDays: 3, visits: 2, untracked: 2 }),
    'an edit without labels clears them',
  );
});

test('a labels field that is not [title, tags] is no entry: replay reports it, it is never half applied', () => {
  for (const labels of ['not json', '{"title":"x"}', '["x"]', '[1,[]]', '["x",["ok",2]]', '["x","tags"]']) {
    const r = replay(Buffer.concat([HEADER, checksummedLine(`C\tbad1\t${T}\t0\t0\t0\thttps://example.com/x\t${labels}`)]));
    assert.notEqual(r.damage, undefined, labels);
    assert.equal(r.records.get('bad1'), undefined, labels);
    assert.equal(decodePayload(`E\tbad1\t0\t0\thttps://example.com/x\t${labels}`), undefined, labels);
  }
  assert.equal(decodePayload(`C\tbad1\t${T}\t0\t0\t0\thttps://example.com/x\t["x",[]]\textra`), undefined, 'nine fields');
});

test('titles and tags survive edits, compaction and restarts', async (t) => {
  const dir = tempDir(t);
  let store = openStore(dir);
  t.after(() => store.close());
  await store.create(rec('keep01', { title: TITLE, tags: ['a', 'b'] }));
  await store.create(rec('keep02'));
  await store.create(rec('gone01', { title: 'deleted' }));
  await store.edit(rec('keep02', { tags: ['new'] }));
  await store.edit(rec('keep01', { title: 'renamed', tags: ['a', 'b'] }));
  await store.delete('gone01');
  const expected = [rec('keep01', { title: 'renamed', tags: ['a', 'b'] }), rec('keep02', { tags: ['new'] })];
  const read = (s: LogEngine) => [s.get('keep01'), s.get('keep02'), s.get('gone01')];
  assert.deepEqual(read(store), [...expected, undefined]);
  await store.compact();
  assert.deepEqual(read(store), [...expected, undefined], 'after compaction, in memory');
  assert.deepEqual(logEntries(dir), [
    {
      op: 'C',
      code: 'keep01',
      url: 'https://example.com/keep01',
      createdAt: T,
      retentionDays: 0,
      visits: 0,
      maxVisits: null,
      title: 'renamed',
      tags: ['a', 'b'],
    },
    { op: 'C', code: 'keep02', url: 'https://example.com/keep02', createdAt: T, retentionDays: 0, visits: 0, maxVisits: null, tags: ['new'] },
  ]);
  await store.close();
  store = openStore(dir);
  assert.deepEqual(read(store), [...expected, undefined], 'after a restart');
});

test('a format 3 log is rewritten as format 4 before a labelled line is appended to it', async (t) => {
  const dir = tempDir(t);
  const v3 = encodeEntry({ op: 'F', name: 'url-shortener-log', version: 3 });
  writeFileSync(
    join(dir, LOG_FILE),
    Buffer.concat([v3, encodeEntry({ op: 'C', code: 'old001', url: 'https://example.com/old', createdAt: T, retentionDays: 0, visits: 4 })]),
  );
  let store = openStore(dir);
  t.after(() => store.close());
  await store.create(rec('new001', { title: 'Neu' }));
  assert.equal(logVersion(dir), FORMAT_VERSION);
  assert.ok(FORMAT_VERSION >= 4, 'format 4 or newer: it has labels');
  assert.match(readFileSync(join(dir, LOG_FILE), 'utf8'), /\tnew001\t.*\t\["Neu",\[\]\]\n$/);
  await store.close();
  store = openStore(dir);
  assert.deepEqual(
    [store.get('old001'), store.get('new001')],
    [rec('old001', { url: 'https://example.com/old', visits: 4, untracked: 4 }), rec('new001', { title: 'Neu' })],
  );
});
