/**
 * A link's author on the log store (format 5, docs/storage.md): the `id` of the stored key that
 * created it, carried in the labels field of its create. Every read returns it (`author` absent
 * when none), an edit keeps it (an edit line never carries one), a delete drops it, and a reopen,
 * a compaction and the reopen after it (from its checkpoint and without), and the offline snapshot
 * of `export` all read it back.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { Keydir } from '../../../src/store/log/keydir.ts';
import { LOG_FILE, LogEngine, type LogEngineOptions } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { replay } from '../../../src/store/log/replay.ts';
import { readLogSnapshot } from '../../../src/transfer/log-snapshot.ts';
import { checksummedLine } from '../../support/log-entries.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { linkRecord as rec, T } from '../../support/records.ts';
import { anyChar } from '../../support/any-char.ts';

const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };

const payloadOf = (bytes: Buffer): string => bytes.toString('utf8', 9, bytes.length - 1);

function stores(t: TestContext) {
  const dir = tempDir();
  let last: LogEngine | undefined;
  t.after(() => Promise.resolve(last?.close()).finally(() => rmSync(dir, { recursive: true, force: true })));
  return {
    dir,
    open(options: Partial<LogEngineOptions> = {}) {
      const logs = new LogCapture();
      last = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), ...MANUAL, ...options });
      return { engine: last, store: new LogLinkStore(last), logs };
    },
  };
}

test('a create carries its author last in its labels field; an edit never does; both readers read it back', () => {
  const plain = encodeEntry({ op: 'C', code: 'au1', url: 'https://example.com/a', createdAt: T, retentionDays: 0, visits: 0, author: 'Key_0-9' });
  assert.equal(payloadOf(plain), `C\tau1\t${T}\t0\t0\t0\thttps://example.com/a\t[null,[],"Key_0-9"]`);
  const labelled = encodeEntry({
    op: 'C',
    code: 'au2',
    url: 'https://example.com/b',
    createdAt: T,
    retentionDays: 0,
    visits: 3,
    title: 'T',
    tags: ['x'],
    author: 'k1',
  });
  assert.equal(payloadOf(labelled), `C\tau2\t${T}\t0\t3\t0\thttps://example.com/b\t["T",["x"],"k1"]`);
  // No author (absent, null or empty): the lines of format 4.
  for (const author of [undefined, null, '']) {
    assert.equal(
      payloadOf(encodeEntry({ op: 'C', code: 'au3', url: 'https://example.com/c', createdAt: T, retentionDays: 0, visits: 0, author })),
      `C\tau3\t${T}\t0\t0\thttps://example.com/c`,
    );
  }
  assert.deepEqual(decodePayload(payloadOf(labelled)), {
    op: 'C',
    code: 'au2',
    url: 'https://example.com/b',
    createdAt: T,
    retentionDays: 0,
    visits: 3,
    maxVisits: null,
    title: 'T',
    tags: ['x'],
    author: 'k1',
  });
  const r = replay(Buffer.concat([HEADER, plain, labelled]));
  assert.equal(r.damage, undefined);
  assert.deepEqual(r.records.get('au1'), rec('au1', { url: 'https://example.com/a', author: 'Key_0-9' }));
  assert.deepEqual(r.records.get('au2'), rec('au2', { url: 'https://example.com/b', visits: 3, untracked: 3, title: 'T', tags: ['x'], author: 'k1' }));
});

test('property: start-up reads a create the same from its bytes (an author alone) as from its text (any other labels)', () => {
  const author = fc.oneof(fc.constant(null), fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), fc.string({ unit: anyChar, maxLength: 12 }));
  const title = fc.option(fc.string({ unit: anyChar, maxLength: 12 }), { freq: 1 });
  const tags = fc.oneof(
    fc.constant([]),
    fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }).map((t) => t.sort()),
  );
  fc.assert(
    fc.property(author, title, tags, fc.option(fc.integer({ min: 1, max: 2 ** 31 - 1 })), (a, ti, tg, max) => {
      const fields = { code: 'p1', url: 'https://example.com/p?q=1', createdAt: T, retentionDays: 0, visits: 7 };
      const bytes = encodeEntry({ op: 'C', ...fields, maxVisits: max, author: a, title: ti, tags: tg });
      const r = replay(Buffer.concat([HEADER, bytes]));
      assert.equal(r.damage, undefined);
      // The text reader, applied as replay applies a create it reads as text.
      const entry = decodePayload(payloadOf(bytes));
      assert.equal(entry?.op, 'C');
      const text = new Keydir();
      if (entry?.op === 'C') text.add(entry.code, entry.url, entry.createdAt, entry.retentionDays, entry.visits, entry.maxVisits, entry);
      const expected = rec('p1', {
        url: fields.url,
        visits: 7,
        untracked: 7,
        maxVisits: max,
        ...(ti ? { title: ti } : {}),
        ...(tg.length > 0 ? { tags: tg } : {}),
        ...(a ? { author: a } : {}),
      });
      assert.deepEqual(r.records.get('p1'), expected);
      assert.deepEqual(text.get('p1'), expected);
    }),
    { numRuns: 500 },
  );
});

test('an author where no reader reads one is no entry: an edit with one, an empty one, one not a string', () => {
  const edit = `E\tau1\t0\t0\thttps://example.com/x\t["T",[],"k1"]`;
  assert.equal(decodePayload(edit), undefined, 'an edit never carries an author');
  for (const labels of ['[null,[],""]', '[null,[],1]', '[null,[],null]', '[null,[],"k1","more"]']) {
    const text = `C\tau1\t${T}\t0\t0\t0\thttps://example.com/x\t${labels}`;
    assert.equal(decodePayload(text), undefined, labels);
    const r = replay(Buffer.concat([HEADER, checksummedLine(text)]));
    assert.deepEqual(r.damage, { line: 2, reason: 'unknown entry', unknown: true }, labels);
    assert.equal(r.records.size, 0, labels);
  }
  const r = replay(Buffer.concat([HEADER, checksummedLine(`C\tau1\t${T}\t0\t0\t0\thttps://example.com/x\tnull`), checksummedLine(edit)]));
  assert.equal(r.damage?.line, 2);
});

test('every read returns the author; an edit keeps it, in memory and in the log; a delete drops it', async (t) => {
  const s = stores(t);
  let { store, engine } = s.open();
  assert.equal(await store.insert(rec('mine01', { author: 'k1', title: 'Mine' }), T), true);
  assert.equal(await store.insert(rec('anon01', { author: null }), T), true);
  assert.equal(await store.insert(rec('gone01', { author: 'k2' }), T), true);
  const mine = rec('mine01', { author: 'k1', title: 'Mine' });
  const anon = rec('anon01');
  assert.deepEqual(store.get('mine01', T), mine);
  assert.deepEqual(store.get('anon01', T), anon, 'no author: no author field');
  assert.ok(!('author' in store.get('anon01', T)!));
  assert.deepEqual(store.newestByUrl('https://example.com/mine01', T), mine);
  const page = await store.list({ offset: 0, now: T });
  assert.deepEqual(await page.slice(0, 3), [rec('gone01', { author: 'k2' }), anon, mine]);
  page.release();
  const searched = await store.list({ offset: 0, now: T, q: 'mine' });
  assert.deepEqual(await searched.slice(0, 1), [mine]);
  searched.release();

  // An edit of every field an edit has: the author stays.
  const edited = await store.update('mine01', { url: 'https://example.org/new', title: null, tags: ['t'], maxVisits: 4, retentionDays: 30 }, T);
  const after = rec('mine01', { url: 'https://example.org/new', tags: ['t'], maxVisits: 4, retentionDays: 30, author: 'k1' });
  assert.deepEqual(edited, after);
  assert.deepEqual(store.get('mine01', T), after);
  assert.doesNotMatch(readFileSync(join(s.dir, LOG_FILE), 'utf8').split('\n').at(-2)!, /k1/, 'the edit line names no author');

  assert.equal(await store.delete('gone01', T), true);
  assert.equal(await store.insert(rec('gone01'), T), true);
  assert.deepEqual(store.get('gone01', T), rec('gone01'), 'the code taken anew, without the old author');

  const exported: LinkRecord[] = [];
  for await (const r of store.exportAll(T)) exported.push(r);
  assert.deepEqual(exported, [after, anon, rec('gone01')]);
  await engine.close();
  const snapshot: LinkRecord[] = [];
  for await (const r of readLogSnapshot(s.dir, T)) snapshot.push(r);
  assert.deepEqual(snapshot, [after, anon, rec('gone01')], 'the offline export reads it');

  ({ store, engine } = s.open());
  assert.deepEqual([store.get('anon01', T), store.get('mine01', T), store.get('gone01', T)], [anon, after, rec('gone01')], 'reopened');
});

test('authors survive a compaction, and the reopen after it from its checkpoint and without one', async (t) => {
  const s = stores(t);
  let { store, engine, logs } = s.open({ checkpointMinBytes: 0 });
  await store.insert(rec('a1', { author: 'k1' }), T);
  await store.insert(rec('a2', { author: 'k2', title: 'two' }), T);
  await store.insert(rec('a3'), T);
  await store.update('a1', { title: 'one' }, T);
  await store.delete('a3', T);
  const expected = [rec('a1', { author: 'k1', title: 'one' }), rec('a2', { author: 'k2', title: 'two' })];
  const read = (st: LogLinkStore) => [st.get('a1', T), st.get('a2', T), st.get('a3', T)];
  await engine.compact();
  assert.deepEqual(read(store), [...expected, undefined], 'in memory');
  assert.deepEqual([...replay(readFileSync(join(s.dir, LOG_FILE))).records.keys()], ['a1', 'a2'], 'the compacted log');
  await engine.close();
  ({ store, engine, logs } = s.open());
  assert.ok(logs.find('log replayed from its start-up checkpoint'));
  assert.deepEqual(read(store), [...expected, undefined], 'from the checkpoint');
  await engine.close();
  rmSync(checkpointPath(join(s.dir, LOG_FILE)));
  ({ store, engine } = s.open());
  assert.deepEqual(read(store), [...expected, undefined], 'from the whole log');
});
