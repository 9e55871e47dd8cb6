/**
 * A repeated error is logged once (docs/operations.md). A disk that stays full fails every write, and a line
 * per failure turned one problem into tens of thousands of lines within seconds, burying the one
 * that says what is wrong. So the first failure of a kind (say `storage:ENOSPC`) is written in full;
 * later ones are only counted, and one summary line with the count is written at most once per
 * window (10 s). When the failures stop, the caller says so and one info line gives the total.
 *
 * `RepeatThrottle` is the bookkeeping alone, on times passed in: a pure state machine, tested with a
 * fake clock. `repeatLog` puts it in front of a `Logger`.
 */
import type { Logger } from './log.ts';

export const REPEAT_WINDOW_MS = 10_000;

/** What to write for an occurrence: the full line, a summary line, or nothing (it was counted). */
export type RepeatVerdict = { write: 'first' } | { write: 'summary'; count: number; total: number } | { write: 'none' };

/** A summary line to write: `count` occurrences since the last line, `total` since the first. */
export interface RepeatSummary {
  kind: string;
  count: number;
  total: number;
}

interface Repeating {
  /** When the last line for this kind was written, ms. */
  lastLine: number;
  /** Occurrences since that line, in no line yet. */
  pending: number;
  /** Occurrences since the kind started failing. */
  total: number;
}

const FIRST: RepeatVerdict = { write: 'first' };
const NONE: RepeatVerdict = { write: 'none' };

export class RepeatThrottle {
  private readonly kinds = new Map<string, Repeating>();

  constructor(private readonly windowMs: number = REPEAT_WINDOW_MS) {}

  /** `n` occurrences of `kind` at `now` (ms). */
  hit(kind: string, now: number, n = 1): RepeatVerdict {
    const s = this.kinds.get(kind);
    if (!s) {
      this.kinds.set(kind, { lastLine: now, pending: 0, total: n });
      return FIRST;
    }
    s.total += n;
    if (now - s.lastLine < this.windowMs) {
      s.pending += n;
      return NONE;
    }
    s.lastLine = now;
    // Quiet for a whole window: a failure coming back is news, worth its full line again.
    if (s.pending === 0) return FIRST;
    const count = s.pending + n;
    s.pending = 0;
    return { write: 'summary', count, total: s.total };
  }

  /**
   * The summary lines due at `now`: kinds with counted occurrences whose last line is a window old
   * (every kind with counted occurrences when `all`, as at shutdown).
   */
  due(now: number, all = false): RepeatSummary[] {
    const out: RepeatSummary[] = [];
    for (const [kind, s] of this.kinds) {
      if (s.pending === 0 || (!all && now - s.lastLine < this.windowMs)) continue;
      out.push({ kind, count: s.pending, total: s.total });
      s.pending = 0;
      s.lastLine = now;
    }
    return out;
  }

  /** The failures of every kind starting with `prefix` are over: forgets them; returns how many there were. */
  clear(prefix: string): number {
    let total = 0;
    for (const [kind, s] of this.kinds) {
      if (!kind.startsWith(prefix)) continue;
      total += s.total;
      this.kinds.delete(kind);
    }
    return total;
  }
}

export interface RepeatLog {
  /** `n` occurrences of the failure `kind`: the first is logged as `msg` with `fields`, the rest counted. */
  report(level: 'warn' | 'error', kind: string, msg: string, fields?: Record<string, unknown>, n?: number): void;
  /** Writes the summaries that are due (all counted ones with `all`). Call it now and then. */
  flush(all?: boolean): void;
  /**
   * The failures of the kinds starting with `prefix` are over. With `msg`, one info line says so
   * with their count (`failures`), if there were any.
   */
  resolved(prefix: string, msg?: string, fields?: Record<string, unknown>): void;
}

export function repeatLog(log: Logger, clock: () => number, windowMs = REPEAT_WINDOW_MS): RepeatLog {
  const throttle = new RepeatThrottle(windowMs);
  // Reporting a failure must never become one: it runs in the store's write loop and timer, where a
  // throw would leave requests unanswered. An injected clock that throws counts as the system's.
  const now = (): number => {
    try {
      return clock();
    } catch {
      return Date.now();
    }
  };
  // The level and message of each kind's first line, for its summaries.
  const firsts = new Map<string, { level: 'warn' | 'error'; msg: string }>();

  function summary({ kind, count, total }: RepeatSummary): void {
    const first = firsts.get(kind);
    if (first) log[first.level](`${first.msg} (repeated)`, { kind, count, total, window_s: windowMs / 1000 });
  }

  return {
    report(level, kind, msg, fields, n = 1) {
      const verdict = throttle.hit(kind, now(), n);
      if (verdict.write === 'first') {
        firsts.set(kind, { level, msg });
        log[level](msg, { ...fields, kind });
      } else if (verdict.write === 'summary') summary({ kind, ...verdict });
    },
    flush(all = false) {
      for (const s of throttle.due(now(), all)) summary(s);
    },
    resolved(prefix, msg, fields) {
      const failures = throttle.clear(prefix);
      for (const kind of firsts.keys()) if (kind.startsWith(prefix)) firsts.delete(kind);
      if (msg !== undefined && failures > 0) log.info(msg, { ...fields, failures });
    },
  };
}
