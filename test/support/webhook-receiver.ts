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
  const r: Partial<Receiver> & { answer: number | 'hang' } = { answer: 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const w = waiters;
      waiters = [];
      for (const f of w) f();
      if (r.answer === 'hang') hung.add(res);
      else res.writeHead(r.answer).end('noted');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(r, {
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
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  }) as Receiver;
}
