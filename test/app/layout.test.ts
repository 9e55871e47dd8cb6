/**
 * docs/architecture.md made executable. The dependency direction is one table on that page, read
 * here: every import of every source file (type-only ones included, found by the TypeScript
 * parser, not a pattern) must be one the table allows its folder, and every allowance must be used,
 * so the page says exactly what the code does. And the sizes a person can hold in their head: no
 * file of `src/` over 300 lines, no function over 80 but the named tables of routes below.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import type * as TS from 'typescript-api';
import { ROOT } from '../support/helpers.ts';

// Required, not imported: as an ES module import node first scans the compiler's 9 MB for its
// exports, and the load took 0.73 s of CPU against 0.2 s.
const ts = createRequire(import.meta.url)('typescript-api') as typeof TS;

const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/**
 * The functions allowed past `MAX_FUNCTION_LINES`, as `file function`: route tables, each a list
 * of routes with their OpenAPI documents, where a split would only scatter one table.
 */
const LONG_TABLES: ReadonlySet<string> = new Set(['src/route-table.ts routeTable', 'src/api/routes.ts apiRoutes', 'src/api/transfer-routes.ts transferRoutes']);

/** Every source file, as a path relative to the root (`src/…`). */
function sources(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
}

/** The folder a file belongs to (`src/store/log/`), or the file itself at the root of `src/`. */
const unitOf = (file: string): string => (dirname(file) === 'src' ? file : `${dirname(file)}/`);

interface Source {
  file: string;
  text: string;
  tree: TS.SourceFile;
  /** The project files it imports: static, dynamic, re-exports and `import('…')` types. */
  imports: string[];
}

function read(file: string): Source {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: TS.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  const imports = specifiers.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, normalize(join(ROOT, dirname(file), s))));
  return { file, text, tree, imports };
}

const SOURCES: readonly Source[] = sources().map(read);
const UNITS: ReadonlySet<string> = new Set(SOURCES.map((s) => unitOf(s.file)));

/** The table of docs/architecture.md's "Dependency direction": each folder or root file, and what it may import. */
function directions(): Map<string, string[]> {
  const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const start = page.indexOf('\n## Dependency direction\n');
  assert.notEqual(start, -1, 'docs/architecture.md has its Dependency direction section');
  const section = page.slice(start + 1, page.indexOf('\n## ', start + 1));
  const table = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const row = /^\| (`src\/.*?) \| (.*?) \| .* \|$/.exec(line);
    if (!row) continue;
    const spans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const allowed = spans(row[2]!);
    assert.ok((row[2] === 'nothing') === (allowed.length === 0), `a row's imports are "nothing" or code spans: ${line}`);
    for (const from of spans(row[1]!)) {
      assert.ok(!table.has(from), `${from} has one row`);
      table.set(from, allowed);
    }
  }
  return table;
}

const TABLE = directions();

/** Whether an import of `target` is what `entry` allows: a folder's own files, or that file. */
const allows = (entry: string, target: string): boolean => (entry.endsWith('/') ? unitOf(target) === entry : target === entry);

test('the layout is read: the sources, their imports and the table are found', () => {
  assert.ok(SOURCES.length > 100, `${SOURCES.length} files`);
  const routes = SOURCES.find((s) => s.file === 'src/api/routes.ts')!;
  assert.ok(
    routes.imports.some((i) => i.startsWith('src/links/')),
    'a door imports the link rules',
  );
  const types = read('src/index.ts').imports;
  assert.ok(types.includes('src/config/config.ts'), 'a type-only re-export counts');
  assert.ok(TABLE.size >= 25, `${TABLE.size} rows`);
});

test('the table of docs/architecture.md has one row for every folder of src/ and every file at its root, and none for anything else', () => {
  assert.deepEqual([...UNITS].filter((unit) => !TABLE.has(unit)).sort(), [], 'folders and files without a row');
  assert.deepEqual([...TABLE.keys()].filter((unit) => !UNITS.has(unit)).sort(), [], 'rows of nothing in src/');
  for (const [unit, allowed] of TABLE) {
    for (const entry of allowed) {
      const exists = entry.endsWith('/') ? UNITS.has(entry) : SOURCES.some((s) => s.file === entry);
      assert.ok(exists, `${unit} lists ${entry}, which is not in src/`);
      assert.notEqual(entry, unit, `${unit} lists itself`);
    }
  }
});

test('every import is one the table allows its folder', () => {
  const refused: string[] = [];
  for (const { file, imports } of SOURCES) {
    const unit = unitOf(file);
    const allowed = TABLE.get(unit) ?? [];
    for (const target of imports) {
      if (unitOf(target) === unit || allowed.some((entry) => allows(entry, target))) continue;
      refused.push(`${file} imports ${target}, which the row of ${unit} does not list`);
    }
  }
  assert.deepEqual(refused, []);
});

test('no file of src/ imports a file outside src/: the build compiles src/ alone (tsconfig.build.json)', () => {
  const outside = SOURCES.flatMap(({ file, imports }) => imports.filter((target) => !target.startsWith('src/')).map((target) => `${file} imports ${target}`));
  assert.deepEqual(outside, []);
});

test('every listing of the table is used by an import: the page says no more than the code does', () => {
  const unused: string[] = [];
  for (const [unit, allowed] of TABLE) {
    const imports = SOURCES.filter((s) => unitOf(s.file) === unit).flatMap((s) => s.imports);
    for (const entry of allowed) if (!imports.some((target) => allows(entry, target))) unused.push(`${unit} lists ${entry}, which none of its files imports`);
  }
  assert.deepEqual(unused, []);
});

test('no route file imports the route table back', () => {
  const table = 'src/api/routes.ts';
  const importsOf = (file: string): string[] => SOURCES.find((s) => s.file === file)?.imports ?? [];
  assert.deepEqual(
    SOURCES.filter((s) => s.file !== table && importsOf(table).includes(s.file) && s.imports.includes(table)).map((s) => s.file),
    [],
  );
});

test(`no file of src/ is over ${MAX_FILE_LINES} lines`, () => {
  const long = SOURCES.map(({ file, text }) => ({ file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
    .filter(({ lines }) => lines > MAX_FILE_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  assert.deepEqual(long, []);
});

/** The name a function is known by: its own, or the variable, property or method it is assigned to. */
function nameOf(node: TS.SignatureDeclaration, tree: TS.SourceFile): string {
  if (node.name) return node.name.getText(tree);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name)
    return parent.name.getText(tree);
  return `(anonymous, line ${tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1})`;
}

test(`no function of src/ is over ${MAX_FUNCTION_LINES} lines, but the named tables of routes`, () => {
  const long: string[] = [];
  const seen = new Set<string>();
  for (const { file, tree } of SOURCES) {
    const visit = (node: TS.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line;
        const lines = tree.getLineAndCharacterOfPosition(node.end).line - first + 1;
        const name = `${file} ${nameOf(node, tree)}`;
        if (lines > MAX_FUNCTION_LINES) {
          if (LONG_TABLES.has(name)) seen.add(name);
          else long.push(`${file}:${first + 1} ${nameOf(node, tree)}: ${lines} lines`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(tree);
  }
  assert.deepEqual(long, []);
  // A table that became short, or was renamed, leaves the list: it must not excuse another.
  assert.deepEqual(
    [...LONG_TABLES].filter((name) => !seen.has(name)),
    [],
    'allowed tables that are no longer long',
  );
});
