/**
 * Logging (docs/operations.md, logs): JSON lines with `time`, `level`, `msg` and fields; levels;
 * secrets redacted from request targets; request lines over real sockets; an unexpected error is a
 * generic 500 with the stack in the log only.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { createLogger, LOG_LEVELS, redactTarget, type LogLevel } from '../../src/log.ts';
import { start, type Harness } from '../support/helpers.ts';

class Sink {
  chunks: string[] = [];
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  get lines(): Record<string, unknown>[] {
    return this.chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/** Polls until `find` returns something (log lines of a request are written once it has finished). */
async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function requestLine(h: Harness, path: string, status: number): Promise<Record<string, unknown>> {
  return waitFor(
    () => h.logs.lines.find((l) => l['msg'] === 'request' && l['path'] === path && l['status'] === status),
    `a request line for ${path} → ${status}; got ${h.logs.raw}`,
  );
}

describe('createLogger', () => {
  test('one JSON line per call: time (ISO), level, msg, then the fields', () => {
    const sink = new Sink();
    const before = Date.now();
    createLogger('debug', sink).info('listening', { url: 'http://127.0.0.1:3000', records: 2, gate: false });
    assert.equal(sink.chunks.length, 1);
    const chunk = sink.chunks[0]!;
    assert.ok(chunk.endsWith('\n'));
    assert.equal(chunk.indexOf('\n'), chunk.length - 1, 'exactly one line');
    const line = JSON.parse(chunk) as Record<string, unknown>;
    assert.deepEqual(Object.keys(line), ['time', 'level', 'msg', 'url', 'records', 'gate']);
    assert.equal(line['level'], 'info');
    assert.equal(line['msg'], 'listening');
    assert.equal(line['url'], 'http://127.0.0.1:3000');
    assert.equal(line['records'], 2);
    assert.equal(line['gate'], false);
    const time = String(line['time']);
    assert.equal(new Date(time).toISOString(), time, 'ISO 8601 time');
    assert.ok(Date.parse(time) >= before - 1 && Date.parse(time) <= Date.now() + 1);
  });

  test('a message without fields has just time, level, msg', () => {
    const sink = new Sink();
    createLogger('info', sink).warn('API_KEYS is empty');
    assert.deepEqual(Object.keys(sink.lines[0]!), ['time', 'level', 'msg']);
    assert.equal(sink.lines[0]!['level'], 'warn');
  });

  test('a multi-line field (a stack) stays on one line', () => {
    const sink = new Sink();
    const stack = 'TypeError: boom\n    at f (file.ts:1:1)\n    at g (file.ts:2:2)';
    createLogger('info', sink).error('unexpected error', { error: stack });
    assert.equal(sink.chunks.join('').split('\n').length, 2, 'one line plus the final newline');
    assert.equal(sink.lines[0]!['error'], stack);
  });

  const METHODS = ['debug', 'info', 'warn', 'error'] as const;
  const EXPECTED: Record<LogLevel, readonly (typeof METHODS)[number][]> = {
    debug: ['debug', 'info', 'warn', 'error'],
    info: ['info', 'warn', 'error'],
    warn: ['warn', 'error'],
    error: ['error'],
    silent: [],
  };
  test("the levels are exactly the README's list (LOG_LEVEL)", () => {
    assert.deepEqual([...LOG_LEVELS], ['debug', 'info', 'warn', 'error', 'silent']);
  });
  for (const level of LOG_LEVELS) {
    test(`level ${level} writes ${EXPECTED[level].join(', ') || 'nothing'}`, () => {
      const sink = new Sink();
      const log = createLogger(level, sink);
      for (const method of METHODS) log[method](`a ${method} line`, { n: 1 });
      assert.deepEqual(
        sink.lines.map((l) => l['level']),
        EXPECTED[level],
      );
      if (level === 'silent') assert.deepEqual(sink.chunks, []);
      for (const method of METHODS) assert.equal(log.enabled(method), EXPECTED[level].includes(method), `enabled(${method})`);
    });
  }
});

