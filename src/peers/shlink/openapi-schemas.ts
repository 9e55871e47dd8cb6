/**
 * The components of Shlink's surface in the OpenAPI document (docs/compat.md): the shapes
 * `shapes.ts` writes and the problems `problems.ts` makes, as JSON Schemas, and the credential
 * Shlink's clients send. Data, read by `openapi.ts`; the names all start with `Shlink`, so none can
 * take the name of one of the service's own components.
 */
import { ref, type OpenApiObject } from '../../published/openapi-parts.ts';
import { MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, MAX_VISITS } from '../../links/validate.ts';
import { RULE_SCHEMAS } from './openapi-rules.ts';
import { errorType, PROBLEM_TYPE, type ShlinkError } from './problems.ts';

/** A date as `shapes.ts` writes one: ISO 8601, to the second, in UTC with an offset. */
const DATE = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$' } as const;

const COUNT = { type: 'integer', minimum: 0 } as const;

/** An instant a client sends: Shlink's ISO 8601, which this service keeps to the second. */
const INSTANT = {
  type: ['string', 'null'],
  description: 'An ISO 8601 date or time from 1970 to 9999 (UTC without an offset), such as 2026-05-01T10:00:00+02:00; null or empty: none.',
} as const;

/** An object whose every property is required, and no other allowed: how `shapes.ts` writes each. */
const exact = (properties: Record<string, OpenApiObject>, description?: string): OpenApiObject => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** `{data, pagination}` of `items`, under the one key Shlink names the list by. */
const paged = (key: string, items: OpenApiObject, description: string): OpenApiObject =>
  exact({ [key]: exact({ data: { type: 'array', items }, pagination: ref('schemas', 'ShlinkPagination') }) }, description);

const REDIRECTS = exact({
  baseUrlRedirect: { type: ['string', 'null'], description: "The domain's base_url redirect (docs/api.md, domains)." },
  regular404Redirect: { type: 'null', description: 'Not supported: a path that is no short URL is a 404.' },
  invalidShortUrlRedirect: { type: ['string', 'null'], description: "The domain's not_found redirect." },
});

/** What Shlink's `Visit` holds, as this service fills it in. */
const VISIT_PROPERTIES = {
  referer: { type: 'string', pattern: '^(https://[^/]+/)?$', description: "`https://<host>/` of the referrer's host, the only part kept; or empty." },
  date: DATE,
  userAgent: { type: 'string', description: "A typical User-Agent of the visit's browser and OS families (the text is never stored); empty without one." },
  visitLocation: {
    ...exact({
      countryCode: { type: 'string' },
      countryName: { type: 'string', description: "The country's English name." },
      regionName: { type: 'null' },
      cityName: { type: 'null' },
      latitude: { type: 'null' },
      longitude: { type: 'null' },
      timezone: { type: 'null' },
      isEmpty: { const: false },
    }),
    type: ['object', 'null'],
    description: 'The country only; null without one.',
  },
  potentialBot: { type: 'boolean' },
  visitedUrl: { type: 'string', description: 'The short URL.' },
};

