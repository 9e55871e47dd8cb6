/**
 * The OpenAPI documentation of the REST routes of `routes.ts` (docs/api.md), one `RouteDoc` per
 * route, from which `published/openapi.ts` builds the document: data, kept apart from the handlers
 * so that each file reads as one thing.
 */
import { TEXT_TYPE, HTML_TYPE } from '../http/respond.ts';
import { HTML_PAGE, body, empty, json, ref } from '../published/openapi-parts.ts';
import type { RouteDoc } from '../published/openapi.ts';

const SHORTENED = (deprecated: boolean) =>
  body('Created: the body is the short URL only.', TEXT_TYPE, { type: 'string' }, deprecated ? ['Location', 'Deprecation', 'Link'] : ['Location']);

const SHORTEN_ERRORS = {
  400: ref('responses', 'BadRequest'),
  409: ref('responses', 'Conflict'),
  413: ref('responses', 'PayloadTooLarge'),
  415: ref('responses', 'UnsupportedMediaType'),
  429: ref('responses', 'TooManyRequests'),
  503: ref('responses', 'Unavailable'),
};

/** `?domain=` of a route of one link (docs/api.md, domains). */
export const DOMAIN = ref('parameters', 'domain');

const SHORTEN_PARAMS = [
  ref('parameters', 'shorten_url'),
  ref('parameters', 'retention_days'),
  ref('parameters', 'shorten_code'),
  ref('parameters', 'max_visits'),
  ref('parameters', 'title'),
  ref('parameters', 'tags'),
  ref('parameters', 'shorten_domain'),
];

const VISITS =
  'GET counts a visit; HEAD answers as the next GET would, without counting. A link with max_visits redirects its first max_visits counted visits, then answers 410; a 410 is not a visit. ' +
  'Paths whose code has characters outside A-Z a-z 0-9 - _ are 404.';

const SHORTEN_DESCRIPTION =
  'Fields url (required), retention_days (0–36500, 0 or absent = forever), code (a custom code of A-Z a-z 0-9 - _, MIN_SHORT_LENGTH to MAX_SHORT_LENGTH characters, not a reserved word; absent = generated) ' +
  'max_visits (1–2147483647 counted visits, absent or null = unlimited), title (at most 512 characters; empty, null or absent = none) ' +
  'and tags (at most 20 distinct tags of 1–50 characters without commas, trimmed and kept sorted: a JSON array, or in a query string or form the field repeated, each value holding comma-separated tags) ' +
  "come as query parameters or as a JSON or form body (64 KiB at most); a query parameter wins over the body field (every tags parameter over the body's tags). " +
  'The same URL shortened twice gets two codes. A custom code held by a live link is 409; of concurrent requests for one code exactly one wins.';

export const HEALTH_DOC: RouteDoc = {
  GET: { operationId: 'getHealth', summary: 'Health check of the API', tag: 'service', access: 'gate', responses: { 200: json('Up.', 'Health') } },
};

export const SHORTEN_DOC: RouteDoc = {
  POST: {
    operationId: 'shortenUrl',
    summary: 'Create a short link',
    description: SHORTEN_DESCRIPTION,
    tag: 'links',
    access: 'gate',
    parameters: SHORTEN_PARAMS,
    requestBody: {
      required: false,
      content: {
        'application/json': { schema: ref('schemas', 'ShortenInput') },
        'application/x-www-form-urlencoded': { schema: ref('schemas', 'ShortenForm') },
      },
    },
    responses: { 201: SHORTENED(false), ...SHORTEN_ERRORS },
  },
  GET: {
    operationId: 'shortenUrlWithGet',
    summary: 'Create a short link with GET (deprecated)',
    description:
      'Deprecated: use POST. Behaves exactly as POST with query parameters; every response carries Deprecation and Link headers. HEAD is 405 with Allow: GET, POST (a HEAD must change nothing).',
    tag: 'links',
    access: 'gate',
    deprecated: true,
    parameters: SHORTEN_PARAMS,
    responses: { 201: SHORTENED(true), ...SHORTEN_ERRORS },
  },
};