describe('redactTarget', () => {
  const table: [string, string, string][] = [
    ['the api_key value', '/api/urls?api_key=secret', '/api/urls?api_key=***'],
    ['other parameters kept', '/api/urls?limit=5&api_key=secret&offset=2', '/api/urls?limit=5&api_key=***&offset=2'],
    ['an encoded name', '/api/urls?api%5Fkey=x', '/api/urls?api%5Fkey=***'],
    ['an encoded name, lower-case hex', '/api/urls?api%5fkey=x', '/api/urls?api%5fkey=***'],
    ['no query', '/api/urls', '/api/urls'],
    ['an empty query', '/api/urls?', '/api/urls?'],
    ['a query without secrets', '/api/lookup?url=https%3A%2F%2Fexample.com%2F', '/api/lookup?url=https%3A%2F%2Fexample.com%2F'],
    ['repeated parameters', '/api/urls?api_key=a&api_key=b', '/api/urls?api_key=***&api_key=***'],
    ['an encoded value', '/api/urls?api_key=s%20e%20c', '/api/urls?api_key=***'],
    ['a value with =', '/api/urls?api_key=a=b=c', '/api/urls?api_key=***'],
    ['a malformed value', '/api/urls?api_key=%ZZsecret', '/api/urls?api_key=***'],
    ['an empty value', '/api/urls?api_key=', '/api/urls?api_key=***'],
    ['a name without value', '/api/urls?api_key', '/api/urls?api_key=***'],
    ['token and access_token too', '/mcp?token=t1&access_token=t2&x=1', '/mcp?token=***&access_token=***&x=1'],
    ['upper-case name', '/api/urls?API_KEY=secret', '/api/urls?API_KEY=***'],
    ['trailing slash before the query', '/api/urls/?api_key=secret', '/api/urls/?api_key=***'],
    // docs/security.md, the bearer-token gate (logs): every name that contains `key` or `token`, in
    // any case, brackets included.
    ['brackets (PHP/Rails arrays)', '/api/urls?api_key[]=secret', '/api/urls?api_key[]=***'],
    ['brackets, percent-encoded', '/api/urls?api_key%5B%5D=secret&x=1', '/api/urls?api_key%5B%5D=***&x=1'],
    ['brackets with an index', '/api/urls?api_key[0]=a&api_key[1]=b', '/api/urls?api_key[0]=***&api_key[1]=***'],
    ['nested in brackets', '/api/urls?auth[token]=secret', '/api/urls?auth[token]=***'],
    ['mixed case', '/api/urls?Api_Key=a&ToKeN=b&ACCESS_TOKEN=c', '/api/urls?Api_Key=***&ToKeN=***&ACCESS_TOKEN=***'],
    ['a longer name holding key', '/api/urls?api_keys=a&my_api_key=b&apikey=c&key=d', '/api/urls?api_keys=***&my_api_key=***&apikey=***&key=***'],
    ['a header-style name', '/api/urls?X-API-Key=secret', '/api/urls?X-API-Key=***'],
    ['a longer name holding token', '/mcp?id_token=a&refresh_token=b&tokens=c', '/mcp?id_token=***&refresh_token=***&tokens=***'],
    ['an encoded letter in the name', '/api/urls?api_%6Bey=secret', '/api/urls?api_%6Bey=***'],
    ['a plus in the name', '/api/urls?api+key=secret', '/api/urls?api+key=***'],
    // docs/compat.md, YOURLS' API: its signature token and the password it never accepts.
    [
      'YOURLS signature and password',
      '/yourls-api.php?signature=k&timestamp=1&password=p&username=u',
      '/yourls-api.php?signature=***&timestamp=1&password=***&username=u',
    ],
    [
      'signature and password in any case',
      '/yourls-api.php?Signature=k&PASSWORD=p&new_password=q',
      '/yourls-api.php?Signature=***&PASSWORD=***&new_password=***',
    ],
    ['names without key or token are kept', '/api/lookup?url=x&limit=5&k=1&tok=2&ke_y=3', '/api/lookup?url=x&limit=5&k=1&tok=2&ke_y=3'],
    ['a secret-looking value under a harmless name is kept', '/api/lookup?url=api_key%3Dx', '/api/lookup?url=api_key%3Dx'],
  ];
  for (const [name, input, expected] of table) {
    test(`${name}: ${input}`, () => {
      assert.equal(redactTarget(input), expected);
    });
  }
});

