#!/usr/bin/env node
// Storage figures (`npm run bench:store`): for 100k, 1M and 10M links with 60-100 character URLs,
// the log's bytes per link, start-up by a full replay and from the start-up checkpoint (and RSS
// after each), the checkpoint's size and the time to write it, the time to compact (which writes
// the checkpoint of the new log) with the event loop's longest stall meanwhile (a 1 ms timer, as
// redirects would wait), and a start-up from the checkpoint the compaction wrote.
// `node scripts/bench-store.mjs --sizes 100000,1000000` runs fewer (10M needs about 4 GB free and
// a few minutes). Each measurement runs in a fresh child process of the built server code (dist/),
// so RSS is that of a process holding exactly one store. Then the same start as a user makes it,
// from outside: `node dist/server.js` on the data dir, timed from its spawn until `/healthz`
// answers, with its RSS then, beside the machine's floor for it: a fresh process that allocates and
// fills as much memory (on a virtual machine first touching fresh memory is slow, and a start can
// be no faster than touching what it ends with). A figure is printed, never judged: the exit code
// is non-zero only when a run fails.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => new URL(`../dist/lib/${p}`, import.meta.url).href;

/**
 * One measurement in this process: `replay` (the checkpoint removed first, and none written at
 * start-up), `checkpoint` (a start that writes one at close), `from-checkpoint` (a start from it),
 * `compact` (a compaction, which writes a checkpoint, with the loop's longest stall meanwhile).
 */
async function child(mode, dir) {
  const { LogEngine } = await import(dist('store/log/log-engine.js'));
  const { createLogger } = await import(dist('log.js'));
  const lines = [];
  const log = createLogger('info', { write: (line) => lines.push(JSON.parse(line)) });
  const checkpoint = join(dir, 'urls.log.checkpoint');
  if (mode === 'replay') rmSync(checkpoint, { force: true });
  const started = performance.now();
  const store = new LogEngine({
    dir,
    fsync: 'off',
    log,
    visitFlushMs: 3_600_000,
    compactMinBytes: Number.MAX_SAFE_INTEGER,
    checkpointMinBytes: mode === 'checkpoint' || mode === 'compact' ? 1 : Number.MAX_SAFE_INTEGER,
  });
  const openMs = performance.now() - started;
  const fromCheckpoint = lines.some((l) => l.msg === 'log replayed from its start-up checkpoint');
  let compactMs;
  let stallMs;
  let written;
  if (mode === 'compact') {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    // A timer that keeps asking for a turn: the longest gap between its calls is the longest
    // a redirect arriving meanwhile would have waited.
    let ticking = true;
    let last = performance.now();
    let longest = 0;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (ticking) setTimeout(tick, 1);
    };
    tick();
    const t = performance.now();
    await store.compact();
    compactMs = performance.now() - t;
    ticking = false;
    histogram.disable();
    stallMs = Math.max(longest, histogram.max / 1e6);
    written = lines.find((l) => l.msg === 'start-up checkpoint written' && l.by === 'compaction');
    if (!written) throw new Error('the compaction wrote no checkpoint');
  }
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 100));
  const { rss, heapUsed } = process.memoryUsage();
  if (mode === 'checkpoint') {
    await store.close();
    written = lines.find((l) => l.msg === 'start-up checkpoint written');
    if (!written) throw new Error('no checkpoint written');
  }
  process.stdout.write(
    `${JSON.stringify({
      count: store.count,
      openMs,
      fromCheckpoint,
      compactMs,
      stallMs,
      rss,
      heapUsed,
      checkpointMs: written?.ms,
      checkpointBytes: written?.bytes,
    })}\n`,
  );
  process.exit(0);
}

async function writeLog(dir, n) {
  const { encodeEntry, HEADER } = await import(dist('store/log/format.js'));
  const { createCodeSource } = await import(dist('links/codes.js'));
  const code = createCodeSource();
  const seen = new Set();
  const parts = [HEADER];
  const path = 'abcdefghijklmnopqrstuvwxyz0123456789-/';
  for (let i = 0; i < n; i++) {
    let c;
    do c = code(n > 500_000 ? 7 : 6);
    while (seen.has(c));
    seen.add(c);
    const target = 60 + (i % 41); // 60..100 characters
    let url = `https://example.com/${i}/`;
    while (url.length < target) url += path[(i * 7 + url.length) % path.length];
    parts.push(encodeEntry({ op: 'C', code: c, url, createdAt: 1_790_000_000 + i, retentionDays: 0, visits: i % 50 }));
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(parts));
}

