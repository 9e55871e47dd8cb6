/**
 * One delivery attempt, against real receivers this file starts on 127.0.0.1 (node:http, and
 * node:https with a certificate `openssl` makes): what arrives and how the official
 * `standardwebhooks` package judges it, which targets are refused before any connection, and
 * how redirects, silence, endless answers and broken connections end. Names resolve through a fake
 * resolver, so a name reaches a local receiver only as the resolver says and the checks allow.
 * Nothing sleeps: the time limits are 200 ms, and each test waits on the events it asserts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, isIP, type Socket } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { Webhook } from 'standardwebhooks';
import { DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES, outcomeOf } from '../../src/webhooks/schedule.ts';
import { createSender, hostHeader, type SendRequest, USER_AGENT } from '../../src/webhooks/send.ts';
import { deliveryHeaders, newEventId, newSecret } from '../../src/webhooks/signing.ts';
import type { LookupAddress } from '../../src/webhooks/targets.ts';
import { tempDir } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';

/** The time limit of the attempts that are meant to run out of time. */
const SHORT_MS = 200;

const BODY = '{"type":"ping","timestamp":"2024-03-31T00:00:00Z","data":{"note":"Grüße, 日本語 and 😀"}}';

/** The oracle refuses a timestamp more than five minutes from its own clock: sign with the real time. */
const nowS = (): number => Math.floor(Date.now() / 1000);

/** A delivery of `BODY` to `url`, signed with a fresh secret (returned, for the oracle). */
function delivery(url: string, allowPrivate = true): SendRequest & { secret: string } {
  const secret = newSecret();
  return { url, headers: deliveryHeaders(secret, newEventId(), nowS(), BODY), body: BODY, allowPrivate, secret };
}

/** A resolver of the names in `answers`, recording each name it is asked; others are not found. */
function fakeLookup(answers: Record<string, LookupAddress[]>): { lookup: (host: string) => Promise<LookupAddress[]>; asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<LookupAddress[]> => {
    asked.push(host);
    const found = answers[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { lookup, asked };
}

const LOCAL: Record<string, LookupAddress[]> = { 'hooks.example': [{ address: '127.0.0.1', family: 4 }] };

/** One request as the receiver got it; `body` is filled in once it has all arrived. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  /** The TLS server name the client sent (SNI); false, null or undefined when none. */
  servername: string | false | null | undefined;
}

interface Receiver {
  /** `http://127.0.0.1:<port>` (or https, or the host it was asked to listen on). */
  origin: string;
  port: number;
  requests: Received[];
  /** Every connection accepted, TLS or not, including those that never carried a request. */
  sockets: Socket[];
}

/** How a receiver answers, once it has read a request's whole body. */
type Answer = (req: IncomingMessage, res: ServerResponse) => void;

const noContent: Answer = (_req, res) => void res.writeHead(204).end();

/** A receiver on port 0 of `host` (127.0.0.1), closed with all its connections after the test. */
async function receiver(t: TestContext, answer: Answer = noContent, options: { host?: string; tls?: { cert: string; key: string } } = {}): Promise<Receiver> {
  const requests: Received[] = [];
  const sockets: Socket[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const servername = (req.socket as TLSSocket).servername;
    const received: Received = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
      servername,
    };
    requests.push(received);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.body = Buffer.concat(chunks);
      answer(req, res);
    });
  };
  const server = options.tls === undefined ? createServer(onRequest) : createHttpsServer(options.tls, onRequest);
  server.on('connection', (socket: Socket) => sockets.push(socket));
  const host = options.host ?? '127.0.0.1';
  server.listen(0, host);
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  const scheme = options.tls === undefined ? 'http' : 'https';
  return { origin: `${scheme}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`, port, requests, sockets };
}

/**
 * Resolves once the receiver's side of `socket` has closed: the sender let go of it. Not
 * `events.once`, which rejects on the reset a closed connection with unread data gives.
 */
async function closed(socket: Socket | undefined): Promise<void> {
  assert.ok(socket, 'a connection was made');
  if (!socket.closed) await new Promise((resolve) => socket.once('close', resolve));
}

