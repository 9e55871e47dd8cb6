/**
 * A lock holder for lock-lease.test.ts, as its own process so that the test can stop it: takes the
 * lock of argv[2] with a lease of argv[3] ms, logs `locked`, and exits 3 once it finds the lock lost.
 */
import { createLogger } from '../../src/log.ts';
import { acquireLock } from '../../src/store/log/lock.ts';

const [dir, leaseMs] = process.argv.slice(2);
const log = createLogger('info');
const lock = acquireLock(dir!, { leaseMs: Number(leaseMs), log });
log.info('locked');
// What a store does before each write.
setInterval(() => {
  if (lock.lost()) process.exit(3);
}, 10);
