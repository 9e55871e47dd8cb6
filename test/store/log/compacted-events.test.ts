/**
 * A link whose events a compaction writes over several lines (a `K` line and `J` lines, 4,096 events
 * a line): the visits counted after the compaction are still counted by every reader of the log
 * that does not start from a checkpoint — a start-up replay, `--compact`, the offline export — and
 * its visit limit holds across the restart.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { checkpointPath } from '../../../src/store/log/checkpoint.ts';
import { EVENTS_PER_LINE } from '../../../src/store/log/log-rewrite.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { readLogSnapshot } from '../../../src/transfer/log-snapshot.ts';
import type { VisitEvent } from '../../../src/visits/event.ts';
import { runCli, tempDir } from '../../support/helpers.ts';
import { fullReplay, state } from '../../support/log-state.ts';

const T = 1_790_000_000;
const LIMIT = 5_000;
/** More than one line of a compacted log holds. */
const BEFORE = 4_500;
assert.ok(BEFORE > EVENTS_PER_LINE, 'the link takes more than one line of a compacted log');
const AFTER = 400;

/** A store that writes no checkpoint of its own and compacts only when told. */
function open(dir: string): LogEngine {
  return new LogEngine({
    dir,
    fsync: 'off',
    log: createLogger('silent'),
    checkpointMinBytes: Number.MAX_SAFE_INTEGER,
    compactMinBytes: Number.MAX_SAFE_INTEGER,
    visitFlushMs: 60_000,
  });
}

const event = (time: number): VisitEvent => ({
  time,
  referrer: null,
  country: 'FR',
  browser: 'Chrome',
  os: 'Android',
  device: 'mobile',
  bot: false,
  visitor: time % 11,
});

/** `n` counted visits of `code` at once (as concurrent redirects); how many were let through. */
async function visit(store: LogEngine, code: string, n: number, from: number): Promise<number> {
  const answers = [];
  for (let i = 0; i < n; i++) {
    const at = from + i;
    answers.push(
      store.resolve(
        code,
        () => at * 1000,
        true,
        undefined,
        undefined,
        () => event(at),
      ),
    );
  }
  return (await Promise.all(answers)).filter((a) => typeof a === 'string').length;
}

/** A data dir holding a limited link with BEFORE visits, compacted, then AFTER more visits, closed; no checkpoint. */
async function history(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const dir = tempDir(t);
  const store = open(dir);
  try {
    await store.create({ code: 'onetime1', url: 'https://example.com/', createdAt: T, retentionDays: 0, visits: 0, untracked: 0, maxVisits: LIMIT });
    assert.equal(await visit(store, 'onetime1', BEFORE, T), BEFORE);
    await store.compact();
    assert.equal(await visit(store, 'onetime1', AFTER, T + BEFORE), AFTER);
    await store.flushVisits();
    assert.deepEqual(fullReplay(dir), state(store.keydir), 'a replay of the whole log is what memory holds');
  } finally {
    await store.close();
  }
  rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
  return dir;
}

test('visits counted after a compaction of a link with more events than a line survive a start without a checkpoint, and its limit holds', async (t) => {
  const dir = await history(t);
  const store = open(dir);
  try {
    assert.equal(existsSync(checkpointPath(join(dir, LOG_FILE))), false);
    const rec = store.get('onetime1')!;
    assert.equal(rec.visits, BEFORE + AFTER);
    assert.equal(store.keydir.events.length(store.slot('onetime1')), BEFORE + AFTER);
    // Exactly the rest of the limit is let through, not the visits the replay dropped as well.
    assert.equal(await visit(store, 'onetime1', LIMIT, T + BEFORE + AFTER), LIMIT - BEFORE - AFTER);
    assert.equal(store.get('onetime1')!.visits, LIMIT);
  } finally {
    await store.close();
  }
});

test('the offline export and --compact read every visit counted after a compaction of a link with more events than a line', async (t) => {
  const dir = await history(t);
  const exported = [];
  for await (const rec of readLogSnapshot(dir, T)) exported.push(rec);
  assert.deepEqual(
    exported.map((r) => [r.code, r.visits]),
    [['onetime1', BEFORE + AFTER]],
  );
  const compacted = await runCli(['--compact', `--data-dir=${dir}`]);
  assert.equal(compacted.code, 0, compacted.err);
  rmSync(checkpointPath(join(dir, LOG_FILE)), { force: true });
  const store = open(dir);
  try {
    assert.equal(store.get('onetime1')!.visits, BEFORE + AFTER, '--compact kept every visit');
  } finally {
    await store.close();
  }
});
