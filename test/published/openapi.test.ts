/**
 * /openapi.json (docs/api.md, OpenAPI and /docs): it validates as OpenAPI 3.1 with
 * @seriousme/openapi-schema-validator (a validator we did not write); it is built from the route
 * table the router uses, and what it documents is exactly what is served — checked on the table and
 * with live requests, whose statuses, headers and JSON bodies must match the documented responses
 * (bodies checked by ajv).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createLogger } from '../../src/log.ts';
import { openApiDocument, openApiPath, type DocumentedRoute, type OpenApiDocument, type OpenApiObject, type Operation } from '../../src/published/openapi.ts';
import { createResponder, type Responder } from '../../src/http/respond.ts';
import type { Ctx } from '../../src/http/context.ts';
import { routeTable } from '../../src/route-table.ts';
import type { ApiRoute } from '../../src/api/routes.ts';
import type { Service } from '../../src/links/service.ts';
import { VERSION } from '../../src/version.ts';
import { codeOf, open, type Harness, type RequestOptions } from '../support/helpers.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { onOneProcess } from '../support/cluster.ts';

const NOTICE_SCHEMA: unknown = JSON.parse(readFileSync(new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url), 'utf8'));
const KEY = 'k1';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type LowerMethod = 'get' | 'post' | 'patch' | 'delete';

/** The peers' surfaces (docs/compat.md) a table is built with, and the gate they may sit behind. */
interface Surfaces {
  shlinkApi?: boolean;
  yourlsApi?: boolean;
  apiToken?: string;
}

/**
 * Every set of surfaces a server can turn on: none, each, both, and both behind the gate (where
 * Shlink's catch-all answers only a caller with a key).
 */
const SURFACES: readonly Surfaces[] = [
  {},
  { shlinkApi: true },
  { yourlsApi: true },
  { shlinkApi: true, yourlsApi: true },
  { shlinkApi: true, yourlsApi: true, apiToken: 't0ken' },
];

/**
 * The route table as the app builds it; its handlers are never called here (but `/openapi.json`'s,
 * by `buildDoc`), so the service is a stand-in. `reply` answers them.
 */
function table(baseUrl = 'https://s.example/x', publicRedirects = false, surfaces: Surfaces = {}, reply = createResponder([])): (ApiRoute & DocumentedRoute)[] {
  const { apiToken = '', ...peers } = surfaces;
  return routeTable({
    service: {} as Service,
    reply,
    files: new Map(),
    config: { production: false, apiToken, mcpAllowedOrigins: [], maxBodyBytes: 65536, baseUrl, publicRedirects, ...peers },
    log: createLogger('silent'),
  });
}

/** The document the table's own `/openapi.json` serves: what a client reads, built from that table. */
function buildDoc(baseUrl = 'https://s.example/x', publicRedirects = false, surfaces: Surfaces = {}): OpenApiDocument {
  let sent = '';
  const reply = { send: (_res: unknown, _status: number, _type: string, body: string) => (sent = body) } as unknown as Responder;
  const routes = table(baseUrl, publicRedirects, surfaces, reply);
  void routes.find((r) => r.path === '/openapi.json')!.methods['GET']!({} as Ctx);
  return JSON.parse(sent) as OpenApiDocument;
}

function operations(doc: OpenApiDocument): { path: string; method: (typeof METHODS)[number]; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item[method.toLowerCase() as LowerMethod];
      return op ? [{ path, method, op }] : [];
    }),
  );
}

function resolve(doc: OpenApiDocument, o: OpenApiObject): OpenApiObject {
  const target = o['$ref'];
  if (typeof target !== 'string') return o;
  const [, , kind, name] = target.split('/') as [string, string, keyof OpenApiDocument['components'], string];
  const found = doc.components[kind][name];
  assert.ok(found, target);
  return found;
}

test('the document validates as OpenAPI 3.1 with every set of surfaces on, and the validator does catch a broken one', async () => {
  for (const surfaces of SURFACES) {
    const validator = new Validator();
    const result = await validator.validate(buildDoc('https://s.example/x', false, surfaces) as unknown as Record<string, unknown>);
    assert.deepEqual(result, { valid: true }, JSON.stringify(surfaces));
    assert.equal(validator.version, '3.1');
  }

  const broken = structuredClone(buildDoc()) as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> };
  delete broken.paths['/api/health']!['get']!['responses'];
  broken.paths['/api/health']!['get']!['parameters'] = [{ name: 'x', in: 'nowhere' }];
  const bad = await new Validator().validate(broken as unknown as Record<string, unknown>);
  assert.equal(bad.valid, false);
});

test('every route of the table and each method it serves is documented, and nothing else is, whichever surfaces are on', () => {
  for (const surfaces of SURFACES) {
    const doc = buildDoc('https://s.example/x', false, surfaces);
    const routes = table('https://s.example/x', false, surfaces);
    const label = JSON.stringify(surfaces);
    assert.deepEqual(Object.keys(doc.paths).sort(), routes.map((r) => openApiPath(r.path, r.wildcard)).sort(), label);
    for (const route of routes) {
      const item = doc.paths[openApiPath(route.path, route.wildcard)]!;
      for (const method of METHODS) {
        const op = item[method.toLowerCase() as LowerMethod];
        const served = route.methods[method] !== undefined;
        if (served) assert.ok(op, `${method} ${route.path} is served but not documented (${label})`);
        else if (op) {
          // Without a handler only as a 405: GET/DELETE /mcp (docs/mcp.md, transport rules).
          assert.deepEqual(
            Object.keys(op.responses).filter((s) => s !== '401' && s !== '500'),
            ['405'],
            `${method} ${route.path}`,
          );
          assert.ok(route.allow && !route.allow.includes(method), `${method} ${route.path}`);
        }
      }
    }
    // A peer's routes are in the table exactly while it is on, each under its surface's tag.
    const tagged = (tag: string): string[] => routes.filter((r) => r.surface?.tag.name === tag).map((r) => r.path);
    assert.equal(tagged('Shlink').length > 0, surfaces.shlinkApi === true, label);
    assert.equal(tagged('YOURLS').length > 0, surfaces.yourlsApi === true, label);
    for (const route of routes) {
      for (const op of Object.values(route.doc)) assert.equal(op.tag === 'Shlink' || op.tag === 'YOURLS', route.surface?.tag.name === op.tag, route.path);
    }
  }
  // Route paths map to OpenAPI templates with declared parameters.
  assert.equal(openApiPath('/api/urls/:code'), '/api/urls/{code}');
  assert.equal(openApiPath('/static/*'), '/static/{file}');
  assert.equal(openApiPath('/rest/*', 'shlink_path'), '/rest/{shlink_path}');
});

