/**
 * Running `wrk` and reading its report, for the benches (`bench.mjs`, `bench-analytics.mjs`): one
 * run at a time or several at once, and the figures of its report.
 */
import { spawn, spawnSync } from 'node:child_process';

/** "412.00us" / "1.23ms" / "2.00s" → ms */
export function wrkMs(text) {
  const m = /([\d.]+)(us|ms|s)\b/.exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}

/**
 * Requests/s, p50, p99 and failures from wrk's report: a status other than 2xx or 3xx, a socket
 * error, or no rate printed at all (seen once in a round of the domains' pairs: a failure, not a
 * round left out). Also the requests sent in all, and how many of them had such a status.
 */
export function wrkFigures(out) {
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  if (!Number.isFinite(rps)) console.error(`wrk printed no rate:\n${out}`);
  return {
    rps,
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    failures: bad + errors + (Number.isFinite(rps) ? 0 : 1),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    non2xx: bad,
  };
}

/** Runs `[bin, argv]` (wrk, maybe under taskset) to its end; its figures. */
export function runWrkSync([bin, argv]) {
  const r = spawnSync(bin, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  return wrkFigures(r.stdout);
}

/**
 * `runWrkSync` without blocking, so that several run at once; the child is in `children` while it
 * runs (the caller's cleanup). `env` is added to this process's (a script's settings).
 */
export function runWrkAsync([bin, argv], children, env = {}) {
  const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      children.delete(child);
      if (code === 0) resolve(wrkFigures(out));
      else reject(new Error(`wrk failed: ${err}`));
    }),
  );
}
