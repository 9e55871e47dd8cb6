/**
 * A malformed `DATABASE_URL` (docs/postgres.md, "Running it"): a `%` that starts no escape in its
 * user, password, host or database name stops start-up, and the `export`/`import` commands, with
 * exit 2 and the one line every invalid setting gets, naming the setting and never the password;
 * before, the driver's `decodeURIComponent` ended the process with an uncaught `URIError`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { resolveConfig } from '../../src/config/resolve.ts';
import { ConfigError } from '../../src/errors.ts';
import { ROOT } from '../support/helpers.ts';
import { serverBundle } from '../support/server-entry.ts';

const WHY = 'must be a postgres:// or postgresql:// URL whose user, password, host and database name decode: write a % in them as %25';

/** Each holds the password `pw-s3cret`, which no output may show; nothing listens on port 1. */
const MALFORMED: readonly [string, string][] = [
  ['a % in the password', 'postgres://app:pw-s3cret%ZZ@127.0.0.1:1/links'],
  ['an escape cut short in the password', 'postgres://app:pw-s3cret%E0%A4@127.0.0.1:1/links'],
  ['a % in the user', 'postgres://ap%p:pw-s3cret@127.0.0.1:1/links'],
  ['a % in the host', 'postgresql://app:pw-s3cret@db%ZZ.example:1/links'],
  ['a % in the database name', 'postgres://app:pw-s3cret@127.0.0.1:1/li%nks'],
];

function run(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const childEnv: Record<string, string> = { PATH: process.env['PATH'] ?? '', ...env };
  const coverage = process.env['NODE_V8_COVERAGE'];
  if (coverage !== undefined) childEnv['NODE_V8_COVERAGE'] = coverage;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [serverBundle(), ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

test('the resolver refuses each malformed URL naming the setting, never echoing it; escapes that decode are fine', () => {
  for (const [what, url] of MALFORMED) {
    for (const [argv, env, name] of [
      [[], { DATABASE_URL: url }, 'DATABASE_URL'],
      [[`--database-url=${url}`], {}, '--database-url'],
    ] as const) {
      assert.throws(
        () => resolveConfig({ argv, env, readFile: () => '' }),
        (err: unknown) => err instanceof ConfigError && err.message === `invalid ${name}: ${WHY}`,
        `${what} in ${name}`,
      );
    }
  }
  const fine = 'postgres://app:p%25w%40rd@127.0.0.1:1/links?sslmode=disable';
  const resolved = resolveConfig({ argv: [], env: { DATABASE_URL: fine }, readFile: () => '' });
  assert.equal(resolved.command === 'run' && resolved.config.databaseUrl, fine);
});

test('the server, export and import: exit 2 with one line naming the setting, the password never printed', { timeout: 60_000 }, async () => {
  const cases: [string, readonly string[], Record<string, string>, string][] = MALFORMED.map(([what, url]) => [
    `server, ${what}`,
    [],
    { DATABASE_URL: url },
    `url-shortener: invalid DATABASE_URL: ${WHY}\n`,
  ]);
  const password = MALFORMED[0]![1];
  cases.push(
    ['server, --database-url', ['--database-url', password], {}, `url-shortener: invalid --database-url: ${WHY}\n`],
    ['export --database-url', ['export', '--database-url', password], {}, `url-shortener export: invalid --database-url: ${WHY}\n`],
    ['import --database-url=', ['import', 'links.jsonl', `--database-url=${password}`], {}, `url-shortener import: invalid --database-url: ${WHY}\n`],
    ['export with DATABASE_URL', ['export'], { DATABASE_URL: password }, `url-shortener export: invalid DATABASE_URL: ${WHY}\n`],
  );
  const results = await Promise.all(cases.map(([, args, env]) => run(args, env)));
  for (const [i, [name, , , line]] of cases.entries()) {
    const r = results[i]!;
    assert.equal(r.code, 2, `${name}: ${r.err}`);
    assert.equal(r.err, line, name);
    assert.equal(r.out, '', `${name}: nothing on stdout`);
    assert.doesNotMatch(r.err, /s3cret/, name);
  }
});
