/**
 * What a test runs to start the server as a child process: `src/server.ts` bundled into one file,
 * as `npm run build` bundles `dist/server.js` (scripts/bundle-server.mjs), from the sources as they
 * are now; and the same for the cluster target's instances (`cluster-instance.ts`). Through the
 * loader each start read and loaded about 150 modules: 0.77 s for `--version`, where the bundle
 * takes 0.23 s and a bare `node -e 1` 0.21 s; the suite starts hundreds of servers and
 * command-line runs.
 *
 * - The bundle is named by a hash of every source file and of the bundling script, so an edit makes
 *   a new one and a stale one is never run (a test file run alone after an edit included).
 * - It is built once, by whichever process first needs it, under a lock: the tests run several
 *   files at a time, and none may start a half-written bundle. Older bundles are removed then.
 * - Its source map names the files under `src/`, so coverage counts the lines they hold, as it
 *   does through the loader. The map is written beside the bundle, which does not point to it: node
 *   would read it at every start to put it in the process's coverage report, and `coverage-trim.ts`
 *   gives it to c8 once instead.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the bundles are kept (git-ignored). */
const FOLDER = join(ROOT, 'test-output');
const SCRIPT = join(ROOT, 'scripts', 'bundle-server.mjs');

/** Every `.ts` file under `dir`, sorted, so the hash does not depend on the order of a listing. */
function sources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) files.push(join(entry.parentPath ?? entry.path, entry.name));
  }
  return files.sort();
}

/** The hash of the sources a bundle of `entry` is made of. */
function sourcesHash(entry: string): string {
  const hash = createHash('sha1');
  for (const file of [...sources(join(ROOT, 'src')), SCRIPT, join(ROOT, entry)]) hash.update(file).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The bundles this process has found or built, by entry. */
const built = new Map<string, string>();

/** Sleeps `ms` without giving the loop a turn: the caller is about to start a process anyway. */
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A lock older than this was left by a process that died while bundling. */
const STALE_MS = 60_000;

/** The path of the server bundled from the current sources. */
export const serverBundle = (): string => bundled('src/server.ts');

/** The store's clocks of the crash tests' server (`server-fast-clocks.ts`): a visit flush every 100 ms, a compaction past 256 KiB. */
export const FAST_CLOCKS = { visitFlushMs: 100, compactMinBytes: 256 * 1024 } as const;

/** The server on `FAST_CLOCKS`: its bundle, and the environment that gives it the clocks. */
export function fastClocksServer(): { entry: string; env: Record<string, string> } {
  return {
    entry: bundled('test/support/server-fast-clocks.ts'),
    env: { FAST_VISIT_FLUSH_MS: String(FAST_CLOCKS.visitFlushMs), FAST_COMPACT_MIN_BYTES: String(FAST_CLOCKS.compactMinBytes) },
  };
}

/**
 * The path of `entry` (a path from the project root that imports only Node's modules, the
 * packages, and `src/`) bundled from the current sources, as CommonJS or (`mjs`) an ES module;
 * built when there is none yet. The builder holds `<bundle>.lock` from before it writes until it
 * has written, and the bundle is written where it is run (its source map names `../src/…` from
 * there): a bundle is whole once it exists and no lock does.
 */
export function bundled(entry: string, format: 'cjs' | 'mjs' = 'cjs'): string {
  const key = `${entry}.${format}`;
  const known = built.get(key);
  if (known !== undefined) return known;
  const base = entry.slice(entry.lastIndexOf('/') + 1).replace(/\.ts$/, '');
  const name = `${base}-${sourcesHash(entry)}.${format}`;
  const path = join(FOLDER, name);
  const lock = `${path}.lock`;
  mkdirSync(FOLDER, { recursive: true });
  for (;;) {
    if (existsSync(path) && !existsSync(lock)) break;
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch {
      if (Date.now() - statMs(lock) > STALE_MS) rmSync(lock, { force: true });
      else sleep(50);
      continue;
    }
    try {
      // Another process may have built it between the look above and taking the lock.
      if (existsSync(path)) break;
      for (const old of readdirSync(FOLDER)) {
        if (olderBundle(base, name, old)) rmSync(join(FOLDER, old), { force: true });
      }
      const run = spawnSync(process.execPath, [SCRIPT, path, entry, '--map-apart'], { cwd: ROOT, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`bundling the server failed: ${run.stderr}`);
    } finally {
      closeSync(fd);
      rmSync(lock, { force: true });
    }
  }
  built.set(key, path);
  return path;
}

/**
 * Whether `file` of the bundles' folder is an older bundle of the entry named `base` (or its map
 * or lock), now that its bundle is `current`: the entry's name, a hash, then the format. Not
 * another entry's whose name starts with this one's (`server-fast-clocks` beside `server`).
 */
export function olderBundle(base: string, current: string, file: string): boolean {
  return file.startsWith(`${base}-`) && /^[0-9a-f]{16}\./.test(file.slice(base.length + 1)) && !file.startsWith(current);
}

/** When `file` was last changed, ms; 0 when it is gone. */
function statMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
