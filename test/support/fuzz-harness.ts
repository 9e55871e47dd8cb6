/**
 * The fuzz run shared by test/fuzz.test.ts and scripts/fuzz.ts: one server with the gate on (and
 * the server limits of `server.ts`) and the peers' surfaces on (Shlink's `/rest/`, YOURLS'
 * `/yourls-api.php`), on the log store or on a PostgreSQL database, raw requests from
 * fuzz-arbitraries.ts over fresh sockets, and these properties for every request:
 *
 * 1. the server ends the exchange (answers and closes, or closes) within 5 s;
 * 2. no answer is a 5xx except 503 (and Shlink's `mercure-not-configured` 501, which its clients expect);
 * 3. nothing is logged at `error` (an unexpected exception), and no log line holds the token or the
 *    wrong token sent;
 * 4. when no request in the bytes carries the exact `Authorization: Bearer <token>` line: no
 *    protected operation runs (a spy on the service; following a short link is one, since a gated
 *    instance's links are gated too), no answer is anything but a public one or a refusal (a 2xx
 *    or 304 only from /healthz, /auth-check, a static file, a preflight; no redirect and no
 *    link page), and every 401 is the exact 401. A peer's surface is public to the gate and asks
 *    for its own credential instead (`X-Api-Key`, `signature`): for a request that reaches one,
 *    the credential's check (the service's `keys`) may run, and anything else only once it let a key in; until
 *    then every answer is a refusal (4xx), a health report or a preflight;
 * 5. when the first request carries exactly one Authorization header and it is right, its answer is
 *    not 401 (but on a peer's surface, which asks for its own credential all the same).
 *
 * Afterwards `/healthz` still answers 200.
 */
import fc from 'fast-check';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { ShortenerOptions } from '../../src/app.ts';
import type { Service } from '../../src/links/service.ts';
import { defaults } from '../../src/config/settings.ts';
import { serverOptions } from '../../src/cli/http-options.ts';
import { createLogger } from '../../src/log.ts';
import { normalizeTarget } from '../../src/paths.ts';
import { fuzzCase, render, type FuzzCase } from './fuzz-arbitraries.ts';
import { DETAIL, PROTECTED_OPS, RIGHT, spyOnProtected, TOKEN } from './gate-helpers.ts';
import { open, type Reply, type RequestOptions } from './helpers.ts';
import { openOnDatabase } from './pg-app.ts';
import { sendRaw, type RawResponse } from './raw-http.ts';

export interface FuzzOptions {
  runs: number;
  seed?: number;
  /** An empty PostgreSQL database to keep the links in; absent: the log store, in a fresh data dir. */
  databaseUrl?: string;
}

export interface FuzzSummary {
  runs: number;
  seed: number | undefined;
  ms: number;
  /** First answers by status (`none`: the connection was closed without one). */
  statuses: Record<string, number>;
  /** Requests that reached a protected operation (all of them with the token). */
  protectedRuns: number;
  /** Answers of the peers' surfaces by status (`shlink 200`, `yourls 403`…), as the server wrote them. */
  peerStatuses: Record<string, number>;
  /** Requests to a peer's surface that ran an operation past the credential's check. */
  peerProtectedRuns: number;
}

/** Counts log lines by level and watches for secrets. */
class LogWatch {
  errors: string[] = [];
  leaks: string[] = [];
  write(chunk: string): boolean {
    if (chunk.includes(TOKEN) || chunk.includes('not-the-token')) this.leaks.push(chunk);
    if ((JSON.parse(chunk) as { level: string }).level === 'error') this.errors.push(chunk);
    return true;
  }
}

const PUBLIC_BODIES = new Set(['{"status":"ok"}', '{"auth_required":true}']);

/**
 * An answer that a request without the token may get: what the public routes answer, or a refusal.
 * Short links are not public here (no `publicRedirects`): no 302 to a stored URL, no HTML page of
 * a link ("Link not found", "expired"), which would tell whether a code exists.
 */
function isPublicAnswer(r: RawResponse, head: boolean): boolean {
  if (r.status >= 400) return !r.headers['content-type']?.startsWith('text/html');
  // A static file revalidated; the bare base path's 301 does not arise without a base path.
  if (r.status >= 300) return r.status === 304 && r.headers['etag'] !== undefined;
  if (r.status === 204) return r.body === '';
  if (r.status !== 200) return false;
  // The UI and static files carry an ETag; /healthz and /auth-check have their fixed bodies.
  if (r.headers['etag'] !== undefined) return true;
  if (r.headers['content-type'] !== 'application/json') return false;
  if (head) return [...PUBLIC_BODIES].some((b) => String(b.length) === r.headers['content-length']);
  return PUBLIC_BODIES.has(r.body);
}

/** Values of the `Authorization` lines in a head, as Node would read them (spaces and tabs around dropped). */
function authorizationValues(head: string): string[] {
  return head
    .split('\r\n')
    .slice(1)
    .filter((line) => /^authorization:/i.test(line))
    .map((line) => line.slice(line.indexOf(':') + 1).replace(/^[ \t]+|[ \t]+$/g, ''));
}

