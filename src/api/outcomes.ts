/**
 * The HTTP answer of each failed service outcome (docs/api.md, Errors), in one table: the service says
 * what happened, this says which status tells it. A 404 has an empty body; the others carry the
 * reason as `{"detail":…}`.
 */
import { HttpError } from '../errors.ts';
import type { HeaderPair } from '../http/headers.ts';
import type { Failure } from './service.ts';

export const FAILURE_STATUS: Readonly<Record<Failure['error'], number>> = {
  invalid: 400,
  not_found: 404,
  unavailable: 503,
};

/** The error the error handler (`dispatch.ts`) turns into the answer, with any `headers` it must carry. */
export function failureError(failure: Failure, headers: readonly HeaderPair[] = []): HttpError {
  return new HttpError(FAILURE_STATUS[failure.error], 'detail' in failure ? failure.detail : undefined, headers);
}
