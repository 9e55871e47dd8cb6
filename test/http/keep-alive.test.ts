/**
 * The keep-alive timeout as the connection table keeps it (keep-alive.ts), without a socket: when a
 * look finds a connection idle for long enough. The real-socket side is in hardening.test.ts and
 * connections.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookEvery, overdue, unseen, type Seen } from '../../src/http/keep-alive.ts';

const LIMIT = 2000;
const idle = (latest: number, bytesRead: number): Seen => ({ served: true, busy: false, latest, bytesRead });

test('lookEvery: a tenth of the timeout, between 25 ms and half a second', () => {
  assert.deepEqual([100, 250, 1000, 5000, 600_000].map(lookEvery), [25, 25, 100, 500, 500]);
});

test('an idle served connection is overdue once seen unchanged for the limit, counted from the first look that saw it so', () => {
  const quiet = unseen();
  const looks: [number, Seen, boolean][] = [
    [0, idle(7, 100), false], // first look: the wait starts
    [500, idle(7, 100), false],
    [1999, idle(7, 100), false],
    [2000, idle(7, 100), true],
  ];
  for (const [now, seen, expected] of looks) assert.equal(overdue(seen, quiet, now, LIMIT), expected, `at ${now}`);
});

test('the wait starts again at every look that sees a request, a byte, or a request in flight', () => {
  const cases: [string, Seen][] = [
    ['a new request', idle(8, 100)],
    ['a byte of a next request', idle(7, 101)],
    ['a request in flight', { ...idle(7, 100), busy: true }],
  ];
  for (const [what, seen] of cases) {
    const quiet = unseen();
    assert.equal(overdue(idle(7, 100), quiet, 0, LIMIT), false);
    assert.equal(overdue(seen, quiet, 1500, LIMIT), false, what);
    assert.equal(overdue(seen.busy ? idle(7, 100) : seen, quiet, 3000, LIMIT), false, `${what}: 1,500 ms since, not 3,000`);
    assert.equal(overdue(seen.busy ? idle(7, 100) : seen, quiet, 3500, LIMIT), true, `${what}: then the limit from there`);
  }
});

test('a connection that never completed a request is never overdue here (node:http cuts it at headers_timeout_ms)', () => {
  const quiet = unseen();
  const silent: Seen = { served: false, busy: false, latest: 1, bytesRead: 0 };
  for (const now of [0, 10_000, 1e9]) assert.equal(overdue(silent, quiet, now, LIMIT), false);
});
