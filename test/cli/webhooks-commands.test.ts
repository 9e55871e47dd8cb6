/**
 * `webhooks list|create|delete|deliveries` (docs/webhooks.md, from the command line): a
 * subscription made on the command line is the object `POST /api/webhooks` answers, secret
 * included, alone on stdout; `list` never shows a secret; a server started afterwards on the data
 * dir delivers to it, signed with that secret, and `deliveries` then shows the attempt. While a
 * server holds the data dir every command refuses, naming it. The rules are the API's: each
 * refusal is the route's sentence, exit 1, and nothing is stored. On PostgreSQL the same commands
 * run beside a running server, which sees each change.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { INITIAL_KEY_FILE } from '../../src/cli/first-admin.ts';
import { parseWebhooksCommand, runWebhooksCommand } from '../../src/cli/webhooks-commands.ts';
import { ConfigError } from '../../src/errors.ts';
import type { AttemptView, SubscriptionView } from '../../src/webhooks/subscriptions.ts';
import { request, runCli, serverProcess, tempDir } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { pgServer } from '../support/pg.ts';
import { type Delivery, receiver, type Receiver } from '../support/webhook-receiver.ts';

// The API's shapes, as the commands print them.
type Made = SubscriptionView & { secret: string };
type View = SubscriptionView;
type Attempt = AttemptView;

/** Collects what is written to it. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** Runs `webhooks …args` in this process, with only `env` for settings; its exit code and output. */
async function webhooks(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const cmd = parseWebhooksCommand(['webhooks', ...args]);
  assert.ok(cmd, args.join(' '));
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await runWebhooksCommand(cmd, { env, readFile: (p) => readFileSync(p, 'utf8'), stdout, stderr, now: Date.now });
  return { code, out: stdout.text, err: stderr.text };
}

/** `webhooks create` that must succeed: the subscription it printed, checked for its shape. */
async function create(args: readonly string[], env?: Record<string, string>): Promise<Made> {
  const r = await webhooks(['create', ...args], env);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.split('\n').length, 2, `one line on stdout: ${r.out}`);
  const made = JSON.parse(r.out) as Made;
  assert.match(made.id, /^wh_[A-Za-z0-9_-]{16}$/);
  assert.match(made.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.ok(!r.err.includes(made.secret), 'the secret is never logged');
  return made;
}

/** `webhooks list` that must succeed, checked to show no secret; its subscriptions. */
async function list(args: readonly string[], secrets: readonly string[], env?: Record<string, string>): Promise<View[]> {
  const r = await webhooks(['list', ...args], env);
  assert.equal(r.code, 0, r.err);
  const listed = JSON.parse(r.out) as { count: number; webhooks: View[] };
  assert.equal(listed.count, listed.webhooks.length);
  for (const secret of secrets) assert.ok(!r.out.includes(secret) && !r.err.includes(secret), 'no secret in a list');
  for (const sub of listed.webhooks) assert.ok(!('secret' in sub), `only the view: ${JSON.stringify(sub)}`);
  return listed.webhooks;
}

/** `webhooks deliveries ID` that must succeed: the attempts, newest first. */
async function deliveries(id: string, args: readonly string[], env?: Record<string, string>): Promise<Attempt[]> {
  const r = await webhooks(['deliveries', id, ...args], env);
  assert.equal(r.code, 0, r.err);
  const read = JSON.parse(r.out) as { count: number; deliveries: Attempt[] };
  assert.equal(read.count, read.deliveries.length);
  return read.deliveries;
}

const view = ({ secret: _secret, ...rest }: Made): View => rest;

async function withReceiver(t: TestContext): Promise<Receiver> {
  const rx = await receiver();
  t.after(() => rx.close());
  return rx;
}

