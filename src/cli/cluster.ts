/**
 * `WORKERS=N` (docs/scale-out.md): the primary process forks N workers that share the listening
 * port (`node:cluster`, connections handed out round-robin), replaces a worker that dies, and on
 * SIGTERM or SIGINT lets every worker drain and then exits. Each worker is the ordinary server of
 * `main.ts` with its own database pool; the primary opens no store and answers no request. It
 * also sums `/metrics` over the workers (`src/metrics/cluster-scrape.ts`).
 *
 * Only a database can be shared: the log store of `DATA_DIR` has one writer process (its lock), so
 * more than one worker without `DATABASE_URL` is refused before anything starts.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../log.ts';
import { joinClusterScrapes, serveClusterScrapes } from '../metrics/cluster-scrape.ts';
import { setScrapeScope } from '../metrics/metrics.ts';
import { NAME } from '../version.ts';
import type { Config } from '../config/config.ts';

/** A replacement worker that failed to start is tried again after this, ms (not in a tight loop). */
const RESTART_DELAY_MS = 1000;

/** Why these settings cannot run, or undefined. */
export function workersRefusal(config: Readonly<Config>): string | undefined {
  if (config.workers > 1 && config.databaseUrl === '') {
    return `WORKERS=${config.workers} needs DATABASE_URL: the log store has one writer process (set WORKERS=1, or DATABASE_URL)`;
  }
  return undefined;
}

/**
 * Called by `main.ts` once the settings are read: true when this process is the primary of a
 * cluster (it has started the workers and must not serve), false when it goes on to serve (a
 * worker, or `WORKERS=1`). Refused settings exit 2 with one line.
 */
export function startCluster(config: Readonly<Config>, log: Logger): boolean {
  if (cluster.isWorker) {
    setScrapeScope(joinClusterScrapes());
    return false;
  }
  const refusal = workersRefusal(config);
  if (refusal !== undefined) {
    process.stderr.write(`${NAME}: ${refusal}\n`);
    process.exit(2);
  }
  if (config.workers === 1) return false;
  runPrimary(config.workers, log);
  return true;
}

function runPrimary(count: number, log: Logger): void {
  serveClusterScrapes();
  let stopping = false;
  let starting = true;
  const listened = new Set<Worker>();
  let failed = false;

  // The workers alive: ours to count, since cluster.workers drops a dead one at no fixed moment.
  const alive = new Set<Worker>();
  const fork = (): void => {
    alive.add(cluster.fork());
  };
  const killAll = (): void => {
    for (const w of alive) w.process.kill('SIGTERM');
  };

  cluster.on('listening', (worker, address) => {
    listened.add(worker);
    if (starting && listened.size === count) {
      starting = false;
      log.info('workers listening', { workers: count, port: address.port, pid: process.pid });
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const ever = listened.delete(worker);
    alive.delete(worker);
    if (stopping) {
      if (code !== 0) failed = true;
      if (alive.size === 0) finish();
      return;
    }
    if (starting && !ever) {
      // A worker that cannot start (bad settings, unreachable database at start-up) will not start
      // better the next time: stop the others and exit with its code.
      log.error('a worker could not start; stopping', { pid: worker.process.pid, code, signal });
      stopping = true;
      failed = true;
      exitCode = code ?? 1;
      killAll();
      if (alive.size === 0) finish();
      return;
    }
    log.warn('worker died; starting another', { pid: worker.process.pid, code, signal });
    if (ever) fork();
    else setTimeout(() => void (stopping || fork()), RESTART_DELAY_MS).unref();
  });

  let exitCode = 0;
  const finish = (): void => {
    log.info('stopped', { workers: count });
    process.exit(failed ? exitCode || 1 : 0);
  };

  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal, workers: alive.size });
    // Each worker drains as a single server does (docs/operations.md Shutdown).
    killAll();
    if (alive.size === 0) finish();
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));

  log.info('starting workers', { workers: count, pid: process.pid });
  for (let i = 0; i < count; i++) fork();
}
