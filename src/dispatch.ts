/**
 * The request handler: the header count, the redirect's fast path, then the general path
 * (`general-path.ts`: normalize, route, gate, answer), timed for the metrics; errors become
 * responses in one place (`failures.ts`). `app.ts` builds its parts once and hands them here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { answerVisitOn, CODE_ROUTE } from './api/redirect.ts';
import { createFailures, MAX_REQUEST_HEADERS } from './failures.ts';
import { createGeneralPath, HANDED_ON } from './general-path.ts';
import type { RouteHandler } from './http/context.ts';
import type { Gate } from './http/gate.ts';
import type { Responder } from './http/respond.ts';
import type { Match } from './http/router.ts';
import { isCodeShaped } from './links/codes.ts';
import type { Domain } from './links/domains.ts';
import type { OrphanType, Service, Visit } from './links/service.ts';
import { redactTarget, type Logger } from './log.ts';
import { FAST_GET, FAST_HEAD, type Metrics } from './metrics/metrics.ts';

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
 * The characters of a path segment that normalizing leaves as they are (paths.ts): printable ASCII
 * but `/ ? # % \`, as a table by char code (1: plain).
 */
const PLAIN = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) PLAIN[c] = '/?#%\\'.includes(String.fromCharCode(c)) ? 0 : 1;

/** True when `s` is one path segment that `normalizeTarget` gives back unchanged (no dot segment). */
function isPlainSegment(s: string): boolean {
  if (s.length === 0 || s === '.' || s === '..') return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || PLAIN[c] === 0) return false;
  }
  return true;
}

/** `rawHeaders` holds names and values in turn. */
const MAX_RAW_HEADERS = MAX_REQUEST_HEADERS * 2;

/** The request target. Express strips its mount path from `req.url`; `originalUrl` keeps the base path. */
function targetOf(req: IncomingMessage): string {
  return (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
}

/**
 * The paths of the reserved words (`/api`, `/s/static`, …), spelled exactly so: the fast path
 * leaves them to their routes. A Set, because the engine then hashes the request path once,
 * natively, and the store's lookup of a remembered path (`Keydir.findIn`) reuses that hash.
 * Built once from this instance's words, so a surface switched on costs the redirect nothing.
 */
function reservedPathsOf(reserved: ReadonlySet<string>, linkPrefix: string): ReadonlySet<string> {
  return new Set([...reserved].map((word) => linkPrefix + word));
}

/**
 * The fast path's answers other than a plain hit: `fastAnswer` for a database's decision or a
 * preview, and `missed` for a code no link has (counted as the general path counts `/:code`), or
 * a path the general path would route there (`codeRouted`).
 */
function fastAnswers({ service, reply, metrics, uiServed, match }: DispatchDeps) {
  const fastCounts = metrics.fastRedirects;

  function fastAnswer(res: ServerResponse, req: IncomingMessage, hit: Visit, domain: Domain): void | Promise<void> {
    const get = req.method === 'GET';
    if (hit.kind === 'found') fastCounts[get ? FAST_GET : FAST_HEAD]!++;
    else metrics.redirected(hit.kind);
    const orphan = get ? (type: OrphanType) => service.recordOrphan(type, domain, req) : undefined;
    return answerVisitOn(reply, res, hit, uiServed, (what) => service.elsewhere(domain, what), orphan);
  }

  function missed(res: ServerResponse, req: IncomingMessage, method: string, hit: Visit, domain: Domain): void {
    const started = performance.now();
    const count = (): void => metrics.request(CODE_ROUTE, method, res.statusCode, (performance.now() - started) / 1000);
    const pending = fastAnswer(res, req, hit, domain);
    if (pending) void pending.then(count);
    else count();
  }

  /**
   * Whether the general path would answer `rest` with the route of a short link: a code, or one
   * plain segment (nothing normalizing changes) that no other route takes (`/yourls-api.php` is
   * YOURLS' while it is on).
   */
  function codeRouted(rest: string, method: string): boolean {
    if (isCodeShaped(rest)) return true;
    if (!isPlainSegment(rest)) return false;
    const found = match(method, [rest]);
    return found?.route.path === CODE_ROUTE && found.handler !== undefined;
  }

  return { fastAnswer, missed, codeRouted };
}

export function createDispatch(deps: DispatchDeps): Handler {
  const { service, reply, metrics, log, basePathRaw } = deps;
  const linkPrefix = `${basePathRaw}/`;
  const reservedPaths = reservedPathsOf(deps.reserved, linkPrefix);
  // The redirect fast path skips the gate, so it is taken only where short links are public: gate
  // off, or PUBLIC_REDIRECTS on. Behind the gate every request takes the general path, gate first.
  const fastRedirects = deps.fastRedirects;
  // The fast path's counters, held here: one load fewer per redirect than through `metrics`.
  const fastCounts = metrics.fastRedirects;
  // With several domains a request to another one asks for its code there (docs/api.md, domains).
  const domains = service.domains.several ? service.domains : undefined;
  // Each part a plain function of this closure, as before the split: the fast path calls them as such.
  const failures = createFailures(reply, log, deps.baseSegments);
  const { fail, crowded } = failures;
  const general = createGeneralPath(deps, failures);

  const { fastAnswer, missed, codeRouted } = fastAnswers(deps);

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
        const domain = domains === undefined ? null : domains.ofRequest(req);
        const hit = domain === null ? service.visitIn(target, linkPrefix.length, get, req) : service.visitOn(target, linkPrefix.length, get, req, domain);
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
            (later) => fastAnswer(res, req, later, domain),
            (err: unknown) => fail(res, err, method, target),
          );
        // A link preview of a limited link: decided here, answered here (a page, no count).
        if (decided?.kind === 'preview') return void fastAnswer(res, req, decided, domain);
        // A miss of a code (alphabet characters only, no reserved word): the general path would
        // route it to `/:code` and give this same answer, a 404 or the domain's redirect, and an
        // orphan visit. Given here, and counted as it counts it: a scanner's random paths cost
        // less (docs/performance.md, several domains).
        // So is a miss of any other one plain segment (`/wp-login.php`) the router gives `/:code`.
        if (decided?.kind === 'missing' && codeRouted(target.slice(linkPrefix.length), method)) return missed(res, req, method, decided, domain);
      } catch (err) {
        return fail(res, err, method, target);
      }
    }
    const started = performance.now();
    const pending = general.answer(req, res, method, target, next);
    // Read now: `routed` belongs to the next request once this one awaits.
    const route = general.routed;
    if (route === HANDED_ON) return;
    const count = (): void => metrics.request(route, method, res.statusCode, (performance.now() - started) / 1000);
    if (pending) void pending.then(count);
    else count();
  }

  return log.enabled('debug') ? withAccessLog(dispatch, log) : dispatch;
}

/** The handler with one debug line per request it answers (`LOG_LEVEL=debug`). */
function withAccessLog(dispatch: Handler, log: Logger): Handler {
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
