/**
 * The request handler: the redirect's fast path, the general path (normalize, route, gate, answer),
 * and the one place errors become responses. `app.ts` builds its parts once and hands them here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { storeFailure } from './api/outcomes.ts';
import { answerVisit } from './api/redirect.ts';
import type { Service, Visit } from './links/service.ts';
import { HttpError } from './errors.ts';
import { redactTarget, type Logger } from './log.ts';
import { FAST_GET, FAST_HEAD, NO_ROUTE, type Metrics } from './metrics/metrics.ts';
import { normalizeTarget, stripBase } from './paths.ts';
import type { Ctx, RouteHandler } from './http/context.ts';
import type { Gate, GateVerdict } from './http/gate.ts';
import type { Responder } from './http/respond.ts';
import { allowHeader, type Match } from './http/router.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

export interface DispatchDeps {
  service: Service;
  reply: Responder;
  match: (method: string, segments: readonly string[]) => Match<RouteHandler> | undefined;
  gate: Gate;
  metrics: Metrics;
  log: Logger;
  /** The base path as the router sees paths: decoded segments. */
  baseSegments: readonly string[];
  /** The base path's spelling on the wire, without a trailing slash (`''` at the root). */
  basePathRaw: string;
  /** Whether short links are public for this instance (gate off, or PUBLIC_REDIRECTS on). */
  fastRedirects: boolean;
  /** The UI is served (not `production`): the link pages link to it. */
  uiServed: boolean;
  /** The instance's reserved words (codes.ts `reservedWords`): the surfaces it serves add theirs. */
  reserved: ReadonlySet<string>;
}

/**
 * More request headers than this is `431` (docs/operations.md). Node keeps only the first 2,000 in
 * `rawHeaders` (`maxHeadersCount`) and drops the rest unseen, so past that a second `Authorization`
 * would slip by the gate's duplicate rule; no real client sends anywhere near 100.
 */
const MAX_REQUEST_HEADERS = 100;
/** `rawHeaders` holds names and values in turn. */
const MAX_RAW_HEADERS = MAX_REQUEST_HEADERS * 2;

/** `routed` of a request handed to the host app: not ours to count. */
const HANDED_ON = '';

