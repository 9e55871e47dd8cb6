/**
 * `npm test` runs most test files several to a process (test/support/test-groups.ts). Which files
 * share one, and that a group still reports each file as its own: its failures, a file that fails
 * as it loads, and each file's time for the next run's order.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALONE_S, GROUP_S, groupFiles, groupModule, OWN_PROCESS, UNTIMED_S } from '../support/test-groups.ts';
import { ROOT, tempDir } from '../support/helpers.ts';

const plain = () => "import { test } from 'node:test';\n";

test('a long file runs alone; the others share a process with files of their folder, the longest units first', () => {
  const times: Record<string, number> = { 'test/a/long.test.ts': ALONE_S, 'test/a/1.test.ts': 6, 'test/a/2.test.ts': 7, 'test/b/1.test.ts': 1 };
  const files = ['test/a/long.test.ts', 'test/a/1.test.ts', 'test/b/1.test.ts', 'test/a/2.test.ts', 'test/b/new.test.ts'];
  assert.deepEqual(
    groupFiles(files, (file) => times[file], plain),
    [['test/a/1.test.ts', 'test/a/2.test.ts'], ['test/a/long.test.ts'], ['test/b/1.test.ts', 'test/b/new.test.ts']],
  );
});

test("a group is closed once its files' times reach GROUP_S", () => {
  const each = GROUP_S / 4;
  assert.ok(each < ALONE_S);
  const files = Array.from({ length: 9 }, (_, i) => `test/a/${i}.test.ts`);
  const units = groupFiles(files, () => each, plain);
  assert.deepEqual(units, [files.slice(0, 4), files.slice(4, 8), [files[8]]]);
  // Without times, a file counts as UNTIMED_S.
  const untimed = groupFiles(files, () => undefined, plain);
  assert.equal(untimed.length, Math.ceil(files.length / Math.ceil(GROUP_S / UNTIMED_S)));
});

test("a file that changes its process's state for the files after it runs alone", () => {
  const touching = [
    "process.on('unhandledRejection', seen);",
    "process.once('exit', () => closeSync(fd));",
    "t.mock.timers.enable({ apis: ['setTimeout'] });",
    'mock.method(fs, "openSync");',
    "process.env.TZ = 'UTC';",
    "process.env['LOG_LEVEL'] ??= 'warn';",
    'delete process.env.DATABASE_URL;',
    'globalThis.fetch = fake;',
    'process.chdir(dir);',
  ];
  const harmless = [
    "const level = process.env['LOG_LEVEL'] ?? 'info';",
    "assert.equal(process.env.TZ, 'UTC');",
    "const env = { ...process.env, PORT: '0' };",
    'if (globalThis.fetch === undefined) return;',
  ];
  const touches = (text: string) => OWN_PROCESS.some((pattern) => pattern.test(text));
  for (const text of touching) assert.ok(touches(text), text);
  for (const text of harmless) assert.ok(!touches(text), text);
  const units = groupFiles(
    ['test/a/1.test.ts', 'test/a/2.test.ts', 'test/a/3.test.ts'],
    () => 1,
    (file) => (file.endsWith('2.test.ts') ? touching[0]! : ''),
  );
  assert.deepEqual(units, [['test/a/1.test.ts', 'test/a/3.test.ts'], ['test/a/2.test.ts']]);
});

test('a group reports each file as its own: its failures, a file that fails as it loads, and its time', (t) => {
  const dir = tempDir(t);
  const pass = join(dir, 'test-output/tests/p');
  mkdirSync(join(pass, 'test/x'), { recursive: true });
  mkdirSync(join(pass, 'groups'));
  writeFileSync(
    join(pass, 'test/x/good.test.mjs'),
    "import { test } from 'node:test';\ntest('adds', () => {});\ntest('waits', () => new Promise((r) => setTimeout(r, 30)));\n",
  );
  writeFileSync(join(pass, 'test/x/bad.test.mjs'), "import { test } from 'node:test';\ntest('breaks', () => { throw new Error('broken on purpose'); });\n");
  writeFileSync(join(pass, 'test/x/unloadable.test.mjs'), "console.error('no tool here');\nthrow new Error('cannot load');\n");
  const bundles = ['good', 'unloadable', 'bad'].map((name) => `test-output/tests/p/test/x/${name}.test.mjs`);
  writeFileSync(
    join(pass, 'groups/0.test.mjs'),
    groupModule(bundles, (bundle) => `../${bundle.slice('test-output/tests/p/'.length)}`),
  );
  const times = join(dir, 'times.json');
  // Not under coverage (the modules are the test's own: an empty NODE_V8_COVERAGE, since node
  // copies its own into a child's environment that has none), and a runner of its own, not a child of ours.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--test', `--test-reporter=${join(ROOT, 'test/support/reporter.mjs')}`, 'test-output/tests/p/groups/0.test.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...env, NODE_V8_COVERAGE: '', TEST_FILE_TIMES_OUT: times },
  });
  assert.equal(run.status, 1, run.stdout);
  assert.match(run.stdout, /Failed \(2\):\n✖ test\/x\/unloadable\.test\.ts: failed outside its tests\n✖ test\/x\/bad\.test\.ts: breaks\n/);
  assert.match(run.stdout, /test\/x\/unloadable\.test\.ts: failed outside its tests; its process's output:\nno tool here\n/);
  assert.match(run.stdout, /tests 3, suites 3, pass 2, fail 1/);
  const recorded = JSON.parse(readFileSync(times, 'utf8')) as Record<string, number>;
  assert.deepEqual(Object.keys(recorded).sort(), ['test/x/bad.test.ts', 'test/x/good.test.ts', 'test/x/unloadable.test.ts']);
});
