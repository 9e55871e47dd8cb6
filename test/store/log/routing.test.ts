/**
 * A link's routing in the log (format 7, docs/storage.md): the last element of a create's and an
 * edit's `<labels>` field, read back by replay, carried whole by an edit, refused as an entry when
 * it has another shape, and kept by a compaction and by the start-up checkpoint it writes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { Routing } from '../../../src/store/link-store.ts';
import { checkpointPath, loadCheckpoint } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { decodePayload } from '../../../src/store/log/format-decode.ts';
import { nodeFs } from '../../../src/store/log/fs.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { Replayer, replay } from '../../../src/store/log/replay.ts';
import { tempDir } from '../../support/helpers.ts';
import { checksummedLine } from '../../support/log-entries.ts';
import { linkRecord as rec, T } from '../../support/records.ts';

const ROUTING: Routing = {
  rules: [{ url: 'https://example.com/app\tstore', conditions: [{ type: 'device', key: null, value: 'ios' }] }],
  forwardQuery: true,
  validUntil: T + 60,
};

test('routing is the last element of the labels: a create [title, tags, author, routing], an edit [title, tags, routing]', () => {
  const create = encodeEntry({ op: 'C', code: 'rt1', url: 'https://example.com/a', createdAt: T, retentionDays: 0, visits: 0, routing: ROUTING });
  const payload = create.toString('utf8', 9, create.length - 1);
  assert.equal(payload, `C\trt1\t${T}\t0\t0\t0\thttps://example.com/a\t${JSON.stringify([null, [], null, ROUTING])}`);
  assert.equal(payload.split('\t').length, 8, "the rule's tab is escaped");
  const authored = encodeEntry({
    op: 'C',
    code: 'rt2',
    url: 'https://example.com/b',
    createdAt: T,
    retentionDays: 0,
    visits: 0,
    author: 'k1',
    routing: ROUTING,
  });
  assert.match(authored.toString('utf8'), /\t\[null,\[\],"k1",\{"rules"/);
  const edit = encodeEntry({
    op: 'E',
    code: 'rt1',
    url: 'https://example.com/a',
    retentionDays: 0,
    maxVisits: null,
    title: 'x',
    routing: { forwardQuery: true },
  });
  assert.equal(edit.toString('utf8', 9, edit.length - 1), 'E\trt1\t0\t0\thttps://example.com/a\t["x",[],{"forwardQuery":true}]');
  assert.deepEqual(decodePayload(payload), {
    op: 'C',
    code: 'rt1',
    url: 'https://example.com/a',
    createdAt: T,
    retentionDays: 0,
    visits: 0,
    maxVisits: null,
    routing: ROUTING,
  });

  const r = replay(Buffer.concat([HEADER, create, authored]));
  assert.equal(r.damage, undefined);
  assert.deepEqual(r.records.get('rt1'), rec('rt1', { url: 'https://example.com/a', routing: ROUTING }));
  assert.deepEqual(r.records.get('rt2'), rec('rt2', { url: 'https://example.com/b', author: 'k1', routing: ROUTING }));
  const edited = replay(Buffer.concat([HEADER, create, edit]));
  assert.deepEqual(edited.records.get('rt1'), rec('rt1', { url: 'https://example.com/a', title: 'x', routing: { forwardQuery: true } }), 'whole');
  const cleared = replay(
    Buffer.concat([HEADER, authored, encodeEntry({ op: 'E', code: 'rt2', url: 'https://example.com/b', retentionDays: 0, maxVisits: null })]),
  );
  assert.deepEqual(cleared.records.get('rt2'), rec('rt2', { url: 'https://example.com/b', author: 'k1' }), 'an edit without it clears it, the author stays');
});

test('a routing of another shape is no entry: replay reports it, the link is never taken without it', () => {
  const bad = [
    '{"unknown":1}',
    '{"forwardQuery":false}',
    '{"validSince":-1}',
    '{"validUntil":1.5}',
    '{"rules":[]}',
    '{"rules":[{"url":"https://x.example/","conditions":[]}]}',
    '{"rules":[{"url":"https://x.example/","conditions":[{"type":"device","key":null,"value":1}]}]}',
    '"text"',
    '[1]',
  ];
  for (const routing of bad) {
    const r = replay(Buffer.concat([HEADER, checksummedLine(`C\tbad1\t${T}\t0\t0\t0\thttps://example.com/x\t[null,[],null,${routing}]`)]));
    assert.notEqual(r.damage, undefined, routing);
    assert.equal(r.records.get('bad1'), undefined, routing);
    assert.equal(decodePayload(`E\tbad1\t0\t0\thttps://example.com/x\t[null,[],${routing}]`), undefined, routing);
  }
  assert.equal(decodePayload(`C\tbad1\t${T}\t0\t0\t0\thttps://example.com/x\t[null,[],"",{"forwardQuery":true}]`), undefined, 'an empty author');
  assert.equal(decodePayload(`E\tbad1\t0\t0\thttps://example.com/x\t[null,[],"k1"]`), undefined, 'an edit carries no author');
});

test('routing survives a compaction, and a start from the checkpoint it wrote', async (t) => {
  const dir = tempDir(t);
  const open = (): LogEngine =>
    new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), compactMinBytes: Number.MAX_SAFE_INTEGER, checkpointMinBytes: 0 });
  let store = open();
  t.after(() => store.close());
  await store.create(rec('keep01', { routing: ROUTING }));
  await store.create(rec('keep02', { title: 't' }));
  await store.edit(rec('keep02', { title: 't', routing: { fallbackUrl: 'https://example.com/f' } }));
  await store.create(rec('keep03', { author: 'k1', routing: { validSince: T } }));
  await store.edit(rec('keep03', { author: 'k1' }));
  const expected = [
    rec('keep01', { routing: ROUTING }),
    rec('keep02', { title: 't', routing: { fallbackUrl: 'https://example.com/f' } }),
    rec('keep03', { author: 'k1' }),
  ];
  const read = (s: LogEngine) => ['keep01', 'keep02', 'keep03'].map((code) => s.get(code));
  assert.deepEqual(read(store), expected);
  await store.compact();
  assert.deepEqual(read(store), expected, 'after compaction, in memory');
  assert.deepEqual(replay(readFileSync(join(dir, LOG_FILE))).records.get('keep02'), expected[1], 'in the new log');
  const path = join(dir, LOG_FILE);
  const fd = nodeFs.openRead(path)!;
  try {
    const loaded = loadCheckpoint(nodeFs, path, fd);
    assert.ok(loaded !== undefined && !('reason' in loaded), `a usable checkpoint at ${checkpointPath(path)}`);
    const replayer = new Replayer(loaded);
    replayer.push(readFileSync(path).subarray(loaded.covered.offset));
    const records = replayer.finish().records;
    assert.deepEqual(
      ['keep01', 'keep02', 'keep03'].map((code) => records.get(code)),
      expected,
      'from the checkpoint',
    );
  } finally {
    nodeFs.closeSync(fd);
  }
  await store.close();
  store = open();
  assert.deepEqual(read(store), expected, 'after a restart');
});