test('a delivery POSTs the body and the four webhook headers exactly as given, and the official package verifies it', async (t) => {
  const r = await receiver(t);
  let clock = 1000;
  const send = createSender({ now: () => (clock += 125) });
  const req = delivery(`${r.origin}/hooks/in?team=7`);
  assert.deepEqual(await send(req), { status: 204, response: '', durationMs: 125 });
  assert.equal(r.requests.length, 1);
  const got = r.requests[0]!;
  assert.equal(got.method, 'POST');
  assert.equal(got.url, '/hooks/in?team=7');
  assert.deepEqual(got.body, Buffer.from(BODY, 'utf8'));
  const sent: [string, string][] = [];
  for (let i = 0; i < got.rawHeaders.length; i += 2) sent.push([got.rawHeaders[i]!, got.rawHeaders[i + 1]!]);
  const names = new Set(req.headers.map(([name]) => name));
  assert.deepEqual(
    sent.filter(([name]) => names.has(name)),
    req.headers,
    'the same names, values and order',
  );
  assert.equal(got.headers['content-length'], String(Buffer.byteLength(BODY, 'utf8')));
  assert.equal(got.headers['host'], `127.0.0.1:${r.port}`);
  assert.equal(got.headers['user-agent'], USER_AGENT);
  assert.equal(USER_AGENT, 'url-shortener-webhooks');
  const headers = Object.fromEntries(sent.map(([name, value]) => [name.toLowerCase(), value]));
  assert.deepEqual(new Webhook(req.secret).verify(got.body.toString('utf8'), headers), JSON.parse(BODY));
});

test("the answer's status and the start of its body come back as they are, whatever the status", async (t) => {
  const r = await receiver(t, (req, res) => void res.writeHead(Number(req.url!.slice(1)), { 'content-type': 'text/plain' }).end(`answer ${req.url}`));
  const send = createSender();
  for (const [status, outcome] of [
    [200, 'delivered'],
    [202, 'delivered'],
    [400, 'retry'],
    [410, 'disable'],
    [500, 'retry'],
    [503, 'retry'],
  ] as const) {
    const result = await send(delivery(`${r.origin}/${status}`));
    assert.equal(result.status, status);
    assert.equal(result.response, `answer /${status}`);
    assert.equal(result.error, undefined);
    assert.equal(outcomeOf(result), outcome, String(status));
  }
});

test('without webhook_allow_private a receiver on 127.0.0.1 is refused and never connected to', async (t) => {
  const r = await receiver(t);
  const { lookup, asked } = fakeLookup(LOCAL);
  const result = await createSender({ lookup })(delivery(`${r.origin}/`, false));
  assert.match(result.error ?? '', /127\.0\.0\.1, a loopback address; only webhook_allow_private allows that/);
  assert.equal(result.status, undefined);
  assert.equal(result.response, '');
  assert.equal(outcomeOf(result), 'retry');
  assert.deepEqual(asked, [], 'a literal address is not looked up');
  assert.equal(r.sockets.length, 0);
});

test('a name is resolved at every attempt and connected to at the address resolved, which must be allowed', async (t) => {
  const r = await receiver(t);
  const { lookup, asked } = fakeLookup(LOCAL);
  const send = createSender({ lookup });
  const url = `http://hooks.example:${r.port}/in`;

  const refused = await send(delivery(url, false));
  assert.match(refused.error ?? '', /resolves to 127\.0\.0\.1, a loopback address/);
  assert.equal(r.sockets.length, 0, 'no connection to a refused address');

  for (let i = 1; i <= 2; i++) {
    const result = await send(delivery(url, true));
    assert.equal(result.status, 204);
    assert.equal(r.requests.length, i);
    assert.equal(r.requests[i - 1]!.headers['host'], `hooks.example:${r.port}`);
  }
  assert.equal(r.sockets.length, 1, 'the second attempt, to the address just checked again, reuses the connection of the first');
  assert.deepEqual(asked, ['hooks.example', 'hooks.example', 'hooks.example'], 'one lookup per attempt');

  const unknown = await send(delivery(`http://nowhere.example:${r.port}/in`, true));
  assert.deepEqual(unknown, { error: 'could not resolve nowhere.example (ENOTFOUND)', response: '', durationMs: unknown.durationMs });
});

test('with no resolver given, the system resolves the name', async (t) => {
  // Listening on `localhost` binds the first address the system gives for it: the one chosen.
  const r = await receiver(t, noContent, { host: 'localhost' });
  const send = createSender();
  assert.match((await send(delivery(`${r.origin}/`, false))).error ?? '', /this machine/);
  assert.equal((await send(delivery(`${r.origin}/`, true))).status, 204);
  assert.equal(r.requests[0]!.headers['host'], `localhost:${r.port}`);
});

test('an IPv6 address is reached, and named in brackets in the Host header', async (t) => {
  const probe = createServer();
  const v6 = await new Promise<boolean>((resolve) => probe.once('error', () => resolve(false)).listen(0, '::1', () => probe.close(() => resolve(true))));
  if (!v6) return t.skip('no IPv6 loopback on this machine');
  const r = await receiver(t, noContent, { host: '::1' });
  assert.equal((await createSender()(delivery(`${r.origin}/`, true))).status, 204);
  assert.equal(r.requests[0]!.headers['host'], `[::1]:${r.port}`);
});

