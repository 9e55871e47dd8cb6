/**
 * `shortener_visit_events_total` on PostgreSQL (docs/operations.md): the redirect makes a visit's
 * event before its one statement decides whether the visit counts, so the metric is told only
 * once it did: a GET of an unknown code, of a used-up link, or the first ask of a link with
 * routing counts no event; every counted visit counts one, a routed one too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openOnDatabase } from '../../support/pg-app.ts';
import { NO_POSTGRES, pgServer } from '../../support/pg.ts';

const pg = await pgServer();
const KEY = 'metric-admin-key';

test('on PostgreSQL the events metric counts the counted visits and nothing else', { ...(pg ? {} : { skip: NO_POSTGRES }), timeout: 60_000 }, async (t) => {
  const url = await pg!.createDatabase();
  const app = await openOnDatabase({ apiKeys: [KEY], logLevel: 'silent' }, url);
  t.after(() => app.close());
  const make = async (body: object): Promise<string> => {
    const r = await app.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201, r.body);
    return r.body.slice(r.body.lastIndexOf('/') + 1);
  };
  const events = async (): Promise<number> => {
    const text = (await app.req('/metrics')).body;
    return [...text.matchAll(/^shortener_visit_events_total\{bot="(?:true|false)"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };
  const plain = await make({ url: 'https://example.com/plain' });
  const once = await make({ url: 'https://example.com/once', max_visits: 1 });
  const routed = await make({
    url: 'https://example.com/r',
    rules: [{ url: 'https://example.com/ios', conditions: [{ type: 'device', key: null, value: 'ios' }] }],
  });
  const before = await events();
  const statuses = [];
  for (const path of [`/${plain}`, `/${plain}`, '/nosuch1', `/${once}`, `/${once}`, `/${routed}`, '/nosuch2']) statuses.push((await app.req(path)).status);
  assert.deepEqual(statuses, [302, 302, 404, 302, 410, 302, 404]);
  assert.equal((await events()) - before, 4, 'two plain visits, one of the limited link, one routed');
});
