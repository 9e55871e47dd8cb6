/**
 * The parts of the OpenAPI document: building blocks for the route table's `doc` entries (a JSON
 * response, an empty one, a `$ref`) and the components every operation shares — parameters,
 * headers, error responses, schemas and security schemes.
 */
import {
  AUTH_CHECK_SCHEMA,
  CODE_SCHEMA,
  ERROR_SCHEMA,
  HEALTHZ_SCHEMA,
  HEALTH_SCHEMA,
  LIMIT_SCHEMA,
  LIST_SCHEMA,
  OFFSET_SCHEMA,
  RECORD_SCHEMA,
  SHORTEN_INPUT_SCHEMA,
  UPDATE_INPUT_SCHEMA,
} from './schemas.ts';
import { CUSTOM_CODE, MAX_SEARCH_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH } from '../links/validate.ts';

/** A fragment of an OpenAPI document (a response, a parameter, a schema…). */
export type OpenApiObject = Readonly<Record<string, unknown>>;

// ---- building blocks for the route table's `doc` entries ----

export const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string): OpenApiObject => ({
  $ref: `#/components/${kind}/${name}`,
});

function withHeaders(response: Record<string, unknown>, headers: readonly string[]): OpenApiObject {
  if (headers.length > 0) response['headers'] = Object.fromEntries(headers.map((h) => [h, ref('headers', h)]));
  return response;
}

/** A JSON response; `schema` is a component name or a schema. */
export function json(description: string, schema: string | OpenApiObject, headers: readonly string[] = []): OpenApiObject {
  const s = typeof schema === 'string' ? ref('schemas', schema) : schema;
  return withHeaders({ description, content: { 'application/json': { schema: s } } }, headers);
}

export function body(description: string, type: string, schema: OpenApiObject, headers: readonly string[] = []): OpenApiObject {
  return withHeaders({ description, content: { [type]: { schema } } }, headers);
}

export function empty(description: string, headers: readonly string[] = []): OpenApiObject {
  return withHeaders({ description }, headers);
}

export const HTML_PAGE = { type: 'string', description: 'A small HTML page.' } as const;

// ---- components ----

const param = (name: string, where: 'query' | 'header' | 'path', schema: OpenApiObject, description: string, extra: OpenApiObject = {}): OpenApiObject => ({
  name,
  in: where,
  ...(where === 'path' ? { required: true } : {}),
  description,
  schema,
  ...extra,
});