test("the Host header carries the port only when it is not the scheme's default", () => {
  assert.equal(hostHeader({ host: 'hooks.example', port: 80 }, 'http:'), 'hooks.example');
  assert.equal(hostHeader({ host: 'hooks.example', port: 443 }, 'https:'), 'hooks.example');
  assert.equal(hostHeader({ host: 'hooks.example', port: 443 }, 'http:'), 'hooks.example:443');
  assert.equal(hostHeader({ host: 'hooks.example', port: 80 }, 'https:'), 'hooks.example:80');
  assert.equal(hostHeader({ host: '203.0.113.9', port: 8080 }, 'http:'), '203.0.113.9:8080');
  assert.equal(hostHeader({ host: '2001:db8::1', port: 443 }, 'https:'), '[2001:db8::1]');
  assert.equal(hostHeader({ host: '2001:db8::1', port: 8443 }, 'https:'), '[2001:db8::1]:8443');
});

test('a redirect is not followed: it is its status, and its Location receives nothing', async (t) => {
  const elsewhere = await receiver(t);
  const r = await receiver(t, (req, res) => void res.writeHead(Number(req.url!.slice(1)), { location: `${elsewhere.origin}/moved` }).end('moved'));
  const send = createSender();
  for (const status of [301, 302, 303, 307, 308]) {
    const result = await send(delivery(`${r.origin}/${status}`));
    assert.deepEqual({ status: result.status, response: result.response, error: result.error }, { status, response: 'moved', error: undefined });
    assert.equal(outcomeOf(result), 'retry');
  }
  assert.equal(elsewhere.sockets.length, 0);
});

test('a receiver that never answers times out, and its connection is closed', { timeout: 5000 }, async (t) => {
  const r = await receiver(t, () => {});
  const result = await createSender({ timeoutMs: SHORT_MS })(delivery(`${r.origin}/`));
  assert.deepEqual({ ...result, durationMs: 0 }, { timedOut: true, response: '', durationMs: 0 });
  assert.ok(result.durationMs >= SHORT_MS - 10 && result.durationMs < DELIVERY_TIMEOUT_MS, String(result.durationMs));
  assert.equal(r.requests.length, 1, 'the request had arrived');
  await closed(r.sockets[0]);
});

test('the time limit covers reading the answer: a body that never ends times out with its status', { timeout: 5000 }, async (t) => {
  const r = await receiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial');
  });
  const result = await createSender({ timeoutMs: SHORT_MS })(delivery(`${r.origin}/`));
  assert.equal(result.status, 200);
  assert.equal(result.timedOut, true);
  assert.equal(result.response, 'partial');
  assert.equal(outcomeOf(result), 'retry', 'an answer cut off is not a delivery');
  await closed(r.sockets[0]);
});

test('a lookup that never answers times out, and one that answers too late connects nowhere', { timeout: 5000 }, async (t) => {
  const r = await receiver(t);
  const hung = await createSender({ lookup: () => new Promise(() => {}), timeoutMs: SHORT_MS })(delivery(`http://hooks.example:${r.port}/`));
  assert.deepEqual({ ...hung, durationMs: 0 }, { timedOut: true, response: '', durationMs: 0 });

  let answer: (addresses: LookupAddress[]) => void = () => {};
  const late = createSender({ lookup: () => new Promise((resolve) => (answer = resolve)), timeoutMs: SHORT_MS });
  assert.equal((await late(delivery(`http://hooks.example:${r.port}/`))).timedOut, true);
  answer([{ address: '127.0.0.1', family: 4 }]);
  // A connection the late answer started would arrive before this delivery's own.
  assert.equal((await createSender()(delivery(`${r.origin}/`))).status, 204);
  assert.equal(r.sockets.length, 1);
  assert.equal(r.requests.length, 1);
});

test('of a 64 MiB answer only the first KiB is read, then the connection is closed', { timeout: 5000 }, async (t) => {
  // Far more than the buffers of a loopback connection hold (about 4 MB here), so the receiver
  // cannot have sent it all unless the sender read it.
  const SIZE = 64 * 1024 * 1024;
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  let finished = false;
  const r = await receiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(SIZE) });
    // Written as the connection takes it, so what was written is what the sender could have read.
    const pump = (): void => {
      while (written < SIZE && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (written >= SIZE) res.end(() => (finished = true));
    };
    pump();
  });
  const result = await createSender()(delivery(`${r.origin}/`));
  assert.deepEqual({ ...result, durationMs: 0 }, { status: 200, response: 'a'.repeat(MAX_RESPONSE_BYTES), durationMs: 0 });
  assert.equal(outcomeOf(result), 'delivered');
  await closed(r.sockets[0]);
  assert.equal(finished, false, `the receiver could not send it all (${written} bytes written)`);
  assert.ok(written < SIZE, `${written} bytes written`);
});

