/**
 * Everything but the redirect's fast path (`dispatch.ts`): normalize the target, strip the base
 * path (or hand the request to the host app), answer a preflight, match the route, let the gate
 * decide on that same match, then run the route's handler. docs/architecture.md, a create step by step.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './errors.ts';
import type { Ctx, RouteHandler } from './http/context.ts';
import type { Gate } from './http/gate.ts';
import type { Responder } from './http/respond.ts';
import { allowHeader, type Match } from './http/router.ts';
import { NO_ROUTE } from './metrics/metrics.ts';
import { normalizeTarget, stripBase } from './paths.ts';
import type { Failures } from './failures.ts';

/** `routed` of a request handed to the host app: not ours to count. */
export const HANDED_ON = '';

export interface GeneralDeps {
  reply: Responder;
  match: (method: string, segments: readonly string[]) => Match<RouteHandler> | undefined;
  gate: Gate;
  /** The base path as the router sees paths: decoded segments. */
  baseSegments: readonly string[];
  /** The base path's spelling on the wire, without a trailing slash (`''` at the root). */
  basePathRaw: string;
}

export interface GeneralPath {
  /** Answers one request. Returns the handler's pending work, if any. */
  answer(req: IncomingMessage, res: ServerResponse, method: string, target: string, next?: (err?: unknown) => void): Promise<void> | void;
  /**
   * The pattern of the route the last `answer` matched, set before it returns: `NO_ROUTE` when
   * none did, `HANDED_ON` when the request went to the host app's `next`. Read it at once: it
   * belongs to the next request once this one awaits.
   */
  routed: string;
}

export function createGeneralPath({ reply, match, gate, baseSegments, basePathRaw }: GeneralDeps, { fail, refuse, notAllowed }: Failures): GeneralPath {
  const path: GeneralPath = {
    routed: NO_ROUTE,
    answer(req, res, method, target, next) {
      path.routed = NO_ROUTE;
      const normalized = normalizeTarget(target);
      if (!normalized.ok) return fail(res, new HttpError(400, normalized.detail), method, target);
      const { segments, trailingSlash, query } = normalized.target;

      const rest = stripBase(segments, baseSegments);
      // Outside the base path an embedding app's own routes come first (Express-style `next`).
      if (rest === undefined && next) {
        next();
        // Set after: the host app may pass the request to this very handler again from `next`.
        path.routed = HANDED_ON;
        return;
      }
      // A preflight reveals nothing: the same 204 for every path, known or not (docs/api.md).
      if (method === 'OPTIONS') return reply.empty(res, 204);
      // One match serves the gate and the dispatch below. Nothing below runs for a request the gate
      // refuses; outside the base path counts as an unknown path.
      const found = rest === undefined ? undefined : match(method, rest);
      if (found) path.routed = found.route.path;
      const verdict = gate(method, found?.route, req.rawHeaders);
      if (!verdict.pass) return refuse(res, verdict, method, target);
      if (rest === undefined) return reply.empty(res, 404);
      if (rest.length === 0 && baseSegments.length > 0 && !trailingSlash) {
        // `/s` → `/s/`, keeping the query (docs/api.md).
        if (method !== 'GET' && method !== 'HEAD') return notAllowed(res, method, target, allowHeader(['GET']));
        return reply.empty(res, 301, ['Location', `${basePathRaw}/${query ? `?${query}` : ''}`]);
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
    },
  };
  return path;
}