export const PARAMETERS: Record<string, OpenApiObject> = {
  code: param('code', 'path', { ...CODE_SCHEMA, pattern: '^[A-Za-z0-9_-]+$' }, 'The short code. A path whose code has other characters is 404.'),
  file: param('file', 'path', { type: 'string' }, 'A file of the static/ folder, e.g. docs.css.'),
  id: param('id', 'path', { type: 'string', pattern: '^[A-Za-z0-9_-]{8}$' }, "A stored API key's public id."),
  api_key: param(
    'api_key',
    'query',
    { type: 'string' },
    'Deprecated: the admin key as a query parameter. Send the X-API-Key header instead (query strings leak into logs and history); responses to requests that use it carry Deprecation and Link headers. The header wins when both are sent.',
    { deprecated: true },
  ),
  limit: param('limit', 'query', LIMIT_SCHEMA, 'Page size, 1–1000. Without it the whole list is returned.'),
  offset: param('offset', 'query', OFFSET_SCHEMA, 'Entries to skip (default 0).'),
  q: param(
    'q',
    'query',
    { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH },
    `Keep only the links whose code, original URL or title contains this text, case-insensitively; 1–${MAX_SEARCH_LENGTH} characters.`,
  ),
  tag: param(
    'tag',
    'query',
    { type: 'array', items: { type: 'string' } },
    `Keep only the links having this tag, compared exactly (case-sensitively) after trimming spaces. Repeatable (and commas separate tags too): a link must have every tag named. 1–${MAX_TAG_LENGTH} characters each, at most ${MAX_TAGS}.`,
    { style: 'form', explode: true },
  ),
  shorten_url: param('url', 'query', { type: 'string' }, 'The URL to shorten; wins over the body field.'),
  retention_days: param(
    'retention_days',
    'query',
    { type: 'string', pattern: '^[0-9]+$' },
    'Lifetime in days, 0–36500 as decimal digits; wins over the body field.',
  ),
  shorten_code: param(
    'code',
    'query',
    { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 64 },
    'A custom code (A-Z a-z 0-9 - _, MIN_SHORT_LENGTH to MAX_SHORT_LENGTH characters, not a reserved word; case-sensitive); wins over the body field. Held by a live link: 409.',
  ),
  max_visits: param(
    'max_visits',
    'query',
    { type: 'string', pattern: '^([0-9]*|null)$' },
    'Counted visits allowed, 1–2147483647 as decimal digits (empty or null = unlimited); wins over the body field.',
  ),
  title: param('title', 'query', { type: 'string' }, `A title, at most ${MAX_TITLE_LENGTH} characters (empty = none); wins over the body field.`),
  tags: param(
    'tags',
    'query',
    { type: 'array', items: { type: 'string' } },
    `Tags: the parameter repeated, each value holding one tag or several separated by commas; each is trimmed and then 1–${MAX_TAG_LENGTH} characters, duplicates are dropped, at most ${MAX_TAGS} remain. Wins over the body field.`,
    { style: 'form', explode: true },
  ),
  domain: param(
    'domain',
    'query',
    { type: 'string' },
    "The link's domain: one of the service's hosts (DOMAINS), or absent (or default) for the default one. Another host is 400.",
  ),
  list_domain: param(
    'domain',
    'query',
    { type: 'string' },
    "Keep only the links of this domain: one of the service's hosts, or default for the default one; absent = every domain's. Another host is 400.",
  ),
  shorten_domain: param(
    'domain',
    'query',
    { type: 'string' },
    "The domain the link lives on: one of the service's hosts (DOMAINS); absent, empty or default = the default one. Another host is 400. Wins over the body field.",
  ),
  host: param('host', 'path', { type: 'string' }, "One of the service's domains: base_url's host or a host of DOMAINS (with its port, if any)."),
  lookup_url: param('url', 'query', { type: 'string' }, 'The original URL; normalized like stored URLs before matching.', { required: true }),
  mcp_protocol_version: param(
    'MCP-Protocol-Version',
    'header',
    { type: 'string', enum: ['2025-11-25', '2025-06-18', '2025-03-26'] },
    'The negotiated MCP version, sent by clients after initialize. Another value is 400.',
  ),
  origin: param(
    'Origin',
    'header',
    { type: 'string' },
    "Sent by browsers. Absent, base_url's origin or one of MCP_ALLOWED_ORIGINS; anything else is 403 (DNS rebinding protection).",
  ),
};

const header = (description: string, schema: OpenApiObject = { type: 'string' }): OpenApiObject => ({ description, schema });

export const HEADERS: Record<string, OpenApiObject> = {
  Location: header('The short URL (201) or the original URL (302).'),
  'X-Total-Count': header('The number of live links the filters keep, all pages together.', { type: 'integer', minimum: 0 }),
  Deprecation: header('RFC 9745: this usage is deprecated since @<Unix seconds>. Sent only on deprecated usages.', { type: 'string', pattern: '^@[0-9]+$' }),
  Link: header('`<base_url/docs#deprecations>; rel="deprecation"`: where the deprecation is explained. Sent with Deprecation.'),
  Allow: header('The methods the path serves.'),
  'WWW-Authenticate': header('`Bearer`.'),
  ETag: header('Strong validator of the file; send it back in If-None-Match.'),
  'Retry-After': header('Whole seconds until this client address may try again: create again, or try another password.', { type: 'integer', minimum: 1 }),
  'Cache-Control': header('`private, no-store` on redirects; `no-cache` on static files.'),
};

export const RESPONSES: Record<string, OpenApiObject> = {
  BadRequest: json('Invalid input or a bad path; detail says which.', 'Error'),
  Unauthorized: json('The gate is on and Authorization is missing or not exactly `Bearer <API_TOKEN>`.', 'Error', ['WWW-Authenticate']),
  Forbidden: empty('The admin key is missing or wrong (checked before anything else). Empty body.'),
  NotFound: empty('No live link with this code or URL. Empty body.'),
  Conflict: json('The custom code is held by a live link: `{"detail":"code already in use"}`.', 'Error'),
  MethodNotAllowed: json('The path does not serve this method.', 'Error', ['Allow']),
  PayloadTooLarge: json('The body is over 64 KiB. The connection is closed.', 'Error'),
  UnsupportedMediaType: json('The body has a content type the operation does not read.', 'Error'),
  TooManyRequests: json(
    'CREATE_RATE_LIMIT is set and this client address has used up its creates of the window; nothing was created. Retry-After says in how many seconds it may create again.',
    'Error',
    ['Retry-After'],
  ),
  Unavailable: json('No free short code, or the storage is not writable right now; nothing was changed.', 'Error'),
  InternalError: json('Unexpected error (details go to the server log only).', 'Error'),
};

