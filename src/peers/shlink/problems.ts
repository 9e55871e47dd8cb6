/**
 * Shlink's errors (docs/compat.md): RFC 7807 problem details with Shlink's `type` URIs, titles and
 * statuses, and the extra fields its clients read (`shortCode`, `customSlug`, `invalidElements`,
 * `expectedHeaders`). Data in one table; `problem()` makes the body, a pure function.
 */
import type { HeaderPair } from '../../http/headers.ts';

export const PROBLEM_TYPE = 'application/problem+json';

/** Shlink's error codes: the last segment of its `type` URIs. */
const SHLINK_ERRORS = {
  'invalid-data': { status: 400, title: 'Invalid data' },
  'malformed-request-body': { status: 400, title: 'Malformed request body' },
  'non-unique-slug': { status: 400, title: 'Invalid custom slug' },
  'missing-authentication': { status: 401, title: 'Invalid authorization' },
  'invalid-api-key': { status: 401, title: 'Invalid API key' },
  'short-url-not-found': { status: 404, title: 'Short URL not found' },
  'not-found': { status: 404, title: 'Not Found' },
  'mercure-not-configured': { status: 501, title: 'Mercure integration not configured' },
} as const;

export type ShlinkError = keyof typeof SHLINK_ERRORS;

/** The `type` URI of a Shlink error, as Shlink spells it. */
export const errorType = (error: ShlinkError): string => `https://shlink.io/api/error/${error}`;

/** A problem to answer: a class, so that no request body (a JSON object of any keys) passes for one. */
export class Problem {
  constructor(
    readonly status: number,
    readonly body: { type: string; title: string; detail: string; status: number } & Record<string, unknown>,
    /** Headers the answer carries besides the usual ones (a 429's `Retry-After`). */
    readonly headers: readonly HeaderPair[] = [],
  ) {}
}

/** The problem of `error`, with `detail` and Shlink's extra fields. */
export function problem(error: ShlinkError, detail: string, extra: Record<string, unknown> = {}): Problem {
  const { status, title } = SHLINK_ERRORS[error];
  return new Problem(status, { type: errorType(error), title, detail, status, ...extra });
}

/**
 * A failure Shlink has no error for (a body too large, a store that cannot write): RFC 7807's
 * `about:blank`, whose title is the status's reason phrase.
 */
export function plainProblem(status: number, title: string, detail: string, headers: readonly HeaderPair[] = []): Problem {
  return new Problem(status, { type: 'about:blank', title, detail, status }, headers);
}

export const shortUrlNotFound = (shortCode: string): Problem => problem('short-url-not-found', `No URL found with short code "${shortCode}"`, { shortCode });

export const invalidData = (elements: readonly string[], detail = 'Provided data is not valid'): Problem =>
  problem('invalid-data', detail, { invalidElements: elements });

export const nonUniqueSlug = (slug: string): Problem => problem('non-unique-slug', `Provided slug "${slug}" is already in use.`, { customSlug: slug });

export const MISSING_KEY: Problem = problem(
  'missing-authentication',
  'Expected one of the following authentication headers, ["X-Api-Key"], but none were provided',
  {
    expectedHeaders: ['X-Api-Key'],
  },
);

export const INVALID_KEY: Problem = problem('invalid-api-key', 'Provided API key does not exist or is invalid.');

/**
 * A key whose role may not do what was asked (docs/compat.md), with the service's sentence.
 * Shlink's one 403 type, `forbidden-tag-operation`, is about renaming and deleting tags; it has
 * none for anything else a key may not do, so RFC 7807's plain one, as for its other gaps.
 */
export const forbidden = (detail: string): Problem => plainProblem(403, 'Forbidden', detail);

export const MERCURE_OFF: Problem = problem('mercure-not-configured', 'This Shlink instance is not integrated with a mercure hub.');

/** The 404 of a path no route serves (what Shlink's router answers). */
export const routeNotFound = (method: string, path: string): Problem => problem('not-found', `Cannot ${method} ${path}`);

/**
 * Our reasons name our fields (`url`, `code`, `max_visits`…); a Shlink client knows its own. Each
 * row: the start of a reason from the service's validators, the Shlink field it concerns, and
 * the reason in Shlink's terms when it names more than the field.
 */
const REASON_FIELDS: readonly (readonly [RegExp, string, string, string?])[] = [
  [/^url\b/, 'url', 'longUrl'],
  [/^code\b/, 'code', 'customSlug'],
  [/^max_visits\b/, 'max_visits', 'maxVisits'],
  [/^valid_since must be before valid_until\b/, 'valid_since', 'validSince', 'validSince must be before validUntil: the link would never be valid'],
  [/^valid_since\b/, 'valid_since', 'validSince'],
  [/^valid_until\b/, 'valid_until', 'validUntil'],
  [/^forward_query\b/, 'forward_query', 'forwardQuery'],
  [/^title\b/, 'title', 'title'],
  [/^domain\b/, 'domain', 'domain'],
  [/^(?:tags\b|a tag\b|a link may have)/, 'tags', 'tags'],
  // A list's refusals: the search and the tag filter.
  [/^q\b/, 'q', 'searchTerm'],
  [/^tag\b/, 'tag', 'tags'],
];

/** The `invalid-data` problem of a reason the service gave, its field named as Shlink names it. */
export function refusedInput(reason: string): Problem {
  const row = REASON_FIELDS.find(([pattern]) => pattern.test(reason));
  if (row === undefined) return invalidData([], reason);
  const [, ours, theirs, instead] = row;
  return invalidData([theirs], instead ?? (reason.startsWith(ours) ? theirs + reason.slice(ours.length) : reason));
}
