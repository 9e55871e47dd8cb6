/**
 * The command line as the pages spell it. In a clone, after the README's `npm install`, the
 * program is `node dist/server.js`: the package's `bin` puts `url-shortener` on the PATH only once
 * the clone is linked (`npm link`) or the package installed globally, and `npm run cli -- export`
 * writes npm's own two lines into the export before the first record. So every command a page
 * shows is spelled `node dist/server.js`, the bare name appears only where a page says how to get
 * it, `npm run cli` only with `-s`; `--help` spells it the same way; and the spelling works: its
 * `--help` runs, and an export written to a file imports back whole, by it and by `npm run -s cli`.
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { helpText } from '../../src/cli/help.ts';
import { ROOT, tempDir } from '../support/helpers.ts';

const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** The commands --help shows (`export`, `import-visits`, …), and `keys`, whether or not it does yet. */
const COMMANDS = new Set(['keys', ...[...helpText().matchAll(/^(?:Usage:| {6}) node dist\/server\.js ([a-z][\w-]*)/gm)].map((m) => m[1]!)]);
const NAMES = [...COMMANDS].sort((a, b) => b.length - a.length).join('|');
/** The bare program name running a command: `url-shortener export`, `url-shortener --help`, `npx url-shortener`. */
const BARE = new RegExp(`(?<![\\w@/.-])url-shortener(?=[ \\t]+(?:(?:${NAMES})\\b|--[a-z]|\\[|FILE))|\\bnpx\\b[^\\n\`]*?\\burl-shortener\\b`, 'g');
/** `npm run cli` without `-s`/`--silent`, which would put npm's lines into what the command prints. */
const NOISY = /\bnpm run (?!-s\b|--silent\b)(?:[^\n`]*? )?cli\b/g;
/** A command of the program in the working spelling. */
const SPELLED = new RegExp(`\\bnode dist/server\\.js (${NAMES})\\b`, 'g');

/** A page's paragraphs (a fenced block is one), each with the line it starts on. */
function paragraphs(text: string): { text: string; line: number }[] {
  const found: { text: string; line: number }[] = [];
  let line = 1;
  for (const part of text.split(/\n[ \t]*\n/)) {
    found.push({ text: part, line });
    line += part.split('\n').length + 1;
  }
  return found;
}

test('every command a page shows runs the program as `node dist/server.js`; the bare name only beside `npm link`', () => {
  const problems: string[] = [];
  const spelled = new Set<string>();
  for (const page of PAGES) {
    for (const { text, line } of paragraphs(readFileSync(join(ROOT, page), 'utf8'))) {
      const where = (m: RegExpMatchArray): string => `${page}:${line + text.slice(0, m.index).split('\n').length - 1}: ${text.slice(m.index).split('\n')[0]}`;
      for (const m of text.matchAll(BARE)) if (!text.includes('npm link')) problems.push(where(m));
      for (const m of text.matchAll(NOISY)) problems.push(`${where(m)} (without -s, npm prints its own lines into stdout)`);
      for (const m of text.matchAll(SPELLED)) spelled.add(m[1]!);
    }
  }
  assert.deepEqual(problems, []);
  // The pages do show the commands, so the check above has something to check.
  for (const command of ['export', 'export-visits', 'import', 'import-visits']) assert.ok(spelled.has(command), `a page shows ${command}`);
  assert.ok(
    PAGES.some((page) => /`npm link[^`]*`[^\n]*`url-shortener`|`url-shortener`[^\n]*`npm link[^`]*`/.test(readFileSync(join(ROOT, page), 'utf8'))),
    'a page says how to get the bare command',
  );
});

test('--help spells its commands the same way', () => {
  const usage = helpText()
    .split('\n')
    .filter((l) => /^(Usage:| {7}\S)/.test(l));
  assert.ok(usage.length >= 5, usage.join('\n'));
  for (const line of usage) assert.match(line, /^(Usage:| {6}) node dist\/server\.js /);
  assert.doesNotMatch(helpText(), BARE);
});

/** The built program, run from the clone's root as the pages say. */
function program(args: readonly string[], env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['dist/server.js', ...args], { cwd: ROOT, env, encoding: 'utf8' });
}

function npmCli(args: readonly string[], env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync('npm', ['run', '-s', 'cli', '--', ...args], { cwd: ROOT, env, encoding: 'utf8' });
}

/** What an import reports in its log line `imported`. */
function imported(run: SpawnSyncReturns<string>): { imported: number; skipped: number } {
  assert.equal(run.status, 0, run.stderr);
  const line = `${run.stdout}\n${run.stderr}`
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; imported: number; skipped: number })
    .find((l) => l.msg === 'imported');
  assert.ok(line, `an imported line in ${run.stdout}${run.stderr}`);
  return { imported: line.imported, skipped: line.skipped };
}

test('the spelling works from the clone: --help, and an export that imports back whole', { timeout: 60_000 }, (t) => {
  const dir = tempDir(t, 'shortener-cli-');
  // Nothing of the test's own environment (a DATA_DIR, a DATABASE_URL) reaches the program.
  const env = { PATH: process.env['PATH'] ?? '', HOME: dir };

  const help = program(['--help'], env);
  assert.equal(help.status, 0, help.stderr);
  // Its usage lines, up to the settings (those follow the settings table, which may have moved on since the build).
  const head = (text: string): string => text.slice(0, text.indexOf('Every option'));
  assert.equal(head(help.stdout), head(helpText()), 'dist/server.js prints the usage of these sources');
  const viaNpm = npmCli(['--help'], env);
  assert.equal(viaNpm.status, 0, viaNpm.stderr);
  assert.equal(viaNpm.stdout, help.stdout, 'npm run -s cli runs the same program and prints only what it prints');

  const links = join(dir, 'links.jsonl');
  writeFileSync(links, '{"url":"https://example.com/a"}\n{"url":"https://example.com/b","code":"docs-b"}\n');
  assert.deepEqual(imported(program(['import', links, '--data-dir', join(dir, 'one'), '--fsync', 'off'], env)), { imported: 2, skipped: 0 });

  const exported = program(['export', '--data-dir', join(dir, 'one')], env);
  assert.equal(exported.status, 0, exported.stderr);
  const records = exported.stdout.split('\n').filter(Boolean);
  assert.equal(records.length, 2, exported.stdout);
  for (const record of records) assert.ok(JSON.parse(record), record);
  assert.equal(npmCli(['export', '--data-dir', join(dir, 'one')], env).stdout, exported.stdout, 'npm run -s cli exports the same bytes');

  const file = join(dir, 'urls.jsonl');
  writeFileSync(file, exported.stdout);
  assert.deepEqual(imported(program(['import', file, '--data-dir', join(dir, 'two'), '--fsync', 'off'], env)), { imported: 2, skipped: 0 });
  const again = program(['export', '--data-dir', join(dir, 'two')], env);
  assert.deepEqual(
    again.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { short_code: string }).short_code)
      .sort(),
    records.map((l) => (JSON.parse(l) as { short_code: string }).short_code).sort(),
  );
});
