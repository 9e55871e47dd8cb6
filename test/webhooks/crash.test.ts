/**
 * Webhooks never lost (docs/webhooks.md): real servers are killed with SIGKILL at random points
 * (after a random number of acknowledged creates) while links are being made and a real receiver
 * is slow, failing or down; after the last restart every create the service acknowledged is
 * delivered at least once, no event names a link that was never made, and a message delivered
 * twice is the same message (same `webhook-id`, same body), each one verified by the official
 * `standardwebhooks` package. On the log store, and on PostgreSQL with three instances sharing one
 * outbox, one of them killed each round (each event is then still sent, and the rest by one
 * instance only).
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { request, serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { NO_POSTGRES, pgServer } from '../support/pg.ts';
import { receiver, type Receiver } from '../support/webhook-receiver.ts';

const KEY = 'crash-key';
// A round that fails a row makes its next try 5 s later, and a second failure 5 min later: so one
// failing round first, then slow ones, whose answers succeed. The log store's receiver fails with a
// 503, PostgreSQL's is down (refused connections).
const MODES = ['failing', 'slow', 'slow'] as const;
const PG_MODES = ['down', 'slow', 'slow'] as const;
type Mode = (typeof MODES)[number] | (typeof PG_MODES)[number];

/** Makes links `<prefix><n>` from several clients until `stop`; the codes each 201 acknowledged. */
async function makeLinks(ports: () => number[], prefix: string, stop: Promise<void>, acked: Set<string>, tried: Set<string>): Promise<void> {
  let n = 0;
  let stopped = false;
  void stop.then(() => (stopped = true));
  const client = async (): Promise<void> => {
    while (!stopped) {
      const code = `${prefix}${n++}`;
      tried.add(code);
      const list = ports();
      const port = list[n % list.length]!;
      try {
        const r = await request(port, '/api/shorten', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': KEY },
          body: JSON.stringify({ url: `https://example.com/${code}`, code }),
        });
        if (r.status === 201) acked.add(code);
      } catch {
        // The server died mid-request: neither acknowledged nor refused.
      }
    }
  };
  await Promise.all([client(), client(), client(), client()]);
}

/**
 * The moment of a round's kill: once the clients have had `8` to `15` more creates acknowledged
 * (on a busy machine a fixed delay could pass before the first), then up to 50 ms more, while
 * the next creates are in flight; at most `ms` after the round began.
 */
async function killMoment(acked: Set<string>, ms = 30_000): Promise<void> {
  const target = acked.size + 8 + randomInt(8);
  const until = Date.now() + ms;
  while (acked.size < target && Date.now() < until) await delay(5);
  await delay(randomInt(50));
}

/** Waits until the server owes no delivery (its `/metrics`), within `ms`. */
async function drained(server: ServerProcess, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const m = await request(server.port, '/metrics', { headers: { 'x-api-key': KEY } });
    if (/^shortener_webhook_pending 0$/m.test(m.body)) return;
    assert.ok(
      Date.now() < until,
      `deliveries still owed after ${ms} ms:\n${m.body
        .split('\n')
        .filter((l) => l.startsWith('shortener_webhook'))
        .join('\n')}`,
    );
    await delay(100);
  }
}

/** Sets the receiver up for a round: answering late, failing, or not listening. */
async function mode(rx: Receiver, m: Mode | 'ok'): Promise<void> {
  rx.answer = m === 'failing' ? 503 : 200;
  rx.delayMs = m === 'slow' ? 150 : 0;
  if (m === 'down') await rx.pause();
  else await rx.resume();
}

