/**
 * A throwaway PostgreSQL server for the tests of the PostgreSQL store (docs/postgres.md), started
 * through `scripts/pg-test-server.sh`: one server per test file, a fresh database per test (or per
 * file), everything removed when the file ends.
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
  /** A new, empty database; its URL. Dropped when the file ends, or by `dropDatabase`. */
  createDatabase(): Promise<string>;
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

/** Why the PostgreSQL tests cannot run here. */
export const NO_POSTGRES = 'PostgreSQL not found (apt-get install postgresql, or set PG_BIN): the PostgreSQL tests cannot run';

/**
 * Starts a server for this test file (torn down by `after`, or by `owner.after` when given), or
 * undefined after a loud message when PostgreSQL is not installed. `t` is the test to skip; a
 * file without one skips its tests with `NO_POSTGRES`. Under CI a missing server throws.
 */
export async function pgServer(t?: Pick<TestContext, 'skip'>, owner?: { after(fn: () => Promise<void>): void }): Promise<PgServer | undefined> {
  const bin = findPgBin();
  if (!bin) {
    const message = missingTool('POSTGRESQL TESTS', NO_POSTGRES);
    t?.skip(message);
    return undefined;
  }
  const env = { ...process.env, PG_BIN: bin };
  const started = await run(SCRIPT, ['start'], { env });
  const url = started.stdout.trim();
  const dir = started.stderr.trim().split('\n').pop()!;
  const admin = postgres(url, { max: 2, onnotice: () => undefined, connect_timeout: 5 });
  const created: string[] = [];
  const script = async (command: string): Promise<void> => {
    await run(SCRIPT, [command, dir], { env });
  };
  const server: PgServer = {
    url,
    dir,
    admin,
    async createDatabase() {
      const name = `t${process.pid}_${++databases}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      created.push(name);
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
  (owner?.after ?? after)(async () => {
    await admin.end({ timeout: 1 }).catch(() => undefined);
    await script('stop');
  });
  return server;
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
