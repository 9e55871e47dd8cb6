/**
 * contrib/url-shortener.service (docs/deploy.md, systemd): systemd itself accepts every line of it
 * (`systemd-analyze verify` warns about an unknown key or a bad value on stderr and still exits 0,
 * so the test demands an empty stderr, and shows that it would catch both), it rates it as the
 * docs say, it gives a stop the time the server's shutdown can take, and every setting it and the
 * docs' environment file name is one the server reads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SETTINGS } from '../../src/config/settings.ts';
import { configBlock, environmentFile } from '../support/doc-blocks.ts';
import { tempDir } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';

const UNIT = readFileSync(new URL('../../contrib/url-shortener.service', import.meta.url), 'utf8');
const SERVER_SOURCE = readFileSync(new URL('../../src/main.ts', import.meta.url), 'utf8');
const DEPLOY = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

const skip = spawnSync('systemd-analyze', ['--version']).error
  ? missingTool('the systemd unit tests', 'systemd-analyze is not installed (Debian: apt-get install systemd)')
  : false;

/** The values of `key=` in the unit, in order (a key may repeat). */
function values(key: string): string[] {
  return [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);
}

/**
 * The unit with its `ExecStart` on this machine's node, written into a temp dir: verify checks
 * that the program exists, and a server need not have `/usr/bin/node`.
 */
function localCopy(t: TestContext, text = UNIT): string {
  const [exec] = values('ExecStart');
  assert.match(exec!, /^\/usr\/bin\/node \/opt\/url-shortener\/dist\/server\.js$/);
  const file = join(tempDir(t, 'unit-'), 'url-shortener.service');
  writeFileSync(file, text.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `));
  return file;
}

function analyze(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('systemd-analyze verify accepts the unit without a warning, and warns about a bad copy', { skip }, (t) => {
  const ok = analyze(['verify', localCopy(t)]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stderr, '');

  // What the check above would see if a line were wrong (verify still exits 0 for both).
  const broken: [string, RegExp][] = [
    [UNIT.replace('Restart=on-failure', 'Restart=on-crash'), /restart specifier/],
    [UNIT.replace('ProtectSystem=strict', 'ProtectSytem=strict'), /Unknown key 'ProtectSytem'/],
  ];
  for (const [text, warning] of broken) assert.match(analyze(['verify', localCopy(t, text)]).stderr, warning);
  const absent = analyze(['verify', localCopy(t, UNIT.replace('/usr/bin/node', '/nonexistent/node'))]);
  assert.notEqual(absent.status, 0, 'verify fails when ExecStart names no program');
  assert.match(absent.stderr, /\/nonexistent\/node is not executable/);
});

test('systemd-analyze security rates the unit as docs/deploy.md says', { skip }, (t) => {
  const stated = /rates the unit \*\*(\d+\.\d) (\w+)\*\* \(systemd (\d+),/.exec(DEPLOY);
  assert.ok(stated, 'docs/deploy.md states the rating and the systemd version');
  const [, score, level, version] = stated;
  const r = analyze(['security', '--offline=true', localCopy(t)]);
  assert.equal(r.status, 0, r.stderr);
  const measured = /Overall exposure level for url-shortener\.service: (\d+\.\d) (\w+)/.exec(r.stdout);
  assert.ok(measured, r.stdout);
  const ours = /^systemd (\d+)/.exec(analyze(['--version']).stdout)?.[1];
  // Other systemd versions weigh other options; the rating the docs give is for theirs.
  if (ours === version) assert.deepEqual([measured[1], measured[2]], [score, level], 'the rating docs/deploy.md gives');
  else assert.equal(measured[2], 'OK', `systemd ${ours} rates it ${measured[1]} ${measured[2]}`);
});

test('the unit: its own user and state dir, the settings file, hardening, restarts', () => {
  assert.deepEqual(values('DynamicUser'), ['yes']);
  assert.deepEqual(values('StateDirectory'), ['url-shortener']);
  assert.ok(values('Environment').includes('DATA_DIR=%S/url-shortener'), 'the data lives in the state directory');
  assert.deepEqual(values('EnvironmentFile'), ['/etc/url-shortener.env']);
  assert.deepEqual(values('Restart'), ['on-failure']);
  // A setting start-up refuses exits 2 (src/main.ts): a restart would only loop.
  assert.deepEqual(values('RestartPreventExitStatus'), ['2']);
  for (const [key, value] of [
    ['NoNewPrivileges', 'yes'],
    ['ProtectSystem', 'strict'],
    ['ProtectHome', 'yes'],
    ['PrivateTmp', 'yes'],
    ['RestrictAddressFamilies', 'AF_INET AF_INET6 AF_UNIX'],
    ['CapabilityBoundingSet', ''],
  ] as const) {
    assert.deepEqual(values(key), [value], key);
  }
  assert.deepEqual(values('SystemCallFilter'), ['@system-service', '~@privileged @resources']);
  // V8 writes the machine code it compiles: MemoryDenyWriteExecute would stop node.
  assert.deepEqual(values('MemoryDenyWriteExecute'), []);
});

test('TimeoutStopSec outlasts the longest shutdown: SHUTDOWN_TIMEOUT_MS, then the flush grace', () => {
  const shutdown = SETTINGS.find((s) => s.env === 'SHUTDOWN_TIMEOUT_MS');
  assert.ok(shutdown);
  const grace = /^const FLUSH_GRACE_MS = ([\d_]+);$/m.exec(SERVER_SOURCE);
  assert.ok(grace, 'src/main.ts gives the flush its grace');
  const [stop] = values('TimeoutStopSec');
  const seconds = /^(\d+)s$/.exec(stop!);
  assert.ok(seconds, `TimeoutStopSec in seconds: ${stop}`);
  const worstMs = Number(shutdown.default) + Number(grace[1]!.replaceAll('_', ''));
  assert.equal(worstMs, 20_000);
  assert.ok(Number(seconds[1]) * 1000 > worstMs, `${stop} > ${worstMs} ms`);
});

test("every setting the unit and the docs' environment file name is one the server reads", () => {
  const known = new Set(SETTINGS.map((s) => s.env));
  const fromUnit = values('Environment').map((line) => line.slice(0, line.indexOf('=')));
  const fromDocs = Object.keys(environmentFile(configBlock('docs/deploy.md', 'env')));
  assert.deepEqual(fromUnit, ['DATA_DIR', 'HOST', 'PORT']);
  assert.deepEqual(fromDocs, ['BASE_URL', 'TRUST_PROXY', 'API_KEYS']);
  for (const name of [...fromUnit, ...fromDocs]) assert.ok(known.has(name), name);
});