export const LIST_DOC: RouteDoc = {
  GET: {
    operationId: 'listUrls',
    summary: 'List live links, newest first',
    description:
      'With q, only the links whose code, original URL or title contains it (case-insensitively); with tag (repeatable, or comma-separated), only the links having every tag named (compared exactly, case-sensitively). ' +
      'X-Total-Count counts the links the filters keep, all pages together. A viewer or admin key lists every live link, an editor key the links it made.',
    tag: 'admin',
    access: 'admin',
    parameters: [ref('parameters', 'limit'), ref('parameters', 'offset'), ref('parameters', 'q'), ref('parameters', 'tag'), ref('parameters', 'list_domain')],
    responses: {
      200: json('A page of links; Deprecation and Link only when the key came from api_key.', 'List', ['X-Total-Count', 'Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
    },
  },
};

export const URL_DOC: RouteDoc = {
  GET: {
    operationId: 'getUrl',
    summary: 'The record of one live link',
    tag: 'links',
    access: 'gate',
    parameters: [DOMAIN],
    responses: { 200: json('The record.', 'Record'), 400: ref('responses', 'BadRequest'), 404: ref('responses', 'NotFound') },
  },
  PATCH: {
    operationId: 'updateUrl',
    summary: 'Edit a link',
    description:
      'A JSON object holding any of url, retention_days, max_visits (null clears the limit), title (null or empty clears it), tags (an array replacing the tags; [] clears them) and the routing fields rules, forward_query, valid_since, valid_until, fallback_url and password (each sets its part, null removes it), each validated as on a create; any other field is 400. ' +
      'The code, created_at and visit_count never change; retention_days counts from created_at, so it can expire the link at once, and a max_visits at or below visit_count uses it up at once. ' +
      'The key is checked first (403), then the body (415, 400), then the code (404). On disk before the answer.',
    tag: 'admin',
    access: 'admin',
    parameters: [DOMAIN],
    requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'UpdateInput') } } },
    responses: {
      200: json('The updated record. Deprecation and Link only when the key came from api_key.', 'Record', ['Deprecation', 'Link']),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
      413: ref('responses', 'PayloadTooLarge'),
      415: ref('responses', 'UnsupportedMediaType'),
      503: ref('responses', 'Unavailable'),
    },
  },
  DELETE: {
    operationId: 'deleteUrl',
    summary: 'Delete a link',
    tag: 'admin',
    access: 'admin',
    parameters: [DOMAIN],
    responses: {
      400: ref('responses', 'BadRequest'),
      204: empty('Deleted (on disk before the answer). Deprecation and Link only when the key came from api_key.', ['Deprecation', 'Link']),
      404: ref('responses', 'NotFound'),
      503: ref('responses', 'Unavailable'),
    },
  },
};

export const LOOKUP_DOC: RouteDoc = {
  GET: {
    operationId: 'lookupUrl',
    summary: 'The newest live link of an original URL',
    tag: 'links',
    access: 'gate',
    parameters: [ref('parameters', 'lookup_url'), ref('parameters', 'list_domain')],
    responses: {
      200: json('The newest record whose original_url matches.', 'Record'),
      400: ref('responses', 'BadRequest'),
      404: ref('responses', 'NotFound'),
    },
  },
};

/** `/:code`, whose access depends on `PUBLIC_REDIRECTS`. */
const PASSWORD_LIMIT = 'After 5 wrong passwords in a minute for one link from one address, the form answers 429 with Retry-After until the minute has passed.';

export const followDoc = (publicRedirects: boolean): RouteDoc => ({
  GET: {
    operationId: 'followLink',
    summary: 'Follow a short link',
    description: publicRedirects
      ? `Public on this server (PUBLIC_REDIRECTS=true): anyone may open a short link, even with the gate on. ${VISITS}`
      : `Behind the gate like the API when the server runs with API_TOKEN (a gated instance is a private one, reached through a proxy that adds the header); PUBLIC_REDIRECTS=true makes short links public. ${VISITS}`,
    tag: 'links',
    access: publicRedirects ? 'public' : 'gate',
    responses: {
      200: body(
        'A page instead of the redirect: the password form of a protected link (not a visit; X-Link-Password sends the password with the GET), or a link preview of a link with a visit limit.',
        HTML_TYPE,
        HTML_PAGE,
        ['Cache-Control'],
      ),
      302: empty(
        "Redirect to the link's target (the original URL, or the first redirect rule that holds for the visitor), or to its fallback_url when it is expired or used up (not a visit).",
        ['Location', 'Cache-Control'],
      ),
      401: body('A wrong X-Link-Password: the form, saying so.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
      404: body('No such link, or one not valid yet: a small "Link not found" page.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
      410: body(
        'The link has expired (a small "This link has expired" page), or its visit limit is used up (a small "This link has reached its visit limit" page; not counted as a visit).',
        HTML_TYPE,
        HTML_PAGE,
        ['Cache-Control'],
      ),
      429: body('Too many wrong passwords for this link from this address.', HTML_TYPE, HTML_PAGE, ['Cache-Control', 'Retry-After']),
      503: json('A counted visit of a link with a visit limit could not be made durable (storage not writable); no visit was granted.', 'Error'),
    },
  },
  POST: {
    operationId: 'openProtectedLink',
    summary: "Send a protected link's password",
    description: `The form of a password-protected link posts here, with its password field. The right password is the redirect (a visit); a wrong one the form again with 401. ${PASSWORD_LIMIT} A link without a password answers as to a GET.`,
    tag: 'links',
    access: publicRedirects ? 'public' : 'gate',
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { password: { type: 'string' } } } } },
    },
    responses: {
      302: empty("Redirect to the link's target: the password was right.", ['Location', 'Cache-Control']),
      401: body('Wrong password: the form again, saying so.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
      404: body('No such link: a small "Link not found" page.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
      410: body('The link has expired or its visit limit is used up.', HTML_TYPE, HTML_PAGE, ['Cache-Control']),
      413: ref('responses', 'PayloadTooLarge'),
      415: ref('responses', 'UnsupportedMediaType'),
      429: body('Too many wrong passwords for this link from this address: the form, saying when to try again.', HTML_TYPE, HTML_PAGE, [
        'Cache-Control',
        'Retry-After',
      ]),
      503: json('The visit could not be made durable (storage not writable); no visit was granted.', 'Error'),
    },
  },
});
