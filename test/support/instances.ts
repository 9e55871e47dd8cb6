/**
 * Several real `src/server.ts` processes over one PostgreSQL database behind the round-robin proxy
 * of `proxy.ts`: the deployment of docs/scale-out.md in one test. Every instance has the same
 * settings, `BASE_URL` is the proxy's address (short URLs point at the load balancer, as in
 * production), and after the test everything is stopped.
 */
import { serverProcess, type ServerProcess } from './helpers.ts';
import { startProxy, type RoundRobinProxy } from './proxy.ts';

export interface Instances {
  proxy: RoundRobinProxy;
  /** The proxy's address: the service's one public address. */
  url: string;
  /** The instances in the proxy's turn order. */
  servers: ServerProcess[];
  /** `kill -9` of instance `i`: no shutdown, no flush; the proxy keeps sending it its turn (502). */
  kill(i: number): Promise<void>;
  /** A fresh process in place of instance `i` (after `kill`), put back in the proxy's turns. */
  replace(i: number): Promise<ServerProcess>;
}

export interface InstancesOptions {
  databaseUrl: string;
  count?: number;
  /** More settings for every instance (`API_KEYS`, `API_TOKEN`, …). */
  env?: Record<string, string>;
}

export async function startInstances(t: { after(fn: () => unknown): void }, { databaseUrl, count = 3, env = {} }: InstancesOptions): Promise<Instances> {
  const proxy = await startProxy([], t);
  // At least `info`: `serverProcess` waits for the start-up line.
  const settings = { DATABASE_URL: databaseUrl, BASE_URL: proxy.url, ...env };
  const launch = (): Promise<ServerProcess> => serverProcess(settings);
  // One at a time first: the migrations run under an advisory lock either way, but a failing
  // start-up reads clearer alone. Then the others together.
  const first = await launch();
  const servers = [first, ...(await Promise.all(Array.from({ length: count - 1 }, launch)))];
  proxy.backends = servers.map((s) => s.port);
  t.after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });
  return {
    proxy,
    url: proxy.url,
    servers,
    async kill(i) {
      servers[i]!.child.kill('SIGKILL');
      await servers[i]!.exited;
    },
    async replace(i) {
      const fresh = await launch();
      servers[i] = fresh;
      proxy.backends = proxy.backends.map((p, j) => (j === i ? fresh.port : p));
      return fresh;
    },
  };
}
