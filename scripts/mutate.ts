/**
 * `npm run mutate [-- name…]`: does the suite catch the bugs of `scripts/mutants.ts`? Copies the
 * repository to a scratch directory (node_modules linked, the work tree never touched), runs each
 * mutant's test files once as they are (they must pass), then once per mutant with its one-line
 * change in place: a mutant whose tests all pass survived. Exit 1 when one survived, when the tests
 * fail unmutated, or when the table is stale (a mutant's text is not exactly once in its file);
 * 2 on bad usage. Not part of `npm test`: it runs test files many times over.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTANTS, type Mutant } from './mutants.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** A mutant whose tests hang is caught too (the suite would never finish), but bounded here. */
const RUN_TIMEOUT_MS = 5 * 60_000;

interface Run {
  passed: boolean;
  timedOut: boolean;
  output: string;
  seconds: number;
}

/** The test run under way: its process group, stopped with us on Ctrl-C. */
let running: number | undefined;

/** Runs `files` with node's test runner in `dir`, one file at a time. */
function runTests(dir: string, files: readonly string[]): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', './scripts/ts-loader.mjs', '--test', '--test-concurrency=1', '--test-reporter=dot', ...files], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    running = child.pid;
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    let timedOut = false;
    // The whole group: a test's own children (servers, a PostgreSQL) go with it.
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      running = undefined;
      resolve({ passed: code === 0 && !timedOut, timedOut, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** Why the table does not fit the source, or undefined. */
function stale(mutant: Mutant): string | undefined {
  const text = readFileSync(join(ROOT, mutant.file), 'utf8');
  const times = text.split(mutant.from).length - 1;
  return times === 1 ? undefined : `${mutant.name}: ${mutant.file} holds its text ${times} times, not once: the table is stale`;
}

/** The repository as git sees it (tracked files and new ones not ignored), node_modules linked. */
function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'url-shortener-mutate-'));
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0')) {
    if (file === '' || file === 'node_modules' || file.startsWith('node_modules/')) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    // A file deleted in the work tree but not yet in git is left out.
    try {
      cpSync(join(ROOT, file), join(dir, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
  return dir;
}

/** The first failing test of a run, as the dot reporter names it. */
function firstFailure(output: string): string {
  return /^✖ (.*?)(?: \([\d.]+m?s\))?$/m.exec(output)?.[1] ?? '(no test named)';
}

function tail(output: string, lines = 40): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !MUTANTS.some((m) => m.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown mutant: ${unknown.join(', ')}\nmutants: ${MUTANTS.map((m) => m.name).join(', ')}\n`);
    return 2;
  }
  const chosen = names.length === 0 ? MUTANTS : MUTANTS.filter((m) => names.includes(m.name));
  const problems = chosen.map(stale).filter((p): p is string => p !== undefined);
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    return 1;
  }

  const dir = scratchCopy();
  process.once('SIGINT', () => {
    if (running !== undefined) process.kill(-running, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
  try {
    const started = performance.now();
    // Unmutated first: a test file that fails anyway would kill every mutant and prove nothing.
    const files = [...new Set(chosen.flatMap((m) => m.tests))];
    const clean = await runTests(dir, files);
    if (!clean.passed) {
      process.stderr.write(`the tests fail without any mutant${clean.timedOut ? ' (timed out)' : ''}:\n${tail(clean.output)}\n`);
      return 1;
    }
    process.stdout.write(`unmutated: ${files.length} test files pass (${clean.seconds.toFixed(1)} s)\n`);

    const survivors: string[] = [];
    for (const mutant of chosen) {
      const path = join(dir, mutant.file);
      const original = readFileSync(path, 'utf8');
      writeFileSync(
        path,
        original.replace(mutant.from, () => mutant.to),
      );
      try {
        const run = await runTests(dir, mutant.tests);
        const verdict = run.passed ? 'SURVIVED' : run.timedOut ? 'killed (its tests hung)' : 'killed';
        const by = run.passed || run.timedOut ? '' : `: ✖ ${firstFailure(run.output)}`;
        process.stdout.write(`${verdict} ${mutant.name} (${mutant.file}, ${run.seconds.toFixed(1)} s)${by}\n`);
        if (run.passed) survivors.push(mutant.name);
      } finally {
        writeFileSync(path, original);
      }
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    if (survivors.length > 0) {
      process.stdout.write(`${survivors.length} of ${chosen.length} mutants survived (${seconds} s): ${survivors.join(', ')}\n`);
      return 1;
    }
    process.stdout.write(`all ${chosen.length} mutants killed (${seconds} s)\n`);
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