const SCHEMAS: Record<string, OpenApiObject> = {
  ShlinkProblem: {
    type: 'object',
    description:
      "RFC 7807 problem details as Shlink writes them: `type` is Shlink's `https://shlink.io/api/error/<error>`, or `about:blank` for a failure Shlink has no type for (a body too large, a create past CREATE_RATE_LIMIT, a store that cannot be read or written), whose `title` is the status's reason phrase.",
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      detail: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      shortCode: { type: 'string', description: 'short-url-not-found: the code asked for.' },
      customSlug: { type: 'string', description: 'non-unique-slug: the custom code held by a live link.' },
      invalidElements: { type: 'array', items: { type: 'string' }, description: "invalid-data: the fields refused, by Shlink's names for them." },
      expectedHeaders: { type: 'array', items: { type: 'string' }, description: 'missing-authentication: `["X-Api-Key"]`.' },
    },
    required: ['type', 'title', 'detail', 'status'],
    additionalProperties: false,
  },
  ShlinkVisitsSummary: exact(
    { total: COUNT, nonBots: COUNT, bots: COUNT },
    "`total` is the link's visit_count, `bots` its bot events, `nonBots` the rest (visits counted without an event count as non-bots).",
  ),
  ShlinkShortUrl: exact(
    {
      shortCode: { type: 'string' },
      shortUrl: { type: 'string', description: 'The short link: the base URL, a slash and the code.' },
      longUrl: { type: 'string' },
      dateCreated: { ...DATE, description: 'created_at.' },
      visitsSummary: ref('schemas', 'ShlinkVisitsSummary'),
      tags: { type: 'array', maxItems: MAX_TAGS, items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH } },
      meta: exact({
        validSince: { type: ['string', 'null'], pattern: DATE.pattern, description: 'valid_since; null when the link is valid from its creation.' },
        validUntil: {
          type: ['string', 'null'],
          pattern: DATE.pattern,
          description: 'When the link stops answering: valid_until, or the end of its retention (expires_at) when that comes first or alone; null: never.',
        },
        maxVisits: { type: ['integer', 'null'], minimum: 1, maximum: MAX_VISITS },
      }),
      domain: { type: ['string', 'null'], description: "The host of the link's domain; null for the default one." },
      title: { type: ['string', 'null'], maxLength: MAX_TITLE_LENGTH },
      crawlable: { const: false, description: 'robots.txt disallows every link.' },
      forwardQuery: { type: 'boolean', description: "forward_query: the short URL's query is added to the target's." },
      hasRedirectRules: { type: 'boolean', description: 'The link has redirect rules (GET …/redirect-rules lists them).' },
    },
    "A link in Shlink's shape.",
  ),
  ShlinkPagination: exact({
    currentPage: { type: 'integer', minimum: 1 },
    pagesCount: { type: 'integer', minimum: 1 },
    itemsPerPage: { type: 'integer', minimum: 1, description: 'With itemsPerPage=-1, every item: their number, at least 1.' },
    itemsInCurrentPage: COUNT,
    totalItems: COUNT,
  }),
  ShlinkShortUrlList: paged('shortUrls', ref('schemas', 'ShlinkShortUrl'), 'A page of the short URLs.'),
  ShlinkVisit: exact(VISIT_PROPERTIES, 'A visit of a link, from its event.'),
  ShlinkVisitList: paged('visits', ref('schemas', 'ShlinkVisit'), "A page of a link's visits, newest first."),
  ShlinkOrphanVisitList: paged(
    'visits',
    exact(
      {
        ...VISIT_PROPERTIES,
        visitedUrl: { type: 'string', description: 'Where the short URLs of the domain it was sent to start: the path asked for is not kept.' },
        type: { enum: ['base_url', 'invalid_short_url'], description: 'GET / of a domain, or an unknown, expired or used-up short URL.' },
      },
      'An orphan visit.',
    ),
    'A page of the orphan visits, newest first.',
  ),
  ShlinkVisitsOverview: exact(
    { visits: exact({ nonOrphanVisits: ref('schemas', 'ShlinkVisitsSummary'), orphanVisits: ref('schemas', 'ShlinkVisitsSummary') }) },
    'The visits of every live link; this service records no orphan visits, so those are all zero.',
  ),
  ShlinkTagList: paged('tags', { type: 'string' }, 'Every tag of a live link.'),
  ShlinkTagStatsList: paged(
    'tags',
    exact({ tag: { type: 'string' }, shortUrlsCount: COUNT, visitsSummary: ref('schemas', 'ShlinkVisitsSummary') }),
    'Every tag of a live link, with the number of links having it and their visits.',
  ),
  ShlinkDomainList: exact(
    {
      domains: exact({
        data: {
          type: 'array',
          minItems: 1,
          items: exact({
            domain: { type: 'string', description: "BASE_URL's host, or a host of DOMAINS." },
            isDefault: { type: 'boolean' },
            redirects: REDIRECTS,
          }),
        },
        defaultRedirects: REDIRECTS,
      }),
    },
    'The default domain first, then those of DOMAINS, with their redirects.',
  ),
  ShlinkDomainRedirects: REDIRECTS,
  ShlinkDomainRedirectsInput: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: { type: 'string', description: 'One of the hosts of GET /rest/v3/domains.' },
      baseUrlRedirect: { type: ['string', 'null'], description: 'Sets base_url; null clears it, absent keeps it.' },
      regular404Redirect: { type: 'null', description: 'Not supported: any other value is invalid-data.' },
      invalidShortUrlRedirect: { type: ['string', 'null'], description: 'Sets not_found and expired at once; null clears both, absent keeps them.' },
    },
  },
  ShlinkDeletedVisits: exact({ deletedVisits: COUNT }),
  ...RULE_SCHEMAS,
  ShlinkCreateInput: {
    type: 'object',
    description:
      "Any other field is ignored. Accepted and not acted on: crawlable, shortCodeLength, apiKeyName. Refused (invalid-data) unless absent, null or empty: pathPrefix, a redirect rule (set with POST …/redirect-rules). A domain that is none of this service's hosts is invalid-data.",
    properties: {
      longUrl: { type: 'string', description: 'The URL to shorten, as the REST API accepts it.' },
      customSlug: {
        type: 'string',
        description: 'A custom code (MIN_SHORT_LENGTH to MAX_SHORT_LENGTH characters of A-Z a-z 0-9 - _); held by a live link: non-unique-slug.',
      },
      title: { type: ['string', 'null'], maxLength: MAX_TITLE_LENGTH },
      tags: {
        type: ['array', 'null'],
        items: { type: 'string' },
        description: `As the REST API: trimmed, distinct, sorted; at most ${MAX_TAGS} of 1–${MAX_TAG_LENGTH} characters.`,
      },
      maxVisits: { type: ['integer', 'null'], minimum: 1, maximum: MAX_VISITS },
      validSince: { ...INSTANT, description: `valid_since: before it, the link answers as an unknown code. ${INSTANT.description}` },
      validUntil: { ...INSTANT, description: `valid_until: from it on, the link answers as expired. ${INSTANT.description}` },
      findIfExists: {
        type: ['boolean', 'null'],
        description: 'true: the link of customSlug, or else the newest link of longUrl, when the other fields given match it; nothing is created then.',
      },
      crawlable: { type: ['boolean', 'null'] },
      forwardQuery: { type: ['boolean', 'null'], description: "forward_query: add the short URL's query to the target's. Absent or null: false." },
      shortCodeLength: { type: ['integer', 'null'], description: "Within MIN_SHORT_LENGTH..MAX_SHORT_LENGTH; codes keep this service's lengths." },
      domain: { type: ['string', 'null'], description: "The link's domain: a host of GET /rest/v3/domains; null, empty or absent: the default one." },
      pathPrefix: { type: ['string', 'null'], maxLength: 0 },
      redirectRules: { type: ['array', 'null'], maxItems: 0 },
    },
    required: ['longUrl'],
  },
  ShlinkEditInput: {
    type: 'object',
    description: 'Only the fields given change; any other field is ignored, and the same options as a create are refused.',
    properties: {
      longUrl: { type: 'string' },
      title: { type: ['string', 'null'], maxLength: MAX_TITLE_LENGTH, description: 'null or empty clears it.' },
      tags: { type: ['array', 'null'], items: { type: 'string' }, description: 'Replace the tags; null or [] clears them.' },
      maxVisits: { type: ['integer', 'null'], minimum: 1, maximum: MAX_VISITS, description: 'null clears the limit.' },
      validSince: { ...INSTANT, description: `Sets valid_since; null clears it. ${INSTANT.description}` },
      validUntil: {
        ...INSTANT,
        description: `Sets valid_until; null clears it. Null or later than the end of the link's retention also removes the retention, so the link ends when validUntil says. ${INSTANT.description}`,
      },
      crawlable: { type: ['boolean', 'null'] },
      forwardQuery: { type: ['boolean', 'null'], description: 'Sets forward_query; null is false.' },
    },
  },
};