test('the kept answer ends before a character the limit would split', async (t) => {
  const r = await receiver(t, (req, res) => void res.writeHead(200).end(req.url === '/emoji' ? '😀'.repeat(1000) : 'x日'.repeat(1000)));
  const send = createSender();
  assert.equal((await send(delivery(`${r.origin}/emoji`))).response, '😀'.repeat(256));
  // 'x日' is 4 bytes: 256 of them fill the limit exactly.
  assert.equal((await send(delivery(`${r.origin}/cjk`))).response, 'x日'.repeat(256));
});

test('network errors are short results, never a rejection', async (t) => {
  const gone = createServer().listen(0, '127.0.0.1');
  await once(gone, 'listening');
  const { port } = gone.address() as AddressInfo;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const send = createSender();
  const refused = await send(delivery(`http://127.0.0.1:${port}/`));
  assert.deepEqual({ ...refused, durationMs: 0 }, { error: 'ECONNREFUSED', response: '', durationMs: 0 });

  const r = await receiver(t, (req, res) => {
    if (req.url === '/hang-up') return void req.socket.destroy();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
    res.write('half of it', () => res.socket?.destroy());
  });
  const hungUp = await send(delivery(`${r.origin}/hang-up`));
  assert.deepEqual({ ...hungUp, durationMs: 0 }, { error: 'ECONNRESET', response: '', durationMs: 0 });

  const cut = await send(delivery(`${r.origin}/cut`));
  assert.equal(cut.status, 200);
  assert.equal(cut.error, 'ECONNRESET');
  assert.equal(cut.response, 'half of it');
  assert.equal(outcomeOf(cut), 'retry', 'an error wins over the status read');

  const bad = await send({ ...delivery(`${r.origin}/`), headers: [['x-bad', 'a\r\nb']] });
  assert.deepEqual({ ...bad, durationMs: 0 }, { error: 'ERR_INVALID_CHAR', response: '', durationMs: 0 });
});

const OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).error === undefined;
const NO_OPENSSL = OPENSSL ? false : missingTool('the https deliveries', 'openssl not installed (Debian: apt-get install openssl)');

/** A self-signed certificate (its own CA) for `names`, DNS names or IP addresses, made by `openssl`. */
function certificate(t: TestContext, names: readonly string[]): { cert: string; key: string } {
  const dir = tempDir(t);
  const san = names.map((name) => (isIP(name) === 0 ? `DNS:${name}` : `IP:${name}`)).join(',');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${names[0]}`];
  const made = spawnSync('openssl', [...args, '-addext', `subjectAltName=${san}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], {
    encoding: 'utf8',
  });
  assert.equal(made.status, 0, made.stderr);
  return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
}

test('https: the name is sent as SNI and the certificate verified against it', { skip: NO_OPENSSL }, async (t) => {
  const tls = certificate(t, ['hooks.example', '127.0.0.1']);
  const r = await receiver(t, noContent, { tls });
  const { lookup } = fakeLookup(LOCAL);
  const url = `https://hooks.example:${r.port}/in`;

  const trusted = await createSender({ lookup, ca: tls.cert })(delivery(url));
  assert.equal(trusted.status, 204, trusted.error);
  assert.equal(r.requests[0]!.servername, 'hooks.example');
  assert.equal(r.requests[0]!.headers['host'], `hooks.example:${r.port}`);

  const byAddress = await createSender({ ca: tls.cert })(delivery(`${r.origin}/in`));
  assert.equal(byAddress.status, 204, byAddress.error);
  assert.ok(!r.requests[1]!.servername, 'no SNI for an address');

  const untrusted = await createSender({ lookup })(delivery(url));
  assert.deepEqual({ ...untrusted, durationMs: 0 }, { error: 'DEPTH_ZERO_SELF_SIGNED_CERT', response: '', durationMs: 0 });
  assert.equal(r.requests.length, 2, 'nothing is sent to a receiver whose certificate is not trusted');
});

test('https: a certificate for another name is refused', { skip: NO_OPENSSL }, async (t) => {
  const tls = certificate(t, ['other.example']);
  const r = await receiver(t, noContent, { tls });
  const { lookup } = fakeLookup(LOCAL);
  const result = await createSender({ lookup, ca: tls.cert })(delivery(`https://hooks.example:${r.port}/in`));
  assert.deepEqual({ ...result, durationMs: 0 }, { error: 'ERR_TLS_CERT_ALTNAME_INVALID', response: '', durationMs: 0 });
  assert.equal(r.requests.length, 0);
});
