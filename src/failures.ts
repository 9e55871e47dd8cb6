/**
 * The one place errors become responses (STYLE: one error type, one error handler): an
 * `HttpError` is its status and `{"detail"}`, a store that cannot answer is a `503`, anything else
 * is logged with its stack and answered `500`. Also the refusals the handler makes before any
 * route: the gate's `401`, too many headers' `431`, a method a route lacks, `405`.
 */
import type { ServerResponse } from 'node:http';
import { storeFailure } from './api/outcomes.ts';
import { HttpError } from './errors.ts';
import type { GateVerdict } from './http/gate.ts';
import type { Responder } from './http/respond.ts';
import { redactTarget, type Logger } from './log.ts';
import { normalizeTarget, stripBase } from './paths.ts';

/**
 * More request headers than this is `431` (docs/operations.md). Node keeps only the first 2,000 in
 * `rawHeaders` (`maxHeadersCount`) and drops the rest unseen, so past that a second `Authorization`
 * would slip by the gate's duplicate rule; no real client sends anywhere near 100.
 */
export const MAX_REQUEST_HEADERS = 100;

export interface Failures {
  /** `failure` (thrown or rejected) as the response; a response already under way is cut. */
  fail(res: ServerResponse, failure: unknown, method: string, target: string): void;
  /** A 401 (docs/security.md): one warning line with the method and the redacted path, never the header. */
  refuse(res: ServerResponse, verdict: Exclude<GateVerdict, { pass: true }>, method: string, target: string): void;
  /** The 431 of too many headers, before anything else — unless the request belongs to a host app. */
  crowded(res: ServerResponse, method: string, target: string, next: ((err?: unknown) => void) | undefined): void;
  /** The 405 of a method the route has no handler for, with `Allow`. */
  notAllowed(res: ServerResponse, method: string, target: string, allow: string): void;
}

export function createFailures(reply: Responder, log: Logger, baseSegments: readonly string[]): Failures {
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

  return {
    fail,
    refuse(res, verdict, method, target) {
      log.warn('request refused by the gate', { method, path: redactTarget(target), reason: verdict.reason });
      fail(res, new HttpError(401, verdict.detail, [['WWW-Authenticate', 'Bearer']]), method, target);
    },
    crowded(res, method, target, next) {
      if (next) {
        const normalized = normalizeTarget(target);
        if (normalized.ok && stripBase(normalized.target.segments, baseSegments) === undefined) return next();
      }
      fail(res, new HttpError(431, `too many request headers: at most ${MAX_REQUEST_HEADERS} are accepted`), method, target);
    },
    notAllowed(res, method, target, allow) {
      fail(res, new HttpError(405, `${method} is not allowed here`, [['Allow', allow]]), method, target);
    },
  };
}