function describeCase(c: FuzzCase, bytes: Buffer): string {
  return `${JSON.stringify({ ...c, body: c.body.length > 200 ? `${c.body.slice(0, 200)}…(${c.body.length})` : c.body })}\nbytes: ${JSON.stringify(bytes.toString('latin1').slice(0, 600))}`;
}

/** What a run needs of the server under test. */
interface Target {
  server: Server;
  port: number;
  service: Service;
  req(path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** The server on the log store (the tests' harness), or on `databaseUrl`. */
async function openTarget(settings: ShortenerOptions, limits: ServerOptions, databaseUrl: string | undefined): Promise<Target> {
  const app = databaseUrl === undefined ? await open(settings, limits) : await openOnDatabase(settings, databaseUrl, limits);
  return { server: app.server, port: app.port, service: app.shortener.service, req: app.req, close: () => app.close() };
}

type Surface = 'shlink' | 'yourls';

/** The peer's surface a request target reaches, as the router reads the path; undefined: the rest of the service. */
function surfaceOf(url: string): Surface | undefined {
  const normalized = normalizeTarget(url);
  if (!normalized.ok) return undefined;
  const { segments } = normalized.target;
  if (segments[0] === 'rest') return 'shlink';
  return segments.length === 1 && segments[0] === 'yourls-api.php' ? 'yourls' : undefined;
}

/** A request the server took to a peer's surface: what ran for it, and what it was answered. */
interface PeerRequest {
  surface: Surface;
  path: string;
  /** Protected operations run for it, in order; each key check as `key:<true when it let the key in>`. */
  calls: string[];
  /** A key check let a key in; the runs send no timestamped signature, which YOURLS checks otherwise. */
  admitted: boolean;
  status?: number;
  type?: string;
}

/** The response header by which the run tells, on the client's side, an answer of a peer's surface. */
const PEER_MARK = 'x-fuzz-peer';

/**
 * Watches the requests the server takes: each one to a peer's surface is noted, runs in its own
 * async context (so the operations it runs are its own), and its answer is marked.
 */
function watchPeers(server: Server, service: Service): { taken: PeerRequest[] } {
  const context = new AsyncLocalStorage<PeerRequest>();
  const taken: PeerRequest[] = [];
  const ops = service as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of PROTECTED_OPS) {
    const original = ops[name]!;
    ops[name] = (...args: unknown[]) => {
      const result = original(...args);
      const peer = context.getStore();
      if (peer !== undefined) {
        peer.calls.push(name);
      }
      return result;
    };
  }
  // The credential's check: the service's key checks, whose verdict is a principal (a role) once a key may go on.
  const keys = service.keys as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['identify', 'authorize', 'mayCreate']) {
    const original = keys[name]!;
    keys[name] = (...args: unknown[]) => {
      const peer = context.getStore();
      if (peer === undefined) return original(...args);
      return original(...args).then((who) => {
        const admitted = typeof who === 'object' && who !== null && 'role' in who;
        peer.calls.push(`key:${admitted}`);
        if (admitted) peer.admitted = true;
        return who;
      });
    };
  }
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', function watched(req: IncomingMessage, res: ServerResponse) {
    const surface = surfaceOf(req.url ?? '');
    if (surface === undefined) {
      for (const listener of listeners) listener.call(server, req, res);
      return;
    }
    const peer: PeerRequest = { surface, path: req.url ?? '', calls: [], admitted: false };
    taken.push(peer);
    res.setHeader(PEER_MARK, surface);
    res.on('finish', () => {
      peer.status = res.statusCode;
      peer.type = String(res.getHeader('content-type') ?? '');
    });
    context.run(peer, () => {
      for (const listener of listeners) listener.call(server, req, res);
    });
  });
  return { taken };
}

/**
 * Shlink's answer without Mercure (docs/compat.md): a 501 its web client reads as "poll instead",
 * the only 501 problem of its surface (a HEAD's has no body to tell it by).
 */
function isMercureOff(r: RawResponse): boolean {
  return r.status === 501 && r.headers[PEER_MARK] === 'shlink' && r.headers['content-type'] === 'application/problem+json';
}

/** What a peer's surface may answer a request its credential did not admit: a refusal, a health report, a preflight. */
function isPeerRefusal(peer: PeerRequest): boolean {
  if (peer.status === undefined) return true;
  if (peer.status >= 400) return !peer.type?.startsWith('text/html');
  if (peer.status === 204) return true;
  return peer.status === 200 && peer.type === 'application/health+json';
}

