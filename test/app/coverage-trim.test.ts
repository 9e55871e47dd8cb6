/**
 * `npm test`'s coverage step (test/support/coverage-trim.ts): node's coverage files cut to this
 * project's scripts, each source map kept once, and the map of a bundle that does not point to it
 * (the tests' server bundles, server-entry.ts) added from beside the bundle, so that c8 still
 * counts the lines of `src/` the bundle was made of.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT, tempDir } from '../support/helpers.ts';
import { serverBundle } from '../support/server-entry.ts';
import { TS_IMPORT } from '../support/ts-import.ts';

const script = (url: string) => ({
  scriptId: '1',
  url,
  functions: [{ functionName: '', isBlockCoverage: true, ranges: [{ startOffset: 0, endOffset: 9, count: 1 }] }],
});

test("node's scripts are dropped, a map is kept once, and a bundle's map apart is added once", (t) => {
  // Under the project's root, as the bundles are: the trimmer keeps only the project's own files.
  const own = join(ROOT, 'test-output', `trim-test-${process.pid}`);
  mkdirSync(own, { recursive: true });
  t.after(() => rmSync(own, { recursive: true, force: true }));
  const apart = join(own, 'apart.cjs');
  const pointing = join(own, 'pointing.cjs');
  const bare = join(own, 'bare.cjs');
  const apartMap = { version: 3, sources: ['../../src/a.ts'], names: [], mappings: 'AAAA' };
  const pointingMap = { lineLengths: [9], data: { version: 3, sources: ['../../src/b.ts'], names: [], mappings: 'AAAA' } };
  writeFileSync(apart, 'void 0;\n');
  writeFileSync(`${apart}.map`, JSON.stringify(apartMap));
  writeFileSync(pointing, 'void 0;\n//# sourceMappingURL=pointing.cjs.map\n');
  writeFileSync(bare, 'void 0;\n');
  const [apartUrl, pointingUrl, bareUrl] = [apart, pointing, bare].map((path) => pathToFileURL(path).href) as [string, string, string];

  const dir = tempDir(t);
  // Two processes' files, as node writes them: the pointing bundle's map in node's cache, none for the other two.
  for (const n of [1, 2]) {
    const cov = { result: [script('node:http'), script(apartUrl), script(pointingUrl), script(bareUrl)], 'source-map-cache': { [pointingUrl]: pointingMap } };
    writeFileSync(join(dir, `coverage-${n}-1700000000000-0.json`), JSON.stringify(cov));
  }
  const run = spawnSync(process.execPath, [...TS_IMPORT, 'test/support/coverage-trim.ts', dir], {
    cwd: ROOT,
    input: '',
    encoding: 'utf8',
    env: { ...process.env, NODE_V8_COVERAGE: '' },
  });
  assert.equal(run.status, 0, run.stderr);

  const files = readdirSync(dir);
  assert.equal(files.length, 1, `one trimmed file, node's removed: ${files.join(', ')}`);
  assert.match(files[0]!, /^trimmed-\d+-1\.json$/);
  const trimmed = JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as { result: { url: string }[]; 'source-map-cache': Record<string, unknown> };
  assert.deepEqual(
    trimmed.result.map((s) => s.url),
    [apartUrl, pointingUrl, bareUrl, apartUrl, pointingUrl, bareUrl],
  );
  assert.deepEqual(trimmed['source-map-cache'], { [pointingUrl]: pointingMap, [apartUrl]: { data: apartMap } });
});

test('the server bundle the tests start does not point to its map: the map lies beside it and names the sources', () => {
  const bundle = serverBundle();
  assert.doesNotMatch(readFileSync(bundle, 'utf8'), /sourceMappingURL/);
  const map = JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] };
  assert.ok(map.sources.includes('../src/server.ts'), map.sources.slice(0, 5).join(', '));
});
