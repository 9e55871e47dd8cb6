#!/usr/bin/env node
// The second step of `npm run build`: the server entry, src/server.ts and everything it imports,
// bundled into one CommonJS file, dist/server.js. The library stays one ES module per file, as tsc
// wrote it into dist/lib/. Each folder gets a package.json that says how Node loads the files below
// it (the package's own says "module"): "commonjs" in dist/, "module" again in dist/lib/.
//
// Why one file: on Node 20 the ES module loader reads each module through a `fs/promises`
// FileHandle, an EventEmitter. A few dozen of those before the first request leave property
// accesses in node:http's own hot code (EventEmitter.init, the ServerResponse and IncomingMessage
// constructors) megamorphic for the life of the process: measured under callgrind, a bare
// node:http server that first imports 30 empty modules, or opens 30 files with fs/promises, spends
// about 1,200 more instructions on every request (2 %) than one that does not. The unbundled
// server loads 103 modules; see docs/performance.md for the figures with and without.
//
// Why CommonJS: measured on single starts, a process whose entry is an ES module served the same
// requests about 1 % slower. Measured later over eight starts of each, the difference is not there
// (this bundle as an ES module against it as CommonJS: 1.000 ± 0.012; docs/performance.md, "The
// server starts as CommonJS"): the format is kept, and it could go back to an ES module.
//
// Usage: node scripts/bundle-server.mjs [outfile] [entry] [--map-apart]   (default dist/server.js,
// src/server.ts; the tests bundle their cluster instance and child processes too, the map apart:
// test/support/server-entry.ts).
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const outfile = process.argv[2] ?? 'dist/server.js';
// An outfile of `.mjs` is an ES module: the tests bundle child processes of theirs that wait at
// their top level, which CommonJS cannot.
const esm = outfile.endsWith('.mjs');
// The map written beside the bundle without the comment that points to it. Under coverage, node
// reads and parses the map a bundle points to as it loads it, and writes it into the process's
// report: a server started by the tests spent 211 ms of CPU from start to exit with the comment,
// 192 ms without (three sets of 20 starts each). The tests' coverage step hands c8 the map instead,
// once (test/support/coverage-trim.ts).
const mapApart = process.argv[4] === '--map-apart';

await build({
  absWorkingDir: ROOT,
  entryPoints: [process.argv[3] ?? 'src/server.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: esm ? 'esm' : 'cjs',
  target: 'node20',
  // package-root.ts finds the package from its own URL, which a CommonJS file knows as __filename.
  // The banner comes first in the file, so it repeats the "use strict" that follows it: the
  // sources are ES modules, strict throughout.
  ...(esm
    ? {}
    : {
        define: { 'import.meta.url': 'bundleUrl' },
        banner: { js: '"use strict";\nconst bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
      }),
  // The PostgreSQL driver stays an optional peer dependency, loaded with import() when configured.
  packages: 'external',
  // The map names the sources and leaves their text out (1.8 MB of it): c8 reads the sources from
  // src/ itself, and a coverage report that holds the map stays small.
  sourcemap: mapApart ? 'external' : true,
  sourcesContent: false,
  logLevel: 'warning',
});

mkdirSync(`${ROOT}dist/lib`, { recursive: true });
writeFileSync(`${ROOT}dist/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
writeFileSync(`${ROOT}dist/lib/package.json`, `${JSON.stringify({ type: 'module' })}\n`);