test('a route of a surface left undocumented fails the document', () => {
  const routes = table('https://s.example/x', false, { shlinkApi: true, yourlsApi: true });
  const info = { baseUrl: 'https://s.example/x', version: VERSION, noticeSchema: NOTICE_SCHEMA };
  // Its tag is the surface's, so the document needs the route to carry the surface.
  const orphan = routes.map((r) => (r.path === '/rest/v3/tags' ? { path: r.path, doc: r.doc } : r));
  assert.throws(() => openApiDocument(orphan, info), /shlinkListTags: the tag Shlink is not of the surface its route names/);
  // A surface's component may not take a name the document has.
  const surface = routes.find((r) => r.surface?.tag.name === 'YOURLS')!.surface!;
  const clash = { ...surface, components: { schemas: { Record: {} } } };
  assert.throws(() => openApiDocument([...routes, { path: '/x', doc: {}, surface: clash }], info), /YOURLS: the component schemas\/Record exists already/);
});

test('off, the peers leave no trace in the document; on, they only add their paths, tags and components', () => {
  const off = buildDoc();
  assert.doesNotMatch(JSON.stringify(off), /Shlink|YOURLS|\/rest\b|yourls-api/);
  for (const surfaces of SURFACES.slice(1)) {
    const on = buildDoc('https://s.example/x', false, surfaces);
    const label = JSON.stringify(surfaces);
    const own = Object.fromEntries(Object.entries(on.paths).filter(([path]) => !path.startsWith('/rest') && path !== '/yourls-api.php'));
    assert.deepEqual(own, off.paths, label);
    assert.deepEqual(on.tags.slice(0, off.tags.length), off.tags, label);
    assert.deepEqual(
      on.tags.slice(off.tags.length).map((t) => t.name),
      [...(surfaces.shlinkApi ? ['Shlink'] : []), ...(surfaces.yourlsApi ? ['YOURLS'] : [])],
      label,
    );
    for (const tag of on.tags.slice(off.tags.length)) assert.match(tag.description, new RegExp(`${tag.name}-compatible surface`), label);
    for (const kind of Object.keys(off.components) as (keyof OpenApiDocument['components'])[]) {
      const added = Object.keys(on.components[kind]).filter((name) => !(name in off.components[kind]));
      for (const name of added) assert.match(name, /^(Shlink|shlink|Yourls)/, `${kind}/${name}`);
      for (const [name, value] of Object.entries(off.components[kind])) assert.deepEqual(on.components[kind][name], value, `${kind}/${name}`);
    }
    assert.deepEqual(on.info, off.info);
    assert.deepEqual(on['x-deprecations'], off['x-deprecations']);
  }
});

