/**
 * Shlink's surface in the OpenAPI document (docs/compat.md): the `Shlink` tag, one `RouteDoc` per
 * route of `routes.ts`, and the components they name (`openapi-schemas.ts`). Data, kept apart from
 * the handlers as the REST door's is (`api/routes-openapi.ts`); `published/openapi.ts` adds it to
 * the document while the surface is on. Every operation is public to the gate: its credential is
 * Shlink's own `X-Api-Key`, refused with Shlink's 401 problem, and a key whose role may not do
 * what the operation does with a 403 one.
 */
import { body, ref, type OpenApiObject } from '../../published/openapi-parts.ts';
import type { DocumentedRoute, OperationDoc, RouteDoc, Surface } from '../../published/openapi.ts';
import { COMPONENTS, problem } from './openapi-schemas.ts';
import { LIST_PARAMS, PARAMETERS, tagParams, VISIT_PARAMS } from './openapi-params.ts';
import { PROBLEM_TYPE } from './problems.ts';

const JSON_TYPE = 'application/json';
const HEALTH_TYPE = 'application/health+json';

const SURFACE: Surface = {
  tag: {
    name: 'Shlink',
    description:
      "Shlink's REST API v3, for Shlink's web client and JS SDK: a Shlink-compatible surface onto the same links, served only with SHLINK_API=true (docs/compat.md). " +
      "Its answers are Shlink's shapes, and its errors Shlink's problem details (application/problem+json). Every route but health needs an API key in X-Api-Key, whose role must allow what it does; " +
      "the bearer-token gate does not apply under /rest/. A method a path does not serve is this service's 405 with Allow.",
  },
  components: { ...COMPONENTS, parameters: PARAMETERS },
};

const ok = (description: string, schema: string): OpenApiObject => body(description, JSON_TYPE, ref('schemas', schema));
const invalid = (description: string): OpenApiObject => problem(400, description, ['invalid-data']);
/** A body that is no JSON object: not JSON at all (malformed-request-body), or another JSON value (invalid-data). */
const badBody = (more: string): OpenApiObject => problem(400, `${more}, or the body is no JSON object.`, ['invalid-data', 'malformed-request-body']);

const NOT_FOUND = ref('responses', 'ShlinkShortUrlNotFound');
const TOO_LARGE = ref('responses', 'ShlinkPayloadTooLarge');
const UNAVAILABLE = ref('responses', 'ShlinkUnavailable');

/** An operation that needs a key, any good one: its 401 is Shlink's problem. */
function keyed(operationId: string, summary: string, responses: Record<number, OpenApiObject>, extra: Partial<OperationDoc> = {}): OperationDoc {
  return {
    operationId,
    summary,
    tag: 'Shlink',
    access: 'public',
    credential: 'shlinkApiKey',
    responses: { ...responses, 401: ref('responses', 'ShlinkUnauthorized') },
    ...extra,
  };
}

/**
 * An operation that needs a key whose role allows what it does (`routes.ts`): Shlink's 401
 * problem, and the 403 one of a role too low.
 */
function roled(operationId: string, summary: string, responses: Record<number, OpenApiObject>, extra: Partial<OperationDoc> = {}): OperationDoc {
  return keyed(operationId, summary, { ...responses, 403: ref('responses', 'ShlinkForbidden') }, extra);
}

const json = (schema: string): OpenApiObject => ({ required: false, content: { [JSON_TYPE]: { schema: ref('schemas', schema) } } });

const health = (operationId: string, version: string): RouteDoc => ({
  GET: {
    operationId,
    summary: "Shlink's health: up, and which Shlink release this surface implements",
    description: `No key needed. version is ${version}, the Shlink release whose REST API this surface implements (docs/compat.md).`,
    tag: 'Shlink',
    access: 'public',
    responses: {
      200: body('Reads work.', HEALTH_TYPE, healthSchema('pass', version)),
      503: body('The store cannot be read, or the service is shutting down.', HEALTH_TYPE, healthSchema('fail', version)),
    },
  },
});

function healthSchema(status: 'pass' | 'fail', version: string): OpenApiObject {
  return {
    type: 'object',
    properties: {
      status: { const: status },
      version: { const: version },
      links: {
        type: 'object',
        properties: { about: { const: 'https://shlink.io' }, project: { const: 'https://github.com/shlinkio/shlink' } },
        required: ['about', 'project'],
        additionalProperties: false,
      },
    },
    required: ['status', 'version', 'links'],
    additionalProperties: false,
  };
}

/**
 * Any other path under `/rest` (`path` is `/rest` or `/rest/{shlink_path}`): Shlink's 404. Behind
 * the gate (`gated`) only a caller with a key learns even that.
 */
