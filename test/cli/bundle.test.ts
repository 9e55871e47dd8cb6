/**
 * `npm run build` bundles the server into one CommonJS file, `dist/server.js`
 * (scripts/bundle-server.mjs): what `node dist/server.js` runs is that bundle, not the sources the
 * other tests start. It is built here the same way into a file beside it, then run: one file that
 * requires only Node's own, loaded as CommonJS (dist/package.json), finding through the package
 * root what the sources find beside them (the UI, the notice schema, the version).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { codeOf, request, ROOT, serverProcessOn } from '../support/helpers.ts';

test('the bundled server: one file with only node: imports; it serves the UI, the schema and redirects, and knows its version', {
  timeout: 120_000,
}, async (t) => {
  // Beside dist/server.js: the bundle finds the package root one folder up (src/package-root.ts).
  const bundle = join(ROOT, 'dist', `server-bundle-test-${process.pid}.js`);
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  t.after(() => {
    rmSync(bundle, { force: true });
    rmSync(`${bundle}.map`, { force: true });
  });
  const built = spawnSync(process.execPath, ['scripts/bundle-server.mjs', bundle], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);

  const code = readFileSync(bundle, 'utf8');
  // CommonJS: dist/package.json says so, and the file has no import statement (an ES module entry
  // serves about 1 % slower: docs/performance.md).
  assert.deepEqual(JSON.parse(readFileSync(join(ROOT, 'dist', 'package.json'), 'utf8')), { type: 'commonjs' });
  assert.doesNotMatch(code, /^import /m);
  assert.match(code, /^"use strict";$/m, 'strict, as the ES module sources are');
  const requires = [...code.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!);
  assert.ok(requires.includes('node:http'), 'the bundle starts a node:http server');
  assert.deepEqual(
    requires.filter((specifier) => !specifier.startsWith('node:')),
    [],
    'no module of ours is loaded beside the bundle',
  );
  // The PostgreSQL driver stays out of it: an optional peer dependency, imported when configured.
  assert.doesNotMatch(code, /postgres\.js|class Sql\b/);

  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string> };
  assert.match(pkg.scripts['build']!, /&& node scripts\/bundle-server\.mjs$/, 'npm run build bundles dist/server.js after tsc');
  const version = spawnSync(process.execPath, [bundle, '--version'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(version.stdout, `${pkg.name} ${pkg.version}\n`);

  const { port } = await serverProcessOn(t, { FSYNC: 'off', API_TOKEN: '' }, [bundle]);

  const ui = await request(port, '/');
  assert.equal(ui.status, 200);
  assert.equal(ui.body, readFileSync(join(ROOT, 'static', 'index.html'), 'utf8'));
  const schema = await request(port, '/schemas/v2/DeprecationNoticeNotification.json');
  assert.equal(schema.status, 200);
  assert.equal(schema.body, readFileSync(join(ROOT, 'schemas', 'v2', 'DeprecationNoticeNotification.json'), 'utf8'));

  const created = await request(port, '/api/shorten', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"url":"https://example.com/bundled"}',
  });
  assert.equal(created.status, 201);
  const redirect = await request(port, `/${codeOf(created)}`);
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers['location'], 'https://example.com/bundled');
});
