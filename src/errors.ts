/**
 * The one error type of the service. A handler throws `HttpError(status, detail)` and the error
 * handler in `dispatch.ts` turns it into the response; anything else thrown is a bug, logged
 * with its stack and answered with a generic 500.
 *
 * `detail` of `undefined` means "empty body" (the contract's 403 and 404 answers have none).
 */
export class HttpError extends Error {
  readonly status: number;
  readonly detail: string | undefined;
  readonly headers: readonly (readonly [string, string])[];

  constructor(status: number, detail?: string, headers: readonly (readonly [string, string])[] = []) {
    super(detail ?? `HTTP ${status}`);
    this.name = 'HttpError';
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

/** Raised by configuration parsing; the server prints `message` as its one line and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
