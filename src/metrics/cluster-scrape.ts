/**
 * `/metrics` of a machine running `WORKERS=N` (docs/scale-out.md): whichever worker takes the
 * scrape asks the primary, the primary asks every worker for its own figures (the asking one
 * included), adds them up (`merge.ts`) and answers the asking worker. One machine is one Prometheus
 * target, and its counters do not depend on which worker the kernel handed the scrape to.
 *
 * A worker that does not answer within `WORKER_ANSWER_MS` (stuck, or dying) is left out of that
 * scrape rather than holding it. A worker that died takes its counts with it: the sum goes down,
 * which Prometheus reads as a counter reset, as it would for a restarted single process.
 */
import cluster, { type Worker } from 'node:cluster';
import type { ScrapeScope } from './metrics.ts';
import { mergeFamilies } from './merge.ts';
import type { Family } from './prometheus.ts';

/** How long the primary waits for one worker's figures, ms. */
export const WORKER_ANSWER_MS = 2000;
/** How long a worker waits for the primary's sum before answering its own figures alone, ms. */
const PRIMARY_ANSWER_MS = 5000;

/** The key every message of this exchange carries, so other IPC messages pass by. */
const TAG = 'shortener-metrics';

type Message =
  | { [TAG]: 'gather'; id: number }
  | { [TAG]: 'collect'; id: number }
  | { [TAG]: 'families'; id: number; families: Family[] }
  | { [TAG]: 'sum'; id: number; families: Family[] };

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && TAG in m && typeof (m as { id?: unknown }).id === 'number';
}

/** In a worker: the scope that `setScrapeScope` takes. `send` is the IPC channel to the primary. */
export function workerScrapeScope(send: (m: Message) => void = (m) => void process.send?.(m)): ScrapeScope & { receive(m: unknown): void } {
  let own: (() => Promise<Family[]>) | undefined;
  let next = 0;
  const waiting = new Map<number, (families: Family[]) => void>();
  const scope = {
    own(collect: () => Promise<Family[]>) {
      own = collect;
    },
    gather(): Promise<Family[]> {
      const id = next++;
      return new Promise<Family[]>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve(own ? own() : []);
        }, PRIMARY_ANSWER_MS);
        waiting.set(id, (families) => {
          clearTimeout(timer);
          resolve(families);
        });
        send({ [TAG]: 'gather', id });
      });
    },
    receive(m: unknown) {
      if (!isMessage(m)) return;
      if (m[TAG] === 'collect') {
        void (own ? own() : Promise.resolve([])).then((families) => send({ [TAG]: 'families', id: m.id, families }));
      } else if (m[TAG] === 'sum') {
        const done = waiting.get(m.id);
        waiting.delete(m.id);
        done?.(m.families);
      }
    },
  };
  return scope;
}

/** In a worker process of `node:cluster`: scrapes answer the machine's sum from now on. */
export function joinClusterScrapes(): ScrapeScope {
  const scope = workerScrapeScope();
  process.on('message', (m) => scope.receive(m));
  return scope;
}

/** In the primary: answer the workers' `gather` requests. Call once, before forking. */
export function serveClusterScrapes(workers: () => readonly Worker[] = liveWorkers): void {
  let next = 0;
  const rounds = new Map<number, (worker: Worker, families: Family[]) => void>();
  cluster.on('message', (from: Worker, m: unknown) => {
    if (!isMessage(m)) return;
    if (m[TAG] === 'families') rounds.get(m.id)?.(from, m.families);
    if (m[TAG] !== 'gather') return;
    const round = next++;
    const asked = workers();
    const answers = new Map<Worker, Family[]>();
    const finish = (): void => {
      if (!rounds.delete(round)) return;
      clearTimeout(timer);
      // In the order of the workers, not of their answers: the same sum reads the same.
      const lists = asked.filter((w) => answers.has(w)).map((w) => answers.get(w)!);
      if (from.isConnected()) from.send({ [TAG]: 'sum', id: m.id, families: mergeFamilies(lists) } satisfies Message);
    };
    const timer = setTimeout(finish, WORKER_ANSWER_MS);
    rounds.set(round, (worker, families) => {
      answers.set(worker, families);
      if (answers.size === asked.length) finish();
    });
    for (const w of asked) w.send({ [TAG]: 'collect', id: round } satisfies Message);
    if (asked.length === 0) finish();
  });
}

function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
}