test("the operations document every route of the README's route table, with their statuses and headers", () => {
  const doc = buildDoc();
  const ops = Object.fromEntries(operations(doc).map(({ path, method, op }) => [`${method} ${path}`, op]));
  const statuses = (key: string): string[] => Object.keys(ops[key]?.responses ?? {});
  const expected: Record<string, string[]> = {
    'GET /': ['200', '302', '404', '500'],
    'GET /static/{file}': ['200', '304', '404', '500'],
    'GET /robots.txt': ['200', '401', '500'],
    'GET /api/health': ['200', '401', '500'],
    'POST /api/shorten': ['201', '400', '401', '409', '413', '415', '429', '500', '503'],
    'GET /api/shorten': ['201', '400', '401', '409', '413', '415', '429', '500', '503'],
    'GET /api/urls': ['200', '400', '401', '403', '500'],
    'GET /api/urls/{code}': ['200', '400', '401', '404', '500'],
    'GET /api/urls/{code}/qr': ['200', '400', '401', '404', '422', '500'],
    'PATCH /api/urls/{code}': ['200', '400', '401', '403', '404', '413', '415', '500', '503'],
    'DELETE /api/urls/{code}': ['204', '400', '401', '403', '404', '500', '503'],
    'GET /api/lookup': ['200', '400', '401', '404', '500'],
    'GET /api/export': ['200', '400', '401', '403', '500'],
    'POST /api/import': ['200', '400', '401', '403', '413', '415', '500', '503'],
    'GET /api/stats': ['200', '400', '401', '403', '500'],
    'GET /api/urls/{code}/stats': ['200', '400', '401', '403', '404', '500'],
    'GET /api/urls/{code}/visits': ['200', '400', '401', '403', '404', '500'],
    'DELETE /api/urls/{code}/visits': ['200', '400', '401', '403', '404', '500', '503'],
    'GET /api/visits/export': ['200', '400', '401', '403', '500'],
    'POST /api/visits/import': ['200', '400', '401', '403', '413', '415', '500', '503'],
    'GET /api/visits/orphan': ['200', '400', '401', '403', '500', '503'],
    'GET /{code}': ['200', '302', '401', '404', '410', '429', '500', '503'],
    'POST /{code}': ['302', '401', '404', '410', '413', '415', '429', '500', '503'],
    'GET /api/urls/{code}/rules': ['200', '400', '401', '404', '500'],
    'PUT /api/urls/{code}/rules': ['200', '400', '401', '403', '404', '413', '415', '500', '503'],
    'GET /healthz': ['200', '500', '503'],
    'GET /auth-check': ['200', '500'],
    'GET /api/deprecations': ['200', '401', '500'],
    'POST /api/keys': ['201', '400', '401', '403', '413', '415', '500', '503'],
    'GET /api/keys': ['200', '401', '403', '500', '503'],
    'DELETE /api/keys/{id}': ['204', '401', '403', '404', '500', '503'],
    'GET /api/domains': ['200', '401', '403', '500', '503'],
    'POST /api/webhooks': ['201', '400', '401', '403', '413', '415', '500', '503'],
    'GET /api/webhooks': ['200', '401', '403', '500', '503'],
    'DELETE /api/webhooks/{id}': ['204', '401', '403', '404', '500', '503'],
    'POST /api/webhooks/{id}/test': ['202', '401', '403', '404', '500', '503'],
    'GET /api/webhooks/{id}/deliveries': ['200', '401', '403', '404', '500', '503'],
    'PATCH /api/domains/{host}': ['200', '400', '401', '403', '404', '413', '415', '500', '503'],
    'POST /mcp': ['200', '202', '400', '401', '403', '406', '413', '415', '429', '500'],
    'GET /mcp': ['401', '405', '500'],
    'DELETE /mcp': ['401', '405', '500'],
    'GET /metrics': ['200', '401', '500'],
    'GET /openapi.json': ['200', '401', '500'],
    'GET /docs': ['200', '401', '500'],
    'GET /schemas/v2/DeprecationNoticeNotification.json': ['200', '401', '500'],
  };
  assert.deepEqual(Object.keys(ops).sort(), Object.keys(expected).sort());
  for (const [key, codes] of Object.entries(expected)) assert.deepEqual(statuses(key), codes, key);

  // Security: public routes need nothing; the rest the gate; list/delete an admin key too.
  for (const [key, op] of Object.entries(ops)) {
    const isPublic = ['GET /', 'GET /static/{file}', 'GET /healthz', 'GET /auth-check'].includes(key);
    const isAdmin = [
      'GET /api/urls',
      'PATCH /api/urls/{code}',
      'PUT /api/urls/{code}/rules',
      'DELETE /api/urls/{code}',
      'GET /api/export',
      'POST /api/import',
      'GET /api/stats',
      'GET /api/urls/{code}/stats',
      'GET /api/urls/{code}/visits',
      'DELETE /api/urls/{code}/visits',
      'GET /api/visits/export',
      'POST /api/visits/import',
      'GET /api/visits/orphan',
      'POST /api/keys',
      'GET /api/keys',
      'DELETE /api/keys/{id}',
      'GET /api/domains',
      'PATCH /api/domains/{host}',
      'POST /api/webhooks',
      'GET /api/webhooks',
      'DELETE /api/webhooks/{id}',
      'POST /api/webhooks/{id}/test',
      'GET /api/webhooks/{id}/deliveries',
    ].includes(key);
    const expectedSecurity = isPublic
      ? []
      : isAdmin
        ? [
            { bearerAuth: [], adminKey: [] },
            { bearerAuth: [], adminKeyQuery: [] },
          ]
        : [{ bearerAuth: [] }];
    assert.deepEqual(op.security, expectedSecurity, key);
  }
  assert.deepEqual(doc.components.securitySchemes['bearerAuth'], {
    type: 'http',
    scheme: 'bearer',
    description: 'The gate: only when the server runs with API_TOKEN set (GET /auth-check tells). Send `Authorization: Bearer <API_TOKEN>`.',
  });
  assert.equal(doc.components.securitySchemes['adminKey']?.['name'], 'X-API-Key');
  assert.equal(doc.components.securitySchemes['adminKeyQuery']?.['in'], 'query');

  // Deprecations: the GET shorten operation and the api_key parameter.
  assert.equal(ops['GET /api/shorten']?.deprecated, true);
  assert.equal(ops['POST /api/shorten']?.deprecated, undefined);
  assert.equal(doc.components.parameters['api_key']?.['deprecated'], true);
  assert.deepEqual(ops['GET /api/urls']?.parameters?.at(-1), { $ref: '#/components/parameters/api_key' });
  assert.deepEqual(
    ops['GET /api/urls']?.parameters?.map((p) => p['$ref']),
    ['limit', 'offset', 'q', 'tag', 'list_domain', 'api_key'].map((n) => `#/components/parameters/${n}`),
  );
  assert.deepEqual(doc.components.parameters['q']?.['schema'], { type: 'string', minLength: 1, maxLength: 200 });
  // tag repeats in the query string (tag=a&tag=b): an exploded form array, like the create's tags.
  for (const name of ['tag', 'tags']) {
    const { schema, style, explode, in: where } = doc.components.parameters[name] as Record<string, unknown>;
    assert.deepEqual(
      { schema, style, explode, where },
      { schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true, where: 'query' },
      name,
    );
  }
  assert.deepEqual(
    ops['POST /api/shorten']?.parameters?.map((p) => resolve(doc, p)['name']),
    ['url', 'retention_days', 'code', 'max_visits', 'title', 'tags', 'domain'],
  );
  assert.deepEqual(ops['POST /api/shorten']?.responses['409'], { $ref: '#/components/responses/Conflict' });
  // The edit: a JSON body of exactly the editable fields, answered with the record.
  const patch = ops['PATCH /api/urls/{code}']!;
  assert.deepEqual(patch.requestBody, { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/UpdateInput' } } } });
  const update = doc.components.schemas['UpdateInput'] as { properties: object; additionalProperties: boolean };
  assert.deepEqual(Object.keys(update.properties), [
    'url',
    'retention_days',
    'max_visits',
    'title',
    'tags',
    'rules',
    'forward_query',
    'valid_since',
    'valid_until',
    'fallback_url',
    'password',
  ]);
  assert.equal(update.additionalProperties, false);
  assert.deepEqual((resolve(doc, patch.responses['200']!)['content'] as Record<string, { schema: unknown }>)['application/json']?.schema, {
    $ref: '#/components/schemas/Record',
  });
  // The record: max_visits and expires_at, each an integer or null, always present.
  const record = doc.components.schemas['Record'] as { properties: Record<string, { type: unknown }>; required: string[] };
  assert.deepEqual(record.properties['max_visits']?.type, ['integer', 'null']);
  assert.deepEqual(record.properties['expires_at']?.type, ['integer', 'null']);
  assert.ok(record.required.includes('max_visits') && record.required.includes('expires_at'));
  // domain: always present, a host or null for the default domain.
  assert.deepEqual(record.properties['domain']?.type, ['string', 'null']);
  assert.ok(record.required.includes('domain'));
  // title and tags: always present, a string or null, and a bounded array of bounded strings.
  assert.ok(record.required.includes('title') && record.required.includes('tags'));
  assert.deepEqual(record.properties['title']?.type, ['string', 'null']);
  const { description: _d, ...tags } = record.properties['tags'] as Record<string, unknown>;
  assert.deepEqual(tags, { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 50 } });
  const input = doc.components.schemas['ShortenInput'] as { properties: Record<string, { type: unknown }> };
  assert.deepEqual(
    [input.properties['title']?.type, input.properties['tags']?.type],
    [
      ['string', 'null'],
      ['array', 'null'],
    ],
  );
  const form = doc.components.schemas['ShortenForm'] as { properties: Record<string, { type: unknown }> };
  assert.deepEqual([form.properties['title']?.type, form.properties['tags']?.type], ['string', 'array']);
  // The redirect's 410 names both reasons.
  const gone = String(resolve(doc, ops['GET /{code}']!.responses['410']!)['description']);
  assert.match(gone, /This link has expired/);
  assert.match(gone, /This link has reached its visit limit/);
  assert.deepEqual(Object.keys(doc.components.headers).sort(), [
    'Allow',
    'Cache-Control',
    'Deprecation',
    'ETag',
    'Link',
    'Location',
    'Retry-After',
    'WWW-Authenticate',
    'X-Total-Count',
  ]);
  assert.deepEqual(
    doc['x-deprecations'].map((d) => d.usage),
    ['shorten-with-get', 'api-key-query'],
  );
  // The schema component is the shipped file without its draft-07 identity.
  const { $schema: _s, $id: _i, ...notice } = NOTICE_SCHEMA as Record<string, unknown>;
  assert.deepEqual(doc.components.schemas['DeprecationNoticeNotification'], notice);
  // MCP tools are described on the operation.
  assert.deepEqual(
    (ops['POST /mcp']!['x-mcp-tools'] as { name: string }[]).map((t) => t.name),
    ['shorten_url', 'get_url', 'lookup_url', 'list_urls', 'delete_url', 'update_url', 'get_stats', 'set_rules'],
  );
});

test('the redirect is documented behind the gate, or public where the server runs with PUBLIC_REDIRECTS', async () => {
  const gated = buildDoc().paths['/{code}']!.get!;
  assert.deepEqual(gated.security, [{ bearerAuth: [] }]);
  // Its 401 is the gate's or a protected link's wrong password: both documented, each with its type.
  const unauthorized = gated.responses['401'] as { description: string; content: Record<string, unknown> };
  assert.match(unauthorized.description, /^A wrong X-Link-Password.*Or, with the gate on/);
  assert.deepEqual(Object.keys(unauthorized.content).sort(), ['application/json', 'text/html; charset=utf-8']);
  assert.deepEqual(buildDoc().paths['/api/urls/{code}']!.get!.responses['401'], { $ref: '#/components/responses/Unauthorized' });
  assert.match(gated.description ?? '', /^Behind the gate like the API when the server runs with API_TOKEN .*PUBLIC_REDIRECTS=true makes short links public\./);

  const open = buildDoc('https://s.example/x', true);
  const link = open.paths['/{code}']!.get!;
  assert.deepEqual(link.security, []);
  assert.deepEqual(Object.keys(link.responses), ['200', '302', '401', '404', '410', '429', '500', '503']);
  assert.match(link.description ?? '', /^Public on this server \(PUBLIC_REDIRECTS=true\)/);
  // Nothing else differs between the two documents.
  assert.deepEqual(open.paths['/{code}']!.post!.security, []);
  const { '/{code}': _a, ...rest } = open.paths;
  const { '/{code}': _b, ...restGated } = buildDoc().paths;
  assert.deepEqual(rest, restGated);
  assert.deepEqual(await new Validator().validate(open as unknown as Record<string, unknown>), { valid: true });
  assert.match(open.info.description, /short links \(GET, HEAD and a password form POST \/\{code\}\) only when the server runs with PUBLIC_REDIRECTS=true/);
});

/** A request the live test sends, and the status it must get (a status the operation documents). */
interface Probe {
  path: string;
  options?: RequestOptions;
  status: number;
  /** Writes fail (disk full) while this request is served. */
  diskFull?: true;
}

/** The probes of one operation; `unexercised` names documented statuses no probe provokes, and why. */
interface OperationPlan {
  probes: Probe[];
  unexercised?: Readonly<Record<number, string>>;
}

/** Statuses no operation is asked for here: the gate is off (test/http/gate*.test.ts), and a 500 is a bug. */
const NEVER_HERE: Readonly<Record<number, string>> = { 401: 'the gate is off here; the gate tests cover every 401', 500: 'the generic answer to a bug' };

/** The 429 of a create: the server here has no create limit. */
const RATE_LIMITED_ONLY = 'only with CREATE_RATE_LIMIT (test/api/create-rate-limit.test.ts)';

/** A `POST /api/keys` with the admin key, expecting `status`. */
/** A webhook's receiver: refused at once (nothing listens on port 9), so its attempts end fast. */
const HOOK = '{"url":"http://127.0.0.1:9/in","events":["link.created"]}';
const WH = '/api/webhooks/wh_AAAAAAAAAAAAAAAA';

const webhookPost = (body: string, status: number, extra: Partial<Probe> = {}) => ({
  path: '/api/webhooks',
  options: { method: 'POST', headers: { ...ADMIN, ...JSON_HEADERS }, body },
  status,
  ...extra,
});

const keyPost = (body: string, status: number, diskFull = false) => ({
  path: '/api/keys',
  options: { method: 'POST', headers: { ...ADMIN, ...JSON_HEADERS }, body },
  status,
  ...(diskFull ? { diskFull } : {}),
});

/** What the probes need: codes made for them, and a static file's validator. */
interface Fixture {
  keep: string;
  doomed: string;
  /** A link with max_visits 1, already visited once: used up. */
  usedUp: string;
  /** A link with a visit limit left, for the redirect that cannot be made durable. */
  limited: string;
  /** Expired by the harness clock. */
  expired: string;
  /** Taken by a custom code. */
  taken: string;
  /** Protected by the password `PASSWORD`, with redirect rules. */
  locked: string;
  /** A webhook subscription, to test and list; another, to delete. */
  hook: string;
  doomedHook: string;
}

const PASSWORD = 'open sesame';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const IOS_RULE = '{"url":"https://apps.apple.com/x","conditions":[{"type":"device","key":null,"value":"ios"}]}';

const JSON_HEADERS = { 'content-type': 'application/json' };
/** The live server's other domains (DOMAINS): one whose base_url the fixture sets, one without redirects. */
const REDIRECTED = 'go.example';
const BARE = 's.example';
const ADMIN = { 'x-api-key': KEY };
const BIG = JSON.stringify({ url: `https://example.com/${'x'.repeat(70 * 1024)}` });

/**
 * The requests of the live test, by operationId: one row per operation of the document, each
 * with the statuses it can be made to answer. An operation added to the route table needs its row
 * here, or the test fails.
 */
function plan(f: Fixture): Record<string, OperationPlan> {
  const post = (body: string, status: number, extra: Partial<Probe> = {}): Probe => ({
    path: '/api/shorten',
    options: { method: 'POST', headers: JSON_HEADERS, body },
    status,
    ...extra,
  });
  const patch = (code: string, body: string, status: number, extra: Partial<Probe> & { headers?: Record<string, string> } = {}): Probe => {
    const { headers = { ...ADMIN, ...JSON_HEADERS }, ...rest } = extra;
    return { path: `/api/urls/${code}`, options: { method: 'PATCH', headers, body }, status, ...rest };
  };
  const domainPatch = (host: string, body: string, status: number, extra: Partial<Probe> & { headers?: Record<string, string> } = {}): Probe => {
    const { headers = { ...ADMIN, ...JSON_HEADERS }, ...rest } = extra;
    return { path: `/api/domains/${host}`, options: { method: 'PATCH', headers, body }, status, ...rest };
  };
  const importing = (type: string, body: string, status: number, extra: Partial<Probe> = {}): Probe => ({
    path: '/api/import',
    options: { method: 'POST', headers: { ...ADMIN, 'content-type': type }, body },
    status,
    ...extra,
  });
  const importingVisits = (type: string, body: string, status: number, extra: Partial<Probe> = {}): Probe => ({
    ...importing(type, body, status, extra),
    path: '/api/visits/import',
  });
  const rpc = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  const mcp = (status: number, headers: Record<string, string>, body = rpc): Probe => ({ path: '/mcp', options: { method: 'POST', headers, body }, status });
  return {
    getUi: {
      probes: [
        { path: '/', status: 200 },
        // Another domain than the default one serves no UI: its base_url redirect (set by the fixture), or a 404.
        { path: '/', options: { headers: { host: REDIRECTED } }, status: 302 },
        { path: '/', options: { headers: { host: BARE } }, status: 404 },
      ],
    },
    getStaticFile: {
      probes: [
        { path: '/static/docs.css', status: 200 },
        { path: '/static/docs.css', options: { headers: { 'if-none-match': '*' } }, status: 304 },
        { path: '/static/nope.css', status: 404 },
      ],
    },
    getRobotsTxt: { probes: [{ path: '/robots.txt', status: 200 }] },
    getHealth: { probes: [{ path: '/api/health', status: 200 }] },
    shortenUrl: {
      probes: [
        post('{"url":"https://example.com/p"}', 201),
        post('{"url":"https://example.com/p","code":"fresh-code","max_visits":3}', 201),
        post('{"url":"https://example.com/p","title":"Ünïcödé title","tags":["b","a"]}', 201),
        post('{"url":"https://example.com/p","tags":["a,b"]}', 400),
        post('{"url":"ftp://example.com/p"}', 400),
        post(`{"url":"https://example.com/p","code":"${f.taken}"}`, 409),
        post(BIG, 413),
        { path: '/api/shorten', options: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'https://example.com/' }, status: 415 },
        post('{"url":"https://example.com/full"}', 503, { diskFull: true }),
      ],
      unexercised: { 429: RATE_LIMITED_ONLY },
    },
    shortenUrlWithGet: {
      probes: [
        { path: `/api/shorten?url=${encodeURIComponent('https://example.com/g')}&code=get-code&max_visits=2&title=T&tags=a&tags=b,c`, status: 201 },
        { path: '/api/shorten?url=nope', status: 400 },
        { path: `/api/shorten?url=${encodeURIComponent('https://example.com/g')}&code=${f.taken}`, status: 409 },
        // A GET's body travels only with its Content-Length.
        { path: '/api/shorten', options: { headers: { ...JSON_HEADERS, 'content-length': String(BIG.length) }, body: BIG }, status: 413 },
        { path: '/api/shorten', options: { headers: { 'content-type': 'text/csv', 'content-length': '3' }, body: 'url' }, status: 415 },
        { path: `/api/shorten?url=${encodeURIComponent('https://example.com/full')}`, status: 503, diskFull: true },
      ],
      unexercised: { 429: RATE_LIMITED_ONLY },
    },
    listUrls: {
      probes: [
        { path: '/api/urls?limit=5', options: { headers: ADMIN }, status: 200 },
        { path: '/api/urls?q=EXAMPLE.COM%2Fkeep', options: { headers: ADMIN }, status: 200 },
        { path: '/api/urls?tag=kept&tag=labelled&q=KEPT', options: { headers: ADMIN }, status: 200 },
        { path: `/api/urls?tag=${'x'.repeat(51)}`, options: { headers: ADMIN }, status: 400 },
        { path: '/api/urls?api_key=k1', status: 200 },
        { path: `/api/urls?q=${'x'.repeat(201)}`, options: { headers: ADMIN }, status: 400 },
        { path: '/api/urls', status: 403 },
      ],
    },
    getUrl: {
      probes: [
        { path: `/api/urls/${f.keep}`, status: 200 },
        { path: `/api/urls/${f.usedUp}`, status: 200 },
        { path: `/api/urls/${f.keep}?domain=unknown.example`, status: 400 },
        { path: '/api/urls/zzzzzz', status: 404 },
      ],
    },
    getUrlQr: {
      probes: [
        { path: `/api/urls/${f.keep}/qr`, status: 200 },
        { path: `/api/urls/${f.keep}/qr?domain=unknown.example`, status: 400 },
        { path: '/api/urls/zzzzzz/qr', status: 404 },
      ],
      unexercised: { 422: 'a short URL over 2953 bytes, which needs a base path that long (test/qr covers it)' },
    },
    updateUrl: {
      probes: [
        patch(f.keep, '{"max_visits":100,"retention_days":30}', 200),
        patch(f.keep, '{"max_visits":null,"url":"https://example.com/keep"}', 200),
        patch(f.keep, '{"title":"Kept, edited","tags":["kept","labelled","more"]}', 200),
        patch(f.keep, '{"tags":null}', 400),
        patch(f.keep, '{"visit_count":0}', 400),
        patch(f.keep, '{"max_visits":1}', 403, { headers: JSON_HEADERS }),
        patch('zzzzzz', '{"max_visits":1}', 404),
        patch(f.keep, BIG, 413),
        patch(f.keep, 'max_visits=1', 415, { headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' } }),
        patch(f.keep, '{"max_visits":7}', 503, { diskFull: true }),
      ],
    },
    deleteUrl: {
      probes: [
        { path: `/api/urls/${f.doomed}`, options: { method: 'DELETE' }, status: 403 },
        { path: `/api/urls/${f.doomed}?domain=unknown.example`, options: { method: 'DELETE', headers: ADMIN }, status: 400 },
        { path: `/api/urls/${f.doomed}`, options: { method: 'DELETE', headers: ADMIN }, status: 503, diskFull: true },
        { path: `/api/urls/${f.doomed}`, options: { method: 'DELETE', headers: ADMIN }, status: 204 },
        { path: `/api/urls/${f.doomed}`, options: { method: 'DELETE', headers: ADMIN }, status: 404 },
      ],
    },
    lookupUrl: {
      probes: [
        { path: `/api/lookup?url=${encodeURIComponent('https://example.com/keep')}`, status: 200 },
        { path: '/api/lookup', status: 400 },
        { path: `/api/lookup?url=${encodeURIComponent('https://example.com/never')}`, status: 404 },
      ],
    },
    exportUrls: {
      probes: [
        { path: '/api/export', options: { headers: ADMIN }, status: 200 },
        { path: '/api/export?format=csv', options: { headers: ADMIN }, status: 200 },
        { path: '/api/export?format=xml', options: { headers: ADMIN }, status: 400 },
        { path: '/api/export', status: 403 },
      ],
    },
    importUrls: {
      probes: [
        importing('text/csv', 'url\nhttps://example.com/imported\n', 200),
        importing('application/x-ndjson', '{"url":"https://example.com/imported-too"}\n', 200),
        importing('text/csv', 'title\nno url column\n', 400),
        { path: '/api/import', options: { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'url\n' }, status: 403 },
        importing('application/json', '[]', 415),
        importing('text/csv', 'url\nhttps://example.com/full-disk\n', 503, { diskFull: true }),
      ],
      unexercised: { 413: 'a body over 256 MiB (test/transfer covers it)' },
    },
    getAllStats: {
      probes: [
        { path: '/api/stats', options: { headers: ADMIN }, status: 200 },
        { path: '/api/stats?api_key=k1&interval=hour&from=2026-01-09', status: 200 },
        { path: '/api/stats?tz=Nowhere/Else', options: { headers: ADMIN }, status: 400 },
        { path: '/api/stats', status: 403 },
      ],
    },
    getUrlStats: {
      probes: [
        { path: `/api/urls/${f.usedUp}/stats?tz=Europe/Berlin`, options: { headers: ADMIN }, status: 200 },
        { path: `/api/urls/${f.usedUp}/stats?interval=fortnight`, options: { headers: ADMIN }, status: 400 },
        { path: `/api/urls/${f.usedUp}/stats`, status: 403 },
        { path: '/api/urls/zzzzzz/stats', options: { headers: ADMIN }, status: 404 },
      ],
    },
    listUrlVisits: {
      probes: [
        { path: `/api/urls/${f.usedUp}/visits?limit=10`, options: { headers: ADMIN }, status: 200 },
        { path: `/api/urls/${f.usedUp}/visits?limit=0`, options: { headers: ADMIN }, status: 400 },
        { path: `/api/urls/${f.usedUp}/visits`, status: 403 },
        { path: '/api/urls/zzzzzz/visits', options: { headers: ADMIN }, status: 404 },
      ],
    },
    deleteUrlVisits: {
      probes: [
        { path: `/api/urls/${f.keep}/visits`, options: { method: 'DELETE' }, status: 403 },
        { path: `/api/urls/${f.keep}/visits?domain=unknown.example`, options: { method: 'DELETE', headers: ADMIN }, status: 400 },
        { path: `/api/urls/${f.keep}/visits`, options: { method: 'DELETE', headers: ADMIN }, status: 503, diskFull: true },
        { path: `/api/urls/${f.keep}/visits`, options: { method: 'DELETE', headers: ADMIN }, status: 200 },
        { path: '/api/urls/zzzzzz/visits', options: { method: 'DELETE', headers: ADMIN }, status: 404 },
      ],
    },
    exportVisits: {
      probes: [
        { path: '/api/visits/export', options: { headers: ADMIN }, status: 200 },
        { path: `/api/visits/export?format=csv&code=${f.keep}&from=2024-01-01&bots=exclude`, options: { headers: ADMIN }, status: 200 },
        { path: '/api/visits/export?from=yesterday', options: { headers: ADMIN }, status: 400 },
        { path: '/api/visits/export', status: 403 },
      ],
    },
    importVisits: {
      probes: [
        importingVisits('text/csv', `short_code,time,bot\n${f.keep},1700000000,false\n`, 200),
        importingVisits('application/x-ndjson', `{"short_code":"${f.keep}","time":1700000001,"bot":true}\n`, 200),
        importingVisits('text/csv', 'short_code,bot\nx,true\n', 400),
        { path: '/api/visits/import', options: { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'short_code,time\n' }, status: 403 },
        importingVisits('application/json', '[]', 415),
        importingVisits('text/csv', `short_code,time\n${f.keep},1700000002\n`, 503, { diskFull: true }),
      ],
      unexercised: { 413: 'a body over 256 MiB (test/transfer covers it for /api/import, the same limit)' },
    },
    listOrphanVisits: {
      probes: [
        { path: '/api/visits/orphan?bots=include&limit=10', options: { headers: ADMIN }, status: 200 },
        { path: '/api/visits/orphan?api_key=k1&offset=1&from=2026-01-01&to=2026-02-01&tz=Europe/Berlin&bots=only', status: 200 },
        { path: '/api/visits/orphan?limit=0', options: { headers: ADMIN }, status: 400 },
        { path: '/api/visits/orphan?from=yesterday', options: { headers: ADMIN }, status: 400 },
        { path: '/api/visits/orphan', status: 403 },
      ],
      unexercised: {
        503: 'the orphan visits are read from memory on the log store, so a full disk does not fail the read; only a PostgreSQL outage answers it, which no test provokes yet (test/peers/peer-outage.test.ts lists no orphan route)',
      },
    },
    followLink: {
      probes: [
        { path: `/${f.keep}`, status: 302 },
        { path: '/zzzzzz', status: 404 },
        { path: '/no.such.code', status: 404 },
        { path: `/${f.expired}`, status: 410 },
        { path: `/${f.usedUp}`, status: 410 },
        { path: `/${f.limited}`, status: 503, diskFull: true },
        { path: `/${f.locked}`, status: 200 },
        { path: `/${f.locked}`, options: { headers: { 'x-link-password': PASSWORD } }, status: 302 },
        { path: `/${f.locked}`, options: { headers: { 'x-link-password': 'not the one' } }, status: 401 },
      ],
      unexercised: { 429: 'five wrong passwords in a minute (test/api/routing.test.ts)' },
    },
    openProtectedLink: {
      probes: [
        { path: `/${f.locked}`, options: { method: 'POST', headers: FORM, body: `password=${encodeURIComponent(PASSWORD)}` }, status: 302 },
        { path: `/${f.locked}`, options: { method: 'POST', headers: FORM, body: 'password=wrong%20one' }, status: 401 },
        { path: '/zzzzzz', options: { method: 'POST', headers: FORM, body: 'password=x' }, status: 404 },
        { path: `/${f.expired}`, options: { method: 'POST', headers: FORM, body: 'password=x' }, status: 410 },
        { path: `/${f.locked}`, options: { method: 'POST', headers: FORM, body: `password=${'x'.repeat(70 * 1024)}` }, status: 413 },
        { path: `/${f.locked}`, options: { method: 'POST', headers: JSON_HEADERS, body: '{}' }, status: 415 },
        { path: `/${f.limited}`, options: { method: 'POST', headers: FORM, body: 'password=x' }, status: 503, diskFull: true },
      ],
      unexercised: { 429: 'five wrong passwords in a minute (test/api/routing.test.ts)' },
    },
    getUrlRules: {
      probes: [
        { path: `/api/urls/${f.locked}/rules`, status: 200 },
        { path: `/api/urls/${f.keep}/rules?domain=unknown.example`, status: 400 },
        { path: '/api/urls/zzzzzz/rules', status: 404 },
      ],
    },
    setUrlRules: {
      probes: [
        {
          path: `/api/urls/${f.locked}/rules`,
          options: { method: 'PUT', headers: { ...ADMIN, ...JSON_HEADERS }, body: `{"rules":[${IOS_RULE}]}` },
          status: 200,
        },
        { path: `/api/urls/${f.locked}/rules`, options: { method: 'PUT', headers: { ...ADMIN, ...JSON_HEADERS }, body: '{"rules":{}}' }, status: 400 },
        { path: `/api/urls/${f.locked}/rules`, options: { method: 'PUT', headers: JSON_HEADERS, body: '{"rules":[]}' }, status: 403 },
        { path: '/api/urls/zzzzzz/rules', options: { method: 'PUT', headers: { ...ADMIN, ...JSON_HEADERS }, body: '{"rules":[]}' }, status: 404 },
        { path: `/api/urls/${f.locked}/rules`, options: { method: 'PUT', headers: { ...ADMIN, ...JSON_HEADERS }, body: BIG }, status: 413 },
        { path: `/api/urls/${f.locked}/rules`, options: { method: 'PUT', headers: { ...ADMIN, ...FORM }, body: 'rules=' }, status: 415 },
        {
          path: `/api/urls/${f.locked}/rules`,
          options: { method: 'PUT', headers: { ...ADMIN, ...JSON_HEADERS }, body: `{"rules":[${IOS_RULE}]}` },
          status: 503,
          diskFull: true,
        },
      ],
    },
    getHealthz: {
      probes: [
        { path: '/healthz', status: 200 },
        { path: '/healthz?ready', status: 200 },
      ],
      unexercised: { 503: 'only while loading or shutting down (test/app/readiness.test.ts)' },
    },
    getAuthCheck: { probes: [{ path: '/auth-check', status: 200 }] },
    listDeprecations: { probes: [{ path: '/api/deprecations', status: 200 }] },
    createKey: {
      probes: [
        keyPost('{"name":"tool","role":"creator"}', 201),
        keyPost('{"name":"tool","role":"owner"}', 400),
        keyPost(BIG, 413),
        {
          path: '/api/keys',
          options: { method: 'POST', headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=a&role=viewer' },
          status: 415,
        },
        { path: '/api/keys', options: { method: 'POST', headers: JSON_HEADERS, body: '{"name":"tool","role":"creator"}' }, status: 403 },
        keyPost('{"name":"full","role":"viewer"}', 503, true),
      ],
    },
    listDomains: {
      probes: [
        { path: '/api/domains', options: { headers: ADMIN }, status: 200 },
        { path: '/api/domains?api_key=k1', status: 200 },
        { path: '/api/domains', status: 403 },
      ],
      unexercised: {
        503: "the domains and their links are read from memory on the log store; PostgreSQL's outage answers it (test/peers/peer-outage.test.ts, through Shlink's door to the same read)",
      },
    },
    setDomainRedirects: {
      probes: [
        domainPatch(REDIRECTED, '{"not_found":"https://home.example/unknown","expired":"https://home.example/expired"}', 200),
        domainPatch(REDIRECTED, '{"expired":null}', 200),
        domainPatch(REDIRECTED, '{}', 200),
        domainPatch(REDIRECTED, '{"base_url":"ftp://home.example/"}', 400),
        domainPatch(REDIRECTED, '{"home":"https://home.example/"}', 400),
        domainPatch(REDIRECTED, '{"not_found":null}', 403, { headers: JSON_HEADERS }),
        domainPatch('nowhere.example', '{"not_found":null}', 404),
        domainPatch(REDIRECTED, BIG, 413),
        domainPatch(REDIRECTED, 'not_found=', 415, { headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' } }),
        domainPatch(BARE, '{"not_found":"https://home.example/full"}', 503, { diskFull: true }),
      ],
    },
    listKeys: {
      probes: [
        { path: '/api/keys', options: { headers: ADMIN }, status: 200 },
        { path: '/api/keys', status: 403 },
      ],
      unexercised: { 503: 'a list of the keys is read from memory on the log store; PostgreSQL answers it (test/store/postgres/keys.test.ts)' },
    },
    revokeKey: {
      probes: [
        { path: '/api/keys/AAAAAAAA', options: { method: 'DELETE', headers: ADMIN }, status: 404 },
        { path: '/api/keys/AAAAAAAA', options: { method: 'DELETE' }, status: 403 },
      ],
      unexercised: {
        204: "a key's id is random: test/api/keys.test.ts revokes one it made",
        503: 'a revoke of an unknown id writes nothing; test/api/keys.test.ts revokes one on a full disk',
      },
    },
    createWebhook: {
      probes: [
        webhookPost(HOOK, 201),
        webhookPost('{"url":"ftp://hooks.example/","events":["link.created"]}', 400),
        webhookPost(BIG, 413),
        webhookPost('url=x', 415, { options: { method: 'POST', headers: { ...ADMIN, ...FORM }, body: 'url=x' } }),
        webhookPost(HOOK, 403, { options: { method: 'POST', headers: JSON_HEADERS, body: HOOK } }),
        webhookPost(HOOK, 503, { diskFull: true }),
      ],
    },
    listWebhooks: {
      probes: [
        { path: '/api/webhooks', options: { headers: ADMIN }, status: 200 },
        { path: '/api/webhooks', status: 403 },
      ],
      unexercised: { 503: 'the list is read from memory on the log store; PostgreSQL answers it (test/store/postgres/webhooks.test.ts)' },
    },
    deleteWebhook: {
      probes: [
        { path: `/api/webhooks/${f.hook}`, options: { method: 'DELETE', headers: ADMIN }, status: 503, diskFull: true },
        { path: `/api/webhooks/${f.doomedHook}`, options: { method: 'DELETE', headers: ADMIN }, status: 204 },
        { path: WH, options: { method: 'DELETE', headers: ADMIN }, status: 404 },
        { path: `/api/webhooks/${f.hook}`, options: { method: 'DELETE' }, status: 403 },
      ],
    },
    testWebhook: {
      probes: [
        { path: `/api/webhooks/${f.hook}/test`, options: { method: 'POST', headers: ADMIN }, status: 202 },
        { path: `${WH}/test`, options: { method: 'POST', headers: ADMIN }, status: 404 },
        { path: `/api/webhooks/${f.hook}/test`, options: { method: 'POST' }, status: 403 },
        { path: `/api/webhooks/${f.hook}/test`, options: { method: 'POST', headers: ADMIN }, status: 503, diskFull: true },
      ],
    },
    listWebhookDeliveries: {
      probes: [
        { path: `/api/webhooks/${f.hook}/deliveries`, options: { headers: ADMIN }, status: 200 },
        { path: `${WH}/deliveries`, options: { headers: ADMIN }, status: 404 },
        { path: `/api/webhooks/${f.hook}/deliveries`, status: 403 },
      ],
      unexercised: { 503: 'the attempts are read from memory on the log store; PostgreSQL answers them (test/store/postgres/webhooks-claims.test.ts)' },
    },
    mcp: {
      probes: [
        mcp(200, JSON_HEADERS),
        mcp(202, JSON_HEADERS, '{"jsonrpc":"2.0","method":"notifications/initialized"}'),
        mcp(400, { ...JSON_HEADERS, 'mcp-protocol-version': '1999-01-01' }),
        mcp(400, JSON_HEADERS, '{nope'),
        mcp(403, { ...JSON_HEADERS, origin: 'https://evil.example' }),
        mcp(406, { ...JSON_HEADERS, accept: 'text/html' }),
        mcp(413, JSON_HEADERS, BIG),
        mcp(415, { 'content-type': 'text/plain' }),
      ],
      unexercised: { 429: RATE_LIMITED_ONLY },
    },
    mcpGet: { probes: [{ path: '/mcp', status: 405 }] },
    mcpDelete: { probes: [{ path: '/mcp', options: { method: 'DELETE' }, status: 405 }] },
    getMetrics: { probes: [{ path: '/metrics', status: 200 }] },
    getOpenApi: { probes: [{ path: '/openapi.json', status: 200 }] },
    getDocs: { probes: [{ path: '/docs', status: 200 }] },
    getDeprecationNoticeSchema: { probes: [{ path: '/schemas/v2/DeprecationNoticeNotification.json', status: 200 }] },
  };
}

// The documented 503s are provoked by filling the disk of one process.
describe('served == documented, live', onOneProcess('it fills its disk for the documented 503s'), () => {
  let h: Harness;
  let doc: OpenApiDocument;
  let clock = Date.UTC(2026, 0, 10);
  const { fs, disk } = fillableDisk();
  before(async () => {
    h = await open({ apiKeys: [KEY], now: () => clock, fs, domains: [REDIRECTED, BARE], webhookAllowPrivate: true });
    doc = JSON.parse((await h.req('/openapi.json')).body) as OpenApiDocument;
  });
  after(() => h.close());

  test('/openapi.json is the document built from the table, as application/json', async () => {
    const r = await h.req('/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const { baseUrl, minShortLength, maxShortLength } = h.shortener.config;
    // The served document says the instance's code lengths (code-lengths.test.ts).
    const codeLengths = { min: minShortLength, max: maxShortLength };
    const built = openApiDocument(table(baseUrl), { baseUrl, version: VERSION, noticeSchema: NOTICE_SCHEMA, codeLengths });
    assert.deepEqual(doc, JSON.parse(JSON.stringify(built)));
    assert.deepEqual(doc.servers, [{ url: `http://127.0.0.1:${h.port}` }]);
    assert.equal(doc.info.version, VERSION);
  });

  test('every operation is exercised, with each documented status it can be made to answer, and every answer matches its documentation', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // Component schemas under one id, so documented $refs resolve inside ajv.
    ajv.addSchema(
      JSON.parse(
        JSON.stringify({ $id: 'https://openapi.invalid/doc', $defs: doc.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/'),
      ) as object,
    );
    const shorten = async (body: Record<string, unknown>): Promise<string> => {
      const r = await h.req('/api/shorten', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
      assert.equal(r.status, 201, r.body);
      return codeOf(r);
    };
    const subscribe = async (): Promise<string> => {
      const r = await h.req('/api/webhooks', { method: 'POST', headers: { ...ADMIN, ...JSON_HEADERS }, body: HOOK });
      assert.equal(r.status, 201, r.body);
      return (JSON.parse(r.body) as { id: string }).id;
    };
    const now = clock;
    clock -= 3 * 86_400_000;
    const expired = await shorten({ url: 'https://example.com/old', retention_days: 1 });
    clock = now;
    const fixture: Fixture = {
      // Titled and tagged: every record answered for it is checked against the schema with both.
      keep: await shorten({ url: 'https://example.com/keep', title: 'Kept — Ünïcödé 😀', tags: ['kept', 'labelled'] }),
      doomed: await shorten({ url: 'https://example.com/doomed' }),
      usedUp: await shorten({ url: 'https://example.com/once', max_visits: 1 }),
      limited: await shorten({ url: 'https://example.com/limited', max_visits: 5 }),
      expired,
      taken: await shorten({ url: 'https://example.com/taken', code: 'taken-code' }),
      locked: await shorten({ url: 'https://example.com/locked', password: PASSWORD, rules: [JSON.parse(IOS_RULE)] }),
      hook: await subscribe(),
      doomedHook: await subscribe(),
    };
    assert.equal((await h.req(`/${fixture.usedUp}`)).status, 302);
    const home = await h.req(`/api/domains/${REDIRECTED}`, {
      method: 'PATCH',
      headers: { ...ADMIN, ...JSON_HEADERS },
      body: '{"base_url":"https://home.example/"}',
    });
    assert.equal(home.status, 200, home.body);
    // Orphan visits (docs/analytics.md), one of each type: an unknown code, a used-up link, another domain's GET /.
    assert.equal((await h.req('/nope42')).status, 404);
    assert.equal((await h.req(`/${fixture.usedUp}`)).status, 410);
    assert.equal((await h.req('/', { headers: { host: REDIRECTED } })).status, 302);
    // They are written in the background: the page the probes read is not empty once they have landed.
    let orphans = '0';
    for (let i = 0; i < 100 && orphans !== '3'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      orphans = String((await h.req('/api/visits/orphan?bots=include', { headers: ADMIN })).headers['x-total-count']);
    }
    assert.equal(orphans, '3', 'the three orphan visits have landed');
    const rows = plan(fixture);
    const ops = operations(doc);
    assert.deepEqual(ops.map((o) => o.op.operationId).sort(), Object.keys(rows).sort(), 'one row per operation of the document');

    for (const { path, method, op } of ops) {
      const row = rows[op.operationId]!;
      const seen = new Set<string>();
      for (const probe of row.probes) {
        const label = `${op.operationId} ${probe.options?.method ?? 'GET'} ${probe.path.slice(0, 60)}`;
        assert.equal(probe.options?.method ?? 'GET', method, label);
        disk.full = probe.diskFull === true;
        let r;
        try {
          r = await h.req(probe.path, probe.options);
        } finally {
          disk.full = false;
        }
        assert.equal(r.status, probe.status, `${label}: ${r.body.slice(0, 200)}`);
        seen.add(String(r.status));
        const documented = op.responses[String(r.status)];
        assert.ok(documented, `${method} ${path} answered ${r.status}, not documented (${Object.keys(op.responses).join(', ')})`);
        const response = resolve(doc, documented);
        for (const name of Object.keys((response['headers'] as object | undefined) ?? {})) {
          const headers = response['headers'] as Record<string, OpenApiObject>;
          const optional = resolve(doc, headers[name]!)['required'] === false;
          const conditional = optional || ((name === 'Deprecation' || name === 'Link') && !op.deprecated && !probe.path.includes('api_key='));
          if (!conditional) assert.ok(r.headers[name.toLowerCase()] !== undefined, `${label}: header ${name} missing`);
        }
        const content = response['content'] as Record<string, { schema?: OpenApiObject }> | undefined;
        const type = String(r.headers['content-type'] ?? '');
        if (!content) {
          assert.equal(r.body, '', `${label}: documented without a body`);
          continue;
        }
        const media = Object.keys(content).find((t) => t === type || t === type.split(';')[0] || t === '*/*');
        assert.ok(media, `${label}: content type ${type} not documented (${Object.keys(content).join(', ')})`);
        const schema = JSON.parse(
          JSON.stringify(content[media]!.schema ?? {}).replaceAll('#/components/schemas/', 'https://openapi.invalid/doc#/$defs/'),
        ) as object;
        const validate = ajv.compile(schema);
        // JSON is checked as the value it encodes; any other body as the string it is.
        const value: unknown = media === 'application/json' || media.endsWith('+json') ? JSON.parse(r.body) : r.body;
        assert.ok(validate(value), `${label}: ${JSON.stringify(validate.errors)}`);
      }
      const missed = Object.keys(op.responses).filter((s) => !seen.has(s) && NEVER_HERE[Number(s)] === undefined && row.unexercised?.[Number(s)] === undefined);
      assert.deepEqual(missed, [], `${op.operationId}: documented statuses no probe provoked`);
    }
  });
  test('on every documented path, an undocumented method (PROPFIND) is 405 whose Allow lists the documented ones', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const concrete = path.replace('{code}', 'abc123').replace('{file}', 'docs.css');
      const r = await h.req(concrete, { method: 'PROPFIND' });
      assert.equal(r.status, 405, path);
      const served = METHODS.filter((m) => {
        const op = item[m.toLowerCase() as LowerMethod];
        return op && !op.responses['405'];
      });
      const allow = String(r.headers.allow)
        .split(', ')
        .filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      assert.deepEqual(allow, served, path);
    }
  });
});
