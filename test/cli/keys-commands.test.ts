/**
 * `keys create|list|revoke` (docs/operations.md, key commands): a key made on the command line is
 * the object `POST /api/keys` answers, secret included, alone on stdout; `list` shows the keys
 * and never a secret; a server started afterwards on the data dir takes the key with its role, and
 * refuses it once revoked. While a server holds the data dir every command refuses, naming it. On
 * PostgreSQL the same commands run beside a running server, which sees each change. A key the
 * service refuses is its sentence and exit 2; an unknown id, exit 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { heldUntil, INITIAL_KEY_FILE } from '../../src/cli/first-admin.ts';
import { parseKeysCommand, runKeysCommand } from '../../src/cli/keys-commands.ts';
import { ConfigError } from '../../src/errors.ts';
import { request, runCli, serverProcess, tempDir, type ServerProcess } from '../support/helpers.ts';
import { openOnDatabase } from '../support/pg-app.ts';
import { pgServer } from '../support/pg.ts';

interface Made {
  id: string;
  name: string;
  role: string;
  domain: null;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  key: string;
}
type View = Omit<Made, 'key'>;

/** Collects what is written to it. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** Runs `keys …args` in this process, with only `env` for settings; its exit code and output. */
async function keys(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const cmd = parseKeysCommand(['keys', ...args]);
  assert.ok(cmd, args.join(' '));
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await runKeysCommand(cmd, { env, readFile: (p) => readFileSync(p, 'utf8'), stdout, stderr, now: Date.now });
  return { code, out: stdout.text, err: stderr.text };
}

/** `keys create` that must succeed: the key it printed, checked for its shape. */
async function create(args: readonly string[], env?: Record<string, string>): Promise<Made> {
  const r = await keys(['create', ...args], env);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.split('\n').length, 2, `one line on stdout: ${r.out}`);
  const made = JSON.parse(r.out) as Made;
  assert.match(made.key, /^us_[A-Za-z0-9_-]{43}$/);
  assert.ok(!r.err.includes(made.key), 'the secret is never logged');
  return made;
}

/** `keys list` that must succeed, checked to show no secret; its keys. */
async function list(args: readonly string[], secrets: readonly string[], env?: Record<string, string>): Promise<View[]> {
  const r = await keys(['list', ...args], env);
  assert.equal(r.code, 0, r.err);
  const listed = JSON.parse(r.out) as { count: number; keys: View[] };
  assert.equal(listed.count, listed.keys.length);
  for (const secret of secrets) assert.ok(!r.out.includes(secret) && !r.err.includes(secret), 'no secret in a list');
  for (const key of listed.keys) assert.ok(!('key' in key) && !('digest' in key), `only the view: ${JSON.stringify(key)}`);
  return listed.keys;
}

const view = ({ key: _secret, ...rest }: Made): View => rest;
const shorten = (port: number, key: string) =>
  request(port, '/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{"url":"https://example.com/k"}' });

/** A server process on `dir`, stopped after the test (or sooner, by the test). */
async function serverOn(t: TestContext, dir: string): Promise<ServerProcess> {
  const server = await serverProcess({ DATA_DIR: dir });
  t.after(() => server.stop());
  return server;
}

