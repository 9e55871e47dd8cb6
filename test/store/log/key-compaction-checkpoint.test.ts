/**
 * Stored API keys and links' authors through a long compaction that writes the start-up checkpoint
 * (docs/storage.md): keys added, used and revoked and links created and edited by authors while it
 * runs, slice after slice. Memory, a replay of the whole new log, and its checkpoint with the log
 * after the bytes it covers all give the same keys and authors, and so do the starts after it.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { checkpointPath, loadCheckpoint } from '../../../src/store/log/checkpoint.ts';
import { encodeEntry, HEADER } from '../../../src/store/log/format.ts';
import { nodeFs } from '../../../src/store/log/fs.ts';
import type { Keydir } from '../../../src/store/log/keydir.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { replay, Replayer } from '../../../src/store/log/replay.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';

const T = 1_790_000_000;
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
/** More links than a compaction writes in one turn, so that writes land between its slices. */
const LINKS = 25_000;

const key = (id: string, extra: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  name: `key ${id}`,
  role: 'editor',
  domain: null,
  digest: 'd'.repeat(64),
  createdAt: T,
  expiresAt: null,
  lastUsedAt: null,
  ...extra,
});

/** A log of `LINKS` links, every fifth by an author, with deletes that make it worth compacting, and two keys. */
function writeLog(dir: string): void {
  const lines = [HEADER, encodeEntry({ op: 'A', key: key('k0') }), encodeEntry({ op: 'A', key: key('k1') })];
  for (let i = 0; i < LINKS; i++) {
    lines.push(
      encodeEntry({
        op: 'C',
        code: `c${i}`,
        url: `https://example.com/${i}`,
        createdAt: T + i,
        retentionDays: 0,
        visits: 0,
        ...(i % 5 === 0 && { author: `k${i % 2}` }),
        ...(i % 10 === 0 && { title: `Link ${i}` }),
      }),
    );
  }
  for (let i = 1; i < LINKS; i += 2) lines.push(encodeEntry({ op: 'D', code: `c${i}` }));
  writeFileSync(join(dir, LOG_FILE), Buffer.concat(lines));
}

/** What is compared: the keys, and each live link's code with its author and title. */
function state(k: Keydir) {
  const links = [...k.slotsOldestFirst()].map((s) => {
    const r = k.record(s);
    return [r.code, r.author, r.title];
  });
  return { keys: k.accessKeys.list(), links };
}

function fromCheckpoint(dir: string) {
  const path = join(dir, LOG_FILE);
  const fd = nodeFs.openRead(path)!;
  try {
    const loaded = loadCheckpoint(nodeFs, path, fd);
    assert.ok(loaded !== undefined && !('reason' in loaded), 'a usable checkpoint');
    const replayer = new Replayer(loaded);
    replayer.push(readFileSync(path).subarray(loaded.covered.offset));
    const result = replayer.finish();
    assert.equal(result.damage, undefined);
    return state(result.records);
  } finally {
    nodeFs.closeSync(fd);
  }
}

test('keys and authors written while a compaction runs: memory, the new log, and its checkpoint with the log after it agree', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  writeLog(dir);
  const logs = new LogCapture();
  let engine = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: 0, ...MANUAL });
  t.after(() => engine.close());
  const store = new LogLinkStore(engine);
  const compaction = engine.compact();
  let done = false;
  void compaction.finally(() => (done = true));
  let turns = 0;
  while (!done) {
    const n = turns++;
    const keys = store.accessKeys;
    const writes: Promise<unknown>[] = [
      keys.addKey(key(`during${n}`, { role: n % 2 ? 'creator' : 'admin' })),
      keys.touchKey(`k${n % 2}`, T + 100 + n),
      Promise.resolve(
        store.insert(
          { code: `new${n}`, url: `https://example.net/${n}`, createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null, author: `during${n}` },
          T,
        ),
      ),
      store.update(`c${(n * 10) % LINKS}`, { title: `edited ${n}` }, T),
    ];
    if (n > 0 && n % 3 === 0) writes.push(keys.revokeKey(`during${n - 3}`));
    await Promise.all(writes);
    await turn();
  }
  await compaction;
  t.diagnostic(`${turns} turns of writes during the compaction`);
  assert.ok(turns >= 3, 'writes landed between the compaction slices');
  assert.ok(logs.lines.some((l) => l['msg'] === 'start-up checkpoint written' && l['by'] === 'compaction'));

  const memory = state(engine.keydir);
  assert.equal(memory.keys.length, 2 + turns - Math.floor((turns - 1) / 3));
  assert.deepEqual(state(replay(readFileSync(join(dir, LOG_FILE))).records), memory, 'a replay of the whole new log');
  assert.deepEqual(fromCheckpoint(dir), memory, 'the checkpoint and the log after it');
  // Every link by an author kept it through the edits made meanwhile.
  assert.equal(memory.links.find(([code]) => code === 'c0')?.[1], 'k0');
  assert.equal(memory.links.find(([code]) => code === 'c10')?.[1], 'k0');
  assert.equal(memory.links.find(([code]) => code === 'c10')?.[2], 'edited 1');

  await engine.close();
  engine = new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), ...MANUAL });
  assert.deepEqual(state(engine.keydir), memory, 'a start');
  await engine.close();
  rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
  engine = new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), ...MANUAL });
  assert.deepEqual(state(engine.keydir), memory, 'a start without the checkpoint');
});
