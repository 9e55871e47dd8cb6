/**
 * The tests' bundles (`test/support/server-entry.ts`): building one removes the older bundles of
 * its entry, and no other entry's, even one whose name starts with its own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { olderBundle } from '../support/server-entry.ts';

test('an entry removes its own older bundles, maps and locks, not the current one nor another entry whose name starts with its own', () => {
  const current = 'server-0123456789abcdef.cjs';
  const folder = [
    current,
    `${current}.map`,
    'server-fedcba9876543210.cjs',
    'server-fedcba9876543210.cjs.map',
    'server-fedcba9876543210.cjs.lock',
    'server-fast-clocks-0123456789abcdef.cjs',
    'server-fast-clocks-fedcba9876543210.cjs.map',
    'server-entry-notes.txt',
    'cluster-instance-fedcba9876543210.cjs',
    'file-times.json',
  ];
  assert.deepEqual(
    folder.filter((file) => olderBundle('server', current, file)),
    ['server-fedcba9876543210.cjs', 'server-fedcba9876543210.cjs.map', 'server-fedcba9876543210.cjs.lock'],
  );
  assert.deepEqual(
    folder.filter((file) => olderBundle('server-fast-clocks', 'server-fast-clocks-0123456789abcdef.cjs', file)),
    ['server-fast-clocks-fedcba9876543210.cjs.map'],
  );
});