function run(mode, dir) {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', mode, dir], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`child ${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** A port free now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The VmRSS of process `pid`, bytes. */
const rssOf = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

/** `node dist/server.js` on `dir`: ms from its spawn until `/healthz` answers 200, and its RSS then. */
async function serverStart(dir) {
  const port = await freePort();
  const started = performance.now();
  const server = spawn(process.execPath, [join(root, 'dist', 'server.js')], {
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    for (;;) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}) before it answered`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { ms: performance.now() - started, rss: rssOf(server.pid) };
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
}

/** The floor of a start that ends with `bytes` of RSS: ms from spawning a process that allocates and fills them until it exits. */
function floorMs(bytes) {
  const started = performance.now();
  const r = spawnSync(process.execPath, ['-e', `Buffer.allocUnsafeSlow(${Math.round(bytes)}).fill(1)`]);
  if (r.status !== 0) throw new Error(`the floor's process failed: ${r.stderr}`);
  return performance.now() - started;
}

async function main() {
  // Built every time: the figures are of this code, never of a dist/ left from an older build.
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  const at = process.argv.indexOf('--sizes');
  const sizes = at === -1 ? [100_000, 1_000_000, 10_000_000] : process.argv[at + 1].split(',').map(Number);
  const mb = (b) => (b / 1e6).toFixed(0);
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  const perLink = (bytes, n) => `${mb(bytes)} MB (${(bytes / n).toFixed(0)} B/link)`;
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`);
  console.log(
    '| links | log size | bytes/link | full replay | RSS after it | checkpoint (write) | start-up from checkpoint | RSS after it | compaction, with its checkpoint | longest stall | start-up after it |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const outside = [];
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
    try {
      await writeLog(dir, n);
      const bytes = statSync(join(dir, 'urls.log')).size;
      const best = (mode) => [run(mode, dir), run(mode, dir)].sort((a, b) => a.openMs - b.openMs)[0];
      const replay = best('replay');
      const written = run('checkpoint', dir);
      const fast = best('from-checkpoint');
      if (!fast.fromCheckpoint) throw new Error('the start-up did not use the checkpoint');
      // As a user starts it from that checkpoint (one with its hash chains), best of two; its
      // floor, best of three (both vary run to run).
      const user = [await serverStart(dir), await serverStart(dir)].sort((a, b) => a.ms - b.ms)[0];
      const floor = Math.min(floorMs(user.rss), floorMs(user.rss), floorMs(user.rss));
      outside.push(`| ${n.toLocaleString('en')} | ${s(user.ms)} | ${perLink(user.rss, n)} | ${s(floor)} | ${(user.ms / floor).toFixed(2)} |`);
      // The compaction replaces the checkpoint with its own, which the next start uses.
      const compact = run('compact', dir);
      const after = best('from-checkpoint');
      if (!after.fromCheckpoint) throw new Error('the start-up after the compaction did not use its checkpoint');
      console.log(
        `| ${n.toLocaleString('en')} | ${mb(bytes)} MB | ${(bytes / n).toFixed(0)} | ${s(replay.openMs)} | ${perLink(replay.rss, n)} | ` +
          `${mb(written.checkpointBytes)} MB (${s(written.checkpointMs)}) | ${s(fast.openMs)} | ${perLink(fast.rss, n)} | ` +
          `${s(compact.compactMs)} (${mb(compact.checkpointBytes)} MB) | ${compact.stallMs.toFixed(0)} ms | ${s(after.openMs)} |`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(
    '\n| links | `node dist/server.js` from the checkpoint, spawn to `/healthz` | its RSS then | floor: a process filling that RSS | start ÷ floor |',
  );
  console.log('|---:|---:|---:|---:|---:|');
  for (const line of outside) console.log(line);
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();