/** Polls `check` until it holds, failing past `ms`. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    assert.ok(performance.now() - started < ms, `${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('on a data dir: create, list without secrets, a server started afterwards delivers, refusal while it runs, deliveries, delete', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  const rx = await withReceiver(t);
  // The commands read the server's settings: the receiver is on this machine, which the server
  // allows, and the default domain is shown by the base URL of whoever reads it.
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true', BASE_URL: 'https://s.example' };
  const at = ['--data-dir', dir];
  const all = await create(['--url', rx.url, '--events', 'link.deleted, link.created', ...at], env);
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(
    { ...all, id: 'x', secret: 'x', created_at: 0 },
    { id: 'x', url: rx.url, events: ['link.created', 'link.deleted'], domain: null, created_at: 0, disabled: false, secret: 'x' },
    'the events in table order, each trimmed',
  );
  assert.ok(Math.abs(all.created_at - now) <= 2, 'made now');
  const own = await create([`--url=${rx.url}`, '--events=link.created', '--domain=default', ...at], env);
  assert.equal(own.domain, 's.example', "the default domain, by the server's base URL");
  assert.deepEqual(await list(at, [all.secret, own.secret], env), [view(all), view(own)]);
  assert.deepEqual(await deliveries(all.id, at, env), [], 'nothing tried yet');

  const server = await serverProcess({ DATA_DIR: dir, ...env });
  t.after(() => server.stop());
  const made = await request(server.port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/w"}',
  });
  assert.equal(made.status, 201, made.body);
  // No request is answered before the first admin key is made: it is in its file by now.
  const admin = readFileSync(join(dir, INITIAL_KEY_FILE), 'utf8').trim();
  await rx.waitFor(2);
  // Each subscription's delivery is signed with the secret its `create` printed.
  assert.deepEqual(
    [all, own].map((sub) => rx.deliveries.filter((d) => verifies(sub.secret, d)).length),
    [1, 1],
  );
  const listed = await request(server.port, '/api/webhooks', { headers: { 'x-api-key': admin } });
  assert.deepEqual(JSON.parse(listed.body), { count: 2, webhooks: [view(all), view(own)] }, "the route's list is the command's");

  // The server holds the data dir: each command refuses, naming it, and changes nothing. Through
  // the program itself, so that its wiring is held too.
  const held = await Promise.all([
    runCli(['webhooks', 'create', '--url', rx.url, '--events', 'link.created', ...at]),
    runCli(['webhooks', 'list', ...at]),
    runCli(['webhooks', 'delete', all.id, ...at]),
    runCli(['webhooks', 'deliveries', all.id, ...at]),
  ]);
  for (const r of held) {
    assert.equal(r.code, 1, r.err);
    assert.equal(r.out, '');
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    assert.match(r.err, new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another server \\(PID ${server.child.pid} on host `));
  }
  // Both attempts recorded before the server stops: a stop mid-attempt would only send the row again.
  await within(5000, 'both attempts recorded', async () => {
    const counts = await Promise.all(
      [all, own].map(async (sub) => {
        const r = await request(server.port, `/api/webhooks/${sub.id}/deliveries`, { headers: { 'x-api-key': admin } });
        return (JSON.parse(r.body) as { count: number }).count;
      }),
    );
    return counts.every((n) => n === 1);
  });
  await server.stop();

  const attempts = await deliveries(all.id, at, env);
  assert.deepEqual(
    attempts.map((a) => [a.type, a.status, a.outcome, a.error]),
    [['link.created', 200, 'delivered', null]],
  );
  assert.equal(attempts[0]!.event_id, rx.deliveries[0]!.headers['webhook-id'], 'the event id is the webhook-id sent');

  const deleted = await webhooks(['delete', all.id, ...at], env);
  assert.deepEqual(deleted, { code: 0, out: '', err: '' });
  assert.deepEqual(await list(at, [own.secret], env), [view(own)]);
  for (const args of [
    ['delete', all.id],
    ['deliveries', all.id],
  ]) {
    const again = await webhooks([...args, ...at], env);
    assert.deepEqual([again.code, again.out], [1, ''], args.join(' '));
    const line = JSON.parse(again.err) as Record<string, unknown>;
    const msg = args[0] === 'delete' ? 'no webhook subscription has this id; nothing was deleted' : 'no webhook subscription has this id';
    assert.deepEqual([line['level'], line['msg'], line['webhook']], ['error', msg, all.id]);
  }
});

/** Whether delivery `d` verifies under `secret`, as a receiver checks it with the official package. */
function verifies(secret: string, d: Delivery): boolean {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = d.headers;
  try {
    new Webhook(secret).verify(d.body, { 'webhook-id': String(id), 'webhook-timestamp': String(timestamp), 'webhook-signature': String(signature) });
    return true;
  } catch {
    return false;
  }
}

