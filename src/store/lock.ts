/**
 * One writer per data directory (Bitcask's rule): a lock file holding the owner's PID.
 *
 * Taken with O_EXCL, so two processes starting together cannot both win. A lock left by a process
 * that no longer runs (kill -9, power loss) is stale and taken over. A lock naming our own PID but
 * not held by us is stale too: in a container the server is often PID 1 in every life.
 */
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';

export const LOCK_FILE = 'urls.lock';

/** Locks held by this process, so a second store in the same process is refused too. */
const held = new Set<string>();

export class LockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else. ESRCH: no such process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function create(path: string): boolean {
  try {
    const fd = fs.openSync(path, 'wx', 0o600);
    try {
      fs.writeSync(fd, `${process.pid}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Takes the lock of `dir` or throws `LockError`; returns the function that releases it. */
export function acquireLock(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const key = resolve(path);
  if (held.has(key)) throw new LockError(`${dir} is already open in this process`);
  if (!create(path)) {
    const pid = readPid(path);
    if (pid !== undefined && pid !== process.pid && alive(pid)) {
      throw new LockError(
        `${dir} is in use by another process (PID ${pid}): only one server may write a data directory. ` +
          `Stop that process, or if no server runs there, remove ${path}.`,
      );
    }
    // Stale: its owner is gone. Replace it; if another process replaced it first, it won.
    fs.rmSync(path, { force: true });
    if (!create(path)) throw new LockError(`${dir} was just locked by another starting process; only one may write it`);
  }
  held.add(key);
  return function release(): void {
    held.delete(key);
    if (readPid(path) === process.pid) fs.rmSync(path, { force: true });
  };
}
