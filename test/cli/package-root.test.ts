/**
 * `packageRootOf` (src/package-root.ts): the package root is the first folder up whose
 * package.json names a package, at each depth the code runs from — `src/`, the compiled library in
 * `dist/lib/` and the bundle in `dist/` — past the build's own package.json files, which only say
 * how Node loads the files below them.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { packageRootOf, PACKAGE_ROOT } from '../../src/package-root.ts';
import { ROOT, tempDir } from '../support/helpers.ts';

test('the package root from src/ is the repository root', () => {
  assert.equal(PACKAGE_ROOT.href, pathToFileURL(join(ROOT, '/')).href);
});

test('from dist/lib/ and dist/, the root is past the package.json files that name nothing', (t) => {
  const root = tempDir(t);
  mkdirSync(join(root, 'dist', 'lib', 'store'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'url-shortener', type: 'module' }));
  writeFileSync(join(root, 'dist', 'package.json'), JSON.stringify({ type: 'commonjs' }));
  writeFileSync(join(root, 'dist', 'lib', 'package.json'), JSON.stringify({ type: 'module' }));
  const expected = pathToFileURL(join(root, '/')).href;
  for (const file of ['dist/lib/package-root.js', 'dist/server.js', 'dist/lib/store/x.js']) {
    assert.equal(packageRootOf(pathToFileURL(join(root, file))).href, expected, file);
  }
});
