/**
 * /openapi.json (SPEC §8): it validates as OpenAPI 3.1 with @seriousme/openapi-schema-validator
 * (a validator we did not write); it is built from the route table the router uses, and what it
 * documents is exactly what is served — checked on the table and with live requests, whose
 * statuses, headers and JSON bodies must match the documented responses (bodies checked by ajv).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createLogger } from '../../src/log.ts';
import { openApiDocument, openApiPath, type OpenApiDocument, type OpenApiObject, type Operation } from '../../src/published/openapi.ts';
import { createResponder } from '../../src/http/respond.ts';
import { routeTable } from '../../src/route-table.ts';
import type { ApiRoute } from '../../src/api/routes.ts';
import type { Service } from '../../src/api/service.ts';
import { VERSION } from '../../src/version.ts';
import { open, type Harness, type RequestOptions } from '../support/helpers.ts';

const NOTICE_SCHEMA: unknown = JSON.parse(readFileSync(new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url), 'utf8'));
const KEY = 'k1';
const METHODS = ['GET', 'POST', 'DELETE'] as const;

/** The route table as the app builds it; its handlers are never called here, so the service is a stand-in. */
function table(baseUrl = 'https://s.example/x', publicRedirects = false): ApiRoute[] {
  return routeTable({
    service: {} as Service,
    reply: createResponder([]),
    files: new Map(),
    config: { production: false, apiToken: '', mcpAllowedOrigins: [], maxBodyBytes: 65536, baseUrl, publicRedirects },
    log: createLogger('silent'),
  });
}

function buildDoc(baseUrl = 'https://s.example/x', publicRedirects = false): OpenApiDocument {
  return openApiDocument(table(baseUrl, publicRedirects), { baseUrl, version: VERSION, noticeSchema: NOTICE_SCHEMA });
}

function operations(doc: OpenApiDocument): { path: string; method: (typeof METHODS)[number]; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item[method.toLowerCase() as 'get' | 'post' | 'delete'];
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

test('the document validates as OpenAPI 3.1, and the validator does catch a broken one', async () => {
  const validator = new Validator();
  const result = await validator.validate(buildDoc() as unknown as Record<string, unknown>);
  assert.deepEqual(result, { valid: true });
  assert.equal(validator.version, '3.1');

  const broken = structuredClone(buildDoc()) as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> };
  delete broken.paths['/api/health']!['get']!['responses'];
  broken.paths['/api/health']!['get']!['parameters'] = [{ name: 'x', in: 'nowhere' }];
  const bad = await new Validator().validate(broken as unknown as Record<string, unknown>);
  assert.equal(bad.valid, false);
});

test('every route of the table and each method it serves is documented, and nothing else is', () => {
  const doc = buildDoc();
  const routes = table();
  assert.deepEqual(Object.keys(doc.paths).sort(), routes.map((r) => openApiPath(r.path)).sort());
  for (const route of routes) {
    const item = doc.paths[openApiPath(route.path)]!;
    for (const method of METHODS) {
      const op = item[method.toLowerCase() as 'get' | 'post' | 'delete'];
      const served = route.methods[method] !== undefined;
      if (served) assert.ok(op, `${method} ${route.path} is served but not documented`);
      else if (op) {
        // Documented without a handler: only as the 405 the SPEC prescribes (GET/DELETE /mcp).
        assert.deepEqual(Object.keys(op.responses).filter((s) => s !== '401' && s !== '500'), ['405'], `${method} ${route.path}`);
        assert.ok(route.allow && !route.allow.includes(method), `${method} ${route.path}`);
      }
    }
  }
  // Route paths map to OpenAPI templates with declared parameters.
  assert.equal(openApiPath('/api/urls/:code'), '/api/urls/{code}');
  assert.equal(openApiPath('/static/*'), '/static/{file}');
});