/** A problem answer: Shlink's problem with these errors' `type` (or `about:blank`) and this status. */
export function problem(status: number, description: string, errors: readonly (ShlinkError | 'about:blank')[], headers: readonly string[] = []): OpenApiObject {
  const types = errors.map((e) => (e === 'about:blank' ? e : errorType(e)));
  const schema = { ...ref('schemas', 'ShlinkProblem'), properties: { type: { enum: types }, status: { const: status } } };
  return {
    description,
    ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((h) => [h, ref('headers', h)])) } : {}),
    content: { [PROBLEM_TYPE]: { schema } },
  };
}

const RESPONSES: Record<string, OpenApiObject> = {
  ShlinkUnauthorized: problem(401, 'X-Api-Key is missing (missing-authentication), or is no key of this service, revoked or expired (invalid-api-key).', [
    'missing-authentication',
    'invalid-api-key',
  ]),
  ShlinkForbidden: problem(
    403,
    "The key's role may not do this (docs/compat.md); detail is the service's sentence: this key's role (creator) does not allow reading links, their stats or their visits.",
    ['about:blank'],
  ),
  ShlinkShortUrlNotFound: problem(404, 'No live link with this code (short-url-not-found, with shortCode).', ['short-url-not-found']),
  ShlinkPayloadTooLarge: problem(413, 'The body is over MAX_BODY_BYTES.', ['about:blank']),
  ShlinkTooManyRequests: problem(
    429,
    'A create past CREATE_RATE_LIMIT for this client address; nothing was created. Retry-After says in how many seconds it may create again.',
    ['about:blank'],
    ['Retry-After'],
  ),
  ShlinkUnavailable: problem(503, 'The store cannot be read or written right now (a database down); nothing was changed.', ['about:blank']),
};

const SECURITY_SCHEMES: Record<string, OpenApiObject> = {
  shlinkApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description:
      "Shlink's credential (SHLINK_API=true): an API key of this service, a key of API_KEYS or a stored key, whose role must allow the operation (a 403 problem otherwise). Under /rest/ it stands instead of the gate's bearer token, which Shlink's clients cannot send; without it the answer is Shlink's 401 problem.",
  },
};

/** The components but the parameters (`openapi-params.ts`). */
export const COMPONENTS = { schemas: SCHEMAS, responses: RESPONSES, securitySchemes: SECURITY_SCHEMES };
