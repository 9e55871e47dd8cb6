/**
 * A throwaway PostgreSQL server for the tests of the PostgreSQL store (docs/postgres.md), started
 * through `scripts/pg-test-server.sh`: a fresh database per test (or per file), on the pass's
 * shared server when it runs one (`withSharedPgServer`), else on a server of the file's own, removed
 * when the file ends.
 *
 * Without PostgreSQL the tests skip with a loud message on a developer machine (install the
 * `postgresql` package, or point `PG_BIN` at its `bin` directory); under CI they fail instead
 * (`missing-tool.ts`).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, type TestContext } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { migrate } from '../../src/store/postgres/schema.ts';
import { missingTool } from './missing-tool.ts';

const run = promisify(execFile);
// Not from helpers.ts, which reaches this file through the cluster target.
const SCRIPT = fileURLToPath(new URL('../../scripts/pg-test-server.sh', import.meta.url));

/** The directory of `initdb`/`pg_ctl`/`postgres`: `PG_BIN`, or the newest `/usr/lib/postgresql/<v>/bin`. */
export function findPgBin(): string | undefined {
  const env = process.env['PG_BIN'];
  if (env) return existsSync(join(env, 'pg_ctl')) ? env : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

export interface PgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  /** The cluster's directory (data, socket, log). */
  readonly dir: string;
  /**
   * A new, empty database; its URL. Removed with its server (or by `dropDatabase`). `migrated`:
   * copied from one this process migrated once, for a test that is not about migrating.
   */
  createDatabase(options?: { migrated?: boolean }): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  /** Stops the server (fast shutdown: clients are disconnected), keeping its data. */
  stop(): Promise<void>;
  /** Starts a stopped server again, on the same port. */
  start(): Promise<void>;
  /** `stop()` then `start()`. */
  restart(): Promise<void>;
  /** Runs one statement on the server's `postgres` database (fault tests, inspection). */
  admin: postgres.Sql;
}

let databases = 0;

/**
 * The environment variable through which a pass hands its test processes the URL of the
 * server they share (`withSharedPgServer`).
 */
export const SHARED_PG = 'TEST_PG_SHARED';

/** Why a file that stops, restarts or reconfigures its server must ask for one of its own. */
const SHARED = (what: string): Error =>
  new Error(`${what}: this file shares the pass's PostgreSQL server; ask pgServer(t, { own: true }) for a server of its own`);

/** Why the PostgreSQL tests cannot run here. */
export const NO_POSTGRES = 'PostgreSQL not found (apt-get install postgresql, or set PG_BIN): the PostgreSQL tests cannot run';

/** Starts a new server through the script (`PG_TEST_FSYNC` in `env` as the script reads it); its URL and directory. */
async function startServer(env: NodeJS.ProcessEnv): Promise<{ url: string; dir: string }> {
  const started = await run(SCRIPT, ['start'], { env });
  return { url: started.stdout.trim(), dir: started.stderr.trim().split('\n').pop()! };
}

/**
 * Runs a pass (`pass`, given the environment its test processes need) with a PostgreSQL server for
 * them to share (`SHARED_PG`), removed when it ends; without one when PostgreSQL is not installed
 * (each file then finds that out itself, as it would alone).
 *
 * The files that use it only create databases: none stops, crashes or reconfigures it (those ask
 * for a server of their own). So it runs without fsync: what a test checks of a database that is
 * never crashed does not depend on its disk flushes, and each file no longer waits about 0.9 s for
 * a server of its own to start and stop, nor on a flush at each commit.
 */
export async function withSharedPgServer(pass: (env: Record<string, string>) => Promise<number>): Promise<number> {
  const bin = findPgBin();
  if (!bin) return pass({});
  const env = { ...process.env, PG_BIN: bin };
  const { url, dir } = await startServer({ ...env, PG_TEST_FSYNC: 'off' });
  try {
    return await pass({ [SHARED_PG]: url });
  } finally {
    await run(SCRIPT, ['stop', dir], { env });
  }
}

/**
 * A server for this test file, or undefined after a loud message when PostgreSQL is not
 * installed. `t` is the test to skip; a file without one skips its tests with `NO_POSTGRES`.
 * Under CI a missing server throws.
 *
 * In a pass that shares a server (`SHARED_PG` set by `withSharedPgServer`, or its URL given as
 * `shared`) the file gets that one, unless it asks for its `own`: there `stop`, `start`, `restart`
 * and `dir` throw, and its databases go with the pass's server. Otherwise it gets a server of its
 * own, with fsync on, torn down by node's `after` (or by `options.after` when given).
 */