const FORM_SCHEMA = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'Required here or in the query.' },
    retention_days: { type: 'string', pattern: '^[0-9]+$', description: 'Decimal digits, 0–36500.' },
    code: { type: 'string', pattern: '^[A-Za-z0-9_-]*$', description: 'A custom code; empty or absent = generated.' },
    max_visits: { type: 'string', pattern: '^([0-9]*|null)$', description: 'Decimal digits, 1–2147483647; empty, null or absent = unlimited.' },
    title: { type: 'string', description: `At most ${MAX_TITLE_LENGTH} characters; empty or absent = none.` },
    domain: { type: 'string', description: "One of the service's hosts; empty or absent = the default domain." },
    tags: {
      type: 'array',
      items: { type: 'string' },
      description: `The field repeated (tags=a&tags=b), each value holding one tag or several separated by commas; each trimmed and then 1–${MAX_TAG_LENGTH} characters, at most ${MAX_TAGS} distinct.`,
    },
  },
} as const;

const JSON_RPC_MESSAGE = {
  type: 'object',
  description: 'One JSON-RPC 2.0 message: a request (id and method), a notification (method, no id) or a response.',
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object' },
  },
  required: ['jsonrpc'],
} as const;

const JSON_RPC_RESPONSE = {
  type: 'object',
  description: 'The JSON-RPC response: result, or error with code and message.',
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    result: { type: 'object' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        data: { type: 'object', description: 'With -32029 (a create past CREATE_RATE_LIMIT): retry_after, whole seconds.' },
      },
      required: ['code', 'message'],
    },
  },
  required: ['jsonrpc', 'id'],
} as const;

/** The notice schema file as an OpenAPI schema: the same keywords, without its draft-07 `$schema`/`$id`. */
function noticeComponent(schema: unknown): OpenApiObject {
  const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/** The lengths of the codes an instance takes: MIN_SHORT_LENGTH..MAX_SHORT_LENGTH. */
export interface CodeLengths {
  min: number;
  max: number;
}

/**
 * The body of a create as this instance takes it: a custom code, when one is sent, of `min` to
 * `max` characters (null, empty or absent: a generated one). As numbers, so a client can say them
 * before anything is typed (the UI's hint under its code field).
 */
function shortenInput(lengths: CodeLengths | undefined): OpenApiObject {
  if (!lengths) return SHORTEN_INPUT_SCHEMA;
  const custom = { type: 'string', minLength: lengths.min, maxLength: lengths.max, pattern: CUSTOM_CODE.source };
  const code = { ...SHORTEN_INPUT_SCHEMA.properties.code, anyOf: [{ type: 'null' }, { const: '' }, custom] };
  return { ...SHORTEN_INPUT_SCHEMA, properties: { ...SHORTEN_INPUT_SCHEMA.properties, code } };
}

export function schemas(noticeSchema: unknown, codeLengths?: CodeLengths): Record<string, OpenApiObject> {
  return {
    Record: RECORD_SCHEMA,
    List: { ...LIST_SCHEMA, properties: { ...LIST_SCHEMA.properties, urls: { type: 'array', items: ref('schemas', 'Record') } } },
    Error: ERROR_SCHEMA,
    Health: HEALTH_SCHEMA,
    Healthz: HEALTHZ_SCHEMA,
    AuthCheck: AUTH_CHECK_SCHEMA,
    ShortenInput: shortenInput(codeLengths),
    ShortenForm: FORM_SCHEMA,
    UpdateInput: UPDATE_INPUT_SCHEMA,
    DeprecationNoticeNotification: noticeComponent(noticeSchema),
    DeprecationList: {
      type: 'object',
      properties: { notices: { type: 'array', items: ref('schemas', 'DeprecationNoticeNotification') } },
      required: ['notices'],
      additionalProperties: false,
    },
    JsonRpcMessage: JSON_RPC_MESSAGE,
    JsonRpcResponse: JSON_RPC_RESPONSE,
  };
}

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'The gate: only when the server runs with API_TOKEN set (GET /auth-check tells). Send `Authorization: Bearer <API_TOKEN>`.',
  },
  adminKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An admin key (API_KEYS) for listing, editing, deleting, export and import, and the visit routes.',
  },
  adminKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'api_key',
    description: 'Deprecated: the admin key as a query parameter. Use X-API-Key.',
  },
} as const;
