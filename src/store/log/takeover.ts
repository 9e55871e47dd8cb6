/**
 * Taking a data directory's lock (see `lock.ts`) when any number of processes start at once, with
 * or without a stale lock in the directory: of them, exactly one gets it.
 *
 * Files beside the log:
 *   urls.lock                     the lock; its mtime is the lease, touched every third of a lease
 *   urls.lock.new-<token>         a candidate: our lock, written and fsynced before it gets the name
 *   urls.lock.takeover-<ino>-<n>  the right to replace the stale lock whose inode is <ino>
 *
 * Taking the lock, in rounds:
 *   1. link() the candidate to urls.lock. link fails when the name exists, so of the processes
 *      that find no lock exactly one gets it, and no one ever reads a half-written lock. (Where
 *      there are no hard links, an exclusive create instead.)
 *   2. Else read urls.lock (content and mtime of one open file) and judge it. Held: refuse.
 *   3. Stale: create the takeover marker of that inode (O_EXCL), read urls.lock again, judge it
 *      again, and only if it still is that stale inode, rename() the candidate over it (an atomic
 *      replace); then remove the marker. A fresh marker means another process is taking over:
 *      wait a little and start a new round, which finds its new lock and refuses.
 *
 * Why no process replaces a lock that is not stale, however many start at once:
 *  - Only link or exclusive create (onto a free name) and rename put a file at urls.lock; only its
 *    holder removes it.
 *  - A rename is made only by the maker of marker <ino>-<n>, who found <ino> at urls.lock, stale,
 *    *after* making the marker. O_EXCL gives each marker to one process; marker n+1 is tried only
 *    when marker n is older than a lease (its maker crashed mid-takeover), so a crash cannot wedge
 *    the directory.
 *  - Between that read and the rename, urls.lock changes only by another rename (which needs the
 *    marker we hold) or by a create after the stale lock's holder removed it (a stale holder is
 *    dead or has not run for a lease). So the rename replaces exactly the lock judged stale.
 *  - If X judged lock K stale and Y then took K over, X either cannot make the marker (Y holds it:
 *    X waits, starts again, finds Y's lock held, refuses) or makes it after Y is done and finds
 *    Y's inode, not K, at urls.lock: X starts again and refuses. X never touches Y's lock.
 *  What no lease can exclude is a process stopped for longer than a lease (SIGSTOP, a frozen VM)
 *  between two of its steps or while it holds the lock. A holder finds out at its next refresh or
 *  write (`lost()`), logs an error and refuses writes from then on.
 *
 * The protocol is a generator that yields between its file operations, so that a test can
 * interleave many simulated processes step by step on one real directory; `acquireLock` runs it.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describeHolder, encodeHolder, heldMessage, judge, parseLock, type Holder, type LockContent, type Viewer } from './lease.ts';

export const LOCK_FILE = 'urls.lock';
const CANDIDATE = `${LOCK_FILE}.new-`;
const MARKER = `${LOCK_FILE}.takeover-`;
/** Waits (5–25 ms each) for another process's takeover to finish before giving up. */
const MAX_WAITS = 40;
/** Rounds before giving up: each one means the lock changed under us. */
const MAX_ROUNDS = 100;

export class LockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockError';
  }
}

/** A process trying to take the lock: who it is, how it sees PIDs, its clock. */
export interface Contender {
  dir: string;
  holder: Holder;
  alive(pid: number): boolean;
  leaseMs: number;
  now(): number;
}

/** Where a simulated process can be interrupted; at `wait` a real one sleeps a little. */
export type Step = 'start' | 'judged' | 'marked' | 'confirmed' | 'wait';

export interface Taken {
  /** Our lock file, kept open: its inode tells whether urls.lock still is ours. */
  fd: number;
  /** The stale lock replaced, if any: whose it was and why it was stale. */
  tookOver: { from: string; why: string } | undefined;
}

export function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

export function touch(fd: number, nowMs: number): void {
  fs.futimesSync(fd, nowMs / 1000, nowMs / 1000);
}

export interface Seen {
  ino: bigint;
  ageMs: number;
  content: LockContent;
}

