/**
 * One writer per data directory (Bitcask's rule): a lock file that is a lease. `lease.ts` says what
 * the file holds and when it is stale; `takeover.ts` how it is taken when many start at once; this
 * file takes it, keeps it and gives it back.
 *
 * Keeping it is refreshing the lease every third of a lease and noticing, at a refresh or before a
 * write, when the file at its name is no longer ours: then `lost()` says so and every write is
 * refused.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from '../../log.ts';
import { currentPlace, describeHolder, LEASE_MS, type Holder } from './lease.ts';
import { errno, LOCK_FILE, LockError, observe, sweep, takeLock, touch } from './takeover.ts';

export { LOCK_FILE, LockError, takeLock, type Contender, type Step, type Taken } from './takeover.ts';

/** A write refused because the lock is no longer ours; the code makes it a 503, like a disk error. */
export class LockLostError extends LockError {
  readonly code = 'ELOCKLOST';
}

/** A lock held by this process. */
export interface DirLock {
  /** Renews the lease now. A timer does it every third of a lease; long synchronous work calls it too. */
  refresh(): void;
  /** Undefined while the lock is ours; once it is not, the error to refuse every write with. */
  lost(): LockLostError | undefined;
  /** Removes the lock file if it still is ours. Idempotent. */
  release(): void;
}

interface LockOptions {
  /** Where a takeover and a lost lock are reported. */
  log?: Logger;
  /** How long a lease lasts without a refresh (default `LEASE_MS`); tests shorten it. */
  leaseMs?: number;
}

/** Locks held by this process, so a second store in the same process is refused too. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else. ESRCH: no such process.
    return errno(err) === 'EPERM';
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** True while the file at `path` is the one open as `fd`. */
function isOurs(path: string, fd: number): boolean {
  const at = fs.statSync(path, { bigint: true, throwIfNoEntry: false });
  if (at === undefined) return false;
  const mine = fs.fstatSync(fd, { bigint: true });
  return at.ino === mine.ino && at.dev === mine.dev;
}

/** Takes the lock of `dir` or throws `LockError` naming its holder; keeps the lease until released. */
export function acquireLock(dir: string, options: LockOptions = {}): DirLock {
  const path = join(dir, LOCK_FILE);
  const key = resolve(path);
  if (held.has(key)) throw new LockError(`${dir} is already open in this process`);
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const log = options.log;
  const holder: Holder = { ...currentPlace(), pid: process.pid, token: randomBytes(12).toString('hex'), since: new Date().toISOString() };
  const steps = takeLock({ dir, holder, alive, leaseMs, now: Date.now });
  let step = steps.next();
  for (; !step.done; step = steps.next()) if (step.value === 'wait') sleep(5 + Math.random() * 20);
  const { fd, tookOver } = step.value;
  held.add(key);
  if (tookOver) log?.info('took over a stale lock', { lock: path, holder: tookOver.from, why: tookOver.why });
  sweep(dir, Date.now(), leaseMs);

  let refreshed = Date.now();
  let lostError: LockLostError | undefined;
  let released = false;
  const lock: DirLock = {
    refresh() {
      if (released || lostError) return;
      const now = Date.now();
      let why: string;
      try {
        if (isOurs(path, fd)) {
          touch(fd, now);
          refreshed = now;
          return;
        }
        const other = observe(path, now);
        why = other ? `replaced by ${describeHolder(other.content, holder)}` : 'removed';
      } catch (err) {
        why = `cannot be refreshed: ${(err as Error).message}`;
      }
      clearInterval(timer);
      lostError = new LockLostError(
        `the lock of ${dir} is no longer this process's (${why}): another process may be writing there, so this one ` +
          'refuses every write. Stop this server, make sure one server owns the directory, and start it again.',
      );
      log?.error('lost the lock of the data directory; refusing writes', { lock: path, why });
    },
    lost() {
      // A refresh that is late (a blocked event loop, a stopped process) may have let another take over.
      if (!released && !lostError && Date.now() - refreshed > leaseMs / 2) lock.refresh();
      return lostError;
    },
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      held.delete(key);
      try {
        if (!lostError && isOurs(path, fd)) fs.unlinkSync(path);
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err;
      } finally {
        fs.closeSync(fd);
      }
    },
  };
  const timer = setInterval(() => lock.refresh(), leaseMs / 3);
  timer.unref();
  return lock;
}
