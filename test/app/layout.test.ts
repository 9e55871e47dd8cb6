/**
 * The dependency direction of docs/architecture.md, read from the imports as they are: each store
 * in its own folder, neither reaching into the other; the link rules below every door; nothing
 * importing the REST door from below it; no import circle between the route files.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/helpers.ts';

/** Every source file, as a path relative to the root (`src/…`). */
function sources(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
}

/** The project files `file` imports (relative specifiers, resolved), type-only imports included. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) found.push(relative(ROOT, normalize(join(ROOT, dirname(file), m[1]!))));
  return found;
}

const FILES = sources();
const IMPORTS = new Map(FILES.map((f) => [f, importsOf(f)]));

/** The imports of files under `from` that land under `to`, as `file -> import` lines. */
function crossing(from: string, to: string, except: (file: string) => boolean = () => false): string[] {
  return FILES.filter((f) => f.startsWith(from) && !except(f)).flatMap((f) =>
    IMPORTS.get(f)!
      .filter((i) => i.startsWith(to))
      .map((i) => `${f} -> ${i}`),
  );
}

test('the layout is read: the sources and their imports are found', () => {
  assert.ok(FILES.length > 100, `${FILES.length} files`);
  assert.ok(IMPORTS.get('src/api/routes.ts')!.includes('src/links/service.ts'));
});

test('each store in its own folder: the log store and PostgreSQL never import each other, and share only src/store/', () => {
  assert.deepEqual(crossing('src/store/log/', 'src/store/postgres/'), []);
  assert.deepEqual(crossing('src/store/postgres/', 'src/store/log/'), []);
  assert.deepEqual(
    FILES.filter((f) => /^src\/store\/[^/]+$/.test(f)),
    ['src/store/link-store.ts', 'src/store/record-limits.ts'],
  );
});

test('the link rules sit below every door: src/store/ and src/links/ import no door', () => {
  for (const door of ['src/api/', 'src/mcp/', 'src/transfer/', 'src/cli/', 'src/http/', 'src/published/', 'src/peers/']) {
    assert.deepEqual(crossing('src/store/', door), [], door);
    assert.deepEqual(crossing('src/links/', door), [], door);
  }
  assert.deepEqual(crossing('src/store/', 'src/links/'), []);
});

test('nothing imports the REST door from below it: only the assembly does', () => {
  const assembly = new Set(['src/route-table.ts', 'src/dispatch.ts', 'src/app.ts']);
  assert.deepEqual(
    crossing('src/', 'src/api/', (f) => f.startsWith('src/api/') || assembly.has(f)),
    [],
  );
});

test('no route file imports the route table back', () => {
  const table = 'src/api/routes.ts';
  assert.deepEqual(
    FILES.filter((f) => f !== table && IMPORTS.get(table)!.includes(f) && IMPORTS.get(f)!.includes(table)),
    [],
  );
});

test('the visit classification imports nothing of the project: pure functions of request headers', () => {
  assert.ok(FILES.includes('src/visits/user-agent.ts'));
  assert.deepEqual(
    crossing('src/visits/', 'src/').filter((line) => !line.split(' -> ')[1]!.startsWith('src/visits/')),
    [],
  );
});
