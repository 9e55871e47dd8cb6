/**
 * YOURLS' surface in the OpenAPI document (docs/compat.md#yourls-api): the `YOURLS` tag, the
 * documentation of `GET` and `POST /yourls-api.php`, and the shape of its JSON answer. Data, kept
 * apart from the handler (`route.ts`) as the REST door's is; `published/openapi.ts` adds it to the
 * document while the surface is on. The route is public to the gate: `signature` is its credential.
 */
import { ref, type OpenApiObject } from '../../published/openapi-parts.ts';
import type { OperationDoc, RouteDoc, Surface } from '../../published/openapi.ts';

const SURFACE: Surface = {
  tag: {
    name: 'YOURLS',
    description:
      "YOURLS' yourls-api.php, for the clients written for YOURLS (ShareX, the WordPress plugins, browser extensions): a YOURLS-compatible surface onto the same links, " +
      'served only with YOURLS_API=true (docs/compat.md). Its answers are those of YOURLS 1.10, in the format asked for; the bearer-token gate does not apply: signature is its credential.',
  },
  components: {
    schemas: {
      YourlsLink: {
        type: 'object',
        description: 'A link as url-stats and stats list it.',
        properties: {
          shorturl: { type: 'string' },
          url: { type: 'string' },
          title: { type: 'string', description: 'The title, or the long URL when the link has none.' },
          timestamp: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', description: 'created_at, in UTC.' },
          ip: { const: '', description: "The creator's address is not stored." },
          clicks: { type: 'integer', minimum: 0 },
        },
        required: ['shorturl', 'url', 'title', 'timestamp', 'ip', 'clicks'],
        additionalProperties: false,
      },
      YourlsTotals: {
        type: 'object',
        properties: { total_links: { type: 'integer', minimum: 0 }, total_clicks: { type: 'integer', minimum: 0 } },
        required: ['total_links', 'total_clicks'],
        additionalProperties: false,
      },
      YourlsAnswer: {
        type: 'object',
        description:
          'An answer with format=json (jsonp: the same object inside the callback; xml: the same fields as elements of <root>). Which fields come depends on the action and the outcome (docs/compat.md); the status is statusCode, else errorCode, else 200.',
        properties: {
          status: { enum: ['success', 'fail'], description: 'shorturl: the outcome.' },
          code: {
            type: 'string',
            description: 'shorturl: empty, or the refusal (error:url, error:nourl, error:noloop, error:keyword, error:title, error:flood, error:db).',
          },
          message: { type: 'string' },
          errorCode: { type: 'string', pattern: '^([0-9]{3})?$' },
          statusCode: { type: 'string', pattern: '^[0-9]{3}$' },
          error: { const: 'Invalid callback parameter', description: 'jsonp without a valid callback.' },
          url: {
            type: 'object',
            description: 'shorturl: the link made, or the one the URL already has (with its clicks).',
            properties: {
              keyword: { type: 'string' },
              url: { type: 'string' },
              title: { type: 'string' },
              date: { type: 'string' },
              ip: { const: '' },
              clicks: { type: 'integer', minimum: 0 },
            },
            required: ['keyword', 'url', 'title', 'date', 'ip'],
            additionalProperties: false,
          },
          title: { type: 'string' },
          shorturl: { type: 'string' },
          keyword: { type: 'string', description: 'expand: the code.' },
          longurl: { type: 'string', description: 'expand: the long URL.' },
          link: ref('schemas', 'YourlsLink'),
          links: {
            type: 'object',
            description: "stats: link_1, link_2, … in the filter's order; absent when none is picked.",
            propertyNames: { pattern: '^link_[1-9][0-9]*$' },
            additionalProperties: ref('schemas', 'YourlsLink'),
          },
          stats: ref('schemas', 'YourlsTotals'),
          'db-stats': ref('schemas', 'YourlsTotals'),
          version: { type: 'string' },
          db_version: { type: 'string' },
          callback: { type: 'string', description: "The request's callback, when it sent one (and on a refused signature, empty when none)." },
        },
        additionalProperties: false,
      },
    },
  },
};