/** The checks after the last restart: at least once, none invented, duplicates the same message. */
function verify(rx: Receiver, secret: string, acked: Set<string>, tried: Set<string>, exist: Set<string>): void {
  const got = rx.verified(secret);
  const byId = new Map<string, string>();
  for (const [i, d] of rx.deliveries.entries()) {
    const id = String(d.headers['webhook-id']);
    assert.equal(byId.get(id) ?? d.body, d.body, `message ${id} delivered twice with another body (delivery ${i})`);
    byId.set(id, d.body);
  }
  const created = new Set(got.filter((d) => d.type === 'link.created').map((d) => String(d.data['short_code'])));
  for (const code of acked) assert.ok(created.has(code), `the acknowledged create of ${code} was never delivered`);
  for (const code of created) {
    assert.ok(tried.has(code), `an event for ${code}, which no client asked for`);
    assert.ok(exist.has(code), `an event for ${code}, which the store does not hold`);
  }
  const ids = new Map<string, string>();
  for (const d of got) {
    const code = String(d.data['short_code']);
    assert.equal(ids.get(code) ?? d.id, d.id, `two messages for the one create of ${code}`);
    ids.set(code, d.id);
  }
}

async function links(port: number): Promise<Set<string>> {
  const all = new Set<string>();
  for (let offset = 0; ; offset += 500) {
    const r = await request(port, `/api/urls?limit=500&offset=${offset}`, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 200, r.body);
    const page = (JSON.parse(r.body) as { urls: { short_code: string }[] }).urls;
    for (const u of page) all.add(u.short_code);
    if (page.length < 500) return all;
  }
}

async function subscribe(port: number, rx: Receiver): Promise<string> {
  const r = await request(port, '/api/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ url: rx.url, events: ['link.created'] }),
  });
  assert.equal(r.status, 201, r.body);
  return (JSON.parse(r.body) as { secret: string }).secret;
}

const pg = await pgServer();

const ENV = { API_KEYS: KEY, WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info', FSYNC: 'always' };

test('log store: SIGKILL while the receiver is slow, failing or down loses no acknowledged event and invents none', async (t: TestContext) => {
  const dir = tempDir(t);
  const rx = await receiver();
  t.after(() => rx.close());
  const env = { ...ENV, DATA_DIR: dir };
  let server = await serverProcess(env);
  t.after(() => server.stop());
  const secret = await subscribe(server.port, rx);
  const acked = new Set<string>();
  const tried = new Set<string>();
  for (const [round, m] of MODES.entries()) {
    await mode(rx, m);
    const killed = killMoment(acked).then(() => void server.child.kill('SIGKILL'));
    await makeLinks(
      () => [server.port],
      `r${round}x`,
      killed.then(() => server.exited).then(() => undefined),
      acked,
      tried,
    );
    server = await serverProcess(env);
  }
  await mode(rx, 'ok');
  await drained(server);
  assert.ok(acked.size > 20, `enough creates to mean something (${acked.size})`);
  verify(rx, secret, acked, tried, await links(server.port));
});

test(
  'PostgreSQL, three instances: one killed each round, every acknowledged event still delivered, none twice but for a kill',
  pg ? {} : { skip: NO_POSTGRES },
  async (t: TestContext) => {
    if (pg === undefined) return;
    const env = { ...ENV, DATABASE_URL: await pg.createDatabase() };
    const rx = await receiver();
    t.after(() => rx.close());
    const servers = [await serverProcess(env), await serverProcess(env), await serverProcess(env)];
    t.after(() => Promise.all(servers.map((s) => s.stop())).then(() => undefined));
    const secret = await subscribe(servers[0]!.port, rx);
    const acked = new Set<string>();
    const tried = new Set<string>();
    for (const [round, m] of PG_MODES.entries()) {
      await mode(rx, m);
      const victim = round % servers.length;
      const killed = killMoment(acked).then(() => void servers[victim]!.child.kill('SIGKILL'));
      await makeLinks(
        () => servers.map((s) => s.port),
        `p${round}x`,
        killed.then(() => servers[victim]!.exited).then(() => undefined),
        acked,
        tried,
      );
      servers[victim] = await serverProcess(env);
    }
    await mode(rx, 'ok');
    const before = rx.deliveries.length;
    await Promise.all(servers.map((s) => drained(s, 60_000)));
    assert.ok(acked.size > 20, `enough creates to mean something (${acked.size})`);
    verify(rx, secret, acked, tried, await links(servers[0]!.port));
    // With both instances up and nothing killed, each row went out once: by one of them, not both.
    const after = rx.deliveries.slice(before).map((d) => String(d.headers['webhook-id']));
    assert.equal(new Set(after).size, after.length, 'after the last kill, no message was sent twice');
  },
);