test('on a data dir: create, list without secrets, the role applies on a server started afterwards, refusal while it runs, revoke', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  const at = ['--data-dir', dir];
  const viewer = await create(['--name', 'Dashboard', '--role', 'viewer', ...at]);
  const expires = Math.floor(Date.now() / 1000) + 3600;
  const creator = await create(['--name=-ShareX-', '--role=creator', '--expires-at', String(expires), ...at]);
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(
    { ...viewer, id: 'x', key: 'x', created_at: 0 },
    { id: 'x', name: 'Dashboard', role: 'viewer', domain: null, created_at: 0, expires_at: null, last_used_at: null, key: 'x' },
  );
  assert.ok(Math.abs(viewer.created_at - now) <= 2, 'made now');
  assert.deepEqual([creator.name, creator.role, creator.expires_at], ['-ShareX-', 'creator', expires]);
  assert.deepEqual(await list(at, [viewer.key, creator.key]), [view(viewer), view(creator)]);

  let server = await serverOn(t, dir);
  // The viewer lists and may not create; the creator creates.
  assert.equal((await request(server.port, '/api/urls', { headers: { 'x-api-key': viewer.key } })).status, 200);
  const refused = await shorten(server.port, viewer.key);
  assert.deepEqual([refused.status, JSON.parse(refused.body)], [403, { detail: "this key's role (viewer) does not allow creating links" }]);
  assert.equal((await shorten(server.port, creator.key)).status, 201);
  assert.equal((await request(server.port, '/api/urls', { headers: { 'x-api-key': creator.key } })).status, 403);

  // The server holds the data dir: each command refuses, naming it, and changes nothing. Through
  // the program itself, so that its wiring is held too.
  const held = await Promise.all([
    runCli(['keys', 'create', '--name', 'late', '--role', 'admin', ...at]),
    runCli(['keys', 'list', ...at]),
    runCli(['keys', 'revoke', viewer.id, ...at]),
  ]);
  for (const r of held) {
    assert.equal(r.code, 1, r.err);
    assert.equal(r.out, '');
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    assert.match(r.err, new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another server \\(PID ${server.child.pid} on host `));
  }
  await server.stop();

  // The server made the first admin key (none existed): listed like the others, its secret never.
  const initial = readFileSync(join(dir, INITIAL_KEY_FILE), 'utf8').trim();
  const listed = await list(at, [viewer.key, creator.key, initial]);
  assert.deepEqual(
    listed.map((k) => [k.name, k.role]),
    [
      ['Dashboard', 'viewer'],
      ['-ShareX-', 'creator'],
      ['initial', 'admin'],
    ],
  );

  const revoked = await keys(['revoke', viewer.id, ...at]);
  assert.deepEqual([revoked.code, revoked.out], [0, ''], revoked.err);
  const again = await keys(['revoke', viewer.id, ...at]);
  assert.deepEqual([again.code, again.out], [1, '']);
  const line = JSON.parse(again.err) as Record<string, unknown>;
  assert.deepEqual([line['level'], line['msg'], line['key']], ['error', 'no stored API key has this id; nothing was revoked', viewer.id]);
  assert.deepEqual(
    (await list(at, [])).map((k) => k.id),
    listed.slice(1).map((k) => k.id),
  );

  server = await serverOn(t, dir);
  const gone = await request(server.port, '/api/urls', { headers: { 'x-api-key': viewer.key } });
  assert.deepEqual([gone.status, gone.body], [403, ''], 'a revoked key is refused like a wrong one');
  assert.equal((await shorten(server.port, creator.key)).status, 201, 'the other key still works');
});

test('a key the service refuses is its sentence on stderr and exit 2, and nothing is stored', async (t) => {
  const at = ['--data-dir', tempDir(t)];
  const past = String(Math.floor(Date.now() / 1000) - 1);
  const cases: [string[], string][] = [
    [['--name', 'n', '--role', 'owner'], 'role must be one of creator, viewer, editor, admin'],
    [['--name', 'n'.repeat(65), '--role', 'viewer'], 'name must be 1 to 64 characters, without control characters'],
    [['--name', ' ', '--role', 'viewer'], 'name is required: 1 to 64 characters'],
    [['--name', 'n', '--role', 'viewer', '--expires-at', past], 'expires_at must be in the future'],
    [['--name', 'n', '--role', 'viewer', '--expires-at', 'tomorrow'], 'expires_at must be a whole number of Unix seconds, or null'],
  ];
  for (const [args, sentence] of cases) {
    const r = await keys(['create', ...args, ...at]);
    assert.deepEqual(r, { code: 2, out: '', err: `url-shortener keys create: ${sentence}\n` }, args.join(' '));
  }
  assert.deepEqual(await list(at, []), []);
  // A setting the server would refuse is refused the same way.
  const bad = await keys(['list', '--port', 'x', ...at]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^url-shortener keys list: invalid --port/);
});

test('the command line: the id first whatever it starts with, options in both spellings, usage errors', async () => {
  assert.equal(parseKeysCommand(['export']), undefined);
  assert.equal(parseKeysCommand([]), undefined);
  assert.deepEqual(parseKeysCommand(['keys', 'revoke', '-a_b-123', '--data-dir', 'd']), { action: 'revoke', id: '-a_b-123', settings: ['--data-dir', 'd'] });
  assert.deepEqual(parseKeysCommand(['keys', 'create', '--role', 'admin', '--expires-at=9', '--name', '--x', '--fsync=off']), {
    action: 'create',
    name: '--x',
    role: 'admin',
    expiresAt: '9',
    settings: ['--fsync=off'],
  });
  // `create`'s options are its own: elsewhere they are settings, which the resolver refuses.
  assert.deepEqual(parseKeysCommand(['keys', 'list', '--name', 'n']), { action: 'list', settings: ['--name', 'n'] });
  for (const [argv, message] of [
    [['keys'], /^keys needs one of create, list, revoke: node dist\/server\.js keys create/],
    [['keys', 'delete', 'x'], /^keys needs one of create, list, revoke/],
    [['keys', 'revoke'], /^keys revoke needs the id of the key/],
    [['keys', 'create', '--name', 'n'], /^keys create needs --name NAME and --role/],
    [['keys', 'create', '--role', 'viewer', '--name'], /^option --name needs a value$/],
  ] as const) {
    assert.throws(
      () => parseKeysCommand(argv),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      argv.join(' '),
    );
  }
  const usage = await runCli(['keys']);
  assert.equal(usage.code, 2);
  assert.equal(usage.out, '');
  assert.match(usage.err, /^url-shortener: keys needs one of create, list, revoke: /);
});

// The store's own tests hold a change to a second on three instances; here twice that, for a loaded machine.
test('on PostgreSQL: create, list and revoke beside a running server, which sees each change', { timeout: 60_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const url = await pg.createDatabase();
  const app = await openOnDatabase({ logLevel: 'silent' }, url);
  t.after(() => app.close());
  const env = { DATABASE_URL: url };

  const viewer = await create(['--name', 'Dashboard', '--role', 'viewer'], env);
  const editor = await create(['--name', 'Editor', '--role', 'editor', '--database-url', url]);
  assert.deepEqual(await list([], [viewer.key, editor.key], env), [view(viewer), view(editor)]);
  await within(2000, 'the new key', async () => (await app.req('/api/urls', { headers: { 'x-api-key': viewer.key } })).status === 200);
  const refused = await app.req('/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': viewer.key },
    body: '{"url":"https://example.com/k"}',
  });
  assert.equal(refused.status, 403);

  const revoked = await keys(['revoke', viewer.id, '--database-url', url]);
  assert.deepEqual([revoked.code, revoked.out], [0, ''], revoked.err);
  await within(2000, 'the revoke', async () => (await app.req('/api/urls', { headers: { 'x-api-key': viewer.key } })).status === 403);
  const again = await keys(['revoke', viewer.id], env);
  assert.deepEqual([again.code, again.out], [1, '']);
  assert.match(again.err, /no stored API key has this id/);
  assert.deepEqual(await list([], [viewer.key, editor.key], env), [view(editor)]);
  const bad = await keys(['create', '--name', 'n', '--role', 'root'], env);
  assert.deepEqual(bad, { code: 2, out: '', err: 'url-shortener keys create: role must be one of creator, viewer, editor, admin\n' });
});

/** Polls `check` until it holds, failing past `ms` (a change reaches a server by a notification, or the read once a second). */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    assert.ok(performance.now() - started < ms, `${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('no request is answered before the first admin key is made: those that come meanwhile wait, in order', async () => {
  let made!: () => void;
  const first = new Promise<void>((resolve) => (made = resolve));
  const answered: string[] = [];
  const handler = heldUntil(first, (req) => void answered.push(req.url!));
  const send = (url: string): void => handler({ url } as IncomingMessage, {} as ServerResponse);
  send('/healthz');
  send('/api/urls');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(answered, [], 'answered while the key was being made');
  made();
  await first;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(answered, ['/healthz', '/api/urls']);
  send('/later');
  assert.deepEqual(answered, ['/healthz', '/api/urls', '/later'], 'once made, at once');
});
