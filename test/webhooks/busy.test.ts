/**
 * `busy.ts`: busy from the first window over 0.9, and not busy again only after the windows stayed
 * under 0.5 for 60 ms; read at most once a window. A fake clock and utilization.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventLoopBusy } from '../../src/webhooks/busy.ts';

function fake() {
  let clock = 0;
  let load = 0;
  let reads = 0;
  const busy = eventLoopBusy({
    now: () => clock,
    utilization: () => {
      reads++;
      return load;
    },
  });
  return {
    busy,
    at: (ms: number, utilization: number) => {
      clock = ms;
      load = utilization;
      return busy();
    },
    reads: () => reads,
  };
}

test('busy from the first window over 0.9; full pace again only after 60 ms of windows under 0.5', () => {
  const f = fake();
  assert.equal(f.at(20, 0.3), false, 'idle');
  assert.equal(f.at(40, 0.8), false, 'under 0.9 is not busy');
  assert.equal(f.at(60, 0.95), true, 'one window over 0.9 is enough');
  assert.equal(f.at(80, 0.7), true, 'under 0.9 but over 0.5: not calm');
  assert.equal(f.at(100, 0.2), true, 'one calm window is not enough');
  assert.equal(f.at(120, 0.2), true, '40 ms of calm');
  assert.equal(f.at(140, 0.6), true, 'a window over 0.5: the calm starts over');
  assert.equal(f.at(160, 0.1), true);
  assert.equal(f.at(180, 0.1), true);
  assert.equal(f.at(200, 0.1), false, '60 ms of calm');
  assert.equal(f.at(220, 0.9), false, 'at 0.9 is not over it');
  assert.equal(f.at(240, 0.91), true);
  assert.equal(f.at(500, 0.05), false, 'one calm window of 260 ms (a trickle waits that long between asks) is calm enough');
});

test('read at most once a window: a call within 20 ms of the last read answers as it did', () => {
  const f = fake();
  const before = f.reads();
  assert.equal(f.at(20, 1), true);
  assert.equal(f.at(30, 0), true, 'within the window: not read');
  assert.equal(f.reads(), before + 1);
  f.at(40, 0);
  assert.equal(f.reads(), before + 2);
});
