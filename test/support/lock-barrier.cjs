/**
 * A preload (`--require`) for the server processes of lock-race.test.ts: it stops each process at
 * its first file operation on `urls.lock…` until all LOCK_BARRIER_N processes have got there, so
 * that they race for the lock within a millisecond instead of spread over their start-up times
 * (which would let the first one win alone, whatever the lock code does).
 *
 * CommonJS, preloaded with `--require`: a preload given to `--import` makes node load the main
 * script, the server's CommonJS bundle, through its ES module loader, which first scans the whole
 * bundle for its exports. That took 0.11 s of CPU a start (0.23 s against 0.12 s for a server
 * that stops at a held lock), and the file starts 96.
 */
const { syncBuiltinESMExports } = require('node:module');
const { basename, join } = require('node:path');

const dir = process.env['LOCK_BARRIER_DIR'];
const count = Number(process.env['LOCK_BARRIER_N']);

if (dir !== undefined) {
  // The CommonJS object is the one whose changes syncBuiltinESMExports copies to `node:fs` imports.
  /** @type {typeof import('node:fs')} */
  const fs = require('node:fs');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let arrived = false;
  const arrive = () => {
    if (arrived) return;
    arrived = true;
    fs.writeFileSync(join(dir, String(process.pid)), '');
    // A process that died before arriving must not hold the others for ever.
    const deadline = Date.now() + 20_000;
    while (fs.readdirSync(dir).length < count && Date.now() < deadline) Atomics.wait(pause, 0, 0, 1);
  };
  /** @type {Record<string, (...args: unknown[]) => unknown>} */
  const patched = /** @type {any} */ (fs);
  for (const name of ['openSync', 'linkSync', 'renameSync', 'rmSync', 'unlinkSync']) {
    const original = /** @type {(...args: unknown[]) => unknown} */ (patched[name]);
    patched[name] = function (...args) {
      if (basename(String(args[0])).startsWith('urls.lock')) arrive();
      return original.apply(this, args);
    };
  }
  syncBuiltinESMExports();
}
