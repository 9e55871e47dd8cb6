/**
 * Which test files share a process. node's runner starts a process for each file it is given, and
 * a start is dear beside most files' own work: node, the test runner, `src/` loaded module by
 * module, and the coverage written at exit took about half a second of CPU each (the 31 files of
 * test/api/: 31.3 s of CPU one a process, 17.1 s as 4 groups, with the same 178 tests passing).
 * So the passes give the runner groups: a module per group that imports its files one after the
 * other, each inside a suite named by its bundle (`groupModule`), so that the reporter still names
 * each test's file and times each file (reporter.mjs).
 *
 * A file has a process to itself (still inside its suite) when it is long (a group would gain
 * nothing, and the longest-first order of the pass would be lost in it), or when its text changes
 * what every later file in its process would see (`OWN_PROCESS`). The others are grouped with the
 * files of their folder, in the order given, until a group's files add up to `GROUP_S` by their
 * last times.
 */
import { after } from 'node:test';

/** A file that took this long (s) in the last run runs alone. */
export const ALONE_S = 12;
/** A group is closed once its files' last times add up to this (s). */
export const GROUP_S = 40;
/** A file without a time (new, or in a pass that keeps none) counts as this long (s). */
export const UNTIMED_S = 2;

/**
 * What in a test file's text touches its process's state beyond its own tests, so that a file run
 * after it in one process could see it: handlers on `process`, mocked timers or methods, a changed
 * environment, working directory or umask, globals set.
 */
export const OWN_PROCESS: readonly RegExp[] = [
  /\bprocess\.(on|once|prependListener|chdir|umask|exitCode)\b/,
  /\bmock\.(timers|method|property)\b/,
  /\bprocess\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=|\|\|=)|\bdelete\s+process\.env\b/,
  /\bglobalThis\.\w+\s*=[^=]/,
];

/**
 * `files` (in the order the pass wants them started) as the runner's processes, each the files it
 * runs one after the other, the longest first by their last times (`timeOf`); each file's text is
 * read by `textOf`.
 */
export function groupFiles(files: readonly string[], timeOf: (file: string) => number | undefined, textOf: (file: string) => string): string[][] {
  const seconds = (file: string) => timeOf(file) ?? UNTIMED_S;
  const groups: string[][] = [];
  /** The group of each folder still taking files, and its files' time so far. */
  const open = new Map<string, { group: string[]; seconds: number }>();
  for (const file of files) {
    if (seconds(file) >= ALONE_S || OWN_PROCESS.some((pattern) => pattern.test(textOf(file)))) {
      groups.push([file]);
      continue;
    }
    const folder = file.slice(0, file.lastIndexOf('/'));
    let entry = open.get(folder);
    if (entry === undefined) {
      entry = { group: [], seconds: 0 };
      open.set(folder, entry);
      groups.push(entry.group);
    }
    entry.group.push(file);
    entry.seconds += seconds(file);
    if (entry.seconds >= GROUP_S) open.delete(folder);
  }
  const time = (group: readonly string[]) => group.reduce((sum, file) => sum + seconds(file), 0);
  // A stable sort: groups of equal time keep the order the pass gave.
  return groups.sort((a, b) => time(b) - time(a));
}

/** Where a group's module keeps what is to run once all its files have (`afterTheFiles`). */
const GROUP_END = 'url-shortener.test.groupEnd';

/**
 * The text of a group's module: each bundle imported inside a suite named by its path (from the
 * project's root), one after the other, then what `afterTheFiles` was given. `from` is the path of
 * a bundle as the module imports it.
 */
export function groupModule(bundles: readonly string[], from: (bundle: string) => string): string {
  const suites = bundles.map((bundle) => `describe(${JSON.stringify(bundle)}, async () => {\n  await import(${JSON.stringify(from(bundle))});\n});\n`);
  return [
    "import { after, describe } from 'node:test';\n\n",
    `const ends = (globalThis[Symbol.for(${JSON.stringify(GROUP_END)})] = []);\n`,
    'after(async () => {\n  for (const end of ends.reverse()) await end();\n});\n\n',
    ...suites,
  ].join('');
}

/**
 * Runs `fn` once every test file of this process has run: in a pass, after the last file its
 * module imports (`groupModule`); in a file run by hand, as the file's `after`. For what a support
 * module keeps for all the files of a process (the cluster target's instances); called as the
 * module loads.
 */
export function afterTheFiles(fn: () => Promise<void>): void {
  const ends = (globalThis as Record<symbol, unknown>)[Symbol.for(GROUP_END)] as (() => Promise<void>)[] | undefined;
  if (ends) ends.push(fn);
  else after(fn);
}
