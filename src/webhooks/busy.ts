/**
 * Whether the process is too busy for deliveries now: its event loop saturated by requests, which
 * go first (deliveries can wait; the worker then trickles, `worker.ts`). Node's event-loop
 * utilization, over short windows: busy as soon as one window is over `threshold` (0.9), and not
 * busy again only once the windows have stayed under `calm` (0.5) for `calmMs` (60 ms). Two
 * levels, because deliveries at full pace keep a loop busy themselves: a server at 2,000 clicks a
 * second goes busy now and then on its own deliveries, and must find its calm (the trickle's
 * windows are nearly idle) and go on at once. A server at its limit with requests stays over the
 * calm level while it trickles; were it to go back to full pace at every window its load left a
 * little room in, each burst of deliveries (each a request of its own to make) would cost the
 * redirects around it a tenth of their speed (docs/performance.md, webhooks).
 */
import { performance } from 'node:perf_hooks';

export interface BusyOptions {
  /** Utilization over which a window is busy (default 0.9). */
  threshold?: number;
  /** Utilization under which a window is calm (default 0.5). */
  calm?: number;
  /** Milliseconds a window spans at least (default 20): read when asked, at most once a window. */
  windowMs?: number;
  /** Milliseconds of calm windows, one after another, before deliveries go at full pace again (default 60). */
  calmMs?: number;
  /** The clock (milliseconds) and the utilization since the reading before; the tests' are fake. */
  now?: () => number;
  utilization?: () => number;
}

/** Node's utilization since the call before (the first: since the process started). */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

export function eventLoopBusy(options: BusyOptions = {}): () => boolean {
  const { threshold = 0.9, calm = 0.5, windowMs = 20, calmMs = 60, now = () => performance.now() } = options;
  const utilization = options.utilization ?? loopUtilization();
  utilization();
  let lastAt = now();
  let busy = false;
  /** Since when the windows have been calm, one after another, while busy. */
  let calmSince: number | undefined;
  return () => {
    const at = now();
    const from = lastAt;
    if (at - from < windowMs) return busy;
    lastAt = at;
    const used = utilization();
    if (used > threshold) busy = true;
    if (!busy) return false;
    if (used >= calm) calmSince = undefined;
    else {
      calmSince ??= from;
      if (at - calmSince >= calmMs) busy = false;
    }
    return busy;
  };
}
