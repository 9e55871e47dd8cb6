/**
 * The fuzz run shared by test/fuzz.test.ts and scripts/fuzz.ts: one server with the gate on (and
 * the server limits of `server.ts`), on the log store or on a PostgreSQL database, raw requests
 * from fuzz-arbitraries.ts over fresh sockets, and these properties for every request:
 *
 * 1. the server ends the exchange (answers and closes, or closes) within 5 s;
 * 2. no answer is a 5xx except 503;
 * 3. nothing is logged at `error` (an unexpected exception), and no log line holds the token or the
 *    wrong token sent;
 * 4. when no request in the bytes carries the exact `Authorization: Bearer <token>` line: no
 *    protected operation runs (a spy on the service; following a short link is one, since a gated
 *    instance's links are gated too), no answer is anything but a public one or a refusal (a 2xx
 *    or 304 only from /healthz, /auth-check, a static file, a preflight; no redirect and no
 *    link page), and every 401 is the exact 401;
 * 5. when the first request carries exactly one Authorization header and it is right, its answer is
 *    not 401.
 *
 * Afterwards `/healthz` still answers 200.
 */
import fc from 'fast-check';
import { createServer, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShortenerAsync, type ShortenerOptions } from '../../src/app.ts';
import type { Service } from '../../src/links/service.ts';
import { defaults } from '../../src/cli/config.ts';
import { serverOptions } from '../../src/cli/http-options.ts';
import { createLogger } from '../../src/log.ts';
import { fuzzCase, render, type FuzzCase } from './fuzz-arbitraries.ts';
import { DETAIL, RIGHT, spyOnProtected, TOKEN } from './gate-helpers.ts';
import { open, request, type Reply, type RequestOptions } from './helpers.ts';
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
  port: number;
  service: Service;
  req(path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** The server on the log store (the tests' harness), or on `databaseUrl`. */
async function openTarget(settings: ShortenerOptions, limits: ServerOptions, databaseUrl: string | undefined): Promise<Target> {
  if (databaseUrl === undefined) {
    const h = await open(settings, limits);
    return { port: h.port, service: h.shortener.service, req: h.req, close: () => h.close() };
  }
  const server = createServer(limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const shortener = await createShortenerAsync({ ...settings, databaseUrl, baseUrl: `http://127.0.0.1:${port}` }).catch(async (err: unknown) => {
    server.close();
    throw err;
  });
  server.on('request', shortener.handler);
  return {
    port,
    service: shortener.service,
    req: (path, options) => request(port, path, options),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await shortener.close();
    },
  };
}

export async function runFuzz({ runs, seed, databaseUrl }: FuzzOptions): Promise<FuzzSummary> {
  const logs = new LogWatch();
  const h = await openTarget({ apiToken: TOKEN, apiKeys: ['k1'], logger: createLogger('warn', logs) }, serverOptions(defaults()).options, databaseUrl);
  const statuses: Record<string, number> = {};
  let protectedRuns = 0;
  const started = Date.now();
  try {
    const newCode = async (): Promise<string> => {
      const created = await h.req('/api/shorten', {
        method: 'POST',
        headers: { authorization: RIGHT, 'content-type': 'application/json' },
        body: '{"url":"https://example.com/fuzz-target"}',
      });
      if (created.status !== 201) throw new Error(`setup: ${created.status} ${created.body}`);
      return created.body.slice(created.body.lastIndexOf('/') + 1);
    };
    // A live code for `{code}` in targets; a fuzzed DELETE with the token and key may remove it.
    let code = await newCode();
    const spy = spyOnProtected(h.service);

    const property = fc.asyncProperty(fuzzCase, async (c) => {
      if (!(await h.service.get(code)).ok) code = await newCode();
      const { bytes, incomplete, method } = render(c, TOKEN, code);
      spy.calls.length = 0;
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

      if (reply.end !== 'closed') fail('1: the server did not end the exchange within 5 s');
      for (const r of reply.responses) if (r.status >= 500 && r.status !== 503) fail(`2: answered ${r.status}`);
      if (logs.errors.length > errorsBefore) fail(`3: logged an error: ${logs.errors.slice(errorsBefore).join('')}`);
      if (logs.leaks.length > 0) fail(`3: a log line holds a token: ${logs.leaks[0]}`);

      const text = bytes.toString('latin1');
      const anyRight = text.split('\r\n\r\n').some((part) => authorizationValues(part).includes(RIGHT));
      if (!anyRight) {
        if (spy.calls.length > 0) fail(`4: protected operations ran without the token: ${spy.calls.join(', ')}`);
        for (const [i, r] of final.entries()) {
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
      if (values.length === 1 && values[0] === RIGHT && first?.status === 401) fail('5: the right token was refused');
    });

    await fc.assert(property, { numRuns: runs, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) });
    const health = await h.req('/healthz');
    if (health.status !== 200) throw new Error(`/healthz answers ${health.status} after the run`);
    return { runs, seed, ms: Date.now() - started, statuses, protectedRuns };
  } finally {
    await h.close();
  }
}
