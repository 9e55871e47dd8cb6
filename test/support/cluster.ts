/**
 * The cluster target of the HTTP tests (docs/scale-out.md, "Tested as a cluster"): with
 * `SHORTENER_TEST_TARGET=cluster`, every harness `start()` opens is three instances over one fresh
 * PostgreSQL database behind the round-robin proxy of `proxy.ts`, so each request of a test may
 * land on a different instance, and the test runs unchanged.
 *
 * - The three instances are processes of `cluster-instance.ts` (bundled, as `server-entry.ts`
 *   bundles the server), forked once per test file and asked for a fresh shortener per harness;
 *   one PostgreSQL server per process, or the pass's (`pg.ts`).
 * - `h.shortener` is a fourth shortener on the same database, in the test process, reached by no
 *   request: what a test reads through it (`service.get`, `config`) is what the database holds.
 *   Its `count` is the database's count of links, read again before each answer reaches the test.
 * - The test's clock (`now`) is read before each request and pushed to the instances when it moved.
 * - A test about one process's own state (its log lines, its connections, its disk, its metrics)
 *   runs in the default target only, and says why with `onOneProcess`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { ServerOptions } from 'node:http';
import { afterTheFiles } from './test-groups.ts';
import postgres from 'postgres';
import { createShortenerAsync, type Shortener, type ShortenerOptions } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import type { InstanceMessage, InstanceRequest } from './cluster-instance.ts';
import { pgServer, type PgServer } from './pg.ts';
import { startProxy, type RoundRobinProxy } from './proxy.ts';
import { bundled } from './server-entry.ts';

/** The target of this test run: `local` (one process, the log store) or `cluster`. */
export const TARGET = process.env['SHORTENER_TEST_TARGET'] === 'cluster' ? 'cluster' : 'local';

const INSTANCES = 3;

/**
 * The options of a test about one process's own state: in the cluster target it does not run, and
 * the report says why. Everywhere else it runs.
 */
export function onOneProcess(why: string): { skip?: string } {
  return TARGET === 'cluster' ? { skip: `about one process's own state: ${why}` } : {};
}

/** Settings no instance can be given: they reach into the test process. */
const IN_PROCESS_ONLY = ['fs', 'driverModule', 'logStream'] as const;

class Instance {
  private seq = 0;
  private readonly pending = new Map<number, { resolve(port?: number): void; reject(err: Error): void }>();
  readonly child: ChildProcess;

