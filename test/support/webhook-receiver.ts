/**
 * A webhook receiver for the tests: a real node:http server on 127.0.0.1 that keeps every delivery
 * (headers and raw body) and answers as the test sets it, so the service's deliveries are checked
 * end to end, signatures included (`verified`, with the official `standardwebhooks` package).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly deliveries: Delivery[];
  /** What the next answers are: a status (200 by default), or `hang` (never answer). */
  answer: number | 'hang';
  /** How long each answer waits (0 by default): a slow receiver. */
  delayMs: number;
  /** Stops listening (connections are refused) until `resume`, on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Resolves once `n` deliveries (in all) have arrived, whose bodies `match` holds. */
  waitFor(n: number, match?: (d: Delivery) => boolean): Promise<Delivery[]>;
  /** The deliveries' bodies parsed, each checked against `secret` first (throws when one does not verify). */
  verified(secret: string): { id: string; type: string; data: Record<string, unknown> }[];
  close(): Promise<void>;
}

export async function receiver(path = '/hook'): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let waiters: (() => void)[] = [];
  const hung = new Set<import('node:http').ServerResponse>();
  const r: Partial<Receiver> & { answer: number | 'hang'; delayMs: number } = { answer: 200, delayMs: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const w = waiters;
      waiters = [];
      for (const f of w) f();
      const status = r.answer;
      if (status === 'hang') hung.add(res);
      else if (r.delayMs === 0) res.writeHead(status).end('noted');
      else setTimeout(() => res.writeHead(status).end('noted'), r.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let listening = true;
  return Object.assign(r, {
    async pause() {
      if (!listening) return;
      listening = false;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async resume() {
      if (listening) return;
      listening = true;
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    url: `http://127.0.0.1:${port}${path}`,
    port,
    deliveries,
    waitFor(n: number, match: (d: Delivery) => boolean = () => true): Promise<Delivery[]> {
      return new Promise<Delivery[]>((resolve) => {
        const check = (): void => {
          const got = deliveries.filter(match);
          if (got.length >= n) resolve(got);
          else waiters.push(check);
        };
        check();
      });
    },
    verified(secret: string) {
      const wh = new Webhook(secret);
      return deliveries.map((d) => {
        const headers = {
          'webhook-id': String(d.headers['webhook-id']),
          'webhook-timestamp': String(d.headers['webhook-timestamp']),
          'webhook-signature': String(d.headers['webhook-signature']),
        };
        const body = wh.verify(d.body, headers) as { type: string; data: Record<string, unknown> };
        return { id: headers['webhook-id'], type: body.type, data: body.data };
      });
    },
    async close() {
      for (const res of hung) res.destroy();
      if (!listening) return;
      listening = false;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  }) as Receiver;
}
