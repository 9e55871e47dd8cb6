/**
 * The package's root folder, where `package.json`, `static/` and `schemas/` are: a file URL ending
 * in a slash.
 *
 * Every file that needs one of them resolves it here, never against its own `import.meta.url`.
 * This module runs at three depths: `src/` (tests), `dist/lib/` (the compiled library) and
 * `dist/server.js`, the server bundled into one file (see `scripts/bundle-server.mjs`), where every
 * module shares the bundle's `import.meta.url`. So the root is found by walking up to the first
 * `package.json` that names a package: the build's own `dist/package.json` and
 * `dist/lib/package.json` only say how Node loads the files below them, and name none.
 */
import { readFileSync } from 'node:fs';

/** The first folder at or above `from`'s whose `package.json` has a `name`. */
export function packageRootOf(from: URL): URL {
  for (let dir = new URL('./', from); ; ) {
    if (namesPackage(new URL('package.json', dir))) return dir;
    const up = new URL('../', dir);
    if (up.href === dir.href) throw new Error(`no package.json with a name above ${from.href}`);
    dir = up;
  }
}

/** Whether `file` exists and has a `name`. */
function namesPackage(file: URL): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  return typeof (JSON.parse(text) as { name?: unknown }).name === 'string';
}

export const PACKAGE_ROOT = packageRootOf(new URL(import.meta.url));