/** The lock at `path`: content and lease age read from one open file; undefined when there is none. */
export function observe(path: string, nowMs: number): Seen | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const buffer = Buffer.alloc(4096);
    const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return { ino: st.ino, ageMs: nowMs - Number(st.mtimeMs), content: parseLock(buffer.toString('utf8', 0, n)) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Errors of link(2) on a file system without hard links (some FUSE and SMB mounts). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Gives our lock the name `path` if it is free: returns the descriptor of the file now there, or
 * undefined when the name is taken.
 */
function create(candidate: string, path: string, fd: number, content: string): number | undefined {
  try {
    fs.linkSync(candidate, path);
    return fd;
  } catch (err) {
    const code = errno(err) ?? '';
    // Over NFS a retried link whose first attempt succeeded fails with EEXIST: then ours has two names.
    if (code === 'EEXIST') return fs.fstatSync(fd).nlink === 2 ? fd : undefined;
    if (!NO_LINKS.has(code)) throw err;
  }
  // No hard links: create the name exclusively and write it. A reader in between finds an
  // unreadable lock with a fresh mtime, which is held: as safe, only less informative.
  let created: number;
  try {
    created = fs.openSync(path, 'wx', 0o600);
  } catch (err) {
    if (errno(err) === 'EEXIST') return undefined;
    throw err;
  }
  try {
    fs.writeSync(created, content);
    fs.fsyncSync(created);
  } catch (err) {
    fs.closeSync(created);
    fs.rmSync(path, { force: true }); // ours: held (fresh) for anyone who looked meanwhile
    throw err;
  }
  return created;
}

/** Makes the first takeover marker of `ino` not taken by a live takeover; undefined if there is one. */
function claimMarker(c: Contender, ino: bigint): string | undefined {
  for (let n = 0; ; n++) {
    const marker = join(c.dir, `${MARKER}${ino}-${n}`);
    try {
      const fd = fs.openSync(marker, 'wx', 0o600);
      try {
        touch(fd, c.now());
      } finally {
        fs.closeSync(fd);
      }
      return marker;
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
    }
    const st = fs.statSync(marker, { throwIfNoEntry: false });
    // Gone meanwhile (its takeover finished) or fresh (one runs): either way, not ours to make.
    if (st === undefined || c.now() - st.mtimeMs < c.leaseMs) return undefined;
  }
}

/** The protocol of the header comment. Throws `LockError` when the lock is held. */
export function* takeLock(c: Contender): Generator<Step, Taken, void> {
  const path = join(c.dir, LOCK_FILE);
  const candidate = join(c.dir, CANDIDATE + c.holder.token);
  const viewer: Viewer = { place: c.holder, pid: c.holder.pid, alive: c.alive, leaseMs: c.leaseMs };
  const content = encodeHolder(c.holder);
  const fd = fs.openSync(candidate, 'wx', 0o600);
  let taken = false;
  try {
    fs.writeSync(fd, content);
    // On a network file system others read what the server has: the lock must be whole there.
    fs.fsyncSync(fd);
    for (let round = 0, waits = 0; round < MAX_ROUNDS; round++) {
      yield 'start';
      // The lease begins when the lock appears (and a fresh candidate is never swept as a leftover).
      touch(fd, c.now());
      const created = create(candidate, path, fd, content);
      if (created !== undefined) {
        fs.unlinkSync(candidate);
        if (created !== fd) fs.closeSync(fd);
        taken = true;
        return { fd: created, tookOver: undefined };
      }
      const seen = observe(path, c.now());
      if (seen === undefined) continue; // released meanwhile: link again
      const verdict = judge(seen.content, seen.ageMs, viewer);
      if (!verdict.stale) throw new LockError(heldMessage(c.dir, path, seen.content, verdict, c.holder, c.leaseMs));
      yield 'judged';
      const marker = claimMarker(c, seen.ino);
      if (marker === undefined) {
        if (++waits > MAX_WAITS) {
          throw new LockError(`${c.dir}: another process is taking over its stale lock and has not finished; try again in ${Math.ceil(c.leaseMs / 1000)} s`);
        }
        yield 'wait';
        continue;
      }
      try {
        yield 'marked';
        const again = observe(path, c.now());
        if (again === undefined || again.ino !== seen.ino) continue; // taken over meanwhile: a new round
        const still = judge(again.content, again.ageMs, viewer);
        if (!still.stale) throw new LockError(heldMessage(c.dir, path, again.content, still, c.holder, c.leaseMs));
        yield 'confirmed';
        touch(fd, c.now());
        fs.renameSync(candidate, path);
        taken = true;
        return { fd, tookOver: { from: describeHolder(again.content, c.holder), why: still.why } };
      } finally {
        fs.rmSync(marker, { force: true });
      }
    }
    throw new LockError(`${c.dir}: its lock changed hands ${MAX_ROUNDS} times while this process tried to take it; try again`);
  } finally {
    if (!taken) {
      fs.closeSync(fd);
      fs.rmSync(candidate, { force: true });
    }
  }
}

/** Removes candidates and markers older than a lease: left by processes that died taking the lock. */
export function sweep(dir: string, nowMs: number, leaseMs: number): void {
  try {
    for (const name of fs.readdirSync(dir)) {
      if (!name.startsWith(CANDIDATE) && !name.startsWith(MARKER)) continue;
      const st = fs.statSync(join(dir, name), { throwIfNoEntry: false });
      if (st !== undefined && nowMs - st.mtimeMs >= leaseMs) fs.rmSync(join(dir, name), { force: true });
    }
  } catch {
    // Leftovers are harmless; the next start tries again.
  }
}