describe('request logging over sockets (logLevel debug)', () => {
  test('a request line has method, path, status and ms', async (t) => {
    const h = await start(t);
    const health = await h.req('/api/health');
    assert.equal(health.status, 200);
    const line = await requestLine(h, '/api/health', 200);
    assert.equal(line['method'], 'GET');
    assert.equal(line['level'], 'debug');
    assert.equal(typeof line['time'], 'string');
    assert.equal(typeof line['ms'], 'number');
    assert.ok(Number(line['ms']) >= 0 && Number(line['ms']) < 10_000, `ms = ${String(line['ms'])}`);

    const code = await h.shorten('https://example.com/logged');
    const created = await requestLine(h, '/api/shorten', 201);
    assert.equal(created['method'], 'POST');

    assert.equal((await h.req(`/${code}`, { method: 'HEAD' })).status, 302);
    assert.equal((await requestLine(h, `/${code}`, 302))['method'], 'HEAD');
    assert.equal((await h.req('/api/nothing')).status, 404);
    await requestLine(h, '/api/nothing', 404);
  });

  test('no request lines at the default level info', async (t) => {
    const h = await start(t, { logLevel: 'info' });
    assert.equal((await h.req('/api/health')).status, 200);
    // Give a would-be request line the time to be written.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(h.logs.lines.filter((l) => l['msg'] === 'request').length, 0);
  });

  test('a secret api_key in the query never reaches the log, however spelled', async (t) => {
    const h = await start(t, { apiKeys: ['SECRET-KEY-1'] });
    const code = await h.shorten('https://example.com/secret-test');
    const requests: [string, string, number, string][] = [
      ['GET', '/api/urls?api_key=SECRET-KEY-1', 200, '/api/urls?api_key=***'],
      ['GET', '/api/urls/?limit=1&api_key=SECRET-KEY-1', 200, '/api/urls/?limit=1&api_key=***'],
      ['GET', '/api/urls?api%5Fkey=SECRET-ENCODED', 403, '/api/urls?api%5Fkey=***'],
      ['GET', '/api/urls?api_key=SECRET-WRONG&api_key=SECRET-TWICE', 403, '/api/urls?api_key=***&api_key=***'],
      ['GET', '/api/urls?limit=0&api_key=SECRET-KEY-1', 400, '/api/urls?limit=0&api_key=***'],
      ['GET', '/api/nothing?api_key=SECRET-404', 404, '/api/nothing?api_key=***'],
      ['GET', '/api/%2e%2e/urls?api_key=SECRET-BAD-PATH', 400, '/api/%2e%2e/urls?api_key=***'],
      ['DELETE', `/api/urls/${code}?api_key=SECRET-KEY-1`, 204, `/api/urls/${code}?api_key=***`],
    ];
    for (const [method, path, status, logged] of requests) {
      const r = await h.req(path, { method });
      assert.equal(r.status, status, `${method} ${path}`);
      const line = await requestLine(h, logged, status);
      assert.equal(line['method'], method);
    }
    assert.doesNotMatch(h.logs.raw, /SECRET/);
  });
});

describe('an unexpected error', () => {
  const INTERNAL = '{"detail":"internal error"}';

  /** A harness whose clock can be broken: a realistic dependency that throws a plain TypeError. */
  async function withBreakableClock(t: TestContext): Promise<{ h: Harness; code: string; breakClock(broken: boolean): void }> {
    let broken = false;
    const h = await start(t, {
      now: () => {
        if (broken) throw new TypeError('clock unavailable');
        return Date.now();
      },
    });
    // A link that can expire: its redirect has to read the clock.
    const code = await h.shorten('https://example.com/clock', 30);
    return { h, code, breakClock: (b) => (broken = b) };
  }

  function assertGeneric500(r: { status: number; headers: Record<string, unknown>; body: string }): void {
    assert.equal(r.status, 500);
    assert.equal(r.body, INTERNAL);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.doesNotMatch(r.body, /TypeError|clock unavailable|\bat\b|\.ts:/);
    // A 500 too carries the CORS and security headers (docs/security.md, response headers).
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
  }

  test('thrown in a synchronous handler: 500 internal error, the stack in the log only', async (t) => {
    const { h, code, breakClock } = await withBreakableClock(t);
    breakClock(true);
    const r = await h.req(`/api/urls/${code}?api_key=SECRET-500`);
    assertGeneric500(r);
    const line = await waitFor(() => h.logs.find('unexpected error'), 'the error line');
    assert.equal(line['level'], 'error');
    assert.equal(line['method'], 'GET');
    assert.equal(line['path'], `/api/urls/${code}?api_key=***`);
    assert.match(String(line['error']), /^TypeError: clock unavailable\n\s+at /, 'the stack is logged');
    assert.doesNotMatch(h.logs.raw, /SECRET/);

    // The redirect route too; and the service keeps serving once the dependency recovers.
    assertGeneric500(await h.req(`/${code}`));
    breakClock(false);
    assert.equal((await h.req(`/${code}`)).status, 302);
  });

  test('thrown while shortening (not a storage failure): 500 internal error, not a 503 echoing the message', async (t) => {
    const { h, breakClock } = await withBreakableClock(t);
    breakClock(true);
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/while-broken' }),
    });
    assertGeneric500(r);
    const line = await waitFor(() => h.logs.find('unexpected error'), `the error line; got ${h.logs.raw}`);
    assert.match(String(line['error']), /TypeError: clock unavailable/);
  });
});
