/**
 * Every file the README and docs/ name exists: a path from the root (`src/…`, `test/…`,
 * `scripts/…`, …) where it says; a path inside a folder (`visits/cells.ts`, `support/proxy.ts`)
 * at the end of some file's path; a bare source file name (`helpers.ts`) as some file's name, and,
 * in a row of docs/architecture.md's layout table, in that row's folder. Built files (`dist/…`)
 * are made by the build, and the data dir's files by the server, so neither is looked for.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../support/helpers.ts';

const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** The files of the repository, as git knows them (committed or added), plus the untracked ones not ignored. */
const FILES: readonly string[] = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
const FILE_SET = new Set(FILES);
const NAMES = new Set(FILES.map((f) => basename(f)));

/** Folders a path from the root starts with. */
const ROOTED = /^(src|test|scripts|docs|static|schemas|contrib|\.ci)\//;
/** What is a file of ours by its ending (not `.md`: pages link each other, a test checks those links). */
const SOURCE = /^([\w./-]*[\w-]\.(ts|mjs|cjs|js|sh|css|html|json|yaml)|[\w./-]*\/[\w.-]+\.service)$/;
/** Names that are not files of the repository: the driver, JSON documents served under a route. */
const NOT_OURS = new Set(['postgres.js', 'Node.js', 'openapi.json']);

/** Every code span of a page, with its line. */
function spansOf(text: string): { span: string; line: number }[] {
  return text.split('\n').flatMap((l, i) => [...l.matchAll(/`([^`\s]+)`/g)].map((m) => ({ span: m[1]!, line: i + 1 })));
}

function missing(name: string): string | undefined {
  if (name.startsWith('dist/') || name.startsWith('/') || NOT_OURS.has(name)) return undefined;
  if (ROOTED.test(name)) return FILE_SET.has(name) ? undefined : `${name} is not a file from the root`;
  if (name.includes('/')) return FILES.some((f) => f.endsWith(`/${name}`)) ? undefined : `no file ends in ${name}`;
  return NAMES.has(name) ? undefined : `no file is named ${name}`;
}

test('every file a page names in a code span exists', () => {
  const problems: string[] = [];
  for (const page of PAGES) {
    for (const { span, line } of spansOf(readFileSync(join(ROOT, page), 'utf8'))) {
      if (!SOURCE.test(span)) continue;
      const problem = missing(span);
      if (problem) problems.push(`${page}:${line}: ${problem}`);
    }
  }
  assert.deepEqual(problems, []);
});

test("every file of a row of the layout table is in that row's folder", () => {
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  let rows = 0;
  for (const line of text.split('\n')) {
    const folder = /^\| `(src\/[\w/-]*\/)` \|(.*)\|$/.exec(line);
    if (!folder) continue;
    rows++;
    for (const [, name] of folder[2]!.matchAll(/`([\w-]+\.(?:ts|mjs))`/g)) {
      // A name with its own folder is named from the root elsewhere in the row (`src/http/multipart.ts`).
      assert.ok(FILE_SET.has(`${folder[1]}${name}`), `${folder[1]}${name}, named in the row of ${folder[1]}`);
    }
  }
  assert.ok(rows >= 12, `${rows} folder rows`);
});

test('the helpers the tests section names are in test/support/', () => {
  // The sentence once named a test/support/server.ts that did not exist (a src/server.ts does).
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const helpers = /helpers in `test\/support\/` \(([\s\S]*?)\)\. /.exec(text.slice(text.indexOf('## Tests')));
  assert.ok(helpers, 'the tests section lists the helpers of test/support/');
  const names = [...helpers[1]!.matchAll(/`([\w-]+\.ts)`/g)].map((m) => m[1]!);
  assert.ok(names.length >= 2, names.join());
  for (const name of names) assert.ok(FILE_SET.has(`test/support/${name}`), `test/support/${name}`);
});
