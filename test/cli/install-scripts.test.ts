/**
 * `npm install` in a clone prints no warning about install scripts. npm 11.16 and newer warn about
 * every dependency whose install script the project's `allowScripts` (package.json) does not name,
 * and npm 12 skips such scripts. So each package of the lock file that has one is approved there
 * by name (today only esbuild, the build's bundler, whose script checks its binary), and nothing
 * else is: a new dependency with an install script fails here until someone decides about it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/helpers.ts';

interface Lock {
  packages: Record<string, { hasInstallScript?: boolean }>;
}

test('every dependency with an install script is approved by name in allowScripts, and only those', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  const paths = Object.keys(lock.packages);
  assert.ok(paths.length > 50, `${paths.length} packages in the lock file`);
  const scripted = new Set(
    Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
  );
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, unknown> };
  const approved = pkg.allowScripts ?? {};
  assert.deepEqual(Object.keys(approved).sort(), [...scripted].sort());
  for (const [name, verdict] of Object.entries(approved)) assert.equal(verdict, true, `${name}: approved, not denied`);
});