test("a subscription the service refuses is the route's sentence on stderr and exit 1, and nothing is stored", async (t) => {
  const at = ['--data-dir', tempDir(t)];
  const types = 'one or more of link.created, link.updated, link.deleted, link.clicked, link.limit_reached';
  const cases: [string[], string, Record<string, string>?][] = [
    [['--url', 'ftp://example.com/x', '--events', 'link.created'], 'url must use http or https, not ftp'],
    [['--url', 'not a url', '--events', 'link.created'], 'url must be an absolute URL such as https://example.com/hooks'],
    [['--url', 'https://user:pw@example.com/x', '--events', 'link.created'], 'url must not contain a user name or password'],
    [['--url', 'http://127.0.0.1:9/x', '--events', 'link.created'], 'url points at 127.0.0.1, a loopback address; only webhook_allow_private allows that'],
    [['--url', 'https://example.com/x', '--events', 'link.visited'], `events: "link.visited" is not an event type: ${types}`],
    [['--url', 'https://example.com/x', '--events', 'ping'], 'events: ping cannot be subscribed to (it is sent only by a test delivery)'],
    [['--url', 'https://example.com/x', '--events', 'link.created,link.created'], 'events: link.created is listed more than once'],
    [['--url', 'https://example.com/x', '--events', ''], `events: "" is not an event type: ${types}`],
    [
      ['--url', 'https://example.com/x', '--events', 'link.created', '--domain', 'go.example'],
      "domain must be one of this service's domains (localhost:3000), or absent for the default one",
    ],
    [
      ['--url', 'https://example.com/x', '--events', 'link.clicked'],
      'events: link.clicked tells a visit\'s event, and this instance keeps none (visit_tracking is "counts")',
      { VISIT_TRACKING: 'counts' },
    ],
  ];
  for (const [args, sentence, env] of cases) {
    const r = await webhooks(['create', ...args, ...at], env);
    assert.deepEqual(r, { code: 1, out: '', err: `url-shortener webhooks create: ${sentence}\n` }, args.join(' '));
  }
  assert.deepEqual(await list(at, []), []);
  // The same URL is taken where the server's setting allows this machine, and `DOMAINS` adds a domain.
  const local = await create(['--url', 'http://127.0.0.1:9/x', '--events', 'link.created', '--domain', 'GO.example', ...at], {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    DOMAINS: 'go.example',
  });
  assert.equal(local.domain, 'go.example');
  // A setting the server would refuse is refused the same way: bad usage.
  const bad = await webhooks(['list', '--port', 'x', ...at]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^url-shortener webhooks list: invalid --port/);
});

test('at most 100 subscriptions, as over the API', { timeout: 60_000 }, async (t) => {
  const at = ['--data-dir', tempDir(t), '--fsync', 'off'];
  for (let i = 0; i < 100; i++) await create(['--url', `https://example.com/hooks/${i}`, '--events', 'link.created', ...at]);
  const over = await webhooks(['create', '--url', 'https://example.com/hooks/100', '--events', 'link.created', ...at]);
  assert.deepEqual(over, { code: 1, out: '', err: 'url-shortener webhooks create: an instance keeps at most 100 subscriptions; delete one first\n' });
  assert.equal((await list(at, [])).length, 100);
});

