#!/usr/bin/env node
// Storage figures (`npm run bench:store`): start-up replay time, RSS and log bytes per link for
// 100k and 1M links with 60-100 character URLs, and the time to compact 1M links.
// Each measurement runs in a fresh child process of the built server code (dist/), so RSS is that
// of a process holding exactly one store. A figure is printed, never judged: the exit code is
// non-zero only when a run fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => new URL(`../dist/lib/${p}`, import.meta.url).href;

async function child(mode, dir) {
  const { Store } = await import(dist('store/log/store.js'));
  const { createLogger } = await import(dist('log.js'));
  const log = createLogger('silent');
  const started = performance.now();
  const store = new Store({ dir, fsync: 'off', log, visitFlushMs: 3_600_000 });
  const openMs = performance.now() - started;
  let compactMs;
  if (mode === 'compact') {
    const t = performance.now();
    await store.compact();
    compactMs = performance.now() - t;
  }
  // Finish the URL index (built in the background after start-up) so RSS counts all of it.
  for (const _ of store.withUrl('https://example.com/')) break;
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 100));
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(JSON.stringify({ count: store.count, openMs, compactMs, rss, heapUsed }) + '\n');
  process.exit(0);
}

async function writeLog(dir, n) {
  const { encodeEntry } = await import(dist('store/log/format.js'));
  const { createCodeSource } = await import(dist('links/codes.js'));
  const code = createCodeSource();
  const seen = new Set();
  const parts = [];
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

async function main() {
  if (!existsSync(join(root, 'dist', 'lib', 'store', 'store.js'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  const mb = (b) => (b / 1e6).toFixed(0);
  console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`);
  console.log('| links | log size | bytes/link | start-up replay | RSS after start-up | compaction |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const n of [100_000, 1_000_000]) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
    try {
      await writeLog(dir, n);
      const bytes = statSync(join(dir, 'urls.log')).size;
      const open = [run('open', dir), run('open', dir)].sort((a, b) => a.openMs - b.openMs)[0];
      const compact = n === 1_000_000 ? `${(run('compact', dir).compactMs / 1000).toFixed(2)} s` : '—';
      console.log(
        `| ${n.toLocaleString('en')} | ${mb(bytes)} MB | ${(bytes / n).toFixed(0)} | ${(open.openMs / 1000).toFixed(2)} s | ${mb(open.rss)} MB | ${compact} |`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();