  constructor(onLog: (id: number, line: string) => void) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    this.child = fork(bundled('test/support/cluster-instance.ts'), [], { execArgv: [], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: InstanceMessage) => {
      if ('log' in message) return onLog(message.log, message.line);
      const waiter = this.pending.get(message.reply);
      this.pending.delete(message.reply);
      if (message.error !== undefined) waiter?.reject(new Error(`instance ${this.child.pid}: ${message.error}`));
      else waiter?.resolve(message.port);
    });
    this.child.on('exit', (code, signal) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`instance ${this.child.pid} exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  /** Disconnects: the process closes what it serves and exits. */
  end(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    return exited;
  }

  ask(request: InstanceRequest): Promise<number | undefined> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.child.send({ ...request, seq });
    });
  }
}

interface Fleet {
  pg: PgServer;
  instances: Instance[];
  /** Log lines of the instances, by harness id. */
  sinks: Map<number, (line: string) => void>;
}

let fleet: Promise<Fleet> | undefined;
let harnesses = 0;
/** What ends the fleet once the process's test files are done (the first harness starts it, inside a test). */
const teardown: (() => Promise<void>)[] = [];

// Registered while the first test file that uses the fleet loads, so on that file (or its group),
// not on the test that starts the fleet: the files that share a process share the fleet too.
afterTheFiles(async () => {
  for (const step of teardown.reverse()) await step();
});

function theFleet(): Promise<Fleet> {
  fleet ??= (async () => {
    const pg = await pgServer(undefined, { after: (fn) => teardown.push(fn) });
    if (!pg) throw new Error('the cluster target needs PostgreSQL (apt-get install postgresql, or set PG_BIN)');
    const sinks = new Map<number, (line: string) => void>();
    const instances = Array.from({ length: INSTANCES }, () => new Instance((id, line) => sinks.get(id)?.(line)));
    teardown.push(async () => {
      await Promise.all(instances.map((i) => i.end()));
    });
    return { pg, instances, sinks };
  })();
  return fleet;
}

/**
 * The source of `fn` when it uses nothing outside itself, so an instance can rebuild it; a test
 * whose random source captures something must run in one process.
 */
function closedSource(fn: (buffer: Uint8Array) => void): string {
  const source = fn.toString();
  try {
    (new Function(`return (${source})`)() as (buffer: Uint8Array) => void)(new Uint8Array(16));
  } catch (err) {
    throw new Error(`the cluster target cannot give the instances this random source (${String(err)}): mark the test with onOneProcess`);
  }
  return source;
}

export interface ClusterApp {
  port: number;
  proxy: RoundRobinProxy;
  shortener: Shortener;
  databaseUrl: string;
  close(keep?: boolean): Promise<void>;
}

/**
 * Three instances and the in-process shortener on `databaseUrl` (when absent, a new database copied
 * from a migrated one), behind a new proxy; `write` receives every log line, the instances' and the
 * in-process one's.
 */
export async function openCluster(
  basePath: string,
  options: ShortenerOptions,
  serverOptions: ServerOptions,
  write: (line: string) => void,
  databaseUrl?: string,
): Promise<ClusterApp> {
  for (const name of IN_PROCESS_ONLY) {
    if (options[name] !== undefined) throw new Error(`the cluster target cannot give the instances \`${name}\`: mark the test with onOneProcess`);
  }
  const { logger: _logger, now, random, visitFlushMs: _flush, dataDir: _dir, fsync: _fsync, ...settings } = options;
  const randomSource = random === undefined ? undefined : closedSource(random);
  const { pg, instances, sinks } = await theFleet();
  // Copied from a migrated one: what the cluster target checks is the instances sharing a
  // database, not its migration (the store's own tests make theirs empty).
  const db = databaseUrl ?? (await pg.createDatabase({ migrated: true }));
  const id = ++harnesses;
  sinks.set(id, write);

  const counter = postgres(db, { max: 1, onnotice: () => undefined });
  let linkCount = 0;
  const clock = (): { now: number; error?: { name: string; message: string } } => {
    try {
      return { now: now!() };
    } catch (err) {
      const { name, message } = err instanceof Error ? err : new Error(String(err));
      return { now: 0, error: { name, message } };
    }
  };
  let pushed = now ? clock() : undefined;
  const proxy = await startProxy([], undefined, {
    // The clock of every instance is the test's at each request, a clock that throws included.
    async before() {
      if (!now) return;
      const current = clock();
      if (current.now === pushed?.now && current.error?.message === pushed.error?.message) return;
      pushed = current;
      await Promise.all(instances.map((i) => i.ask({ op: 'clock', id, ...current })));
    },
    // The count a test reads after an answer includes what that request changed.
    async answered() {
      const [row] = await counter<{ n: number }[]>`SELECT count(*)::int AS n FROM links`;
      linkCount = row!.n;
    },
  });
  const baseUrl = options.baseUrl ?? `http://127.0.0.1:${proxy.port}${basePath}`;
  const shared: ShortenerOptions = { ...settings, databaseUrl: db, baseUrl };
  let local: Shortener | undefined;
  try {
    // The in-process one first: on a database not copied from a migrated one it migrates it,
    // under the advisory lock either way.
    local = await createShortenerAsync({
      ...shared,
      logger: createLogger(options.logLevel ?? 'debug', { write: (line: string) => (write(line), true) }),
      ...(now ? { now } : {}),
      ...(random ? { random } : {}),
    });
    const open: InstanceRequest = {
      op: 'open',
      id,
      settings: shared,
      serverOptions,
      ...(pushed === undefined ? {} : { now: pushed.now }),
      ...(randomSource === undefined ? {} : { random: randomSource }),
    };
    const ports = await Promise.all(instances.map((i) => i.ask(open)));
    proxy.backends = ports.map(Number);
    const [row] = await counter<{ n: number }[]>`SELECT count(*)::int AS n FROM links`;
    linkCount = row!.n;
  } catch (err) {
    // Settings the service refuses fail here, as `createShortener` throws them in one process.
    await Promise.allSettled([proxy.close(), counter.end({ timeout: 1 }), local?.close(), ...instances.map((i) => i.ask({ op: 'close', id }))]);
    if (databaseUrl === undefined) await pg.dropDatabase(db);
    throw err;
  }

  // `count` is a getter of the in-process shortener: the facade answers the database's.
  const inProcess = local;
  const shortener = Object.create(inProcess, { count: { get: () => linkCount } }) as Shortener;
  let closing: Promise<void> | undefined;
  return {
    port: proxy.port,
    proxy,
    shortener,
    databaseUrl: db,
    close(keep = false) {
      closing ??= (async () => {
        await proxy.close();
        await Promise.all(instances.map((i) => i.ask({ op: 'close', id })));
        await inProcess.close();
        await counter.end({ timeout: 1 });
        sinks.delete(id);
        if (!keep) await pg.dropDatabase(db);
      })();
      return closing;
    },
  };
}
