/**
 * The OpenAPI 3.1 document, assembled from the route table the router serves: each route entry
 * carries the documentation of its operations (`doc`), and `openApiDocument()` — a pure function
 * — turns the table into the document. What every operation shares (security from its access
 * level, 401/403/500 responses, the `api_key` parameter of admin operations) is added here, once;
 * the shared components live in openapi-parts.ts.
 */
import { DEPRECATIONS } from './deprecations.ts';
import { HEADERS, PARAMETERS, RESPONSES, SECURITY_SCHEMES, ref, schemas, type OpenApiObject } from './openapi-parts.ts';

export type { OpenApiObject };

/** Who may call an operation: anyone; past the gate (bearer token); past the gate with an admin key. */
export type Access = 'public' | 'gate' | 'admin';

export const TAGS = [
  { name: 'links', description: 'Create, inspect and follow short links.' },
  { name: 'admin', description: 'List, edit, delete, export and import links, and read their visits: needs an admin key (API_KEYS).' },
  { name: 'service', description: 'Health, gate status, deprecation notices and metrics.' },
  { name: 'mcp', description: 'The Model Context Protocol endpoint for agents.' },
  { name: 'contracts', description: 'This document, its HTML rendering and the published JSON Schemas.' },
  { name: 'ui', description: 'The embedded web UI.' },
] as const;

export type Tag = (typeof TAGS)[number]['name'];

export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tag: Tag;
  access: Access;
  deprecated?: true;
  parameters?: readonly OpenApiObject[];
  requestBody?: OpenApiObject;
  /** By status; 401, 403 and 500 are added from `access`. */
  responses: Readonly<Record<number, OpenApiObject>>;
  /** `x-…` fields copied onto the operation as they are. */
  extensions?: Readonly<Record<`x-${string}`, unknown>>;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The documentation of one route: one operation per method. */
export type RouteDoc = Readonly<Partial<Record<Method, OperationDoc>>>;

export interface DocumentedRoute {
  path: string;
  doc: RouteDoc;
}

const SECURITY: Record<Access, readonly OpenApiObject[]> = {
  public: [],
  gate: [{ bearerAuth: [] }],
  admin: [
    { bearerAuth: [], adminKey: [] },
    { bearerAuth: [], adminKeyQuery: [] },
  ],
};

const RULES = [
  "Every path is relative to the server URL (the service's BASE_URL, whose path prefixes every route; with a base path, GET of the bare base path `/s` is 301 to `/s/`). Every route also accepts a trailing slash, also before a query string. HEAD works wherever GET does, except on /api/shorten (405: a HEAD must change nothing).",
  'A request with more than 100 header lines is 431 with a `detail`, before anything else. OPTIONS on any path is a CORS preflight: 204, before the gate. A path with a `.` or `..` segment, an encoded slash, a backslash, an empty segment or a control character is 400. A known path with another method is 405 with an Allow header; other /api/* paths are 404 with an empty body.',
  'Every response carries the CORS headers (Access-Control-Allow-Origin: *, exposing Location, Mcp-Session-Id, Deprecation and Link) and the security headers (nosniff, DENY framing, no-referrer, a same-origin Content-Security-Policy; HSTS when BASE_URL is https).',
  'The gate: when the server runs with API_TOKEN, every operation except the public ones needs `Authorization: Bearer <API_TOKEN>` and is otherwise 401. GET /, /static/*, /healthz and /auth-check are public; short links (GET and HEAD /{code}) only when the server runs with PUBLIC_REDIRECTS=true.',
  'Deprecated usages keep working and are answered with `Deprecation: @<seconds>` (RFC 9745) and `Link: <base_url/docs#deprecations>; rel="deprecation"`; `x-deprecations` lists them.',
].join('\n\n');

/** `/api/urls/:code` → `/api/urls/{code}`; the `*` of `/static/*` is the `file` parameter. */
export function openApiPath(path: string): string {
  return path.replace(/:([a-z_]+)/g, '{$1}').replace(/\*$/, '{file}');
}

function pathParams(path: string): OpenApiObject[] {
  const names = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
  return names.map((name) => {
    if (!PARAMETERS[name]) throw new Error(`no parameter component for path parameter {${name}}`);
    return ref('parameters', name);
  });
}

function operation(doc: OperationDoc, path: string): Operation {
  const responses: Record<string, OpenApiObject> = {};
  for (const [status, response] of Object.entries(doc.responses)) responses[status] = response;
  if (doc.access !== 'public') responses['401'] = ref('responses', 'Unauthorized');
  if (doc.access === 'admin') responses['403'] = ref('responses', 'Forbidden');
  responses['500'] = ref('responses', 'InternalError');
  const parameters = [...pathParams(path), ...(doc.parameters ?? []), ...(doc.access === 'admin' ? [ref('parameters', 'api_key')] : [])];
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    ...(doc.deprecated ? { deprecated: true } : {}),
    security: SECURITY[doc.access],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.requestBody ? { requestBody: doc.requestBody } : {}),
    responses: sorted,
    ...doc.extensions,
  };
}

/** An operation as the document holds it. */
export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly Tag[];
  deprecated?: true;
  security: readonly OpenApiObject[];
  parameters?: readonly OpenApiObject[];
  requestBody?: OpenApiObject;
  responses: Readonly<Record<string, OpenApiObject>>;
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; summary: string; description: string; license: OpenApiObject };
  servers: readonly { url: string }[];
  tags: typeof TAGS;
  paths: Readonly<Record<string, Readonly<Partial<Record<Lowercase<Method>, Operation>>>>>;
  components: {
    schemas: Readonly<Record<string, OpenApiObject>>;
    responses: Readonly<Record<string, OpenApiObject>>;
    parameters: Readonly<Record<string, OpenApiObject>>;
    headers: Readonly<Record<string, OpenApiObject>>;
    securitySchemes: Readonly<Record<string, OpenApiObject>>;
  };
  'x-deprecations': readonly { usage: string; since: number; summary: string; details?: string | null }[];
}

export interface DocumentInfo {
  /** The server URL (BASE_URL). */
  baseUrl: string;
  version: string;
  /** The parsed notice schema file (schemas/v2/DeprecationNoticeNotification.json). */
  noticeSchema: unknown;
}

export function openApiDocument(routes: readonly DocumentedRoute[], info: DocumentInfo): OpenApiDocument {
  const paths: Record<string, Partial<Record<Lowercase<Method>, Operation>>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const item: Partial<Record<Lowercase<Method>, Operation>> = {};
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
      const doc = route.doc[method];
      if (doc) item[method.toLowerCase() as Lowercase<Method>] = operation(doc, path);
    }
    paths[path] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'url-shortener',
      version: info.version,
      summary: 'A self-hosted URL shortener: REST API, MCP endpoint and published contracts.',
      description: RULES,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: info.baseUrl }],
    tags: TAGS,
    paths,
    components: {
      schemas: schemas(info.noticeSchema),
      responses: RESPONSES,
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
    'x-deprecations': DEPRECATIONS.map((d) => ({ usage: d.usage, since: d.since, ...d.notice })),
  };
}