const PARAMETERS = [
  ['action', 'shorturl, expand, url-stats, stats, db-stats or version.'],
  ['format', 'xml (the default), json, jsonp (with callback) or simple (plain text).'],
  [
    'signature',
    'An API key of this service (API_KEYS, or a stored key whose role allows the action); with timestamp, the hash of the timestamp and an API_KEYS key.',
  ],
  ['timestamp', "Unix seconds, within 12 hours of the server's clock, for a hashed signature."],
  ['hash', 'md5 (the default), sha1 or sha256: how a timestamped signature is hashed.'],
  ['url', 'shorturl: the URL to shorten.'],
  ['keyword', 'shorturl: a custom code.'],
  ['title', "shorturl: the link's title."],
  ['shorturl', 'expand, url-stats: a code, or the whole short URL.'],
  ['filter', 'stats: top (the default), bottom, last or rand.'],
  ['limit', 'stats: how many links to list (none without it).'],
  ['start', 'stats: how many to skip first.'],
  ['callback', 'jsonp: the function to call.'],
  ['db', 'version: 1 adds db_version.'],
].map(([name, description]) => ({ name: name!, in: 'query', description: description!, schema: { type: 'string' } }));

/**
 * YOURLS answers in the format asked for, whatever the status; in JSON, an answer with these fields
 * (`required`, and `fields` narrowing their values).
 */
const answer = (description: string, required: readonly string[], fields: Record<string, OpenApiObject> = {}, headers: readonly string[] = []) => {
  const json = {
    ...ref('schemas', 'YourlsAnswer'),
    ...(required.length > 0 ? { required } : {}),
    ...(Object.keys(fields).length > 0 ? { properties: fields } : {}),
  };
  return {
    description,
    ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((h) => [h, ref('headers', h)])) } : {}),
    content: {
      'application/xml': { schema: { type: 'string', description: 'The fields as elements of <root>.' } },
      'application/json': { schema: json },
      'application/javascript': { schema: { type: 'string', description: 'callback(<the JSON answer>).' } },
      'text/plain': { schema: { type: 'string', description: 'format=simple (or an unknown format): the short URL, the long URL, or a message.' } },
    },
  };
};

const DESCRIPTION =
  "YOURLS' yourls-api.php, for its clients, when YOURLS_API is on: the parameters come as a query string or a url-encoded or multipart form (POST), " +
  'and every action needs signature. The status, shapes and messages are those YOURLS 1.10 answers with (docs/compat.md).';

/** The answers of both methods; a POST's also 413, since only a POST's body is read. */
const ANSWERS = {
  200: answer('The action succeeded.', []),
  400: answer('An unknown action (errorCode), a refused or already shortened URL (status fail), a taken keyword, or a bad JSONP callback (error).', []),
  403: answer(
    "No valid signature (Please log in, or Invalid username or password), or a key whose role may not do the action (the service's sentence: this key's role (viewer) does not allow creating links).",
    ['message', 'errorCode', 'callback'],
    { errorCode: { const: '403' } },
  ),
  404: answer('expand or url-stats of an unknown link.', ['message']),
  429: answer(
    'shorturl past CREATE_RATE_LIMIT for this client address (error:flood); Retry-After says when to try again.',
    ['status', 'code'],
    { code: { const: 'error:flood' } },
    ['Retry-After'],
  ),
  503: answer('The link could not be stored (error:db), or the links could not be read (a database down).', ['message']),
};

const operation = (operationId: string, summary: string, responses: OperationDoc['responses']): OperationDoc => ({
  operationId,
  summary,
  description: DESCRIPTION,
  tag: 'YOURLS',
  access: 'public',
  parameters: PARAMETERS,
  responses,
});

/** The documentation of `/yourls-api.php`, and the surface it belongs to. */
export const YOURLS_DOCS: { surface: Surface; doc: RouteDoc } = {
  surface: SURFACE,
  doc: {
    GET: operation('yourlsApi', "YOURLS' API (when YOURLS_API is on)", ANSWERS),
    POST: {
      ...operation('yourlsApiForm', "YOURLS' API with a form body (when YOURLS_API is on)", { ...ANSWERS, 413: ref('responses', 'PayloadTooLarge') }),
      requestBody: {
        required: false,
        content: {
          'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
          'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      },
    },
  },
};
