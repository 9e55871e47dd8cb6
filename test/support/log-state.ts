/**
 * What a log store's records are, compared whole (the start-up checkpoint's tests): from memory, from
 * a replay of the whole log, and from the checkpoint beside the log with the log after it.
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCheckpoint } from '../../src/store/log/checkpoint.ts';
import { nodeFs } from '../../src/store/log/fs.ts';
import type { Keydir } from '../../src/store/log/keydir.ts';
import { replay, Replayer } from '../../src/store/log/replay.ts';
import { LOG_FILE } from '../../src/store/log/log-engine.ts';
import { STRIDE } from '../../src/visits/packed.ts';

/**
 * Everything a replay gives, in order: each live link's record, events and next event number, and
 * the referrer hosts. (The next number of a link without events is left out: a compaction does not
 * write it, and it decides nothing then, since no line after the compaction is numbered below it.)
 */
export function state(k: Keydir) {
  const links = [...k.slotsOldestFirst()].map((s) => ({
    record: k.record(s),
    events: Array.from(k.events.data(s)?.subarray(0, k.events.length(s) * STRIDE) ?? []),
    next: k.events.length(s) > 0 ? k.events.nextSeq(s) : undefined,
  }));
  return { links, referrers: [...k.events.referrers.inLog()], total: k.events.total };
}

/** The state a replay of the whole log of `dir` gives (of `bytes`, the log as read once, if given). */
export function fullReplay(dir: string, bytes = readFileSync(join(dir, LOG_FILE))) {
  return state(replay(bytes).records);
}

/**
 * What a start would read now, while the store may still be open: the checkpoint beside the log
 * and the log after the bytes it covers, with the offset covered; undefined when there is no
 * checkpoint. Throws when there is one that start-up would not use. `bytes`: the log as read once
 * (a visit's write may land between two reads of a running store's log).
 */
export function fromCheckpoint(dir: string, bytes?: Buffer): { state: ReturnType<typeof state>; covered: number } | undefined {
  const path = join(dir, LOG_FILE);
  const fd = openSync(path, 'r');
  try {
    const loaded = loadCheckpoint(nodeFs, path, fd);
    if (loaded === undefined) return undefined;
    if ('reason' in loaded) throw new Error(`the checkpoint is not usable: ${loaded.reason}`);
    const replayer = new Replayer(loaded);
    replayer.push((bytes ?? readFileSync(path)).subarray(loaded.covered.offset));
    const result = replayer.finish();
    assert.equal(result.damage, undefined);
    return { state: state(result.records), covered: loaded.covered.offset };
  } finally {
    closeSync(fd);
  }
}