export async function runFuzz({ runs, seed, databaseUrl }: FuzzOptions): Promise<FuzzSummary> {
  const logs = new LogWatch();
  const h = await openTarget(
    { apiToken: TOKEN, apiKeys: ['k1'], shlinkApi: true, yourlsApi: true, logger: createLogger('warn', logs) },
    serverOptions(defaults()).options,
    databaseUrl,
  );
  const statuses: Record<string, number> = {};
  const peerStatuses: Record<string, number> = {};
  let protectedRuns = 0;
  let peerProtectedRuns = 0;
  const started = Date.now();
  try {
    const newCode = async (): Promise<string> => {
      const created = await h.req('/api/shorten', {
        method: 'POST',
        headers: { authorization: RIGHT, 'content-type': 'application/json' },
        // Two tags: the tag lists then have rows to order.
        body: '{"url":"https://example.com/fuzz-target","tags":["fuzz","news"]}',
      });
      if (created.status !== 201) throw new Error(`setup: ${created.status} ${created.body}`);
      return created.body.slice(created.body.lastIndexOf('/') + 1);
    };
    // A live code for `{code}` in targets; a fuzzed DELETE with the token and key may remove it.
    let code = await newCode();
    const spy = spyOnProtected(h.service);
    const peers = watchPeers(h.server, h.service);

    const property = fc.asyncProperty(fuzzCase, async (c) => {
      if (!(await h.service.get(code)).ok) code = await newCode();
      const { bytes, incomplete, method } = render(c, TOKEN, code);
      spy.calls.length = 0;
      peers.taken.length = 0;
      const errorsBefore = logs.errors.length;
      const isHead = method === 'HEAD';
      const reply = await sendRaw(h.port, bytes, { head: isHead, halfCloseAfterMs: incomplete ? 0 : 100, timeoutMs: 5000 });
      const fail = (why: string): never => {
        throw new Error(`${why}\ncase: ${describeCase(c, bytes)}\nreply: ${JSON.stringify(reply.text.slice(0, 600))}`);
      };
      const final = reply.responses.filter((r) => r.status >= 200);
      const first = final[0];
      statuses[first ? String(first.status) : 'none'] = (statuses[first ? String(first.status) : 'none'] ?? 0) + 1;
      if (spy.calls.length > 0) protectedRuns++;
      for (const peer of peers.taken) {
        const key = `${peer.surface} ${peer.status ?? 'none'}`;
        peerStatuses[key] = (peerStatuses[key] ?? 0) + 1;
        if (peer.calls.some((call) => !call.startsWith('key:'))) peerProtectedRuns++;
      }

      if (reply.end !== 'closed') fail('1: the server did not end the exchange within 5 s');
      for (const r of reply.responses) if (r.status >= 500 && r.status !== 503 && !isMercureOff(r)) fail(`2: answered ${r.status}`);
      if (logs.errors.length > errorsBefore) fail(`3: logged an error: ${logs.errors.slice(errorsBefore).join('')}`);
      if (logs.leaks.length > 0) fail(`3: a log line holds a token: ${logs.leaks[0]}`);

      const text = bytes.toString('latin1');
      const anyRight = text.split('\r\n\r\n').some((part) => authorizationValues(part).includes(RIGHT));
      if (!anyRight) {
        // The operations a peer's surface ran for its own requests are judged by the credential it asked for.
        const peerCalls = peers.taken.flatMap((peer) => peer.calls.filter((call) => !call.startsWith('key:'))).length;
        if (spy.calls.length > peerCalls) fail(`4: protected operations ran without the token: ${spy.calls.join(', ')}`);
        for (const peer of peers.taken) {
          if (!peer.admitted && peer.calls.some((call) => call !== 'key:false'))
            fail(`4: ${peer.surface} ran ${peer.calls.join(', ')} for ${peer.path} without its credential`);
          if (!peer.admitted && !isPeerRefusal(peer)) fail(`4: ${peer.surface} answered ${peer.status} ${peer.type} to ${peer.path} without its credential`);
        }
        for (const [i, r] of final.entries()) {
          if (r.headers[PEER_MARK] !== undefined) continue;
          if (!isPublicAnswer(r, isHead && i === 0)) fail(`4: a ${r.status} that is not a public answer`);
          if (r.status === 401) {
            const bodies = Object.values(DETAIL).map((detail) => JSON.stringify({ detail }));
            if (r.headers['www-authenticate'] !== 'Bearer') fail('4: a 401 without WWW-Authenticate: Bearer');
            if (!(isHead && i === 0 ? r.body === '' : bodies.includes(r.body))) fail('4: a 401 with another body');
          }
        }
      }
      const firstHead = text.slice(0, text.indexOf('\r\n\r\n'));
      const values = authorizationValues(firstHead);
      // A peer's surface asks for its own credential whatever the token: its 401 is Shlink's, not the gate's.
      if (values.length === 1 && values[0] === RIGHT && first?.status === 401 && first.headers[PEER_MARK] === undefined) fail('5: the right token was refused');
    });

    await fc.assert(property, { numRuns: runs, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) });
    const health = await h.req('/healthz');
    if (health.status !== 200) throw new Error(`/healthz answers ${health.status} after the run`);
    return { runs, seed, ms: Date.now() - started, statuses, protectedRuns, peerStatuses, peerProtectedRuns };
  } finally {
    await h.close();
  }
}
