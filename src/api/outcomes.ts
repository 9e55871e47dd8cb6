/**
 * The HTTP answer of each failed service outcome (docs/api.md, Errors), in one table: the service says
 * what happened, this says which status tells it. A 404 has an empty body; the others carry the
 * reason as `{"detail":…}`.
 */
import { HttpError } from '../errors.ts';
import { retryAfter, type HeaderPair } from '../http/headers.ts';
import { unavailableOf, type Failure } from '../links/outcomes.ts';

export const FAILURE_STATUS: Readonly<Record<Failure['error'], number>> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
  rate_limited: 429,
};

/**
 * The error the error handler (`dispatch.ts`) turns into the answer, with any `headers` it must
 * carry; a 429 also says, in `Retry-After`, how many seconds to wait.
 */
export function failureError(failure: Failure, headers: readonly HeaderPair[] = []): HttpError {
  const extra = failure.error === 'rate_limited' ? [retryAfter(failure.retryAfter), ...headers] : headers;
  return new HttpError(FAILURE_STATUS[failure.error], 'detail' in failure ? failure.detail : undefined, extra);
}

/**
 * A store's refusal that reached the error handler without an outcome: the redirect's counted visit
 * of a limited link, which rejects when it cannot be made durable, or a slice of a long list that
 * a database could not read. It is a 503 with the store's reason, like every other read or write
 * the store could not make; anything else is left as it is.
 */
export function storeFailure(err: unknown): unknown {
  const unavailable = unavailableOf(err);
  return unavailable === undefined ? err : failureError(unavailable);
}