test('the operations document every route of SPEC §4, §5 and §8, with their statuses and headers', () => {
  const doc = buildDoc();
  const ops = Object.fromEntries(operations(doc).map(({ path, method, op }) => [`${method} ${path}`, op]));
  const statuses = (key: string): string[] => Object.keys(ops[key]?.responses ?? {});
  const expected: Record<string, string[]> = {
    'GET /': ['200', '404', '500'],
    'GET /static/{file}': ['200', '304', '404', '500'],
    'GET /robots.txt': ['200', '401', '500'],
    'GET /api/health': ['200', '401', '500'],
    'POST /api/shorten': ['201', '400', '401', '413', '415', '500', '503'],
    'GET /api/shorten': ['201', '400', '401', '413', '415', '500', '503'],
    'GET /api/urls': ['200', '400', '401', '403', '500'],
    'GET /api/urls/{code}': ['200', '401', '404', '500'],
    'DELETE /api/urls/{code}': ['204', '401', '403', '404', '500', '503'],
    'GET /api/lookup': ['200', '400', '401', '404', '500'],
    'GET /api/export': ['200', '400', '401', '403', '500'],
    'POST /api/import': ['200', '400', '401', '403', '413', '415', '500', '503'],
    'GET /{code}': ['302', '401', '404', '410', '500'],
    'GET /healthz': ['200', '500', '503'],
    'GET /auth-check': ['200', '500'],
    'GET /api/deprecations': ['200', '401', '500'],
    'POST /mcp': ['200', '202', '400', '401', '403', '406', '413', '415', '500'],
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
    const isAdmin = ['GET /api/urls', 'DELETE /api/urls/{code}', 'GET /api/export', 'POST /api/import'].includes(key);
    const expectedSecurity = isPublic ? [] : isAdmin ? [{ bearerAuth: [], adminKey: [] }, { bearerAuth: [], adminKeyQuery: [] }] : [{ bearerAuth: [] }];
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
  assert.deepEqual(Object.keys(doc.components.headers).sort(), ['Allow', 'Cache-Control', 'Deprecation', 'ETag', 'Link', 'Location', 'WWW-Authenticate', 'X-Total-Count']);
  assert.deepEqual(doc['x-deprecations'].map((d) => d.usage), ['shorten-with-get', 'api-key-query']);
  // The schema component is the shipped file without its draft-07 identity.
  const { $schema: _s, $id: _i, ...notice } = NOTICE_SCHEMA as Record<string, unknown>;
  assert.deepEqual(doc.components.schemas['DeprecationNoticeNotification'], notice);
  // MCP tools are described on the operation.
  assert.deepEqual((ops['POST /mcp']?.['x-mcp-tools'] as { name: string }[]).map((t) => t.name), ['shorten_url', 'get_url', 'lookup_url', 'list_urls', 'delete_url']);
});

test('the redirect is documented behind the gate, or public where the server runs with PUBLIC_REDIRECTS', async () => {
  const gated = buildDoc().paths['/{code}']!.get!;
  assert.deepEqual(gated.security, [{ bearerAuth: [] }]);
  assert.deepEqual(gated.responses['401'], { $ref: '#/components/responses/Unauthorized' });
  assert.match(gated.description ?? '', /^Behind the gate like the API when the server runs with API_TOKEN .*PUBLIC_REDIRECTS=true makes short links public\./);

  const open = buildDoc('https://s.example/x', true);
  const link = open.paths['/{code}']!.get!;
  assert.deepEqual(link.security, []);
  assert.deepEqual(Object.keys(link.responses), ['302', '404', '410', '500']);
  assert.match(link.description ?? '', /^Public on this server \(PUBLIC_REDIRECTS=true\)/);
  // Nothing else differs between the two documents.
  const { '/{code}': _a, ...rest } = open.paths;
  const { '/{code}': _b, ...restGated } = buildDoc().paths;
  assert.deepEqual(rest, restGated);
  assert.deepEqual(await new Validator().validate(open as unknown as Record<string, unknown>), { valid: true });
  assert.match(open.info.description, /short links \(GET and HEAD \/\{code\}\) only when the server runs with PUBLIC_REDIRECTS=true/);
});

/** One concrete request per documented operation. */
function requests(codes: { keep: string; doomed: string }): Record<string, { path: string; options?: RequestOptions }> {
  const json = { 'content-type': 'application/json' };
  return {
    getUi: { path: '/' },
    getStaticFile: { path: '/static/docs.css' },
    getRobotsTxt: { path: '/robots.txt' },
    getHealth: { path: '/api/health' },
    shortenUrl: { path: '/api/shorten', options: { method: 'POST', headers: json, body: '{"url":"https://example.com/p"}' } },
    shortenUrlWithGet: { path: `/api/shorten?url=${encodeURIComponent('https://example.com/g')}` },
    listUrls: { path: '/api/urls?limit=5', options: { headers: { 'x-api-key': KEY } } },
    getUrl: { path: `/api/urls/${codes.keep}` },
    deleteUrl: { path: `/api/urls/${codes.doomed}`, options: { method: 'DELETE', headers: { 'x-api-key': KEY } } },
    lookupUrl: { path: `/api/lookup?url=${encodeURIComponent('https://example.com/keep')}` },
    exportUrls: { path: '/api/export', options: { headers: { 'x-api-key': KEY } } },
    importUrls: { path: '/api/import', options: { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'text/csv' }, body: 'url\nhttps://example.com/imported\n' } },
    followLink: { path: `/${codes.keep}` },
    getHealthz: { path: '/healthz' },
    getAuthCheck: { path: '/auth-check' },
    listDeprecations: { path: '/api/deprecations' },
    mcp: { path: '/mcp', options: { method: 'POST', headers: json, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' } },
    mcpGet: { path: '/mcp' },
    mcpDelete: { path: '/mcp', options: { method: 'DELETE' } },
    getMetrics: { path: '/metrics' },
    getOpenApi: { path: '/openapi.json' },
    getDocs: { path: '/docs' },
    getDeprecationNoticeSchema: { path: '/schemas/v2/DeprecationNoticeNotification.json' },
  };
}

describe('served == documented, live', () => {
  let h: Harness;
  let doc: OpenApiDocument;
  before(async () => {
    h = await open({ apiKeys: [KEY] });
    doc = JSON.parse((await h.req('/openapi.json')).body) as OpenApiDocument;
  });
  after(() => h.close());

  test('/openapi.json is the document built from the table, as application/json', async () => {
    const r = await h.req('/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(doc, JSON.parse(JSON.stringify(buildDoc(h.shortener.config.baseUrl))));
    assert.deepEqual(doc.servers, [{ url: `http://127.0.0.1:${h.port}` }]);
    assert.equal(doc.info.version, VERSION);
  });

  test('each documented operation answers a documented status with its documented headers and body schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // Component schemas under one id, so documented $refs resolve inside ajv.
    ajv.addSchema(JSON.parse(JSON.stringify({ $id: 'https://openapi.invalid/doc', $defs: doc.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/')) as object);
    const codes = { keep: await h.shorten('https://example.com/keep'), doomed: await h.shorten('https://example.com/doomed') };
    const plan = requests(codes);
    const ops = operations(doc);
    assert.deepEqual(ops.map((o) => o.op.operationId).sort(), Object.keys(plan).sort(), 'one request per operation');

    for (const { path, method, op } of ops) {
      const { path: target, options } = plan[op.operationId]!;
      assert.equal(options?.method ?? 'GET', method, op.operationId);
      const r = await h.req(target, options);
      const documented = op.responses[String(r.status)];
      assert.ok(documented, `${method} ${path} answered ${r.status}, not documented (${Object.keys(op.responses).join(', ')})`);
      assert.ok(r.status < 400 || r.status === 405, `${op.operationId} should have succeeded: ${r.status} ${r.body}`);
      const response = resolve(doc, documented);
      for (const name of Object.keys((response['headers'] as object | undefined) ?? {})) {
        const conditional = (name === 'Deprecation' || name === 'Link') && !op.deprecated;
        if (!conditional) assert.ok(r.headers[name.toLowerCase()] !== undefined, `${op.operationId}: header ${name} missing`);
      }
      const content = response['content'] as Record<string, { schema?: OpenApiObject }> | undefined;
      const type = String(r.headers['content-type'] ?? '');
      if (!content) {
        assert.equal(r.body, '', `${op.operationId}: documented without a body`);
        continue;
      }
      const media = Object.keys(content).find((t) => t === type || t === type.split(';')[0] || t === '*/*');
      assert.ok(media, `${op.operationId}: content type ${type} not documented (${Object.keys(content).join(', ')})`);
      if (media === 'application/json') {
        const schema = JSON.parse(JSON.stringify(content[media]!.schema).replaceAll('#/components/schemas/', 'https://openapi.invalid/doc#/$defs/')) as object;
        const validate = ajv.compile(schema);
        assert.ok(validate(JSON.parse(r.body)), `${op.operationId}: ${JSON.stringify(validate.errors)}`);
      }
    }
  });

  test('on every documented path, an undocumented method is 405 whose Allow lists the documented ones', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const concrete = path.replace('{code}', 'abc123').replace('{file}', 'docs.css');
      const r = await h.req(concrete, { method: 'PUT' });
      assert.equal(r.status, 405, path);
      const served = METHODS.filter((m) => {
        const op = item[m.toLowerCase() as 'get' | 'post' | 'delete'];
        return op && !op.responses['405'];
      });
      const allow = String(r.headers.allow).split(', ').filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      assert.deepEqual(allow, served, path);
    }
  });
});
