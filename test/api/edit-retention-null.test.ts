/**
 * Regression: `PATCH /api/urls/<code>` with `{"retention_days": null}` cleared the retention, so a
 * 30-day link became permanent. docs/api.md, edit: `null` is not a retention (`0` means forever);
 * it is a 400 naming the field and nothing changes — through REST, MCP's `update_url` and the
 * service below both, as the published edit schema says.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UrlRecord } from '../../src/links/record.ts';
import { createLogger } from '../../src/log.ts';
import { createMcpServer } from '../../src/mcp/protocol.ts';
import { validateValue } from '../../src/published/json-schema.ts';
import { UPDATE_INPUT_SCHEMA } from '../../src/published/schemas.ts';
import { codeOf, start, type Harness } from '../support/helpers.ts';

const KEY = 'k1';
const NOW_MS = Date.UTC(2026, 2, 1);
const NOW_S = NOW_MS / 1000;
const DETAIL = 'retention_days must be an integer from 0 to 36500 (0 keeps the link forever), not null';

async function thirtyDayLink(h: Harness): Promise<{ code: string; record: UrlRecord }> {
  const r = await h.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/month', retention_days: 30, max_visits: 5 }),
  });
  assert.equal(r.status, 201, r.body);
  const code = codeOf(r);
  const record = JSON.parse((await h.req(`/api/urls/${code}`)).body) as UrlRecord;
  assert.equal(record.retention_days, 30);
  assert.equal(record.expires_at, NOW_S + 30 * 86400);
  return { code, record };
}

test('PATCH {"retention_days": null} is 400 naming the field, alone or with other fields; the link is unchanged', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW_MS });
  const { code, record } = await thirtyDayLink(h);
  for (const body of ['{"retention_days":null}', '{"url":"https://example.com/other","retention_days":null,"max_visits":null}']) {
    const r = await h.req(`/api/urls/${code}`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
    assert.equal(r.status, 400, body);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body, JSON.stringify({ detail: DETAIL }), body);
    assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}`)).body), record, `${body}: nothing changed`);
  }
  // 0 is how forever is said.
  const forever = await h.req(`/api/urls/${code}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: '{"retention_days":0}',
  });
  assert.equal(forever.status, 200, forever.body);
  assert.deepEqual(JSON.parse(forever.body), { ...record, retention_days: 0, expires_at: null });
});

test('the same rule below every door: the service refuses null, and MCP update_url does too', async (t) => {
  const h = await start(t, { apiKeys: [KEY], now: () => NOW_MS });
  const { code, record } = await thirtyDayLink(h);
  assert.deepEqual(await h.shortener.service.update(code, { retentionDays: null }), { ok: false, error: 'invalid', detail: DETAIL });

  // MCP's input schema declares retention_days an integer (not null), so the call is refused
  // before the tool runs, as every argument of the wrong type is (docs/mcp.md).
  const mcp = createMcpServer(h.shortener.service, createLogger('silent'));
  const outcome = await mcp.handle(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'update_url', arguments: { code, api_key: KEY, retention_days: null } },
    }),
  );
  assert.ok('message' in outcome);
  assert.deepEqual(outcome.message, {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32602, message: 'Invalid arguments for update_url: retention_days must be an integer' },
  });
  assert.deepEqual(JSON.parse((await h.req(`/api/urls/${code}`)).body), record, 'nothing changed');
});

test('the published edit schema (OpenAPI UpdateInput) says the same: an integer, not null', () => {
  assert.deepEqual(validateValue(UPDATE_INPUT_SCHEMA, { retention_days: null }, 'body'), ['retention_days must be an integer']);
  assert.deepEqual(validateValue(UPDATE_INPUT_SCHEMA, { retention_days: 0, max_visits: null }, 'body'), []);
});
