/**
 * On PostgreSQL the redirect makes a visit's event before its one statement decides whether the
 * visit counts (docs/analytics.md): `shortener_visit_events_total` must still count only the
 * visits counted, not a GET of an unknown code, of a used-up link, nor a routed link's first ask.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openOnDatabase } from '../../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';

const pg = await pgServer();
const KEY = 'metric-key';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

test('the events metric counts the visits the statement counted, and nothing else', pg ? {} : { skip: NO_POSTGRES }, async (t) => {
  const app = await openOnDatabase({ apiKeys: [KEY], logLevel: 'silent' }, await pg!.createDatabase());
  t.after(() => app.close());
  const make = async (body: Record<string, unknown>): Promise<string> => {
    const r = await app.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
    assert.equal(r.status, 201, r.body);
    return r.body.slice(r.body.lastIndexOf('/') + 1);
  };
  const plain = await make({ url: 'https://example.com/plain' });
  const once = await make({ url: 'https://example.com/once', max_visits: 1 });
  const ruled = await make({
    url: 'https://example.com/ruled',
    rules: [{ url: 'https://example.com/fr', conditions: [{ type: 'language', key: null, value: 'fr' }] }],
  });
  const get = async (path: string, status: number): Promise<void> => {
    assert.equal((await app.req(path, { headers: { 'user-agent': CHROME } })).status, status, path);
  };
  await get(`/${plain}`, 302);
  await get(`/${plain}`, 302);
  await get(`/${once}`, 302);
  await get(`/${once}`, 410);
  await get('/nosuch9', 404);
  await get('/nosuch8', 404);
  await get(`/${ruled}`, 302);
  const metrics = (await app.req('/metrics', { headers: { 'x-api-key': KEY } })).body;
  assert.match(metrics, /^shortener_visit_events_total\{bot="false"\} 4$/m, 'seven GETs, four counted visits');
  const counts = await Promise.all(
    [plain, once, ruled].map(
      async (code) => (JSON.parse((await app.req(`/api/urls/${code}`, { headers: { 'x-api-key': KEY } })).body) as { visit_count: number }).visit_count,
    ),
  );
  assert.deepEqual(counts, [2, 1, 1]);
});
