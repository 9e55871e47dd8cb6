/**
 * How the tests run TypeScript: `node --import ./scripts/ts-loader.mjs …`. Every `.ts` file of the
 * project is compiled once (esbuild, types stripped, an inline source map for stack traces and
 * coverage) into `node_modules/.cache/ts-loader/`, and each process loads the compiled text under
 * the file's own URL. A test file run alone runs through it, and so do the child processes the
 * tests start on a `.ts` file; under coverage, `src/server.ts --version` took 1.0 s (1.3 s of CPU)
 * through `--import tsx`, and 0.7 s (0.8 s of CPU) through this. `npm test` runs its test files as
 * bundles instead (`test/support/bundle-tests.ts`), and the servers, command-line runs and cluster
 * instances the tests start as a bundle of the server (`test/support/server-entry.ts`), which
 * starts in 0.23 s.
 *
 * - `node scripts/ts-loader.mjs build` compiles every `.ts` under src/, test/, test-container/
 *   and scripts/ in one pass (`npm test` runs it first).
 * - A file missing from the cache, or changed since it was compiled (its text's hash names its
 *   entry), is compiled when loaded, so a stale cache is never run.
 * - Plain JavaScript, and only esbuild (a dev dependency): the loader must run before any
 *   TypeScript can.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const CACHE = join(ROOT, 'node_modules', '.cache', 'ts-loader');
/** The folders whose `.ts` files `build` compiles. */
const FOLDERS = ['src', 'test', 'test-container', 'scripts'];

/**
 * esbuild's options for one file: what the TypeScript of tsconfig.json needs, nothing more. The
 * source map names the file beside it (its URL is the file's own) and leaves its text out: every
 * process under coverage writes its maps into its report, and c8 reads the sources from disk.
 */
function options(path) {
  return {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    sourcefile: path.slice(path.lastIndexOf('/') + 1),
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
  };
}

/**
 * Where the compiled text of `path` is kept: by its absolute path (a copy of the project, as
 * `npm run mutate` makes, its node_modules linked to this one's, never shares an entry) and the
 * hash of its text (an edit, a mutant and its undoing, however close in time, are each compiled).
 */
const cached = (path, source) => join(CACHE, `${path}.${createHash('sha1').update(source).digest('hex').slice(0, 16)}.js`);

/** Writes `text` to `path` whole: another process may be reading the cache (a rename is atomic). */
function writeWhole(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

let esbuild;
/** The compiled text of `path`: from the cache, else compiled now (and kept). */
async function compiled(path) {
  const source = readFileSync(path, 'utf8');
  const out = cached(path, source);
  try {
    return readFileSync(out, 'utf8');
  } catch {
    // Not compiled yet.
  }
  esbuild ??= await import('esbuild');
  const { code } = esbuild.transformSync(source, options(path));
  writeWhole(out, code);
  return code;
}

/** The load hook: a `.ts` file is an ES module whose text is its compiled JavaScript. */
export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('.ts')) {
    return { format: 'module', source: await compiled(fileURLToPath(url)), shortCircuit: true };
  }
  return next(url, context);
}

/** Compiles every `.ts` file of `FOLDERS` into the cache, all at once. */
async function build() {
  const started = Date.now();
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(path);
      else if (entry.isFile() && path.endsWith('.ts') && !path.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const folder of FOLDERS) walk(join(ROOT, folder));
  const esbuild = await import('esbuild');
  // Entries of older texts go: the cache holds what the files are now.
  rmSync(CACHE, { recursive: true, force: true });
  await Promise.all(
    files.map(async (path) => {
      const source = readFileSync(path, 'utf8');
      const { code } = await esbuild.transform(source, options(path));
      writeWhole(cached(path, source), code);
    }),
  );
  process.stdout.write(`compiled ${files.length} TypeScript files in ${Date.now() - started} ms\n`);
}

if (isMainThread) {
  if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'build') await build();
  else {
    // Stack traces and coverage point into the TypeScript, through the inline source maps.
    process.setSourceMapsEnabled(true);
    register(import.meta.url, pathToFileURL(`${ROOT}/`));
  }
}