test('the command line: the id first whatever it starts with, options in both spellings, usage errors', async () => {
  assert.equal(parseWebhooksCommand(['keys', 'list']), undefined);
  assert.equal(parseWebhooksCommand([]), undefined);
  assert.deepEqual(parseWebhooksCommand(['webhooks', 'delete', '-a_b-123', '--data-dir', 'd']), {
    action: 'delete',
    id: '-a_b-123',
    settings: ['--data-dir', 'd'],
  });
  assert.deepEqual(parseWebhooksCommand(['webhooks', 'deliveries', 'wh_x', '--fsync=off']), { action: 'deliveries', id: 'wh_x', settings: ['--fsync=off'] });
  assert.deepEqual(parseWebhooksCommand(['webhooks', 'create', '--events', 'link.created', '--url=https://h.example/x', '--domain', '--d', '--fsync=off']), {
    action: 'create',
    url: 'https://h.example/x',
    events: 'link.created',
    domain: '--d',
    settings: ['--fsync=off'],
  });
  // `create`'s options are its own: elsewhere they are settings, which the resolver refuses.
  assert.deepEqual(parseWebhooksCommand(['webhooks', 'list', '--url', 'u']), { action: 'list', settings: ['--url', 'u'] });
  for (const [argv, message] of [
    [['webhooks'], /^webhooks needs one of list, create, delete, deliveries: node dist\/server\.js webhooks list/],
    [['webhooks', 'remove', 'x'], /^webhooks needs one of list, create, delete, deliveries/],
    [['webhooks', 'delete'], /^webhooks delete needs the id of the subscription/],
    [['webhooks', 'deliveries'], /^webhooks deliveries needs the id of the subscription/],
    [['webhooks', 'create', '--url', 'https://h.example/x'], /^webhooks create needs --url URL and --events/],
    [['webhooks', 'create', '--events', 'link.created'], /^webhooks create needs --url URL and --events/],
    [['webhooks', 'create', '--events', 'link.created', '--url'], /^option --url needs a value$/],
  ] as const) {
    assert.throws(
      () => parseWebhooksCommand(argv),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      argv.join(' '),
    );
  }
  const usage = await runCli(['webhooks']);
  assert.equal(usage.code, 2);
  assert.equal(usage.out, '');
  assert.match(usage.err, /^url-shortener: webhooks needs one of list, create, delete, deliveries: /);
  const unknown = await runCli(['webhooks', 'list', '--nope']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /^url-shortener webhooks list: /);
});

// The store's own tests hold a change to a second on three instances; here twice that, for a loaded machine.
test('on PostgreSQL: create, list, deliveries and delete beside a running server, which sees each change', { timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const url = await pg.createDatabase();
  const app = await openOnDatabase({ logLevel: 'silent', apiKeys: ['K'], webhookAllowPrivate: true }, url);
  t.after(() => app.close());
  const rx = await withReceiver(t);
  const env = { DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' };

  const sub = await create(['--url', rx.url, '--events', 'link.created'], env);
  assert.deepEqual(await list([], [sub.secret], env), [view(sub)]);
  const listed = async (): Promise<View[]> =>
    (JSON.parse((await app.req('/api/webhooks', { headers: { 'x-api-key': 'K' } })).body) as { webhooks: View[] }).webhooks;
  assert.deepEqual(await listed(), [view(sub)], 'the route reads the same table');
  // A change made once the server's copy of the subscriptions has caught up is delivered.
  await within(2000, 'the new subscription', async () => {
    const made = await app.req('/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url":"https://example.com/p"}' });
    assert.equal(made.status, 201, made.body);
    return (await Promise.race([rx.waitFor(1).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 200))])) === true;
  });
  const [first] = rx.verified(sub.secret);
  assert.equal(first!.type, 'link.created');
  await within(5000, 'the attempt recorded', async () => (await deliveries(sub.id, ['--database-url', url])).length > 0);
  // The loop may have made more links than the one first delivered: each has its attempt.
  const attempt = (await deliveries(sub.id, [], env)).find((a) => a.event_id === first!.id);
  assert.deepEqual([attempt?.type, attempt?.status, attempt?.outcome], ['link.created', 200, 'delivered']);

  const deleted = await webhooks(['delete', sub.id, '--database-url', url]);
  assert.deepEqual(deleted, { code: 0, out: '', err: '' });
  assert.deepEqual(await listed(), []);
  const again = await webhooks(['delete', sub.id], env);
  assert.deepEqual([again.code, again.out], [1, '']);
  assert.match(again.err, /no webhook subscription has this id; nothing was deleted/);
  const bad = await webhooks(['create', '--url', rx.url, '--events', 'link.opened'], env);
  assert.deepEqual([bad.code, bad.out], [1, '']);
  assert.match(bad.err, /^url-shortener webhooks create: events: "link\.opened" is not an event type/);
});