export async function pgServer(
  t?: Pick<TestContext, 'skip'>,
  options: { own?: boolean; shared?: string; after?: (fn: () => Promise<void>) => void } = {},
): Promise<PgServer | undefined> {
  const shared = options.own ? undefined : (options.shared ?? process.env[SHARED_PG]);
  const bin = findPgBin();
  if (!bin) {
    const message = missingTool('POSTGRESQL TESTS', NO_POSTGRES);
    t?.skip(message);
    return undefined;
  }
  const env = { ...process.env, PG_BIN: bin };
  const { url, dir } = shared ? { url: shared, dir: '' } : await startServer(env);
  const admin = postgres(url, { max: 2, onnotice: () => undefined, connect_timeout: 5 });
  const script = async (command: string): Promise<void> => {
    if (shared) throw SHARED(command);
    await run(SCRIPT, [command, dir], { env });
  };
  /** The migrated database `createDatabase({ migrated: true })` copies, made at its first call. */
  let template: Promise<string> | undefined;
  const server: PgServer = {
    url,
    get dir() {
      if (shared) throw SHARED('dir');
      return dir;
    },
    admin,
    async createDatabase(options = {}) {
      const name = `t${process.pid}_${++databases}`;
      if (options.migrated) {
        template ??= migratedTemplate(url, admin, `t${process.pid}_${++databases}_migrated`);
        await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${await template}`);
      } else {
        await admin.unsafe(`CREATE DATABASE ${name}`);
      }
      return url.replace(/\/postgres$/, `/${name}`);
    },
    async dropDatabase(dbUrl) {
      const name = new URL(dbUrl).pathname.slice(1);
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    stop: () => script('down'),
    start: () => script('up'),
    restart: () => script('restart'),
  };
  (options.after ?? after)(async () => {
    await admin.end({ timeout: 1 }).catch(() => undefined);
    if (!shared) await script('stop');
  });
  return server;
}

/**
 * A database migrated by the store's own `migrate`, to copy (`CREATE DATABASE … TEMPLATE`): a copy
 * took 18.5 to 22 ms of the server's CPU and 19 to 21 ms of the test's where a fresh database
 * migrated by its first shortener took 57 to 81.5 ms and 25 to 26 ms (20 of each, twice), and the
 * cluster pass makes some 170. A copy needs its template without connections, so this one is
 * closed once migrated.
 */
async function migratedTemplate(url: string, admin: postgres.Sql, name: string): Promise<string> {
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const sql = postgres(url.replace(/\/postgres$/, `/${name}`), { max: 1, onnotice: () => undefined });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  return name;
}

/**
 * A server of the test's own, to stop or crash even in a pass that shares one, and `after` for
 * what the test runs on it (a store, an instance): those steps run when the test ends, the last
 * registered first, and the server is removed after them. (`t.after` runs its steps in the order
 * they were registered, which would remove the server first.)
 */
export async function ownPgServer(t: TestContext): Promise<{ server: PgServer; after(fn: () => Promise<unknown>): void }> {
  const steps: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const step of steps.reverse()) await step();
  });
  const server = await pgServer(t, { own: true, after: (fn) => void steps.push(fn) });
  if (!server) throw new Error(NO_POSTGRES);
  return { server, after: (fn) => void steps.push(fn) };
}

export interface FrozenLink {
  /** `url` with the proxy's port in place of the server's. */
  url: string;
  /** From now on nothing passes either way (bytes are held), and new connections hang: a database that stopped answering. */
  freeze(): void;
  /** Lets everything held through, and what comes after. */
  thaw(): void;
  /** From now on a new connection is reset at once (the open ones stay as they are). */
  refuseNew(): void;
}

/**
 * A TCP proxy in front of the database of `url` that can stop passing bytes without closing
 * anything: the hang (a frozen server, a network black hole) that no refused connection reveals.
 * Closed after the file.
 */
export async function freezableProxy(url: string): Promise<FrozenLink> {
  let frozen = false;
  let refusing = false;
  const held: { to: Socket; chunk: Buffer }[] = [];
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => (frozen ? held.push({ to, chunk }) : to.write(chunk)));
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };
  const proxied = await tcpProxy(
    url,
    (client, upstream) => {
      forward(client, upstream);
      forward(upstream, client);
    },
    () => refusing,
  );
  return {
    url: proxied,
    freeze: () => void (frozen = true),
    refuseNew: () => void (refusing = true),
    thaw() {
      frozen = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
  };
}

/**
 * A TCP proxy in front of the server of `url`, the common part of the fault proxies: `pair` wires
 * each client to its own connection to the server; while `refuse()` holds, a new client is reset
 * at once instead. Every socket is closed after the file. Resolves with `url` pointing at the proxy.
 */
export async function tcpProxy(url: string, pair: (client: Socket, upstream: Socket) => void, refuse: () => boolean = () => false): Promise<string> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (refuse()) return void client.resetAndDestroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    pair(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const proxied = new URL(url);
  proxied.port = String((server.address() as AddressInfo).port);
  return proxied.href;
}
