/**
 * `npm test`'s test files, each bundled with the test code it imports into one ES module
 * (esbuild; the packages stay imports), under a folder of `test-output/tests/` (one a pass) at the
 * file's own path with `.mjs` for `.ts`. The passes run these without the TypeScript loader, whose
 * hooks run on a thread of their own and answer each module by a message: through it a test file's
 * process took about 0.2 s more of CPU (0.95 s against 0.77 s for one of the HTTP tests), and the
 * suite starts some 330 of them.
 *
 * - `src/` is compiled apart, a module a file as the loader compiles it, and the bundles import it
 *   by URL: coverage then counts the lines of `src/` alone, as it did (bundled in, the test code
 *   would count too). Test code several files share goes into chunks (`chunks/`).
 * - A module's `import.meta.url` stays its own file's URL (a plugin writes it as a string in each
 *   module), so the paths a test finds from it (the project's root, its fixtures, itself) are
 *   those it finds through the loader.
 * - Source maps are linked: stack traces (`--enable-source-maps`) and coverage name the sources.
 * - The child processes a test starts on a `.ts` file still go through the loader.
 *
 * Used by the passes (`local-pass.ts`, `cluster-pass.ts`); the reporter names a bundle by its
 * test file (`reporter.mjs`). Made anew at each run, in under a second.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { groupFiles, groupModule } from './test-groups.ts';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const SRC = join(ROOT, 'src');
const OUT = 'test-output/tests';

/** esbuild's options for every module: what the TypeScript of tsconfig.json needs. */
const COMMON = {
  absWorkingDir: ROOT,
  outbase: '.',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
  logLevel: 'warning',
} as const;

/** Every `.ts` file under `dir`. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath ?? entry.path, entry.name)));

/**
 * Each `.ts` module read with its own URL for `import.meta.url`; with `relinked`, its imports of
 * `.ts` files as of the `.js` files they are compiled to.
 */
const ownUrl = (relinked: boolean): Plugin => ({
  name: 'own-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      let contents = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      if (relinked) contents = contents.replace(/((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2');
      return { contents, loader: 'ts' };
    });
  },
});

/** A test's imports of `src/`: the modules compiled apart, by their URL, so that coverage counts `src/` only. */
const srcApart = (outdir: string): Plugin => ({
  name: 'src-apart',
  setup(b) {
    b.onResolve({ filter: /^\.{1,2}\/.*\.ts$/ }, (args) => {
      const path = resolve(args.resolveDir, args.path);
      if (!path.startsWith(`${SRC}/`)) return undefined;
      return { path: pathToFileURL(join(ROOT, outdir, relative(ROOT, path))).href.replace(/\.ts$/, '.js'), external: true };
    });
  },
});

/** Bundles `files` (paths from the project root) into `test-output/tests/<folder>/`, made anew; their bundles' paths. */
async function bundleTests(folder: string, files: string[]): Promise<string[]> {
  const outdir = `${OUT}/${folder}`;
  rmSync(join(ROOT, outdir), { recursive: true, force: true });
  await Promise.all([
    build({ ...COMMON, entryPoints: sources(SRC), outdir, plugins: [ownUrl(true)] }),
    build({
      ...COMMON,
      entryPoints: files,
      outdir,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      packages: 'external',
      plugins: [srcApart(outdir), ownUrl(false)],
    }),
  ]);
  return files.map((file) => `${outdir}/${file.replace(/\.ts$/, '.mjs')}`);
}

/**
 * Runs `files` as bundles (made into `folder`) under node's test runner, `concurrency` processes at
 * a time, most of the files several to a process (`test-groups.ts`, by their last times
 * `timeOf`), with `npm test`'s reporter and `env` added to this process's; the runner's exit
 * status.
 */
export async function runBundled(
  folder: string,
  files: string[],
  concurrency: number,
  env: Record<string, string>,
  timeOf: (file: string) => number | undefined = () => undefined,
): Promise<number> {
  const bundles = await bundleTests(folder, files);
  const bundleOf = new Map(files.map((file, i) => [file, bundles[i]!]));
  const groups = `${OUT}/${folder}/groups`;
  mkdirSync(join(ROOT, groups), { recursive: true });
  // A file alone is a group of one too: its tests are then inside a suite named by it, so the
  // reporter times it as the file, even when its tests are declared in a support module (the
  // stores' and doors' conformance suites).
  const units = groupFiles(files, timeOf, (file) => readFileSync(join(ROOT, file), 'utf8')).map((group, i) => {
    const module = `${groups}/${i}.test.mjs`;
    const members = group.map((file) => bundleOf.get(file)!);
    const text = groupModule(members, (bundle) => `./${relative(groups, bundle)}`);
    writeFileSync(join(ROOT, module), text);
    return module;
  });
  // `--single-threaded` (V8's: no background compiling or garbage collection; the runner passes
  // it on to each file's process): the same work in less CPU, and the suite is bound by CPU. Four
  // groups of files, each run twice with it and twice without, under coverage: on average 4.72 s
  // of CPU with it against 5.33, 6.23 against 6.52, 5.76 against 6.00, 5.34 against 5.67.
  const run = spawnSync(
    process.execPath,
    ['--single-threaded', '--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=./test/support/reporter.mjs', ...units],
    { stdio: 'inherit', env: { ...process.env, ...env } },
  );
  return run.status ?? 1;
}
