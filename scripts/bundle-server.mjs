#!/usr/bin/env node
// The second step of `npm run build`: the server entry, src/server.ts and everything it imports,
// bundled into one file, dist/server.js, in place of the one module tsc wrote there. The library
// (dist/index.js and the rest of dist/) stays one module per file, as tsc wrote it.
//
// Why one file: on Node 20 the ES module loader reads each module through a `fs/promises`
// FileHandle, an EventEmitter. A few dozen of those before the first request leave property
// accesses in node:http's own hot code (EventEmitter.init, the ServerResponse and IncomingMessage
// constructors) megamorphic for the life of the process: measured under callgrind, a bare
// node:http server that first imports 30 empty modules, or opens 30 files with fs/promises, spends
// about 1,200 more instructions on every request (2 %) than one that does not. The unbundled
// server loads 103 modules; see docs/performance.md for the figures with and without.
//
// Usage: node scripts/bundle-server.mjs [outfile]   (default dist/server.js). The outfile must sit
// one folder below the package root, as dist/server.js does (src/package-root.ts).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/server.ts'],
  outfile: process.argv[2] ?? 'dist/server.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The PostgreSQL driver stays an optional peer dependency, loaded with import() when configured.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
