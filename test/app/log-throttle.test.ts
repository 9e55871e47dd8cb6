/**
 * A repeated error is logged once, then as one summary line with a count at most every 10 s
 * (docs/operations.md, logs): the throttle as a pure function on a fake clock, its logger front,
 * and end to end with a disk that stays full.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger } from '../../src/log.ts';
import { REPEAT_WINDOW_MS, RepeatThrottle, repeatLog } from '../../src/log-throttle.ts';
import { nodeFs, type StoreFs } from '../../src/store/log/fs.ts';
import { LogCapture, start } from '../support/helpers.ts';
import { onOneProcess } from '../support/cluster.ts';

const T0 = 1_800_000_000_000;

test('RepeatThrottle: the first occurrence is written, the rest of the window only counted, then one summary', () => {
  const t = new RepeatThrottle(10_000);
  assert.deepEqual(t.hit('storage:ENOSPC', T0), { write: 'first' });
  for (let i = 1; i <= 998; i++) assert.deepEqual(t.hit('storage:ENOSPC', T0 + i), { write: 'none' });
  assert.deepEqual(t.due(T0 + 9_999), [], 'nothing is due within the window');
  assert.deepEqual(t.due(T0 + 10_000), [{ kind: 'storage:ENOSPC', count: 998, total: 999 }]);
  assert.deepEqual(t.due(T0 + 15_000), [], 'a summary only when something was counted since the last line');
  // The next window: counted again, and an occurrence after its end brings the summary itself.
  assert.deepEqual(t.hit('storage:ENOSPC', T0 + 15_001), { write: 'none' });
  assert.deepEqual(t.hit('storage:ENOSPC', T0 + 20_000, 5), { write: 'summary', count: 6, total: 1_005 });
  assert.deepEqual(t.hit('storage:ENOSPC', T0 + 20_001), { write: 'none' });
});

test('RepeatThrottle: kinds are counted apart; clear forgets a prefix and returns its total', () => {
  const t = new RepeatThrottle(10_000);
  assert.equal(t.hit('storage:ENOSPC', T0, 3).write, 'first');
  assert.equal(t.hit('storage:EIO', T0 + 1).write, 'first', 'another kind has a first line of its own');
  assert.equal(t.hit('visits:ENOSPC', T0 + 2).write, 'first');
  assert.equal(t.hit('storage:ENOSPC', T0 + 3, 2).write, 'none');
  assert.equal(t.clear('storage:'), 6);
  assert.equal(t.clear('storage:'), 0, 'cleared once');
  assert.equal(t.hit('storage:ENOSPC', T0 + 4).write, 'first', 'after a recovery a failure is news again');
  assert.deepEqual(t.due(T0 + 60_000), [], 'the visits kind had nothing counted');
  assert.equal(t.hit('visits:ENOSPC', T0 + 5).write, 'none', 'the visits kind was not cleared');
});

test('RepeatThrottle: a failure that comes back after a quiet window gets its full line again', () => {
  const t = new RepeatThrottle(10_000);
  t.hit('k', T0);
  assert.equal(t.hit('k', T0 + 10_000).write, 'first');
  assert.equal(t.hit('k', T0 + 10_001).write, 'none');
  assert.deepEqual(t.due(T0 + 5_000, true), [{ kind: 'k', count: 1, total: 3 }], '`all` writes what is counted, due or not');
});

test('repeatLog: 1,000 failures are one line, then one summary with the count; the recovery is one info line', () => {
  let now = T0;
  const logs = new LogCapture();
  const r = repeatLog(createLogger('debug', logs), () => now);
  for (let i = 0; i < 1_000; i++) r.report('error', 'storage:ENOSPC', 'storage write failed', { error: 'ENOSPC' });
  r.flush();
  assert.deepEqual(
    logs.lines.map((l) => [l['level'], l['msg'], l['kind'], l['error']]),
    [['error', 'storage write failed', 'storage:ENOSPC', 'ENOSPC']],
  );
  now += REPEAT_WINDOW_MS;
  r.flush();
  r.flush();
  assert.equal(logs.lines.length, 2);
  assert.deepEqual(
    {
      level: logs.lines[1]!['level'],
      msg: logs.lines[1]!['msg'],
      kind: logs.lines[1]!['kind'],
      count: logs.lines[1]!['count'],
      total: logs.lines[1]!['total'],
    },
    { level: 'error', msg: 'storage write failed (repeated)', kind: 'storage:ENOSPC', count: 999, total: 1_000 },
  );
  r.resolved('storage:', 'storage writable again');
  r.resolved('storage:', 'storage writable again');
  assert.equal(logs.lines.length, 3);
  assert.deepEqual([logs.lines[2]!['level'], logs.lines[2]!['msg'], logs.lines[2]!['failures']], ['info', 'storage writable again', 1_000]);
});

test('regression: 1,000 creates on a full disk log one error line, then one summary with the count after 10 s', {
  ...onOneProcess('it fills its disk'),
  timeout: 60_000,
}, async (t) => {
  let now = T0;
  let full = true;
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
      return nodeFs.write(fd, data, position);
    },
  };
  // Registered before the harness, so it runs before the harness closes (after-hooks run in order).
  t.after(() => (full = false));
  const h = await start(t, { fsync: 'always', fs, now: () => now, visitFlushMs: 20 });
  const body = JSON.stringify({ url: 'https://example.com/full-disk' });
  const statuses: number[] = [];
  for (let i = 0; i < 1_000; i += 100) {
    const replies = await Promise.all(
      Array.from({ length: 100 }, () => h.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
    );
    statuses.push(...replies.map((r) => r.status));
  }
  assert.deepEqual([...new Set(statuses)], [503]);
  assert.equal(statuses.length, 1_000);
  const errors = () => h.logs.lines.filter((l) => l['level'] === 'error');
  await delay(100);
  assert.equal(errors().length, 1, JSON.stringify(errors()));
  const first = errors()[0]!;
  assert.equal(first['msg'], 'storage write failed; change not made');
  assert.equal(first['kind'], 'storage:ENOSPC');

  now += REPEAT_WINDOW_MS;
  for (let i = 0; i < 100 && errors().length < 2; i++) await delay(20);
  assert.equal(errors().length, 2);
  const summary = errors()[1]!;
  assert.equal(summary['msg'], 'storage write failed; change not made (repeated)');
  assert.equal(summary['total'], 1_000);
  assert.equal(Number(first['refused']) + Number(summary['count']), 1_000, 'every refused create is counted once');

  full = false;
  await h.shorten('https://example.com/disk-is-back');
  const back = h.logs.lines.filter((l) => l['msg'] === 'storage writable again');
  assert.equal(back.length, 1);
  assert.equal(back[0]!['level'], 'info');
  assert.equal(back[0]!['failures'], 1_000);
  assert.equal(errors().length, 2);
});
