/**
 * Webhooks over REST (docs/webhooks.md): a subscription is made with its secret shown once, every
 * event of a link reaches a real receiver signed as the Standard Webhooks specification says
 * (checked with the official `standardwebhooks` package), in order, with the record as the API
 * shows it; the refusals of each field; only an admin key may; a `410` disables; `ping` and the
 * list of deliveries; the metrics.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start, type Harness, type Reply } from '../support/helpers.ts';
import { ADMIN, makeKey, ONE } from '../support/keys.ts';
import { receiver, type Receiver } from '../support/webhook-receiver.ts';
import { onOneProcess } from '../support/cluster.ts';
import type { SubscriptionView } from '../../src/webhooks/subscriptions.ts';

const ADMIN_JSON = { 'content-type': 'application/json', 'x-api-key': ADMIN };
const SETTINGS = { apiKeys: [ADMIN], webhookAllowPrivate: true, logLevel: 'silent' } as const;
// Deliveries, retries and the list of attempts are one process's here; on several instances each row is sent by one of them (test/store/postgres/webhooks-claims.test.ts).
const LOCAL = onOneProcess('the deliveries of one process: the claims of several are the PostgreSQL tests');

type Made = SubscriptionView & { secret: string };

async function subscribe(h: Pick<Harness, 'req'>, body: Record<string, unknown>): Promise<Made> {
  const r = await h.req('/api/webhooks', { method: 'POST', headers: ADMIN_JSON, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.body);
  return JSON.parse(r.body) as Made;
}

function refusal(r: Reply, status: number, detail: RegExp): void {
  assert.equal(r.status, status, r.body);
  assert.match((JSON.parse(r.body) as { detail: string }).detail, detail);
}

async function withReceiver(t: { after: (f: () => Promise<void>) => void }): Promise<Receiver> {
  const rx = await receiver();
  t.after(() => rx.close());
  return rx;
}

test('each event of a link reaches the receiver signed, in order, its data the record as the API shows it', LOCAL, async (t) => {
  const h = await start(t, { ...SETTINGS, logLevel: 'debug' });
  const rx = await withReceiver(t);
  const sub = await subscribe(h, { url: rx.url, events: ['link.deleted', 'link.created', 'link.updated', 'link.clicked'] });
  assert.match(sub.id, /^wh_[A-Za-z0-9_-]{16}$/);
  assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.deepEqual(sub.events, ['link.created', 'link.updated', 'link.deleted', 'link.clicked'], 'in table order, whatever order they were sent in');
  assert.deepEqual(
    { ...sub, id: 'x', secret: 'x', created_at: 0 },
    { id: 'x', url: rx.url, events: sub.events, domain: null, created_at: 0, disabled: false, secret: 'x' },
  );

  const code = await h.shorten('https://example.com/a');
  const created = JSON.parse((await h.req(`/api/urls/${code}`, { headers: { 'x-api-key': ADMIN } })).body) as Record<string, unknown>;
  const edit = await h.req(`/api/urls/${code}`, { method: 'PATCH', headers: ADMIN_JSON, body: JSON.stringify({ title: 'Hello' }) });
  assert.equal(edit.status, 200, edit.body);
  assert.equal((await h.req(`/${code}`)).status, 302);
  await rx.waitFor(3);
  assert.equal((await h.req(`/api/urls/${code}`, { method: 'DELETE', headers: ADMIN_JSON })).status, 204);
  await rx.waitFor(4);

  const got = rx.verified(sub.secret);
  assert.deepEqual(
    got.map((d) => d.type),
    ['link.created', 'link.updated', 'link.clicked', 'link.deleted'],
  );
  assert.deepEqual(got[0]!.data, created, 'link.created: the record as GET /api/urls/<code> showed it');
  assert.equal(got[1]!.data['title'], 'Hello');
  assert.deepEqual(Object.keys(got[2]!.data), ['short_code', 'domain', 'visit']);
  assert.deepEqual(Object.keys(got[2]!.data['visit'] as object), ['time', 'referrer', 'country', 'browser', 'os', 'device', 'bot'], 'never the visitor id');
  assert.equal(got[3]!.data['short_code'], code);
  assert.equal(new Set(got.map((d) => d.id)).size, 4, 'each event its own webhook-id');
  for (const d of rx.deliveries) {
    assert.equal(d.headers['content-type'], 'application/json');
    assert.equal(d.path, '/hook');
    const body = JSON.parse(d.body) as { type: string; timestamp: string };
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }

  // The secret signs, and is shown once: never in a log line (at debug), an export or the metrics.
  for (const path of ['/api/export', '/metrics', '/api/urls']) {
    const r = await h.req(path, { headers: { 'x-api-key': ADMIN } });
    assert.equal(r.status, 200, path);
    assert.ok(!r.body.includes(sub.secret.slice(6)), `${path} never holds the secret`);
  }
  assert.ok(h.logs.lines.length > 0, 'the debug log was written');
  assert.ok(!h.logs.raw.includes(sub.secret.slice(6)), 'no log line holds the secret');

  const listed = await h.req('/api/webhooks', { headers: { 'x-api-key': ADMIN } });
  assert.equal(listed.status, 200);
  const { secret: _secret, ...shown } = sub;
  assert.deepEqual(JSON.parse(listed.body), { count: 1, webhooks: [shown] }, 'listed without its secret');
  assert.ok(!listed.body.includes(sub.secret));
});

test('a ping is delivered and listed with its status; a 500 is retried later and a 410 disables the subscription', LOCAL, async (t) => {
  const h = await start(t, SETTINGS);
  const rx = await withReceiver(t);
  const sub = await subscribe(h, { url: rx.url, events: ['link.created'] });
  const queued = await h.req(`/api/webhooks/${sub.id}/test`, { method: 'POST', headers: { 'x-api-key': ADMIN } });
  assert.equal(queued.status, 202, queued.body);
  const { event_id } = JSON.parse(queued.body) as { event_id: string };
  await rx.waitFor(1);
  assert.deepEqual(rx.verified(sub.secret), [{ id: event_id, type: 'ping', data: { subscription: sub.id } }]);
  const deliveries = async (): Promise<{ event_id: string; type: string; status: number | null; outcome: string; error: string | null }[]> => {
    const r = await h.req(`/api/webhooks/${sub.id}/deliveries`, { headers: { 'x-api-key': ADMIN } });
    assert.equal(r.status, 200, r.body);
    return (JSON.parse(r.body) as { deliveries: [] }).deliveries;
  };
  const settled = async (n: number): Promise<Awaited<ReturnType<typeof deliveries>>> => {
    for (;;) {
      const list = await deliveries();
      if (list.length >= n) return list;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const [ping] = await settled(1);
  assert.deepEqual(
    { ...ping, at: undefined, duration_ms: undefined },
    { at: undefined, duration_ms: undefined, event_id, type: 'ping', status: 200, error: null, outcome: 'delivered' },
  );

  rx.answer = 500;
  await h.shorten('https://example.com/b');
  const [failed] = await settled(2);
  assert.equal(failed!.status, 500);
  assert.equal(failed!.outcome, 'retry');
  assert.equal(failed!.error, 'noted', "the start of the receiver's answer");

  // (Its retry comes 5 s later: the schedule is test/webhooks/worker.test.ts's, on a fake clock.)
  // A receiver answering 410 disables its subscription, and nothing new is queued for it.
  const gone = await withReceiver(t);
  gone.answer = 410;
  const other = await subscribe(h, { url: gone.url, events: ['link.created'] });
  assert.equal((await h.req(`/api/webhooks/${other.id}/test`, { method: 'POST', headers: { 'x-api-key': ADMIN } })).status, 202);
  await gone.waitFor(1);
  let listed: Made[] = [];
  while (!listed.some((w) => w.id === other.id && w.disabled)) {
    listed = (JSON.parse((await h.req('/api/webhooks', { headers: { 'x-api-key': ADMIN } })).body) as { webhooks: Made[] }).webhooks;
  }
  const [disabled] = (
    JSON.parse((await h.req(`/api/webhooks/${other.id}/deliveries`, { headers: { 'x-api-key': ADMIN } })).body) as {
      deliveries: { outcome: string; status: number }[];
    }
  ).deliveries;
  assert.deepEqual([disabled!.status, disabled!.outcome], [410, 'disabled']);
  await h.shorten('https://example.com/c');
  const metrics = (await h.req('/metrics', { headers: { 'x-api-key': ADMIN } })).body;
  assert.match(metrics, /^shortener_webhook_deliveries_total\{outcome="delivered"\} 1$/m);
  assert.match(metrics, /^shortener_webhook_deliveries_total\{outcome="retry"\} 1$/m);
  assert.match(metrics, /^shortener_webhook_deliveries_total\{outcome="disabled"\} 1$/m);
  // Owed: the failed row of the first (waiting for its retry) and the two links made since; the disabled one is owed nothing.
  assert.match(metrics, /^shortener_webhook_pending 2$/m);
  assert.equal(gone.deliveries.length, 1);
});

test('the refusals of each field, and of the wrong key', ONE, async (t) => {
  const h = await start(t, { ...SETTINGS, domains: ['go.example'] });
  const strict = await start(t, { apiKeys: [ADMIN], logLevel: 'silent', visitTracking: 'counts' });
  const post = (door: Harness, body: unknown, headers: Record<string, string> = ADMIN_JSON): Promise<Reply> =>
    door.req('/api/webhooks', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const url = 'https://hooks.example.com/in';
  refusal(await post(h, { events: ['link.created'] }), 400, /^url is required$/);
  refusal(await post(h, { url: 'ftp://x.example/', events: ['link.created'] }), 400, /^url must use http or https, not ftp$/);
  refusal(await post(h, { url: 'https://u:p@x.example/', events: ['link.created'] }), 400, /user name or password/);
  refusal(
    await post(strict, { url: 'http://127.0.0.1:9/', events: ['link.created'] }),
    400,
    /127\.0\.0\.1, a loopback address; only webhook_allow_private allows that/,
  );
  refusal(await post(strict, { url: 'http://169.254.169.254/', events: ['link.created'] }), 400, /a cloud metadata address/);
  refusal(await post(h, { url, events: [] }), 400, /^events must not be empty/);
  refusal(await post(h, { url, events: ['link.viewed'] }), 400, /"link\.viewed" is not an event type/);
  refusal(await post(h, { url, events: ['ping'] }), 400, /cannot be subscribed to/);
  refusal(await post(h, { url, events: ['link.created'], secret: 'mine' }), 400, /"secret" is not a field of a subscription/);
  refusal(await post(h, { url, events: ['link.created'], domain: 'other.example' }), 400, /domain/);
  refusal(await post(strict, { url: 'https://x.example/', events: ['link.clicked'] }), 400, /visit_tracking is "counts"/);
  refusal(await post(h, 'url=x', { ...ADMIN_JSON, 'content-type': 'application/x-www-form-urlencoded' }), 415, /JSON object/);
  assert.equal((await post(h, '{"url":', ADMIN_JSON)).status, 400);

  const onGo = JSON.parse((await post(h, { url, events: ['link.created'], domain: 'GO.example' })).body) as Made;
  assert.equal(onGo.domain, 'go.example');
  const onDefault = JSON.parse((await post(h, { url, events: ['link.created'], domain: 'default' })).body) as Made;
  assert.equal(onDefault.domain, `127.0.0.1:${h.port}`, "the default domain's host");

  for (const role of ['creator', 'viewer', 'editor'] as const) {
    const key = await makeKey(h, role);
    const r = await post(h, { url, events: ['link.created'] }, { 'content-type': 'application/json', 'x-api-key': key.key });
    refusal(r, 403, new RegExp(`\\(${role}\\) does not allow managing webhooks`));
  }
  assert.equal((await h.req('/api/webhooks')).status, 403, 'no key: as every admin route answers');
  for (const [method, path] of [
    ['DELETE', '/api/webhooks/wh_AAAAAAAAAAAAAAAA'],
    ['POST', '/api/webhooks/wh_AAAAAAAAAAAAAAAA/test'],
    ['GET', '/api/webhooks/wh_AAAAAAAAAAAAAAAA/deliveries'],
  ] as const) {
    assert.equal((await h.req(path, { method, headers: { 'x-api-key': ADMIN } })).status, 404, `${method} ${path}`);
  }
  const del = await h.req(`/api/webhooks/${onGo.id}`, { method: 'DELETE', headers: { 'x-api-key': ADMIN } });
  assert.equal(del.status, 204);
  assert.equal(del.body, '');
  const left = JSON.parse((await h.req('/api/webhooks', { headers: { 'x-api-key': ADMIN } })).body) as { count: number; webhooks: Made[] };
  assert.deepEqual(
    left.webhooks.map((w) => w.id),
    [onDefault.id],
  );
});

test("a subscription of one domain hears only that domain's links", LOCAL, async (t) => {
  const h = await start(t, { ...SETTINGS, domains: ['go.example'] });
  const rx = await withReceiver(t);
  const sub = await subscribe(h, { url: rx.url, events: ['link.created'], domain: 'go.example' });
  await h.shorten('https://example.com/default');
  const r = await h.req('/api/shorten', { method: 'POST', headers: ADMIN_JSON, body: JSON.stringify({ url: 'https://example.com/go', domain: 'go.example' }) });
  assert.equal(r.status, 201, r.body);
  await rx.waitFor(1);
  const queued = await h.req(`/api/webhooks/${sub.id}/test`, { method: 'POST', headers: { 'x-api-key': ADMIN } });
  assert.equal(queued.status, 202);
  await rx.waitFor(2);
  const got = rx.verified(sub.secret);
  assert.deepEqual(
    got.map((d) => [d.type, d.data['domain'] ?? null, d.data['original_url'] ?? null]),
    [
      ['link.created', 'go.example', 'https://example.com/go'],
      ['ping', null, null],
    ],
  );
});
