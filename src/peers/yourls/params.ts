/**
 * The request's parameters as YOURLS reads them (PHP's `$_REQUEST`): the query string, then the
 * fields of a POST body — a url-encoded or a `multipart/form-data` form (ShareX sends the latter) —
 * which win over query parameters of the same name; of a name repeated, the last value counts.
 * A body of another type is not read as parameters, as PHP does not. Plus the two ways PHP code
 * reads a parameter's value that YOURLS relies on: `empty()` and `intval()`.
 */
import type { Ctx } from '../../http/context.ts';
import { mediaType, readBody } from '../../http/body.ts';
import { multipartBoundary, multipartFields } from '../../http/multipart.ts';

export async function requestParams(ctx: Ctx, maxBodyBytes: number): Promise<Map<string, string>> {
  const params = new Map<string, string>(ctx.query());
  if (ctx.method !== 'POST') return params;
  // Read within the limit whatever its type: an upload past it is a 413, never left on the socket unread.
  const body = await readBody(ctx.req, maxBodyBytes);
  const contentType = ctx.req.headers['content-type'];
  const type = mediaType(contentType);
  if (type === 'application/x-www-form-urlencoded') {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) params.set(name, value);
  } else if (type === 'multipart/form-data') {
    const boundary = multipartBoundary(contentType);
    if (boundary !== undefined) for (const [name, value] of multipartFields(body, boundary)) params.set(name, value);
  }
  return params;
}

/** PHP's `!empty()` of a request parameter: absent, `''` and `'0'` are no value. */
export function given(value: string | undefined): value is string {
  return value !== undefined && value !== '' && value !== '0';
}

/**
 * PHP's `intval` of a request parameter, as YOURLS reads `limit`, `start` and `timestamp`: leading
 * whitespace, a sign and the digits that follow; anything else is 0.
 */
export function phpInt(raw: string | undefined): number {
  const match = /^[ \t\n\r\v\f]*([+-]?\d+)/.exec(raw ?? '');
  return match === null ? 0 : Math.max(Number.MIN_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(match[1])));
}
