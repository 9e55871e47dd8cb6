/**
 * YOURLS' API in the published contracts (docs/compat.md#yourls-api): with `yourls_api` on, the
 * OpenAPI document describes `GET` and `POST /yourls-api.php` and still validates as OpenAPI 3.1
 * (checked by a validator we did not write), `/docs` lists both, and nothing else of the document
 * changes; off, the document does not name the path.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createLogger } from '../../src/log.ts';
import { createResponder } from '../../src/http/respond.ts';
import type { Service } from '../../src/links/service.ts';
import { openApiDocument, type OpenApiDocument } from '../../src/published/openapi.ts';
import { routeTable } from '../../src/route-table.ts';
import { VERSION } from '../../src/version.ts';
import { start } from '../support/helpers.ts';

const NOTICE_SCHEMA: unknown = JSON.parse(readFileSync(new URL('../../schemas/v2/DeprecationNoticeNotification.json', import.meta.url), 'utf8'));

function buildDoc(yourlsApi: boolean): OpenApiDocument {
  const baseUrl = 'https://s.example/x';
  const routes = routeTable({
    service: {} as Service,
    reply: createResponder([]),
    files: new Map(),
    config: { production: false, apiToken: '', mcpAllowedOrigins: [], maxBodyBytes: 65536, baseUrl, yourlsApi },
    log: createLogger('silent'),
  });
  return openApiDocument(routes, { baseUrl, version: VERSION, noticeSchema: NOTICE_SCHEMA });
}

test('on, the document describes GET and POST /yourls-api.php, public to the gate, and validates', async () => {
  const on = buildDoc(true);
  assert.deepEqual(await new Validator().validate(on as unknown as Record<string, unknown>), { valid: true });
  const item = on.paths['/yourls-api.php']!;
  assert.deepEqual(Object.keys(item).sort(), ['get', 'post']);
  for (const op of [item.get!, item.post!]) {
    assert.deepEqual(op.security, []);
    // Only a POST's body is read: a GET is never 413.
    assert.deepEqual(Object.keys(op.responses), ['200', '400', '403', '404', ...(op === item.post ? ['413'] : []), '429', '500', '503']);
    assert.deepEqual(
      op.parameters?.map((p) => p['name']),
      ['action', 'format', 'signature', 'timestamp', 'hash', 'url', 'keyword', 'title', 'shorturl', 'filter', 'limit', 'start', 'callback', 'db'],
    );
  }
  assert.deepEqual(Object.keys((item.post!.requestBody as { content: object }).content), ['application/x-www-form-urlencoded', 'multipart/form-data']);
  // Nothing else differs.
  const { '/yourls-api.php': _, ...rest } = on.paths;
  assert.deepEqual(rest, buildDoc(false).paths);
});

test('a server with YOURLS_API serves that document, and /docs lists both operations', async (t) => {
  const h = await start(t, { yourlsApi: true });
  const doc = JSON.parse((await h.req('/openapi.json')).body) as OpenApiDocument;
  assert.ok(doc.paths['/yourls-api.php']?.get && doc.paths['/yourls-api.php'].post);
  const html = (await h.req('/docs')).body;
  assert.match(html, /yourlsApi\b/);
  assert.match(html, /yourlsApiForm\b/);
  const off = await start(t, {});
  assert.equal((JSON.parse((await off.req('/openapi.json')).body) as OpenApiDocument).paths['/yourls-api.php'], undefined);
});