/** The request target. Express strips its mount path from `req.url`; `originalUrl` keeps the base path. */
function targetOf(req: IncomingMessage): string {
  return (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
}

export function createDispatch(deps: DispatchDeps): Handler {
  const { service, reply, match, gate, metrics, log, baseSegments, basePathRaw } = deps;
  const linkPrefix = `${basePathRaw}/`;
  /**
   * The paths of the reserved words (`/api`, `/s/static`, …), spelled exactly so: the fast path
   * leaves them to their routes. A Set, because the engine then hashes the request path once,
   * natively, and the store's lookup of a remembered path (`Keydir.findIn`) reuses that hash.
   * Built once from this instance's words, so a surface switched on costs the redirect nothing.
   */
  const reservedPaths: ReadonlySet<string> = new Set([...deps.reserved].map((word) => linkPrefix + word));
  // The redirect fast path skips the gate, so it is taken only where short links are public: gate
  // off, or PUBLIC_REDIRECTS on. Behind the gate every request takes the general path, gate first.
  const fastRedirects = deps.fastRedirects;
  // The fast path's counters, held here: one load fewer per redirect than through `metrics`.
  const fastCounts = metrics.fastRedirects;

  function fail(res: ServerResponse, failure: unknown, method: string, target: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const err = storeFailure(failure);
    if (err instanceof HttpError) {
      const extra = err.headers.flat();
      // An unread upload stays on the socket: close it rather than parse the rest as a request.
      if (err.status === 413) extra.push('Connection', 'close');
      if (err.detail === undefined) reply.empty(res, err.status, extra);
      else reply.json(res, err.status, { detail: err.detail }, extra);
      return;
    }
    log.error('unexpected error', {
      method,
      path: redactTarget(target),
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    reply.json(res, 500, { detail: 'internal error' });
  }

  /** A 401 (docs/security.md): one warning line with the method and the redacted path, never the header. */
  function refuse(res: ServerResponse, verdict: Exclude<GateVerdict, { pass: true }>, method: string, target: string): void {
    log.warn('request refused by the gate', { method, path: redactTarget(target), reason: verdict.reason });
    fail(res, new HttpError(401, verdict.detail, [['WWW-Authenticate', 'Bearer']]), method, target);
  }

  /** The 431 of too many headers, before anything else — unless the request belongs to a host app. */
  function crowded(res: ServerResponse, method: string, target: string, next: ((err?: unknown) => void) | undefined): void {
    if (next) {
      const normalized = normalizeTarget(target);
      if (normalized.ok && stripBase(normalized.target.segments, baseSegments) === undefined) return next();
    }
    fail(res, new HttpError(431, `too many request headers: at most ${MAX_REQUEST_HEADERS} are accepted`), method, target);
  }

  function notAllowed(res: ServerResponse, method: string, target: string, allow: string): void {
    fail(res, new HttpError(405, `${method} is not allowed here`, [['Allow', allow]]), method, target);
  }

  function fastAnswer(res: ServerResponse, method: string, hit: Visit): void {
    if (hit.kind === 'found') fastCounts[method === 'GET' ? FAST_GET : FAST_HEAD]!++;
    else metrics.redirected(hit.kind);
    answerVisit(reply, res, hit, deps.uiServed);
  }

  function dispatch(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void {
    const target = targetOf(req);
    const method = req.method ?? 'GET';
    // First, and for every request: the gate must never decide on a header list Node cut short.
    // One length comparison, so the redirect below pays nothing more.
    if (req.rawHeaders.length > MAX_RAW_HEADERS) return crowded(res, method, target, next);
    // The hot path: `GET <base>/<code>` where short links are public (see `fastRedirects`), the
    // code no reserved word: a link a log holds under one (written by another tool) never hides the
    // service's own route. The rest of the target is asked as a code, as it is: a store in memory
    // finds only a code spelled exactly so (alphabet characters: no escape, dot segment, query or
    // trailing slash to normalize), a database is asked only for a code-shaped one
    // (`Service.visitIn`). A hit is answered here; anything else (a miss, an expired link, any
    // other spelling) takes the general path below, which gives the same answers.
    // Compared once: node:http's method is not an interned string, so each `===` compares characters.
    const get = method === 'GET';
    if (fastRedirects && (get || method === 'HEAD') && target.startsWith(linkPrefix) && !reservedPaths.has(target)) {
      try {
        // The request: a limited link's preview check and, with events, the visit's event (made
        // only when the store counts the visit).
        const hit = service.visitIn(target, linkPrefix.length, get, req);
        // `kind` first: a promise has none, and this test is cheaper than `instanceof`, which
        // walks the prototype chain of every redirect's answer.
        const decided = hit as Visit | undefined;
        if (decided?.kind === 'found') {
          // Counting here is one increment of a preallocated slot, and no timing (metrics.ts).
          fastCounts[get ? FAST_GET : FAST_HEAD]!++;
          return reply.found(res, decided.url);
        }
        // A store that answers later (a database) has decided, and counted, by then: answered
        // here whatever the decision, since the general path would count a second time.
        if (hit instanceof Promise)
          return void hit.then(
            (later) => fastAnswer(res, method, later),
            (err: unknown) => fail(res, err, method, target),
          );
        // A link preview of a limited link: decided here, answered here (a page, no count).
        if (decided?.kind === 'preview') return fastAnswer(res, method, decided);
      } catch (err) {
        return fail(res, err, method, target);
      }
    }
    const started = performance.now();
    routed = NO_ROUTE;
    const pending = general(req, res, method, target, next);
    // Read now: `routed` belongs to the next request once this one awaits.
    const route = routed;
    if (route === HANDED_ON) return;
    const count = (): void => metrics.request(route, method, res.statusCode, (performance.now() - started) / 1000);
    if (pending) void pending.then(count);
    else count();
  }

  /**
   * The pattern of the route `general` matched, set before it returns: `NO_ROUTE` when none did,
   * `HANDED_ON` when the request went to the host app's `next`.
   */
  let routed: string = NO_ROUTE;

  /** Everything but the fast path. Returns the handler's pending work, if any. */
  function general(req: IncomingMessage, res: ServerResponse, method: string, target: string, next?: (err?: unknown) => void): Promise<void> | void {
    const normalized = normalizeTarget(target);
    if (!normalized.ok) return fail(res, new HttpError(400, normalized.detail), method, target);
    const { segments, trailingSlash, query } = normalized.target;

    const rest = stripBase(segments, baseSegments);
    // Outside the base path an embedding app's own routes come first (Express-style `next`).
    if (rest === undefined && next) {
      next();
      // Set after: the host app may pass the request to this very handler again from `next`.
      routed = HANDED_ON;
      return;
    }
    // A preflight reveals nothing: the same 204 for every path, known or not (docs/api.md).
    if (method === 'OPTIONS') return reply.empty(res, 204);
    // One match serves the gate and the dispatch below. Nothing below runs for a request the gate
    // refuses; outside the base path counts as an unknown path.
    const found = rest === undefined ? undefined : match(method, rest);
    if (found) routed = found.route.path;
    const verdict = gate(method, found?.route, req.rawHeaders);
    if (!verdict.pass) return refuse(res, verdict, method, target);
    if (rest === undefined) return reply.empty(res, 404);
    if (rest.length === 0 && baseSegments.length > 0 && !trailingSlash) {
      // `/s` → `/s/`, keeping the query (docs/api.md).
      if (method !== 'GET' && method !== 'HEAD') return notAllowed(res, method, target, allowHeader(['GET']));
      return reply.empty(res, 301, ['Location', `${basePathRaw}/${query ? '?' + query : ''}`]);
    }

    if (!found) return reply.empty(res, 404);
    if (!found.handler) return notAllowed(res, method, target, found.allow);
    let parsed: URLSearchParams | undefined;
    const ctx: Ctx = { req, res, method, params: found.params, query: () => (parsed ??= new URLSearchParams(query)) };
    try {
      const done = found.handler(ctx);
      if (done) return done.catch((err: unknown) => fail(res, err, method, target));
    } catch (err) {
      fail(res, err, method, target);
    }
  }

  if (!log.enabled('debug')) return dispatch;
  return function shortenerWithAccessLog(req, res, next) {
    const start = performance.now();
    let passed = false;
    res.once('finish', () => {
      // A request handed on to the host app's `next` is the host's to log.
      if (passed) return;
      log.debug('request', {
        method: req.method,
        path: redactTarget(targetOf(req)),
        status: res.statusCode,
        ms: Math.round((performance.now() - start) * 100) / 100,
      });
    });
    const onward = next
      ? (err?: unknown): void => {
          passed = true;
          next(err);
        }
      : undefined;
    dispatch(req, res, onward);
  };
}
