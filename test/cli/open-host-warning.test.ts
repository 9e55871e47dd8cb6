/**
 * The start-up warning of docs/security.md, open instances: with the gate off and a listen address
 * that is not loopback, anyone who can reach the port can create links (open shorteners are abused
 * for phishing). `isLoopbackListenAddress` on a table of spellings, then real processes both ways.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { isLoopbackListenAddress } from '../../src/cli/loopback.ts';
import { serverProcessOn } from '../support/helpers.ts';

const LOOPBACK = [
  '127.0.0.1',
  '127.0.0.2',
  '127.1.2.3',
  '127.255.255.255',
  '::1',
  '0:0:0:0:0:0:0:1',
  '[::1]',
  '::ffff:127.0.0.1',
  'localhost',
  'LocalHost',
  'localhost.',
  ' 127.0.0.1 ',
];
const NOT_LOOPBACK = [
  '0.0.0.0',
  '::',
  '[::]',
  '192.168.1.10',
  '10.0.0.1',
  '126.255.255.255',
  '128.0.0.1',
  '::2',
  '::ffff:10.0.0.1',
  'example.com',
  'localhost.example.com',
  'my-host',
  '',
];

test('isLoopbackListenAddress: 127.0.0.0/8, ::1 and localhost in their spellings; nothing else', () => {
  for (const host of LOOPBACK) assert.equal(isLoopbackListenAddress(host), true, JSON.stringify(host));
  for (const host of NOT_LOOPBACK) assert.equal(isLoopbackListenAddress(host), false, JSON.stringify(host));
});

const WARNING = /^the gate is off and HOST is not a loopback address: anyone who can reach the port can create links/;

/** The log lines of a server started with `env`, from start to a clean stop. */
async function startUpLines(t: TestContext, env: Record<string, string>): Promise<Record<string, unknown>[]> {
  const server = await serverProcessOn(t, { FSYNC: 'off', LOG_LEVEL: 'info', API_KEYS: 'k', ...env });
  assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.stderr());
  // The exit can come before the last lines are read; 'stopped' is the last one written.
  for (let waited = 0; !server.lines.some((l) => l['msg'] === 'stopped'); waited += 20) {
    assert.ok(waited < 10_000, 'the stopped line arrives');
    await new Promise((r) => setTimeout(r, 20));
  }
  return server.lines;
}

test('HOST=0.0.0.0 with the gate off: start-up warns, naming the host', { timeout: 60_000 }, async (t) => {
  const warnings = (await startUpLines(t, { HOST: '0.0.0.0' })).filter((l) => l['level'] === 'warn');
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(String(warnings[0]!['msg']), WARNING);
  assert.match(String(warnings[0]!['msg']), /; if it must stay open, limit creates per client with CREATE_RATE_LIMIT \(e\.g\. 60\/min\)$/);
  assert.equal(warnings[0]!['host'], '0.0.0.0');
  assert.equal(warnings[0]!['create_rate_limit'], 'off');
});

test('HOST=0.0.0.0 with the gate off and a create limit: the warning stays, names the limit, and suggests none', { timeout: 60_000 }, async (t) => {
  const warnings = (await startUpLines(t, { HOST: '0.0.0.0', CREATE_RATE_LIMIT: '30/MIN' })).filter((l) => l['level'] === 'warn');
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(String(warnings[0]!['msg']), WARNING);
  assert.doesNotMatch(String(warnings[0]!['msg']), /CREATE_RATE_LIMIT/);
  assert.equal(warnings[0]!['create_rate_limit'], '30/min');
});

for (const [name, env] of [
  ['HOST=0.0.0.0 with API_TOKEN set', { HOST: '0.0.0.0', API_TOKEN: 'secret-token' }],
  ['HOST=127.0.0.1 with the gate off', { HOST: '127.0.0.1' }],
  ['HOST=localhost with the gate off', { HOST: 'localhost' }],
] as const) {
  test(`${name}: no warning`, { timeout: 60_000 }, async (t) => {
    const lines = await startUpLines(t, env);
    assert.deepEqual(
      lines.filter((l) => l['level'] === 'warn'),
      [],
    );
    assert.ok(!JSON.stringify(lines).includes('secret-token'));
  });
}
