/**
 * What the sources cite: a comment or a test title that points a reader at the rule it pins names
 * a page of this repository (`docs/<page>.md`, the README), never a contract file the reader does
 * not have, and every docs page it names exists. The pages themselves are checked the same way in
 * docs-facts.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCE = /\.(ts|mjs|js|sh)$/;

/** Every source file under the given folders, as a path relative to the repository. */
function sources(...folders: string[]): string[] {
  return folders.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .map((name) => join(folder, name))
      .filter((path) => SOURCE.test(path) && statSync(join(ROOT, path)).isFile()),
  );
}

const FILES = sources('src', 'test', 'scripts');

test('the sources are found', () => {
  // A walk that finds nothing would pass every check below.
  assert.ok(FILES.includes(join('src', 'app.ts')));
  assert.ok(FILES.includes(join('test', 'published', 'citations.test.ts')));
  assert.ok(FILES.some((path) => path.startsWith('scripts')));
});

test('no source cites a contract file the reader does not have', () => {
  // The character class keeps this file from matching itself.
  const hits = FILES.flatMap((path) =>
    readFileSync(join(ROOT, path), 'utf8')
      .split('\n')
      .flatMap((line, i) => (/[S]PEC/.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
  );
  assert.deepEqual(hits, []);
});

test('every docs page a source cites exists', () => {
  const missing = new Set<string>();
  for (const path of FILES) {
    for (const [page] of readFileSync(join(ROOT, path), 'utf8').matchAll(/\bdocs\/[\w-]+\.md\b/g)) {
      if (!existsSync(join(ROOT, page))) missing.add(`${path}: ${page}`);
    }
  }
  assert.deepEqual([...missing], []);
});
