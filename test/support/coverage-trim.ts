/**
 * `npm test`'s coverage, trimmed while the tests run. Node writes a coverage file for each process
 * (about 380 a run, 470 MB: each holds node's own scripts, and each server's held the source map
 * of its bundle, 0.75 MB, until the bundles stopped pointing to their maps), and c8 read them all
 * only once the tests were done: 6.5 s at the end of a run, on one core, the other idle.
 *
 * This process (started by `test-run.ts` at the lowest priority, so that it takes the cores only
 * when the tests leave them idle) reads the files as processes write them and keeps of each what c8
 * could count: the scripts of this project's own files (not node's, not node_modules'), and each
 * source map once. A server bundle of the tests does not point to its map (server-entry.ts), so
 * node leaves it out; this adds it, once, from beside the bundle (`mapApart`). It writes what it
 * kept, several files' worth in one, and removes the files it read. c8 merges by script, whatever
 * file a script comes in and in whatever order, and still applies its include rules; so its report
 * is byte for byte the one it makes from node's files (checked on one run's 378 files, trimmed at
 * once and in five batches: the same lcov.info, in 3.6 to 4.5 s instead of 6.5; and on a server's
 * run with its bundle pointing to its map and not: the same lcov.info).
 *
 *   node coverage-trim.ts DIR      (stdin: closed once the tests are done; it then takes the last)
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProcessCov {
  result: { url: string }[];
  'source-map-cache'?: Record<string, unknown>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = process.argv[2] ?? '';
if (dir === '') throw new Error('usage: coverage-trim.ts DIR');
/** How often the directory is looked at while the tests run (ms). */
const EVERY_MS = 3000;
/** A file written this recently may still be growing; it waits for the next look (ms). */
const SETTLED_MS = 500;

const own = (url: string) => url.startsWith('file://') && fileURLToPath(url).startsWith(ROOT) && !url.includes('/node_modules/');
/** The source maps written so far, by script: each is written once. */
const mapped = new Set<string>();
/** The scripts with no map beside them (`mapApart`), looked for once. */
const unmapped = new Set<string>();
let written = 0;

/**
 * The map written beside a bundle that does not point to it (the tests' server bundles,
 * server-entry.ts), as node would have cached it; undefined when there is none. Without its line
 * lengths, c8 reads the bundle itself, which is still there.
 */
function mapApart(url: string): { data: unknown } | undefined {
  const path = `${fileURLToPath(url)}.map`;
  if (!existsSync(path)) return undefined;
  return { data: JSON.parse(readFileSync(path, 'utf8')) };
}

/** Trims every settled file node has written (every file, when `all`) into one, and removes them. */
function take(all: boolean): void {
  const now = Date.now();
  const result: ProcessCov['result'] = [];
  const maps: Record<string, unknown> = {};
  const taken: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^coverage-\d+-\d+-\d+\.json$/.test(name)) continue;
    const path = join(dir, name);
    if (!all && now - statSync(path).mtimeMs < SETTLED_MS) continue;
    let cov: ProcessCov;
    try {
      cov = JSON.parse(readFileSync(path, 'utf8')) as ProcessCov;
    } catch {
      // Still being written: a whole file parses. One that does not at the end (its process was
      // killed as it wrote) is left where it is, for c8 to skip as it skips any such file.
      continue;
    }
    for (const [url, map] of Object.entries(cov['source-map-cache'] ?? {})) {
      if (own(url) && !mapped.has(url)) {
        mapped.add(url);
        maps[url] = map;
      }
    }
    for (const script of cov.result) {
      if (!own(script.url)) continue;
      result.push(script);
      if (mapped.has(script.url) || unmapped.has(script.url)) continue;
      const map = mapApart(script.url);
      if (map === undefined) {
        unmapped.add(script.url);
      } else {
        mapped.add(script.url);
        maps[script.url] = map;
      }
    }
    taken.push(path);
  }
  if (taken.length === 0) return;
  // Written aside and renamed, then the files it holds removed: at no time is a script in neither.
  const out = join(dir, `trimmed-${process.pid}-${++written}.json`);
  writeFileSync(`${out}.partial`, JSON.stringify({ result, 'source-map-cache': maps }));
  renameSync(`${out}.partial`, out);
  for (const path of taken) rmSync(path);
}

const timer = setInterval(() => take(false), EVERY_MS);
process.stdin.resume();
process.stdin.once('end', () => {
  clearInterval(timer);
  take(true);
});
