/**
 * More than 100 request headers is 431 (docs/api.md, errors), answered by the handler itself, so
 * the library mode has it too: Node keeps only the first 2,000 headers in `rawHeaders`, and without
 * the limit a second `Authorization` past the 2,000th would slip by the gate's duplicate rule. Raw
 * sockets, so the header lines go out exactly as written.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORS_HEADERS, SECURITY_HEADERS } from '../../src/http/headers.ts';
import { RIGHT, TOKEN } from '../support/gate-helpers.ts';
import { codeOf, HOST_APP_BODY, mountInHostApp, start, visitsOf } from '../support/helpers.ts';
import { sendRaw, type RawResponse } from '../support/raw-http.ts';

/** Room for thousands of header lines: the limit under test is the handler's, not Node's byte limit. */
const ROOMY = { maxHeaderSize: 1024 * 1024 };

const DETAIL = JSON.stringify({ detail: 'too many request headers: at most 100 are accepted' });

/**
 * A request whose head has exactly `count` header lines: `Host` first, `Connection: close` last,
 * `X-Filler-<n>` between them, except where `placed` puts a line of its own (by 0-based position).
 */
function head(method: string, target: string, count: number, placed: Readonly<Record<number, string>> = {}): string {
  const lines: string[] = ['Host: 127.0.0.1'];
  while (lines.length < count) lines.push(placed[lines.length] ?? `X-Filler-${lines.length}: ${lines.length}`);
  lines[count - 1] = placed[count - 1] ?? 'Connection: close';
  return `${method} ${target} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

function assert431(r: RawResponse | undefined, label: string): void {
  assert.ok(r, `${label}: an answer`);
  assert.equal(r.status, 431, `${label}: status (body ${r.body})`);
  assert.equal(r.body, DETAIL, `${label}: body`);
  assert.equal(r.headers['content-type'], 'application/json', `${label}: content-type`);
  assert.equal(r.headers['content-length'], String(DETAIL.length), `${label}: content-length`);
  for (const [name, value] of [...CORS_HEADERS, ...SECURITY_HEADERS]) assert.equal(r.headers[name.toLowerCase()], value, `${label}: ${name}`);
  assert.equal(r.headers['www-authenticate'], undefined, `${label}: not a 401`);
}

test('100 headers pass; 101 are the exact 431, on every kind of path, before the gate and the router', async (t) => {
  const h = await start(t, { apiToken: TOKEN }, ROOMY);
  const auth = { 1: `Authorization: ${RIGHT}` };
  const ok = await sendRaw(h.port, head('GET', '/api/health', 100, auth));
  assert.equal(ok.responses[0]?.status, 200, ok.text.slice(0, 300));
  assert.equal(ok.responses[0]?.body, '{"status":"ok","service":"url-shortener"}');

  const rows: [method: string, target: string][] = [
    ['GET', '/api/health'],
    ['POST', '/api/shorten?url=https%3A%2F%2Fexample.com%2F'],
    ['GET', '/healthz'],
    ['GET', '/nope/deeper'],
    ['OPTIONS', '/api/urls'],
    ['GET', '/a/../b'],
  ];
  for (const [method, target] of rows) {
    const r = await sendRaw(h.port, head(method, target, 101, auth));
    assert431(r.responses[0], `${method} ${target}`);
  }
  assert.equal(h.shortener.count, 0, 'nothing was created');
  assert.equal(h.logs.lines.filter((l) => l['level'] === 'warn').length, 0, 'no gate refusal: the gate never ran');
});

test('2,500 headers with a second Authorization past the 2,000th: 431, not 200', async (t) => {
  const h = await start(t, { apiToken: TOKEN, apiKeys: ['k1'] }, ROOMY);
  // Node's rawHeaders would stop at the 2,000th line: the gate would see only the right token.
  const crowded = head('GET', '/api/urls', 2500, { 1: `Authorization: ${RIGHT}`, 2: 'X-API-Key: k1', 2100: 'Authorization: Bearer wrong' });
  const r = await sendRaw(h.port, crowded);
  // Node 20 hands such a request on, cut to 2,000 headers: the handler's own 431. Newer Node
  // refuses it in its parser (a bare 431, before any handler runs). Either way, never a 200.
  if (r.responses[0]?.body === '') {
    assert.equal(r.responses[0].status, 431, 'the parser refused it');
    assert.deepEqual(
      h.logs.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error'),
      [],
      'the handler never saw it',
    );
  } else {
    assert431(r.responses[0], '2,500 headers');
  }
  // Control: the same duplicate within 100 headers is the gate's own refusal.
  const few = await sendRaw(h.port, head('GET', '/api/urls', 50, { 1: `Authorization: ${RIGHT}`, 2: 'X-API-Key: k1', 40: 'Authorization: Bearer wrong' }));
  assert.equal(few.responses[0]?.status, 401);
  assert.equal(few.responses[0]?.body, JSON.stringify({ detail: 'more than one Authorization header' }));
});

test('the redirect answers 100 headers and refuses 101, gate off (its fast path) and gate on', async (t) => {
  for (const apiToken of ['', TOKEN]) {
    const h = await start(t, { apiToken }, ROOMY);
    const created = await h.req('/api/shorten', {
      method: 'POST',
      headers: { authorization: RIGHT, 'content-type': 'application/json' },
      body: '{"url":"https://example.com/crowded"}',
    });
    const code = codeOf(created);
    const auth = apiToken ? { 1: `Authorization: ${RIGHT}` } : {};
    const ok = await sendRaw(h.port, head('GET', `/${code}`, 100, auth));
    assert.equal(ok.responses[0]?.status, 302, `gate ${apiToken ? 'on' : 'off'}: ${ok.text.slice(0, 200)}`);
    assert.equal(ok.responses[0]?.headers['location'], 'https://example.com/crowded');
    for (const method of ['GET', 'HEAD']) {
      const r = await sendRaw(h.port, head(method, `/${code}`, 101, auth), { head: method === 'HEAD' });
      if (method === 'GET') assert431(r.responses[0], `GET /<code>, gate ${apiToken ? 'on' : 'off'}`);
      else assert.equal(r.responses[0]?.status, 431);
    }
    assert.equal(await visitsOf(h.shortener, code), 1, 'only the answered redirect counted');
    await h.close();
  }
});

test('Express-style: a crowded request outside the base path is the host app’s; inside it is 431', async (t) => {
  const { port, passed } = await mountInHostApp(t, '/s', { logLevel: 'silent' }, { serverOptions: ROOMY });
  const outside = await sendRaw(port, head('GET', '/other', 150));
  assert.equal(outside.responses[0]?.status, 200);
  assert.equal(outside.responses[0]?.body, HOST_APP_BODY);
  assert431((await sendRaw(port, head('GET', '/s/api/health', 150))).responses[0], '/s/api/health');
  assert.deepEqual(passed, ['/other']);
});
