/**
 * What a data-directory lock file says and whether it still holds: pure functions (no file, no
 * clock, no process table), so the rules are tested as a table. The protocol that takes, refreshes
 * and releases the file is `lock.ts` (the taking itself, `takeover.ts`).
 *
 * A lock is a lease. Its holder names itself — host, PID, where that PID means something, and a
 * random token — and touches the file's mtime every few seconds; the mtime is the lease. A PID
 * alone cannot tell holders apart on a volume shared by containers or hosts: two containers are
 * both PID 1, and a PID that runs in one PID namespace may not exist in another. So a live PID is
 * looked up only where it means the same process (same host, same boot, same PID namespace), and
 * everywhere else only the lease's age can say the holder is gone.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** How long a lease lasts without a refresh. The holder refreshes every third of it. */
export const LEASE_MS = 10_000;

/** Where a PID means one process: on this host, since its last boot, in this PID namespace. */
export interface Place {
  host: string;
  /** The kernel's boot id ('' where unknown): same host name on two machines, or a reboot. */
  boot: string;
  /** The PID namespace ('' where unknown): another container, or `unshare --pid`. */
  pidns: string;
}

export interface Holder extends Place {
  pid: number;
  /** Random per process: tells our own lock from another with the same PID. */
  token: string;
  /** When it took the lock (ISO time), for the operator reading the file. */
  since: string;
}

export type LockContent =
  | { kind: 'lease'; holder: Holder }
  /** A bare PID: the lock of a version before leases. It is never refreshed. */
  | { kind: 'legacy'; pid: number }
  /** Anything else: only its age can make it stale. */
  | { kind: 'unreadable' };

export interface Verdict {
  stale: boolean;
  /** For the log line of a takeover, or the refusal. */
  why: string;
}

function readOr(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return '';
  }
}

/** This process's place. Linux exposes the boot id and the PID namespace; elsewhere they are ''. */
export function currentPlace(): Place {
  return {
    host: hostname(),
    boot: readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')),
    pidns: readOr(() => readlinkSync('/proc/self/ns/pid')),
  };
}

function samePlace(a: Place, b: Place): boolean {
  return a.host === b.host && a.boot === b.boot && a.pidns === b.pidns;
}

/** One JSON line, written once: the refreshes touch only the mtime. */
export function encodeHolder(h: Holder): string {
  return `${JSON.stringify({ host: h.host, pid: h.pid, since: h.since, token: h.token, boot: h.boot, pidns: h.pidns })}\n`;
}

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

export function parseLock(text: string): LockContent {
  const trimmed = text.trim();
  if (/^[1-9][0-9]{0,9}$/.test(trimmed)) return { kind: 'legacy', pid: Number(trimmed) };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { kind: 'unreadable' };
  }
  if (typeof value !== 'object' || value === null) return { kind: 'unreadable' };
  const v = value as Record<string, unknown>;
  const { host, pid, since, token, boot, pidns } = v;
  if (
    typeof host !== 'string' ||
    typeof pid !== 'number' ||
    !Number.isInteger(pid) ||
    pid <= 0 ||
    typeof token !== 'string' ||
    !TOKEN.test(token) ||
    typeof boot !== 'string' ||
    typeof pidns !== 'string'
  ) {
    return { kind: 'unreadable' };
  }
  return { kind: 'lease', holder: { host, pid, token, boot, pidns, since: typeof since === 'string' ? since : '' } };
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.round(ms / 1000))} s`;
}

/** The process judging a lock: where it is, its PID, how it sees PIDs, the lease time. */
export interface Viewer {
  place: Place;
  pid: number;
  /** For a PID of this process's PID namespace. */
  alive(pid: number): boolean;
  leaseMs: number;
}

/** Whether a lock whose lease was last refreshed `ageMs` ago is stale for `viewer`. */
export function judge(content: LockContent, ageMs: number, viewer: Viewer): Verdict {
  const { place, alive, leaseMs } = viewer;
  if (content.kind === 'legacy') {
    // Never refreshed, so its age means nothing: judged as the versions that write it judge it
    // (a PID equal to ours was a previous life of a container).
    if (content.pid === viewer.pid || !alive(content.pid)) return { stale: true, why: `PID ${content.pid} (a lock of an older version) no longer runs` };
    return { stale: false, why: `PID ${content.pid} still runs` };
  }
  if (ageMs >= leaseMs) return { stale: true, why: `its lease was not refreshed for ${seconds(ageMs)}` };
  if (content.kind === 'unreadable') return { stale: false, why: `the lock file is unreadable and was written ${seconds(ageMs)} ago` };
  const { holder } = content;
  // Elsewhere (another container: both are PID 1) a PID says nothing here; only the lease does.
  // Our own PID with another token, here, is alive too: most likely our previous life, but it may
  // be a second copy of this module in this process, so the lease decides rather than a guess.
  if (samePlace(holder, place) && !alive(holder.pid)) return { stale: true, why: `PID ${holder.pid} no longer runs on this host` };
  return { stale: false, why: `its lease was refreshed ${seconds(ageMs)} ago` };
}

/** "PID 12 on host a", and where that PID lives when it is not our PID namespace. */
export function describeHolder(content: LockContent, here: Place): string {
  if (content.kind === 'legacy') return `PID ${content.pid}, a lock of an older version`;
  if (content.kind === 'unreadable') return 'an unreadable lock file';
  const { holder } = content;
  const where = holder.host !== here.host || holder.boot !== here.boot ? '' : holder.pidns !== here.pidns ? ' (another container or PID namespace)' : '';
  return `PID ${holder.pid} on host ${holder.host}${where}`;
}

/** The refusal: who holds `dir`, and what to do. */
export function heldMessage(dir: string, path: string, content: LockContent, verdict: Verdict, here: Place, leaseMs: number): string {
  const head = `${dir} is in use by another server (${describeHolder(content, here)}; ${verdict.why}): only one server may write a data directory.`;
  if (content.kind === 'legacy') return `${head} Stop that process first; if no server uses ${dir}, remove ${path}.`;
  return `${head} Stop that server first. If it is gone, its lock is stale ${seconds(leaseMs)} after its last refresh and the next start takes it over.`;
}
