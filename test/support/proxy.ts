/**
 * A round-robin HTTP proxy over several instances, for the scale-out tests: every request goes to
 * the next instance in turn (not every connection: a kept-alive client still lands on a different
 * instance each time), so a test sees exactly what a client behind a load balancer sees.
 *
 * Requests and answers pass through unchanged (status, headers with their spelling, body),
 * except the hop-by-hop headers of each leg. An instance that cannot be reached answers `502`
 * `{"detail":"bad gateway"}` from the proxy itself; `answeredBy` tells which instance served what.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Headers of one connection, not of the request: each leg has its own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer']);

export interface RoundRobinProxy {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  /** The instances' ports, in turn order; may change at any time (an instance replaced). */
  backends: number[];
  /** Requests forwarded to each backend port so far. */
  readonly forwarded: Map<number, number>;
  /** `502`s the proxy answered itself (an instance unreachable). */
  readonly badGateways: number;
  close(): Promise<void>;
}

function rawPairs(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** node:http's own answers to a request it cannot parse, by error code (else 400). */
const CLIENT_ERRORS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/** What a harness does around each request (the cluster target's clock and link count). */
export interface ProxyHooks {
  /** Before a request is forwarded. */
  before?(): Promise<void> | void;
  /** After an instance answered, before the answer goes on to the client. */
  answered?(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1, port 0; given the test `t`, closed after it. */
export async function startProxy(backends: number[], t?: { after(fn: () => unknown): void }, hooks: ProxyHooks = {}): Promise<RoundRobinProxy> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const forwarded = new Map<number, number>();
  let next = 0;
  let badGateways = 0;

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (proxy.backends.length === 0) return fail(res, req);
    const port = proxy.backends[next++ % proxy.backends.length]!;
    forwarded.set(port, (forwarded.get(port) ?? 0) + 1);
    const before = hooks.before?.();
    if (before) {
      req.pause();
      before.then(
        () => forward(req, res, port),
        () => fail(res, req),
      );
    } else forward(req, res, port);
  });

  function forward(req: IncomingMessage, res: ServerResponse, port: number): void {
    let upstream: ReturnType<typeof httpRequest>;
    try {
      upstream = httpRequest(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: rawPairs(req.rawHeaders), agent, setHost: false },
        (answer) => {
          const pass = (): void => {
            // An instance that closes its connection after this answer (a 413 with a body left
            // unread) has the client's closed too, as it would without the proxy.
            if (answer.headers.connection === 'close') res.shouldKeepAlive = false;
            res.writeHead(answer.statusCode!, answer.statusMessage, rawPairs(answer.rawHeaders));
            answer.pipe(res);
            answer.on('error', () => res.destroy());
          };
          if (hooks.answered) hooks.answered().then(pass, () => res.destroy());
          else pass();
        },
      );
    } catch {
      // A target node:http's server took but its client refuses to send.
      return fail(res, req);
    }
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else fail(res, req);
    });
    req.pipe(upstream);
    req.on('error', () => upstream.destroy());
  }

  // Bytes after a request that are no request (a body a HEAD should not have had): an instance
  // answers that request first, then closes; so does the proxy, rather than answer 400 first.
  // Otherwise it answers what node:http answers by default.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending && !pending.headersSent) pending.once('finish', () => socket.destroy());
    else if (socket.writable) socket.end(`HTTP/1.1 ${CLIENT_ERRORS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
    else socket.destroy();
  });

  function fail(res: ServerResponse, req: IncomingMessage): void {
    badGateways++;
    req.resume();
    const body = '{"detail":"bad gateway"}';
    res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const proxy: RoundRobinProxy = {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    backends: [...backends],
    forwarded,
    get badGateways() {
      return badGateways;
    },
    close() {
      agent.destroy();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  t?.after(() => proxy.close());
  return proxy;
}
