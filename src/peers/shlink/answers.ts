/**
 * What a handler of Shlink's surface answers (docs/compat.md): a JSON body and its status, or a
 * problem. The service's outcomes, a body that is no JSON object, and what the reader or a store
 * threw all become Shlink's problems here, never the REST door's `{"detail"}`.
 */
import { HttpError } from '../../errors.ts';
import { readJsonObject, type JsonObject } from '../../http/body.ts';
import type { IncomingMessage } from 'node:http';
import type { Ctx } from '../../http/context.ts';
import { flatten, retryAfter } from '../../http/headers.ts';
import { JSON_TYPE, type Responder } from '../../http/respond.ts';
import { unavailableOf, type Failure } from '../../links/outcomes.ts';
import { invalidData, nonUniqueSlug, plainProblem, Problem, PROBLEM_TYPE, problem, refusedInput, shortUrlNotFound } from './problems.ts';

/** What a handler answers: a JSON body and its status, or a problem. */
export type Answer = { status: number; body: unknown; type?: string } | Problem;

export const ok = (body: unknown, status = 200): Answer => ({ status, body, type: JSON_TYPE });
export const NO_CONTENT: Answer = { status: 204, body: undefined };

/** A store that cannot be read or written: Shlink has no error type for it, so RFC 7807's plain one. */
export const unavailable = (detail: string): Problem => plainProblem(503, 'Service Unavailable', detail);

/** A service failure of a link named `code` as Shlink says it. */
export function failed(failure: Failure, code: string): Problem {
  switch (failure.error) {
    case 'not_found':
      return shortUrlNotFound(code);
    case 'invalid':
      return refusedInput(failure.detail);
    case 'conflict':
      return nonUniqueSlug(code);
    case 'unavailable':
      return unavailable(failure.detail);
    case 'rate_limited':
      // Shlink has no rate limit of its own, so no error type for it: RFC 7807's plain one.
      return plainProblem(429, 'Too Many Requests', failure.detail, [retryAfter(failure.retryAfter)]);
  }
}

/** A request body: one JSON object (Shlink's clients send JSON whatever their `Content-Type`); empty is `{}`. */
export async function readObject(req: IncomingMessage, limit: number): Promise<JsonObject | Problem> {
  const body = await readJsonObject(req, limit);
  if (body.ok) return body.value;
  switch (body.fault) {
    case 'empty':
      return {};
    case 'malformed':
      return problem('malformed-request-body', 'Provided request does not contain a valid JSON body.');
    default:
      return invalidData([], 'The request body must be a JSON object');
  }
}

/**
 * What a handler threw, as a problem: a body refused by the reader (too large, 413) and a store
 * that could not be read (a slice of a long list on a database that went down, 503). Undefined
 * for anything else, a bug.
 */
export function thrownProblem(err: unknown): Problem | undefined {
  const down = unavailableOf(err);
  if (down !== undefined) return unavailable(down.detail);
  if (err instanceof HttpError && err.detail !== undefined)
    return plainProblem(err.status, err.status === 413 ? 'Payload Too Large' : 'Bad Request', err.detail);
  return undefined;
}

/** An answer sent: a problem as `application/problem+json`, with any header it carries. */
export function send(reply: Responder, ctx: Ctx, answer: Answer): void {
  if (answer.status === 204) return reply.empty(ctx.res, 204);
  if (answer instanceof Problem) return reply.send(ctx.res, answer.status, PROBLEM_TYPE, JSON.stringify(answer.body), flatten(answer.headers));
  reply.send(ctx.res, answer.status, answer.type ?? JSON_TYPE, JSON.stringify(answer.body));
}
