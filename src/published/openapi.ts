/**
 * The OpenAPI 3.1 document, assembled from the route table the router serves: each route entry
 * carries the documentation of its operations (`doc`), and `openApiDocument()` — a pure function
 * — turns the table into the document. What every operation shares (security from its access
 * level, 401/403/500 responses, the `api_key` parameter of admin operations) is added here, once;
 * the shared components live in openapi-parts.ts. A peer's surface (docs/compat.md) brings its own
 * tag and components on its routes, so the document describes it exactly while it is on.
 */
import { DEPRECATIONS } from './deprecations.ts';
import { HEADERS, PARAMETERS, RESPONSES, SECURITY_SCHEMES, ref, schemas, type CodeLengths, type OpenApiObject } from './openapi-parts.ts';

export type { OpenApiObject };

/** Who may call an operation: anyone; past the gate (bearer token); past the gate with an admin key. */
export type Access = 'public' | 'gate' | 'admin';

export const TAGS = [
  { name: 'links', description: 'Create, inspect and follow short links.' },
  {
    name: 'admin',
    description:
      'List, edit, delete, export and import links, read their visits, and manage API keys: needs an API key (X-API-Key) whose role allows it: a key of API_KEYS, or a stored key (POST /api/keys).',
  },
  { name: 'service', description: 'Health, gate status, deprecation notices and metrics.' },
  { name: 'mcp', description: 'The Model Context Protocol endpoint for agents.' },
  { name: 'contracts', description: 'This document, its HTML rendering and the published JSON Schemas.' },
  { name: 'ui', description: 'The embedded web UI.' },
] as const;

/** The tags of the peers' surfaces (docs/compat.md): in the document only while the surface is on. */
export type PeerTag = 'Shlink' | 'YOURLS';

export type Tag = (typeof TAGS)[number]['name'] | PeerTag;

/** The tags of the service's own routes: a peer's route has its surface's instead. */
const OWN_TAGS: ReadonlySet<Tag> = new Set(TAGS.map((tag) => tag.name));

export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tag: Tag;
  access: Access;
  deprecated?: true;
  parameters?: readonly OpenApiObject[];
  requestBody?: OpenApiObject;
  /**
   * The security scheme of the surface's own credential, for an operation public to the gate whose
   * surface checks a key itself (Shlink's `X-Api-Key`); its refusal is among `responses`.
   */
  credential?: string;
  /** By status; 401 and 403 are added from `access`, and 500 unless given. */
  responses: Readonly<Record<number, OpenApiObject>>;
  /** `x-…` fields copied onto the operation as they are. */
  extensions?: Readonly<Record<`x-${string}`, unknown>>;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The documentation of one route: one operation per method. */
export type RouteDoc = Readonly<Partial<Record<Method, OperationDoc>>>;

type ComponentKind = 'schemas' | 'responses' | 'parameters' | 'headers' | 'securitySchemes';

/** The document's components, by kind and name. */
export type Components = Readonly<Record<ComponentKind, Readonly<Record<string, OpenApiObject>>>>;

/**
 * A peer's surface (docs/compat.md): its tag, and the components its operations name (each name
 * its own: a name the document already has is an error). Each of its routes carries it.
 */
export interface Surface {
  tag: { readonly name: PeerTag; readonly description: string };
  components: Partial<Components>;
}

export interface DocumentedRoute {
  path: string;
  doc: RouteDoc;
  /** The peer's surface the route belongs to; absent for the service's own routes. */
  surface?: Surface;
  /** The document's name for the route's `*`, a path parameter of the components (default `file`, the static files'). */
  wildcard?: string;
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
  'The gate: when the server runs with API_TOKEN, every operation except the public ones needs `Authorization: Bearer <API_TOKEN>` and is otherwise 401. GET /, /static/*, /healthz and /auth-check are public; short links (GET, HEAD and a password form POST /{code}) only when the server runs with PUBLIC_REDIRECTS=true.',
  'Deprecated usages keep working and are answered with `Deprecation: @<seconds>` (RFC 9745) and `Link: <base_url/docs#deprecations>; rel="deprecation"`; `x-deprecations` lists them.',
].join('\n\n');

/** `/api/urls/:code` → `/api/urls/{code}`; the `*` of `/static/*` is the `file` parameter, another route's `*` the one it names. */
export function openApiPath(path: string, wildcard = 'file'): string {
  return path.replace(/:([a-z_]+)/g, '{$1}').replace(/\*$/, `{${wildcard}}`);
}

function pathParams(path: string, known: Components['parameters']): OpenApiObject[] {
  const names = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
  return names.map((name) => {
    if (!known[name]) throw new Error(`no parameter component for path parameter {${name}}`);
    return ref('parameters', name);
  });
}

function security(doc: OperationDoc, schemes: Components['securitySchemes']): readonly OpenApiObject[] {
  if (doc.credential === undefined) return SECURITY[doc.access];
  if (doc.access !== 'public' || !schemes[doc.credential]) throw new Error(`${doc.operationId}: a credential needs a public operation and its scheme`);
  return [{ [doc.credential]: [] }];
}