function unknown(name: string, path: string, gated: boolean): RouteDoc {
  const doc = (method: string): OperationDoc => {
    const notFound = problem(404, `No route of Shlink's serves ${path}: \`Cannot ${method} <path>\`.`, ['not-found']);
    const summary = `Any other path under /rest: Shlink's 404`;
    const operationId = `shlink${name}${method[0]}${method.slice(1).toLowerCase()}`;
    return gated ? keyed(operationId, summary, { 404: notFound }) : { operationId, summary, tag: 'Shlink', access: 'public', responses: { 404: notFound } };
  };
  return { GET: doc('GET'), POST: doc('POST'), PUT: doc('PUT'), PATCH: doc('PATCH'), DELETE: doc('DELETE') };
}

const V3 = '/rest/v3';

/** The routes whose documentation depends on nothing of the instance, by path. */
const FIXED: Readonly<Record<string, RouteDoc>> = {
  [`${V3}/short-urls`]: {
    GET: roled(
      'shlinkListShortUrls',
      'List the short URLs',
      {
        200: ok('A page of the links the filters keep.', 'ShlinkShortUrlList'),
        400: invalid('A parameter is refused, named in invalidElements.'),
        503: UNAVAILABLE,
      },
      {
        description:
          "Newest first unless orderBy says otherwise. searchTerm, tags[] and excludeTags[] are checked by the REST list's rules (q and tag). Another ordering than dateCreated, dates, several tags with tagsMode=any, excludeTags or excludeMaxVisitsReached walk every matching link (docs/compat.md).",
        parameters: LIST_PARAMS,
      },
    ),
    POST: roled(
      'shlinkCreateShortUrl',
      'Create a short URL',
      {
        200: ok('The link made, or with findIfExists the one found.', 'ShlinkShortUrl'),
        400: problem(400, 'A field is refused (invalid-data), the customSlug is held by a live link (non-unique-slug), or the body is no JSON object.', [
          'invalid-data',
          'non-unique-slug',
          'malformed-request-body',
        ]),
        413: TOO_LARGE,
        429: ref('responses', 'ShlinkTooManyRequests'),
        503: UNAVAILABLE,
      },
      {
        description:
          'The body is read as JSON whatever its Content-Type. The same rules as every door: a URL, a code, a title, tags and a visit limit are what the REST API accepts.',
        requestBody: { ...json('ShlinkCreateInput'), required: true },
      },
    ),
  },
  [`${V3}/short-urls/:code`]: {
    GET: roled('shlinkGetShortUrl', 'One short URL', { 200: ok('The link.', 'ShlinkShortUrl'), 404: NOT_FOUND, 503: UNAVAILABLE }),
    PATCH: roled(
      'shlinkEditShortUrl',
      'Edit a short URL',
      { 200: ok('The link as edited.', 'ShlinkShortUrl'), 400: badBody('A field is refused'), 404: NOT_FOUND, 413: TOO_LARGE, 503: UNAVAILABLE },
      { description: 'The body first (413, 400), then the code (404), then the fields (400).', requestBody: { ...json('ShlinkEditInput'), required: true } },
    ),
    DELETE: roled('shlinkDeleteShortUrl', 'Delete a short URL', { 204: { description: 'Deleted. No body.' }, 404: NOT_FOUND, 503: UNAVAILABLE }),
  },
  [`${V3}/short-urls/:code/visits`]: {
    GET: roled(
      'shlinkListShortUrlVisits',
      "A short URL's visits, newest first",
      {
        200: ok('A page of its visits.', 'ShlinkVisitList'),
        400: invalid('A date is refused, or startDate is after endDate.'),
        404: NOT_FOUND,
        503: UNAVAILABLE,
      },
      { parameters: VISIT_PARAMS },
    ),
    DELETE: roled('shlinkDeleteShortUrlVisits', "Delete a short URL's visits", {
      200: ok('How many visits were deleted.', 'ShlinkDeletedVisits'),
      404: NOT_FOUND,
      503: UNAVAILABLE,
    }),
  },
  [`${V3}/short-urls/:code/redirect-rules`]: {
    GET: roled('shlinkGetRedirectRules', "A short URL's redirect rules", {
      200: ok('Its rules in order, and its long URL as the default.', 'ShlinkRedirectRules'),
      404: NOT_FOUND,
      503: UNAVAILABLE,
    }),
    POST: roled(
      'shlinkSetRedirectRules',
      "Replace a short URL's redirect rules",
      {
        200: ok('The rules as they are now.', 'ShlinkRedirectRules'),
        400: badBody('A rule or condition is refused, named in detail (invalidElements: redirectRules)'),
        404: NOT_FOUND,
        413: TOO_LARGE,
        503: UNAVAILABLE,
      },
      {
        description: "The body first (413, 400), then the code (404), then the rules (400). The same rules as the REST API's rules field (docs/api.md).",
        requestBody: { ...json('ShlinkRedirectRulesInput'), required: true },
      },
    ),
  },
  [`${V3}/visits`]: {
    GET: roled('shlinkVisitsOverview', 'The visits of every live link', {
      200: ok('The totals.', 'ShlinkVisitsOverview'),
      500: {
        description: 'Unexpected error: `{"detail"}`; or the visit totals could not be counted, a plain problem.',
        content: { [JSON_TYPE]: { schema: ref('schemas', 'Error') }, [PROBLEM_TYPE]: { schema: ref('schemas', 'ShlinkProblem') } },
      },
      503: UNAVAILABLE,
    }),
  },
  [`${V3}/visits/orphan`]: {
    GET: roled(
      'shlinkListOrphanVisits',
      'The orphan visits, newest first',
      { 200: ok('A page of the orphan visits.', 'ShlinkOrphanVisitList'), 400: invalid('A date is refused, or startDate is after endDate.'), 503: UNAVAILABLE },
      {
        parameters: VISIT_PARAMS,
        description:
          "A viewer or admin key. An expired or used-up link is an invalid_short_url, as in Shlink; visitedUrl is where its domain's short URLs start.",
      },
    ),
  },
  [`${V3}/tags`]: {
    GET: roled(
      'shlinkListTags',
      'Every tag of a live link',
      {
        200: ok('A page of the tags.', 'ShlinkTagList'),
        400: invalid('orderBy or searchTerm is refused, or a startDate or endDate is no date.'),
        503: UNAVAILABLE,
      },
      { description: 'Every item on one page unless itemsPerPage says otherwise.', parameters: tagParams(['tag']) },
    ),
  },
  [`${V3}/tags/stats`]: {
    GET: roled(
      'shlinkTagsStats',
      'Every tag of a live link, with its counts',
      {
        200: ok('A page of the tags with their counts.', 'ShlinkTagStatsList'),
        400: invalid('orderBy or searchTerm is refused, or a startDate or endDate is no date.'),
        503: UNAVAILABLE,
      },
      {
        description: 'Every item on one page unless itemsPerPage says otherwise.',
        parameters: tagParams(['tag', 'shortUrlsCount', 'visits', 'nonBotVisits']),
      },
    ),
  },
  [`${V3}/domains`]: {
    GET: keyed('shlinkListDomains', 'The domains and their redirects', { 200: ok('The default domain first.', 'ShlinkDomainList'), 503: UNAVAILABLE }),
  },
  [`${V3}/domains/redirects`]: {
    PATCH: roled(
      'shlinkSetDomainRedirects',
      "Set a domain's redirects (an admin key)",
      {
        200: ok('The redirects as they are now.', 'ShlinkDomainRedirects'),
        400: badBody('domain is none of this service, a redirect is no URL, or regular404Redirect is set'),
        413: TOO_LARGE,
        503: UNAVAILABLE,
      },
      { requestBody: { ...json('ShlinkDomainRedirectsInput'), required: true } },
    ),
  },
  [`${V3}/mercure-info`]: {
    GET: keyed('shlinkMercureInfo', 'Mercure: not integrated', {
      501: problem(501, 'As Shlink without Mercure (mercure-not-configured): its web client then refreshes by polling.', ['mercure-not-configured']),
    }),
  },
};

/** What the table's route of `path` carries for the document. */
export type RouteDocumentation = Required<Pick<DocumentedRoute, 'doc' | 'surface'>> & Pick<DocumentedRoute, 'wildcard'>;

/**
 * The documentation of each route of Shlink's surface, by the route's path (`routes.ts`); `gated`:
 * the bearer-token gate is on. A path without documentation is an error, at start-up.
 */
export function shlinkDocs(gated: boolean, version: string): (path: string) => RouteDocumentation {
  const docs: Readonly<Record<string, RouteDoc>> = {
    ...FIXED,
    '/rest/health': health('shlinkHealth', version),
    [`${V3}/health`]: health('shlinkHealthV3', version),
    '/rest': unknown('UnknownRoot', '/rest', gated),
    '/rest/*': unknown('Unknown', 'this path', gated),
  };
  return function documentation(path) {
    const doc = docs[path];
    if (doc === undefined) throw new Error(`no documentation of Shlink's route ${path}`);
    return { doc, surface: SURFACE, ...(path.endsWith('/*') ? { wildcard: 'shlink_path' } : {}) };
  };
}
