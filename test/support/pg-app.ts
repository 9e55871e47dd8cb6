/**
 * One in-process shortener on a PostgreSQL database (`createShortenerAsync`), in a node:http
 * server of its own on 127.0.0.1:0: what `start` of helpers.ts is for the log store, for the tests
 * that must see both stores answer alike whatever the run's target.
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShortenerAsync, type Shortener, type ShortenerOptions } from '../../src/app.ts';
import { request, type Reply, type RequestOptions } from './helpers.ts';

export interface PgApp {
  server: Server;
  port: number;
  shortener: Shortener;
  req(path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** The shortener of `settings` on `databaseUrl`; its base URL is the server's own address. */
export async function openOnDatabase(settings: ShortenerOptions, databaseUrl: string, serverOptions: ServerOptions = {}): Promise<PgApp> {
  const server = createServer(serverOptions);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const shortener = await createShortenerAsync({ ...settings, databaseUrl, baseUrl: `http://127.0.0.1:${port}` }).catch(async (err: unknown) => {
    server.close();
    throw err;
  });
  server.on('request', shortener.handler);
  return {
    server,
    port,
    shortener,
    req: (path, options) => request(port, path, options),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await shortener.close();
    },
  };
}