/**
 * The 401 of a gated operation that has a 401 of its own (a protected link's wrong password): one
 * status, two answers, each with its content type; `WWW-Authenticate` comes with the gate's only.
 */
function eitherUnauthorized(own: OpenApiObject): OpenApiObject {
  return {
    description: `${String(own['description'])} Or, with the gate on, Authorization is missing or not exactly \`Bearer <API_TOKEN>\` (JSON, with WWW-Authenticate).`,
    content: { ...(own['content'] as object), 'application/json': { schema: ref('schemas', 'Error') } },
    headers: {
      ...(own['headers'] as object | undefined),
      'WWW-Authenticate': { description: "Only on the gate's 401: `Bearer`.", required: false, schema: { type: 'string' } },
    },
  };
}

function operation(doc: OperationDoc, path: string, components: Components): Operation {
  const responses: Record<string, OpenApiObject> = {};
  for (const [status, response] of Object.entries(doc.responses)) responses[status] = response;
  if (doc.access !== 'public')
    responses['401'] = doc.responses['401'] === undefined ? ref('responses', 'Unauthorized') : eitherUnauthorized(doc.responses['401']);
  if (doc.access === 'admin') responses['403'] = ref('responses', 'Forbidden');
  responses['500'] ??= ref('responses', 'InternalError');
  const parameters = [...pathParams(path, components.parameters), ...(doc.parameters ?? []), ...(doc.access === 'admin' ? [ref('parameters', 'api_key')] : [])];
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    ...(doc.deprecated ? { deprecated: true } : {}),
    security: security(doc, components.securitySchemes),
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
  tags: readonly { readonly name: Tag; readonly description: string }[];
  paths: Readonly<Record<string, Readonly<Partial<Record<Lowercase<Method>, Operation>>>>>;
  components: Components;
  'x-deprecations': readonly { usage: string; since: number; summary: string; details?: string | null }[];
}

export interface DocumentInfo {
  /** The server URL (BASE_URL). */
  baseUrl: string;
  version: string;
  /** The parsed notice schema file (schemas/v2/DeprecationNoticeNotification.json). */
  noticeSchema: unknown;
  /** The code lengths the instance takes, said in `ShortenInput`; absent, the document names none. */
  codeLengths?: CodeLengths | undefined;
}

/** The shared components, with those of each surface added; a name given twice is an error. */
function withSurfaces(base: Components, surfaces: readonly Surface[]): Components {
  const merged: Record<ComponentKind, Record<string, OpenApiObject>> = {
    schemas: { ...base.schemas },
    responses: { ...base.responses },
    parameters: { ...base.parameters },
    headers: { ...base.headers },
    securitySchemes: { ...base.securitySchemes },
  };
  for (const surface of surfaces) {
    for (const [kind, entries] of Object.entries(surface.components) as [ComponentKind, Components[ComponentKind]][]) {
      for (const [name, value] of Object.entries(entries)) {
        if (Object.hasOwn(merged[kind], name)) throw new Error(`${surface.tag.name}: the component ${kind}/${name} exists already`);
        merged[kind][name] = value;
      }
    }
  }
  return merged;
}

/** A peer's route carries its surface's tag, and the service's own routes one of `TAGS`. */
function checkTag(route: DocumentedRoute, doc: OperationDoc): void {
  const fits = route.surface ? doc.tag === route.surface.tag.name : OWN_TAGS.has(doc.tag);
  if (!fits) throw new Error(`${doc.operationId}: the tag ${doc.tag} is not of the surface its route names`);
}

export function openApiDocument(routes: readonly DocumentedRoute[], info: DocumentInfo): OpenApiDocument {
  // The surfaces on, in the order of their first route: the document holds a surface exactly while its routes are in the table.
  const surfaces = [...new Set(routes.flatMap((route) => (route.surface ? [route.surface] : [])))];
  const base = {
    schemas: schemas(info.noticeSchema, info.codeLengths),
    responses: RESPONSES,
    parameters: PARAMETERS,
    headers: HEADERS,
    securitySchemes: SECURITY_SCHEMES,
  };
  const components = withSurfaces(base, surfaces);
  const tags = [...TAGS, ...surfaces.map((surface) => surface.tag)];
  const paths: Record<string, Partial<Record<Lowercase<Method>, Operation>>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path, route.wildcard);
    const item: Partial<Record<Lowercase<Method>, Operation>> = {};
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const doc = route.doc[method];
      if (!doc) continue;
      checkTag(route, doc);
      item[method.toLowerCase() as Lowercase<Method>] = operation(doc, path, components);
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
    tags,
    paths,
    components,
    'x-deprecations': DEPRECATIONS.map((d) => ({ usage: d.usage, since: d.since, ...d.notice })),
  };
}
