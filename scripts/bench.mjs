#!/usr/bin/env node
// `npm run bench`: the service against its ceiling. In one run it starts the real server
// (`node dist/server.js`) and two bare node:http servers that answer a fixed 302 and do nothing
// else: the *reference*, which sends exactly the headers our redirect sends (the CORS and security
// headers every response carries (docs/security.md), then Location, Cache-Control and Content-Length, as
// one precomputed raw-header array; checked byte for byte against a real redirect before any run),
// and the *bare* 302 (Location and Content-Length only). It drives them with a load generator (wrk
// when installed, else autocannon), server and load generator pinned to different cores when
// `taskset` exists, and prints requests/s, p50 and p99.
//
// The redirect comparison: in each round the bare 302, the reference and the redirect run once
// each, in an order that rotates from round to round, with a pause between runs. On a shared core
// a server's garbage collection after its run otherwise lands in the next run (up to 20 % of it),
// and a fixed order would hand that tax to the same server every round. Each round gives the
// redirect's ratio to the reference and to the bare 302; the medians of those ratios are the
// result. Every round runs on processes started for it: one start of a process differs from the
// next by up to 2–3 % for its whole life, so a median over rounds of one start would be that
// start's luck. Then the same ratio side by side, also on new processes each round: the reference
// and the redirect loaded at the same time, both servers on the server's core and a wrk each on
// the other, so that whatever the machine does meanwhile slows both alike (rotated runs cannot
// cancel that: consecutive runs of one server on this kind of machine differ by up to 25 %). Each server gets half the core; the ratio of their
// requests/s is the ratio of their CPU cost per request. The other scenarios (metadata, creates,
// listing) run fewer rounds, also rotated, each ratio taken to the median of the bare 302's runs. Last, the event-loop stall while listing.
//
// It judges nothing: the exit code is non-zero only when a run fails (errors or unexpected
// statuses) or the reference does not send our redirect's headers, never because a figure is low.
//
// BENCH_SECONDS (default 5) per run; BENCH_ROUNDS (default 5) of the redirect comparison;
// BENCH_SIDE_ROUNDS (default 5; 0 to skip; needs taskset and wrk) of it side by side;
// BENCH_OTHER_ROUNDS (default 2) of the other scenarios, 0 to skip them; BENCH_PAUSE_MS (default
// 1000) between runs; BENCH_CONNECTIONS (default 50); BENCH_LOADGEN=autocannon to use autocannon
// even when wrk is installed; BENCH_LIST_ONLY=1 for the event-loop stall while listing alone;
// BENCH_HTTP_ONLY=1 for the redirect comparison and the other HTTP scenarios alone;
// BENCH_DOMAINS_ONLY=1 for the redirect with three domains configured against one, side by side,
// and with three while a scanner asks for BENCH_SCAN_PATHS (10,000) random paths a round to one of
// them (SCAN_PHP=0: none ending in `.php`); BENCH_DOMAIN_PAIRS=i,j for some of its pairs only;
// BENCH_WEBHOOKS_ONLY=1 for the redirect with a link.clicked subscription against one without, side by
// side, then deliveries at BENCH_WEBHOOK_RATE (2,000) clicks a second for BENCH_WEBHOOK_SECONDS (10);
// BENCH_RULES_ONLY=1 for a plain link against one with five redirect rules, side by side, and with
// BENCH_BASE_SERVER=<another build's dist/server.js> this build's plain redirect against that one's;
// BENCH_TRANSFER_ONLY=1 for the import and export figures alone (last in a full run): import of
// 100k rows (rows/s, FSYNC=always) and export of 1M links (MB/s), each with the server's peak RSS
// (the kernel's high-water mark, reset just before the measured operation); then an import of
// 10 MiB of invalid rows while another client follows a link at a fixed rate: the import's time
// and the redirect's p99 meanwhile (BENCH_IMPORT_STALL_ONLY=1 for that alone).
//
// PostgreSQL (last in a full run, when PostgreSQL is installed; BENCH_PG_ONLY=1 for it alone): a
// throwaway server (scripts/pg-test-server.sh), then counted redirects/s and durable creates/s of
// the service with WORKERS=1 and WORKERS=2 against the same with `scripts/pg-ceiling.mjs`, which
// does only the statements (docs/scale-out.md), and against the log store's figures of the same
// run. BENCH_PG_ROUNDS (default 3) rounds, rotated; DB_POOL_SIZE is passed through to both. Nothing
// is pinned here: the database needs the cores too.
//
// Visit analytics (the very last, about 7 minutes; BENCH_ANALYTICS_ONLY=1 for it alone,
// BENCH_ANALYTICS=0 to leave it out): the goals of visit analytics, in scripts/bench-analytics.mjs, whose
// top comment lists its own knobs (BENCH_ANALYTICS_ROUNDS, BENCH_ANALYTICS_PARTS, BENCH_CPU_PROF).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runWrkAsync as runWrkOn, runWrkSync } from './wrk.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OTHER_ROUNDS = Number(process.env.BENCH_OTHER_ROUNDS ?? 2);
const SIDE_ROUNDS = Number(process.env.BENCH_SIDE_ROUNDS ?? 5);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const API_KEY = 'bench-key';
// Where every 302 of the run points: the baselines answer with the redirect's own Location.
const TARGET = 'https://example.com/bench/redirect/target';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const PINNED = has('taskset') && cpus().length >= 2;
const WRK = has('wrk') && process.env.BENCH_LOADGEN !== 'autocannon';
const [SERVER_CPU, LOAD_CPU] = ['0', '1'];

/** `cmd args` on one core when pinning is possible. */
function pin(cpu, cmd, args) {
  return PINNED ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

const children = new Set();
const dirs = new Set();
function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);

/** Starts a process and resolves with its port once a stdout line makes `portOf` return one. */
function startProcess(cmd, args, env, portOf, { pinned = true } = {}) {
  const [bin, argv] = pinned ? pin(SERVER_CPU, cmd, args) : [cmd, args];
  const child = spawn(bin, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const port = portOf(line);
        if (port) {
          child.stdout.resume();
          resolve({
            port,
            pid: child.pid,
            stop: () =>
              new Promise((done) => {
                child.removeAllListeners('exit');
                child.once('exit', done);
                child.kill('SIGTERM');
                children.delete(child);
              }),
          });
        }
      }
    });
  });
}

// The ceilings: bare node:http servers answering a fixed 302 and nothing else. With HEADERS set
// (the reference) it sends exactly the headers of our redirect, from one array built at start-up,
// as the fast path does: what node:http costs for those alone, with no routing, lookup or counting.
// Without (the bare 302), only Location and Content-Length.
const BASELINE = `
const http = require('node:http');
const extra = JSON.parse(process.env.HEADERS || '[]');
const location = process.env.LOCATION;
const headers = extra.length
  ? [...extra, 'Location', location, 'Cache-Control', 'private, no-store', 'Content-Length', '0']
  : ['Location', location, 'Content-Length', '0'];
const server = http.createServer((req, res) => {
  res.writeHead(302, headers);
  res.end();
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

async function startBaseline(withHeaders) {
  const { baseHeaders, flatten } = await import(new URL('../dist/lib/http/headers.js', import.meta.url).href);
  const env = { HEADERS: withHeaders ? JSON.stringify(flatten(baseHeaders({ https: false }))) : '[]', LOCATION: TARGET };
  return startProcess(process.execPath, ['-e', BASELINE], env, (line) => Number(/^port (\d+)$/.exec(line)?.[1]) || undefined);
}

/** The head of one `GET path` response, as sent, without its Date line (it changes every second). */
function rawHead(port, path) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    socket.on('data', (chunk) => {
      text += chunk;
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.destroy();
      resolve(text.slice(0, end + 4).replace(/^Date: .*\r\n/m, ''));
    });
    socket.on('error', reject);
  });
}

/** The real server on a fresh (or given) data dir; `env` adds settings. */
function startServer({ fsync = 'off', dir, env = {}, entry = 'dist/server.js' } = {}) {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'bench-'));
  dirs.add(dataDir);
  return startProcess(
    process.execPath,
    [entry],
    { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, FSYNC: fsync, LOG_LEVEL: 'info', API_KEYS: API_KEY, API_TOKEN: '', ...env },
    (line) => {
      try {
        const entry = JSON.parse(line);
        return entry.msg === 'listening' ? Number(new URL(entry.url).port) : undefined;
      } catch {
        return undefined;
      }
    },
  );
}

function call(port, method, path, { headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function shorten(port, url) {
  const r = await call(port, 'POST', '/api/shorten', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  if (r.status !== 201) throw new Error(`shorten: ${r.status} ${r.body}`);
  return r.body.slice(r.body.lastIndexOf('/') + 1);
}

/** A data dir whose log already holds `n` links (written directly: seeding over HTTP is slow). */
async function seededDir(n) {
  const { encodeEntry } = await import(new URL('../dist/lib/store/log/format.js', import.meta.url).href);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  dirs.add(dir);
  const lines = [];
  for (let i = 0; i < n; i++) {
    const code = `b${i.toString(36).padStart(5, '0')}`;
    lines.push(
      encodeEntry({ op: 'C', code, url: `https://example.com/bench/${i}/${'x'.repeat(40)}`, createdAt: 1_790_000_000 + i, retentionDays: 0, visits: i % 100 }),
    );
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
  return dir;
}

// ---- load generators ---------------------------------------------------------------------------

/** The command line of one wrk run. */
function wrkCommand(port, scenario, seconds) {
  const pinLoad = scenario.pinned === false ? (_cpu, cmd, args) => [cmd, args] : pin;
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  dirs.add(dir);
  const lua = join(dir, 'req.lua');
  const headers = Object.entries(scenario.headers ?? {})
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  writeFileSync(
    lua,
    `wrk.method = ${JSON.stringify(scenario.method ?? 'GET')}\n${scenario.body ? `wrk.body = ${JSON.stringify(scenario.body)}\n` : ''}${headers}\n`,
  );
  return pinLoad(LOAD_CPU, 'wrk', [
    '-t1',
    `-c${scenario.connections ?? CONNECTIONS}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    lua,
    `http://127.0.0.1:${port}${scenario.path}`,
  ]);
}

function runWrk(port, scenario, seconds = SECONDS) {
  return runWrkSync(wrkCommand(port, scenario, seconds));
}

/** `runWrk` without blocking: several runs at once. */
function runWrkAsync(port, scenario, seconds = SECONDS) {
  return runWrkOn(wrkCommand(port, scenario, seconds), children);
}

function runAutocannon(port, scenario, seconds = SECONDS) {
  const args = [
    join(ROOT, 'node_modules', 'autocannon', 'autocannon.js'),
    '-j',
    '-c',
    String(scenario.connections ?? CONNECTIONS),
    '-t',
    '10',
    '-d',
    String(seconds),
    '-m',
    scenario.method ?? 'GET',
  ];
  for (const [k, v] of Object.entries(scenario.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (scenario.body) args.push('-b', scenario.body);
  args.push(`http://127.0.0.1:${port}${scenario.path}`);
  const [bin, argv] = scenario.pinned === false ? [process.execPath, args] : pin(LOAD_CPU, process.execPath, args);
  const r = spawnSync(bin, argv, { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`autocannon failed: ${r.stderr}`);
  const j = JSON.parse(r.stdout);
  const expected = scenario.expect ?? 200;
  // autocannon counts 3xx as non-2xx: only the scenario's own status is a success.
  const ok = expected >= 300 && expected < 400 ? j['3xx'] : j['2xx'];
  return { rps: j.requests.average, p50: j.latency.p50, p99: j.latency.p99, failures: j.errors + j.timeouts + (j.requests.total - ok) };
}

const load = WRK ? runWrk : runAutocannon;

// ---- the event loop while listing ----------------------------------------------------------------

// The reader of the listings: another process, so that it reads while the server writes. Such a
// client is the worst case found: the kernel takes each write at once, and a server that only
// waits for `drain` would never let its event loop run (a reader inside the server's own process
// cannot read during a stall, which hides it). Each line on stdin, `K PATH`, fetches PATH K times
// at once and answers one JSON line; bodies are counted, not kept.
const READER = `
const http = require('node:http');
const [port, key] = process.argv.slice(1);
const get = (path) => new Promise((resolve, reject) => {
  const req = http.request({ host: '127.0.0.1', port, path, headers: { 'x-api-key': key }, agent: false }, (res) => {
    let bytes = 0;
    res.on('data', (c) => (bytes += c.length));
    res.on('end', () => resolve({ status: res.statusCode, bytes }));
  });
  req.on('error', reject);
  req.end();
});
require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
  const [k, path] = line.split(' ');
  const answers = await Promise.all(Array.from({ length: Number(k) }, () => get(path)));
  process.stdout.write(JSON.stringify(answers) + '\\n');
});
`;

/**
 * The longest the event loop stalls while 100k links are listed, in-process (dist build), to
 * `concurrency` readers at once in another process.
 */
async function listingStall(n, concurrencies) {
  const { createShortener } = await import(new URL('../dist/lib/app.js', import.meta.url).href);
  const { createServer } = await import('node:http');
  const { createInterface } = await import('node:readline');
  const dir = await seededDir(n);
  const shortener = createShortener({ dataDir: dir, fsync: 'off', apiKeys: [API_KEY], logLevel: 'silent', baseUrl: 'http://127.0.0.1' });
  const server = createServer(shortener.handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  // Started before measuring: spawning a process takes the loop for milliseconds by itself.
  const [bin, argv] = pin(LOAD_CPU, process.execPath, ['-e', READER, String(port), API_KEY]);
  const reader = spawn(bin, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(reader);
  const waiting = [];
  createInterface({ input: reader.stdout }).on('line', (line) => waiting.shift()(JSON.parse(line)));
  const fetchAll = (k) =>
    new Promise((resolve) => {
      waiting.push(resolve);
      reader.stdin.write(`${k} /api/urls\n`);
    });
  const results = [];
  for (const k of concurrencies) {
    await fetchAll(k); // warm-up
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    const started = performance.now();
    let last;
    for (let i = 0; i < 3; i++) last = await fetchAll(k);
    const ms = (performance.now() - started) / 3;
    histogram.disable();
    if (last.some((r) => r.status !== 200)) throw new Error(`listing answered ${last.map((r) => r.status)}`);
    results.push({ concurrency: k, maxStallMs: histogram.max / 1e6, ms, bytes: last[0].bytes });
  }
  reader.kill();
  children.delete(reader);
  server.close();
  await shortener.close();
  return results;
}

// ---- main -----------------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—');

/** The event loop while listing 100k links: one reader, then four at once. */
async function reportListing() {
  for (const stall of await listingStall(100_000, [1, 4])) {
    console.log(
      `list of 100k links (${fmt(stall.bytes / 1e6, 1)} MB of JSON), ${stall.concurrency} at once from another process: ` +
        `${fmt(stall.ms)} ms per round; longest event-loop stall ${fmt(stall.maxStallMs, 1)} ms`,
    );
  }
}

/** A process's resident set now and its peak (kB in /proc, here MB); `resetPeak` starts a new peak (Linux). */
function rss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** POSTs `rows` JSON Lines rows to /api/import as a stream, a thousand rows per write. */
function streamImport(port, rows) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/import', agent: false, headers: { 'content-type': 'application/x-ndjson', 'x-api-key': API_KEY } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    let i = 0;
    const more = () => {
      while (i < rows) {
        let piece = '';
        for (const end = Math.min(rows, i + 1000); i < end; i++) {
          piece += `{"short_code":"i${i.toString(36).padStart(6, '0')}","original_url":"https://example.com/import/${i}/${'x'.repeat(40)}","created_at":${1_790_000_000 + i},"visit_count":${i % 100}}\n`;
        }
        if (!req.write(piece)) return void req.once('drain', more);
      }
      req.end();
    };
    more();
  });
}

/** GETs `path` and counts its bytes without keeping them. */
function drain(port, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-api-key': API_KEY } }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Import of 100k rows and export of 1M links: throughput and the server's peak RSS. */
async function reportTransfer() {
  const rows = 100_000;
  const importer = await startServer({ fsync: 'always' });
  const before = rss(importer.pid);
  resetPeak(importer.pid);
  let t0 = performance.now();
  const imported = await streamImport(importer.port, rows);
  let ms = performance.now() - t0;
  const importPeak = rss(importer.pid).peak;
  await importer.stop();
  if (imported.status !== 200 || JSON.parse(imported.body).imported !== rows) throw new Error(`import: ${imported.status} ${imported.body.slice(0, 300)}`);
  console.log(
    `import of ${fmt(rows / 1000)}k rows (JSON Lines, FSYNC=always), streamed: ${fmt(ms)} ms, ${fmt(rows / (ms / 1000))} rows/s; ` +
      `server RSS ${fmt(before.now)} MB before, peak ${fmt(importPeak)} MB during (the links it now holds included)`,
  );

  const links = 1_000_000;
  const exporter = await startServer({ dir: await seededDir(links) });
  for (const format of ['jsonl', 'csv']) {
    const loaded = rss(exporter.pid);
    resetPeak(exporter.pid);
    t0 = performance.now();
    const exported = await drain(exporter.port, `/api/export?format=${format}`);
    ms = performance.now() - t0;
    if (exported.status !== 200) throw new Error(`export: ${exported.status}`);
    console.log(
      `export of ${fmt(links / 1e6)}M links (${format}, ${fmt(exported.bytes / 1e6)} MB): ${fmt(ms)} ms, ${fmt(exported.bytes / 1e6 / (ms / 1000), 1)} MB/s; ` +
        `server RSS ${fmt(loaded.now)} MB with the links loaded, peak ${fmt(rss(exporter.pid).peak)} MB during the export`,
    );
  }
  await exporter.stop();
}

/** The redirect's rate while an import runs, requests/s over 10 connections. */
const STALL_RATE = 200;

/**
 * The event loop under a hostile import: 10 MiB of `{}` lines (3.5M rows, each invalid: no url),
 * posted while another client follows a short link at a fixed rate (autocannon, in this process,
 * STALL_RATE requests/s over 10 connections; its latencies are corrected for coordinated omission,
 * so a stall counts against every request it held up). The redirect's p99 is measured during the
 * import alone, and for comparison over the same time without it.
 */
async function reportImportStall() {
  const { default: autocannon } = await import('autocannon');
  const server = await startServer({ fsync: 'off' });
  const code = await shorten(server.port, TARGET);
  const lines = Math.floor((10 * 1024 * 1024) / 3);
  const body = Buffer.from('{}\n'.repeat(lines));
  const redirects = (seconds) =>
    autocannon({ url: `http://127.0.0.1:${server.port}/${code}`, connections: 10, overallRate: STALL_RATE, duration: seconds, followRedirect: false });
  await redirects(1); // warm-up (JIT, connections), not reported
  const load = redirects(600);
  const t0 = performance.now();
  const imported = await call(server.port, 'POST', '/api/import', { headers: { 'content-type': 'application/x-ndjson', 'x-api-key': API_KEY }, body });
  const ms = performance.now() - t0;
  load.stop();
  const during = await load;
  const quiet = await redirects(Math.max(1, Math.round(ms / 1000)));
  await server.stop();
  const report = JSON.parse(imported.body);
  if (imported.status !== 200 || report.skipped !== lines) throw new Error(`import: ${imported.status} ${imported.body.slice(0, 300)}`);
  // Every answer must be the redirect: autocannon counts a 302 among its 3xx.
  for (const r of [during, quiet]) {
    const failures = r.errors + r.timeouts + (r.requests.total - r['3xx']);
    if (failures > 0) throw new Error(`redirects during the import: ${failures} errors or unexpected statuses`);
  }
  console.log(
    `import of 10 MiB of invalid rows (${fmt(lines / 1e6, 1)}M lines of {}): ${fmt(ms)} ms; redirect at ${STALL_RATE} req/s over 10 connections meanwhile: ` +
      `p50 ${fmt(during.latency.p50, 1)} ms, p99 ${fmt(during.latency.p99, 1)} ms, max ${fmt(during.latency.max)} ms (${fmt(during.requests.total)} requests); ` +
      `without the import: p99 ${fmt(quiet.latency.p99, 1)} ms, max ${fmt(quiet.latency.max)} ms`,
  );
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The redirect comparison side by side (see the top of this file): per round, both req/s and their
 * ratio, each round on both processes started anew (`relaunch`).
 */
async function runSideBySide(reference, redirect, relaunch) {
  const rounds = [];
  for (let round = 0; round < SIDE_ROUNDS; round++) {
    await Promise.all([relaunch(reference, { warm: false }), relaunch(redirect, { warm: false })]);
    // Warmed up side by side, as they are then measured: with the traffic alongside too, at its
    // rate, so that neither server compiles its code for that traffic in the measured seconds.
    await Promise.all([
      runWrkAsync(reference.server.port, reference, 1),
      runWrkAsync(redirect.server.port, redirect, 1),
      reference.during?.(reference.server.port, 1),
      redirect.during?.(redirect.server.port, 1),
    ]);
    await pause(PAUSE_MS);
    const [a, b, ...alongside] = await Promise.all([
      runWrkAsync(reference.server.port, reference),
      runWrkAsync(redirect.server.port, redirect),
      reference.during?.(reference.server.port),
      redirect.during?.(redirect.server.port),
    ]);
    for (const during of alongside) if (during !== undefined) process.stderr.write(`  alongside: ${during}\n`);
    const failures = a.failures + b.failures;
    if (failures > 0) console.error(`run failed: side by side: ${failures} errors or unexpected statuses`);
    rounds.push({ reference: a.rps, redirect: b.rps, ratio: b.rps / a.rps, failures });
    process.stderr.write(`side by side ${round + 1}: reference ${fmt(a.rps)} req/s, redirect ${fmt(b.rps)} req/s\n`);
  }
  return rounds;
}
/** `xs` turned left by `k`: round k of a rotation. */
const rotated = (xs, k) => xs.map((_, i) => xs[(i + k) % xs.length]);

// ---- PostgreSQL ------------------------------------------------------------------------------------

const PG_ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 3);
const PG_SCRIPT = join(ROOT, 'scripts', 'pg-test-server.sh');

/** Every process as [pid, ppid, comm, CPU seconds (user + system)], from /proc (Linux; empty elsewhere). */
function processes() {
  const out = [];
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      out.push([Number(pid), Number(fields[1]), comm, (Number(fields[11]) + Number(fields[12])) / 100]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds so far of the PostgreSQL server's processes, and of `pid` with its children (workers). */
function cpuSplit(pid) {
  const all = processes();
  const db = all.filter(([, , comm]) => comm === 'postgres' || comm.startsWith('postgres:')).reduce((n, p) => n + p[3], 0);
  const app = all.filter(([p, ppid]) => p === pid || ppid === pid).reduce((n, p) => n + p[3], 0);
  return { db, app };
}

/** A throwaway PostgreSQL server, or undefined when none is installed. */
function startPostgres() {
  const r = spawnSync(PG_SCRIPT, ['start'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const dir = r.stderr.trim().split('\n').pop();
  process.on('exit', () => spawnSync(PG_SCRIPT, ['stop', dir]));
  return { url: r.stdout.trim(), dir };
}

/** The service (dist build) over `databaseUrl` with `workers` processes; its port once all listen. */
function startPgServer(databaseUrl, workers) {
  return startProcess(
    process.execPath,
    ['dist/server.js'],
    { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, WORKERS: String(workers), LOG_LEVEL: 'info', API_KEYS: API_KEY, API_TOKEN: '' },
    (line) => {
      try {
        const entry = JSON.parse(line);
        if (workers > 1) return entry.msg === 'workers listening' ? entry.port : undefined;
        return entry.msg === 'listening' ? Number(new URL(entry.url).port) : undefined;
      } catch {
        return undefined;
      }
    },
    { pinned: false },
  );
}

function startCeiling(databaseUrl, workers) {
  return startProcess(
    process.execPath,
    ['scripts/pg-ceiling.mjs'],
    { DATABASE_URL: databaseUrl, WORKERS: String(workers) },
    (line) => Number(/^port (\d+)$/.exec(line)?.[1]) || undefined,
    {
      pinned: false,
    },
  );
}

/**
 * Redirects/s and creates/s of the service and of the ceiling with 1 and 2 workers, rotated
 * rounds, and the ratios to the ceiling and to the log store's figures of this run (`logStore`:
 * medians of its redirect and durable create, or undefined to measure them here).
 */
async function reportPostgres(logStore) {
  const pg = startPostgres();
  if (!pg) {
    console.log('PostgreSQL: not installed (apt-get install postgresql), section skipped');
    return;
  }
  const create = {
    method: 'POST',
    path: '/api/shorten',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/bench/created' }),
    expect: 201,
    pinned: false,
  };
  if (!logStore) {
    const plain = await startServer({ fsync: 'off' });
    const durable = await startServer({ fsync: 'always' });
    const code = await shorten(plain.port, TARGET);
    const runs = { redirect: [], create: [] };
    load(plain.port, { path: `/${code}`, expect: 302, pinned: false }, 1);
    for (let i = 0; i < PG_ROUNDS; i++) {
      await pause(PAUSE_MS);
      runs.redirect.push(load(plain.port, { path: `/${code}`, expect: 302, pinned: false }));
      await pause(PAUSE_MS);
      runs.create.push(load(durable.port, create));
    }
    await plain.stop();
    await durable.stop();
    logStore = { redirect: median(runs.redirect.map((r) => r.rps)), create: median(runs.create.map((r) => r.rps)) };
  }
  const bin = spawnSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], { encoding: 'utf8' }).stdout.trim();
  const version = spawnSync(join(process.env.PG_BIN ?? bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? 'PostgreSQL';
  console.log(
    `${version} at ${pg.url.replace(/^postgres:\/\/[^@]*@/, '')}; pool ${process.env.DB_POOL_SIZE ?? 'default'} per process; ${PG_ROUNDS} rounds; nothing pinned`,
  );

  const rows = [];
  let failed = false;
  let db = 0;
  for (const workers of [1, 2]) {
    // A database of its own per worker count: the creates of one do not grow the other's table.
    const admin = spawnSync(
      process.execPath,
      ['-e', `const p=require('postgres');const s=p(${JSON.stringify(pg.url)},{max:1});s.unsafe('CREATE DATABASE bench${++db}').then(()=>s.end())`],
      { cwd: ROOT, encoding: 'utf8' },
    );
    if (admin.status !== 0) throw new Error(`create database: ${admin.stderr}`);
    const url = pg.url.replace(/\/postgres$/, `/bench${db}`);
    const service = await startPgServer(url, workers);
    const code = await shorten(service.port, TARGET);
    const ceiling = await startCeiling(url, workers);
    const scenarios = [
      { kind: 'redirect', who: 'service', server: service, path: `/${code}`, expect: 302, pinned: false },
      { kind: 'redirect', who: 'ceiling', server: ceiling, path: `/${code}`, expect: 302, pinned: false },
      { kind: 'create', who: 'service', server: service, ...create },
      { kind: 'create', who: 'ceiling', server: ceiling, ...create },
    ];
    for (const s of scenarios) load(s.server.port, s, 1); // warm-up
    const runs = new Map(scenarios.map((s) => [s, []]));
    for (let round = 0; round < PG_ROUNDS; round++) {
      for (const s of rotated(scenarios, round)) {
        await pause(PAUSE_MS);
        const before = cpuSplit(s.server.pid);
        const r = load(s.server.port, s);
        const after = cpuSplit(s.server.pid);
        // CPU per request, µs: what one core of each side can carry is 1e6 / this.
        const requests = r.rps * SECONDS;
        r.appUs = ((after.app - before.app) / requests) * 1e6;
        r.dbUs = ((after.db - before.db) / requests) * 1e6;
        if (r.failures > 0) {
          failed = true;
          console.error(`run failed: PostgreSQL ${s.kind} ${s.who} ×${workers}: ${r.failures} errors or unexpected statuses`);
        }
        runs.get(s).push(r);
        process.stderr.write(`PostgreSQL round ${round + 1}: ${s.kind} ${s.who}, ${workers} worker(s): ${fmt(r.rps)} req/s\n`);
      }
    }
    await service.stop();
    await ceiling.stop();
    for (const kind of ['redirect', 'create']) {
      const [ours, theirs] = ['service', 'ceiling'].map((who) => runs.get(scenarios.find((s) => s.kind === kind && s.who === who)));
      const rps = median(ours.map((r) => r.rps));
      rows.push({
        kind,
        workers,
        rps,
        p99: median(ours.map((r) => r.p99)),
        ceiling: median(theirs.map((r) => r.rps)),
        ceilingP99: median(theirs.map((r) => r.p99)),
        toCeiling: median(ours.map((r, i) => r.rps / theirs[i].rps)),
        toLog: rps / logStore[kind],
        appUs: median(ours.map((r) => r.appUs)),
        dbUs: median(ours.map((r) => r.dbUs)),
        ceilingAppUs: median(theirs.map((r) => r.appUs)),
        ceilingDbUs: median(theirs.map((r) => r.dbUs)),
      });
    }
  }
  console.log('');
  console.log(`log store of this run: redirect ${fmt(logStore.redirect)} req/s, create (FSYNC=always) ${fmt(logStore.create)} req/s`);
  console.log(
    '| over PostgreSQL | workers | req/s | p99 ms | ceiling req/s | ceiling p99 ms | ratio to the ceiling | ratio to the log store | node CPU µs/req | database CPU µs/req | ceiling: node, database µs/req |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const name = r.kind === 'redirect' ? 'redirect GET /<code> (visit counted)' : 'create POST /api/shorten (durable)';
    console.log(
      `| ${name} | ${r.workers} | ${fmt(r.rps)} | ${fmt(r.p99, 2)} | ${fmt(r.ceiling)} | ${fmt(r.ceilingP99, 2)} | ${fmt(r.toCeiling, 2)} | ${fmt(r.toLog, 2)} | ` +
        `${fmt(r.appUs)} | ${fmt(r.dbUs)} | ${fmt(r.ceilingAppUs)}, ${fmt(r.ceilingDbUs)} |`,
    );
  }
  if (failed) process.exitCode = 1;
}

/** The goals of visit analytics (scripts/bench-analytics.mjs); a failed run fails the bench. */
async function reportAnalyticsSection() {
  const { reportAnalytics } = await import('./bench-analytics.mjs');
  if (await reportAnalytics()) process.exitCode = 1;
}

// ---- Several domains -------------------------------------------------------------------------------

const DOMAINS = 'go.example,s.example';
/** Random paths a scanner sends in a side-by-side round of the domains section. */
const SCAN_PATHS = Number(process.env.BENCH_SCAN_PATHS ?? 10_000);

// The scanner: `n` GETs of random paths spread over `seconds`, from 40 connections each pausing
// between its requests, by wrk on the load core. wrk's C costs that core little: a scanner of
// node's own, with a timer every 5 ms, slowed the load generators beside it, and so the redirects
// measured through them, as much at 400 paths a second as at 2,000 (docs/performance.md).
// A connection sends, waits for the answer, then pauses: so the pause is what the rate leaves
// after the answer's wait, which the scanner learns from what it sent in the round before
// (`scanner`). With 40 connections a pause is about 100 ms at 400 paths a second, and the wait of
// a few ms is a small part of it even in the first round. wrk pauses whole milliseconds; a
// fraction is made of whole ones at random.
const SCANNER_LUA = `
local sent = 0
local fixed = os.getenv("SCAN_FIXED")
local gap = tonumber(os.getenv("SCAN_GAP_MS"))
local whole = math.floor(gap)
local fraction = gap - whole
local chars = "abcdefghijkmnopqrstuvwxyz123456789"
request = function()
  sent = sent + 1
  if fixed ~= nil and fixed ~= "" then return wrk.format("GET", fixed) end
  local t = {}
  for i = 1, 8 do
    local k = math.random(1, #chars)
    t[i] = chars:sub(k, k)
  end
  local php = ""
  if sent % 3 == 0 and os.getenv("SCAN_PHP") ~= "0" then php = ".php" end
  return wrk.format("GET", "/" .. table.concat(t) .. php)
end
delay = function()
  if math.random() < fraction then return whole + 1 end
  return whole
end
`;
const SCAN_CONNECTIONS = 40;

/**
 * A scanner of `n` requests every `SECONDS` (random paths, or `fixed`), as a scenario's `during`:
 * run with the seconds it lasts, it resolves with what it asked for and sent, and how many were not
 * a 404 (a 302). Its pause is `SCAN_CONNECTIONS` / rate less the wait for an answer, as measured
 * in its last whole round: a warm-up's, just after the server started, waits longer.
 */
function scanner(n, fixed) {
  let waitMs = 0;
  return async (port, seconds = SECONDS) => {
    const asked = (n * seconds) / SECONDS;
    const gap = Math.max(0, (1000 * SCAN_CONNECTIONS * seconds) / asked - waitMs);
    const { done, bad } = await scan(port, gap, seconds, fixed);
    if (done > 0 && seconds === SECONDS) waitMs = Math.max(0, (1000 * SCAN_CONNECTIONS * seconds) / done - gap);
    return JSON.stringify({ asked: Math.round(asked), done, bad });
  };
}

/** The scanner's script, written once a run. */
let scannerScript;

/** Runs wrk as the scanner against `port`, pausing `gap` ms between a connection's requests. */
async function scan(port, gap, seconds, fixed) {
  if (scannerScript === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-scan-'));
    dirs.add(dir);
    scannerScript = join(dir, 'scan.lua');
    writeFileSync(scannerScript, SCANNER_LUA);
  }
  const args = ['-t1', `-c${SCAN_CONNECTIONS}`, `-d${seconds}s`, '-s', scannerScript, `http://127.0.0.1:${port}/`];
  const { requests, non2xx } = await runWrkOn(pin(LOAD_CPU, 'wrk', args), children, { SCAN_FIXED: fixed ?? '', SCAN_GAP_MS: gap.toFixed(3) });
  // Random paths are all 404s (non-2xx to wrk); a known code's visits all 302s.
  return { done: requests, bad: fixed ? non2xx : requests - non2xx };
}

/**
 * The redirect with three domains configured against the same with one (docs/performance.md,
 * several domains), side by side as the redirect and the reference are (`runSideBySide`): the
 * plain redirect of the default domain, which now reads the request's host, and a redirect of
 * another domain (`Host: go.example`), whose key is a string made per request.
 */
async function reportDomains() {
  if (!PINNED || !WRK || SIDE_ROUNDS === 0) {
    console.log('several domains: needs taskset, two cores and wrk (side by side); section skipped');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const creator = await startServer({ fsync: 'always', dir, env: { DOMAINS } });
  const code = await shorten(creator.port, TARGET);
  const made = await call(creator.port, 'POST', '/api/shorten', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: TARGET, code, domain: 'go.example' }),
  });
  if (made.status !== 201) throw new Error(`shorten on go.example: ${made.status} ${made.body}`);
  await creator.stop();
  const path = `/${code}`;
  // Two servers run at once, and a data dir has one writer: each scenario gets a copy of the log.
  const scenario = (name, env, headers) => {
    const own = mkdtempSync(join(tmpdir(), 'bench-'));
    cpSync(join(dir, 'urls.log'), join(own, 'urls.log'));
    const start = () => startServer({ dir: own, env });
    return { name, start, path, expect: 302, headers, server: { stop: async () => undefined } };
  };
  const relaunch = async (s) => {
    await s.server.stop();
    s.server = await s.start();
  };
  const one = scenario('one domain', {});
  const three = scenario('three domains, the default one', { DOMAINS });
  const other = scenario('three domains, Host: go.example', { DOMAINS }, { Host: 'go.example' });
  // A scanner's random paths sent to the second server meanwhile, at a fixed rate: each is an
  // unknown code, answered 404 and recorded as an orphan visit (docs/analytics.md).
  const scanned = scenario(`three domains, while a scanner sends ${SCAN_PATHS} random paths`, { DOMAINS });
  scanned.during = scanner(SCAN_PATHS);
  // The same number of requests at the same rate, each a visit of a known code: what any traffic
  // of that rate costs, against which the scanner's 404s and orphan visits are measured.
  const visited = scenario(`three domains, while ${SCAN_PATHS} visits of a known code come at the scanner's rate`, { DOMAINS });
  visited.during = scanner(SCAN_PATHS, path);
  // With counts only: no orphan visit is recorded, so what is left is the 404 itself.
  const counts = { DOMAINS, VISIT_TRACKING: 'counts' };
  const visitedCounts = scenario(`${visited.name}, VISIT_TRACKING=counts`, counts);
  visitedCounts.during = scanner(SCAN_PATHS, path);
  const scannedCounts = scenario(`${scanned.name}, VISIT_TRACKING=counts`, counts);
  scannedCounts.during = scanner(SCAN_PATHS);
  // The same 10,000 random paths spread over the whole run instead of sent in each round: a
  // scanner of that many paths while the redirects are measured (docs/performance.md).
  const perRound = Math.round(SCAN_PATHS / SIDE_ROUNDS);
  const scannedRun = scenario(`three domains, while a scanner sends ${SCAN_PATHS} random paths over the ${SIDE_ROUNDS} rounds`, { DOMAINS });
  scannedRun.during = scanner(perRound);
  const every = [
    [one, three],
    [one, other],
    [three, scanned],
    [visited, scanned],
    [visitedCounts, scannedCounts],
    [three, scannedRun],
  ];
  // BENCH_DOMAIN_PAIRS=3,4 runs only those pairs (by their index here).
  const picked = process.env.BENCH_DOMAIN_PAIRS?.split(',').map(Number);
  const pairs = picked === undefined ? every : every.filter((_, i) => picked.includes(i));
  console.log(`several domains, side by side (both on CPU ${SERVER_CPU} at once, ${SECONDS} s a round, ${SIDE_ROUNDS} rounds):`);
  for (const [a, b] of pairs) {
    const rounds = await runSideBySide(a, b, relaunch);
    if (rounds.some((r) => r.failures > 0)) process.exitCode = 1;
    const ratios = rounds.map((r) => r.ratio);
    console.log(
      `  ${b.name} / ${a.name}: req/s per round ${rounds.map((r) => `${fmt(r.redirect)} vs ${fmt(r.reference)}`).join(', ')}; ` +
        `ratio per round ${ratios.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(ratios), 3)}`,
    );
    // Stopped, and marked so: a scenario of the next pair starts anew without stopping it again.
    for (const s of [a, b]) {
      await s.server.stop();
      s.server = { stop: async () => undefined };
    }
  }
}

/** The five rules of the rules section: each holds for no request it sends, so every condition is asked. */
const FIVE_RULES = [
  { url: 'https://example.com/ios', conditions: [{ type: 'device', key: null, value: 'ios' }] },
  { url: 'https://example.com/fr', conditions: [{ type: 'country', key: null, value: 'FR' }] },
  { url: 'https://example.com/fr-lang', conditions: [{ type: 'language', key: null, value: 'fr' }] },
  { url: 'https://example.com/utm', conditions: [{ type: 'query-param', key: 'utm', value: 'x' }] },
  { url: 'https://example.com/later', conditions: [{ type: 'after-date', key: null, value: '4102444800' }] },
];

/**
 * Redirect rules (docs/performance.md, redirect rules), side by side: a plain link against the
 * same with five rules (device, country, language, query, date) that a desktop Chrome sending
 * `Accept-Language: de` does not match, so all five are asked; and, with BENCH_BASE_SERVER naming
 * another build's `dist/server.js`, this build's plain redirect against that build's.
 */
async function reportRules() {
  if (!PINNED || !WRK || SIDE_ROUNDS === 0) {
    console.log('redirect rules: needs taskset, two cores and wrk (side by side); section skipped');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  // Made by the other build when one is named: a log of an older format is one both read (this
  // build rewrites it in its own at start), where one of a newer format the older build refuses.
  const creator = await startServer({ fsync: 'always', dir, ...(process.env.BENCH_BASE_SERVER ? { entry: process.env.BENCH_BASE_SERVER } : {}) });
  const code = await shorten(creator.port, TARGET);
  const made = await call(creator.port, 'POST', '/api/shorten', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: TARGET, rules: FIVE_RULES }),
  });
  if (made.status !== 201) throw new Error(`shorten with rules: ${made.status} ${made.body}`);
  const ruled = made.body.slice(made.body.lastIndexOf('/') + 1);
  await creator.stop();
  const headers = {
    'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    'Accept-Language': 'de',
  };
  // Two servers run at once, and a data dir has one writer: each scenario gets a copy of the log.
  const scenario = (name, path, entry) => {
    const own = mkdtempSync(join(tmpdir(), 'bench-'));
    cpSync(join(dir, 'urls.log'), join(own, 'urls.log'));
    return { name, start: () => startServer({ dir: own, entry }), path, expect: 302, headers, server: { stop: async () => undefined } };
  };
  const relaunch = async (s) => {
    await s.server.stop();
    s.server = await s.start();
  };
  const pairs = [[scenario('a plain link', `/${code}`), scenario('a link with five rules, none holding', `/${ruled}`)]];
  const base = process.env.BENCH_BASE_SERVER;
  if (base) pairs.push([scenario(`a plain link, ${base}`, `/${code}`, base), scenario('a plain link, this build', `/${code}`)]);
  console.log(`redirect rules, side by side (both on CPU ${SERVER_CPU} at once, ${SECONDS} s a round, ${SIDE_ROUNDS} rounds):`);
  for (const [a, b] of pairs) {
    const rounds = await runSideBySide(a, b, relaunch);
    if (rounds.some((r) => r.failures > 0)) process.exitCode = 1;
    const ratios = rounds.map((r) => r.ratio);
    console.log(
      `  ${b.name} / ${a.name}: req/s per round ${rounds.map((r) => `${fmt(r.redirect)} vs ${fmt(r.reference)}`).join(', ')}; ` +
        `ratio per round ${ratios.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(ratios), 3)}`,
    );
    for (const s of [a, b]) await s.server.stop();
  }
}

/** A webhook receiver on the load core: answers 200 at once, and `GET /count` with how many it took. */
const RECEIVER = `
const http = require('node:http');
let n = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return res.end(String(n));
  req.resume();
  req.on('end', () => { n++; res.end('ok'); });
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

function startReceiver() {
  const [bin, argv] = pin(LOAD_CPU, process.execPath, ['-e', RECEIVER]);
  return startProcess(bin, argv, {}, (line) => Number(/^port (\d+)$/.exec(line)?.[1]) || undefined, { pinned: false });
}

const received = async (port) => Number((await call(port, 'GET', '/count')).body);
const pendingOf = async (port) =>
  Number(/^shortener_webhook_pending (\d+)$/m.exec((await call(port, 'GET', '/metrics', { headers: { 'X-API-Key': API_KEY } })).body)?.[1]);

/**
 * Paced GETs of `path`: `rate` a second for `seconds`, from a node client on the load core, over
 * 16 kept-alive connections; resolves once the last has been sent.
 */
const PACER = `
const http = require('node:http');
const [port, path, rate, seconds] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
let sent = 0;
const t0 = Date.now();
const timer = setInterval(() => {
  const due = Math.min(Math.floor(((Date.now() - t0) / 1000) * rate), rate * seconds) - sent;
  for (let i = 0; i < due; i++) {
    sent++;
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => res.resume()).on('error', () => undefined);
  }
  if (sent >= rate * seconds) { clearInterval(timer); setTimeout(() => process.exit(0), 200); }
}, 5);
`;

/**
 * Webhooks (docs/performance.md, webhooks): the redirect of a link whose visits a subscription
 * hears (\`link.clicked\`, to a receiver on the load core) against the same without one, side by
 * side; then how deliveries keep up with 2,000 clicks a second, paced, second by second.
 */
async function reportWebhooks() {
  if (!PINNED || !WRK || SIDE_ROUNDS === 0) {
    console.log('webhooks: needs taskset, two cores and wrk (side by side); section skipped');
    return;
  }
  const rx = await startReceiver();
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const plainDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const creator = await startServer({ fsync: 'always', dir, env });
  const code = await shorten(creator.port, TARGET);
  await creator.stop();
  cpSync(join(dir, 'urls.log'), join(plainDir, 'urls.log'));
  const again = await startServer({ fsync: 'always', dir, env });
  const made = await call(again.port, 'POST', '/api/webhooks', {
    headers: { 'content-type': 'application/json', 'X-API-Key': API_KEY },
    body: JSON.stringify({ url: `http://127.0.0.1:${rx.port}/in`, events: ['link.clicked'] }),
  });
  if (made.status !== 201) throw new Error(`subscribe: ${made.status} ${made.body}`);
  await again.stop();
  // Each round starts from the log as made here, its outbox empty: a round after another would
  // otherwise begin with the rows the one before left, up to the cap, past which clicks are only
  // counted as dropped, and measure that cheaper state instead.
  const scenario = (name, from) => {
    const own = mkdtempSync(join(tmpdir(), 'bench-'));
    const start = () => {
      rmSync(own, { recursive: true, force: true });
      cpSync(join(from, 'urls.log'), join(own, 'urls.log'));
      return startServer({ dir: own, env });
    };
    return { name, start, path: `/${code}`, expect: 302, server: { stop: async () => undefined } };
  };
  const relaunch = async (s) => {
    await s.server.stop();
    s.server = await s.start();
  };
  const [a, b] = [scenario('no subscription', plainDir), scenario('a link.clicked subscription', dir)];
  console.log(`webhooks, side by side (both on CPU ${SERVER_CPU} at once, ${SECONDS} s a round, ${SIDE_ROUNDS} rounds):`);
  const before = await received(rx.port);
  const rounds = await runSideBySide(a, b, relaunch);
  const delivered = (await received(rx.port)) - before;
  if (rounds.some((r) => r.failures > 0)) process.exitCode = 1;
  const ratios = rounds.map((r) => r.ratio);
  console.log(
    `  ${b.name} / ${a.name}: req/s per round ${rounds.map((r) => `${fmt(r.redirect)} vs ${fmt(r.reference)}`).join(', ')}; ` +
      `ratio per round ${ratios.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(ratios), 3)}; ` +
      `${fmt(delivered)} deliveries meanwhile (${fmt(delivered / (SIDE_ROUNDS * SECONDS))}/s)`,
  );
  for (const s of [a, b]) await s.server.stop();
  await reportDeliveryPace(scenario('paced', dir), rx, code);
  await rx.stop();
}

/** 2,000 clicks a second for 10 s (BENCH_WEBHOOK_RATE, BENCH_WEBHOOK_SECONDS): deliveries and the outbox, second by second. */
async function reportDeliveryPace(s, rx, code) {
  const rate = Number(process.env.BENCH_WEBHOOK_RATE ?? 2000);
  const seconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10);
  const server = await s.start();
  const before = await received(rx.port);
  const [bin, argv] = pin(LOAD_CPU, process.execPath, ['-e', PACER, String(server.port), `/${code}`, String(rate), String(seconds)]);
  const pacer = spawn(bin, argv, { stdio: 'ignore' });
  const done = new Promise((resolve) => pacer.once('exit', resolve));
  const rows = [];
  const t0 = Date.now();
  for (let i = 1; ; i++) {
    await new Promise((r) => setTimeout(r, t0 + i * 1000 - Date.now()));
    const pending = await pendingOf(server.port);
    rows.push({ at: i, delivered: (await received(rx.port)) - before, pending });
    // Done once every click sent has been delivered (a click not yet flushed is not a row yet).
    if (i >= seconds && pending === 0 && rows.at(-1).delivered >= rate * seconds) break;
    if (i > seconds + 30) break;
  }
  await done;
  await server.stop();
  const last = rows.at(-1);
  const steady = rows.filter((r) => r.at >= 2 && r.at <= seconds);
  console.log(
    `  deliveries at ${fmt(rate)} clicks/s for ${seconds} s: delivered by second ${rows.map((r) => fmt(r.delivered)).join(', ')}; ` +
      `outbox ${rows.map((r) => fmt(r.pending)).join(', ')}; the most owed from the 2nd second on ${fmt(Math.max(...steady.map((r) => r.pending)))}; ` +
      `all ${fmt(last.delivered)} delivered ${last.at - seconds} s after the last click`,
  );
}

async function main() {
  if (process.env.BENCH_ANALYTICS_ONLY === '1') return reportAnalyticsSection();
  if (process.env.BENCH_RULES_ONLY === '1') return reportRules();
  if (process.env.BENCH_WEBHOOKS_ONLY === '1') return reportWebhooks();
  if (process.env.BENCH_DOMAINS_ONLY === '1') return reportDomains();
  if (process.env.BENCH_PG_ONLY === '1') return reportPostgres();
  if (process.env.BENCH_LIST_ONLY === '1') return reportListing();
  if (process.env.BENCH_IMPORT_STALL_ONLY === '1') return reportImportStall();
  if (process.env.BENCH_TRANSFER_ONLY === '1') {
    await reportTransfer();
    return reportImportStall();
  }
  const cpu = cpus()[0]?.model ?? 'cpu';
  console.log(
    `node ${process.version}; ${cpus().length} × ${cpu}; load generator ${WRK ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ` +
      `${SECONDS} s per run, ${PAUSE_MS} ms between runs, ${ROUNDS} rounds of the redirect comparison, ${OTHER_ROUNDS} of the others; ` +
      `${PINNED ? `server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}` : 'not pinned (no taskset or one core)'}`,
  );

  let bareServer = await startBaseline(false);
  let referenceServer = await startBaseline(true);
  // The redirect's link is created over HTTP by a server process of its own, stopped before the
  // measured one starts on the same data file: until the rounds the measured process serves
  // redirects only, like the reference, which can serve nothing else. A create in the same process
  // would cost every later redirect about 500 instructions (docs/performance.md, "What else
  // the redirect avoids"): node:http's stream code then runs on the type feedback of a body it read.
  const linkDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const creator = await startServer({ fsync: 'always', dir: linkDir });
  const code = await shorten(creator.port, TARGET);
  await creator.stop();
  const startPlain = () => startServer({ fsync: 'off', dir: linkDir });
  let plain = await startPlain();
  const path = `/${code}`;

  // The reference is the redirect's ceiling only if it sends what the redirect sends.
  const [ours, theirs] = [await rawHead(plain.port, path), await rawHead(referenceServer.port, path)];
  if (ours !== theirs) {
    console.error(`the reference does not send the redirect's headers:\n--- redirect\n${ours}--- reference\n${theirs}`);
    process.exitCode = 1;
  } else {
    console.log(`the reference sends the redirect's head byte for byte (${Buffer.byteLength(ours)} bytes without Date)`);
  }

  // The baselines get the redirect's own path: parsing the request costs the same.
  // `start` launches the scenario's process anew (see `relaunch`).
  const bare = { name: 'bare node:http 302 (Location, Content-Length)', server: bareServer, start: () => startBaseline(false), path, expect: 302 };
  const reference = {
    name: 'reference: node:http 302 with our headers, precomputed',
    server: referenceServer,
    start: () => startBaseline(true),
    path,
    expect: 302,
  };
  const redirect = { name: 'redirect GET /<code> (visit counted)', server: plain, start: startPlain, path, expect: 302 };

  /**
   * The scenario's process stopped and started anew, then warmed up (JIT, connections) unless told
   * not to. One start of a process carries its own luck: the same server, started twice, differs
   * from itself by up to 2–3 % for as long as it runs (addresses, hash seeds, what the JIT decided;
   * docs/performance.md), which no number of rounds on the same processes averages out. So every
   * round of the redirect comparison runs on processes started for it.
   */
  const relaunch = async (s, { warm = true } = {}) => {
    await s.server.stop();
    s.server = await s.start();
    if (warm) load(s.server.port, s, 1);
  };
  const results = new Map();
  let failed = false;
  const measure = (s, round) => {
    const r = load(s.server.port, s);
    if (r.failures > 0) {
      failed = true;
      console.error(`run failed: ${s.name}: ${r.failures} errors or unexpected statuses`);
    }
    r.round = round + 1;
    if (!results.has(s.name)) results.set(s.name, []);
    results.get(s.name).push(r);
    process.stderr.write(`round ${round + 1}: ${s.name}: ${fmt(r.rps)} req/s\n`);
    return r;
  };
  /**
   * Every scenario once per round, the order turned by one each round, a pause before each run;
   * each ratio is to `base`'s run of the same round. With `fresh`, each round runs on processes
   * started for it (see `relaunch`).
   */
  const rounds = async (base, scenarios, n, { fresh = false } = {}) => {
    for (const s of scenarios) load(s.server.port, s, 1); // warm-up (JIT, connections), not reported
    for (let round = 0; round < n; round++) {
      if (fresh && round > 0) for (const s of scenarios) await relaunch(s);
      const runs = new Map();
      for (const s of rotated(scenarios, round)) {
        await pause(PAUSE_MS);
        runs.set(s, measure(s, round));
      }
      const baseRps = runs.get(base).rps;
      for (const [s, r] of runs) if (s !== base && s.ratio !== false) r.ratio = r.rps / baseRps;
    }
  };

  await rounds(bare, [bare, reference, redirect], ROUNDS, { fresh: true });
  const perRound = (s) => results.get(s.name);
  const toReference = perRound(redirect).map((r, i) => r.rps / perRound(reference)[i].rps);
  const toBare = perRound(redirect).map((r) => r.ratio);
  const sideBySide = PINNED && WRK ? await runSideBySide(reference, redirect, relaunch) : [];
  [bareServer, referenceServer, plain] = [bare.server, reference.server, redirect.server];
  if (sideBySide.some((r) => r.failures > 0)) failed = true;

  let others = [];
  if (OTHER_ROUNDS > 0) {
    const durable = await startServer({ fsync: 'always' });
    const listed = await startServer({ dir: await seededDir(10_000) });
    const create = {
      method: 'POST',
      path: '/api/shorten',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/bench/created' }),
      expect: 201,
    };
    others = [
      { name: 'metadata GET /api/urls/<code>', server: plain, path: `/api/urls/${code}` },
      { name: 'create POST /api/shorten, FSYNC=always', server: durable, ...create },
      { name: 'create POST /api/shorten, FSYNC=off', server: plain, ...create },
      // Each answer is about 2 MB: a few connections keep the server busy, and a ratio to a fixed
      // 302 would mean nothing.
      { name: 'list GET /api/urls, 10k links', server: listed, path: '/api/urls', headers: { 'x-api-key': API_KEY }, connections: 4, ratio: false },
    ];
    const bareAgain = { ...bare, name: `${bare.name}, with the other scenarios` };
    await rounds(bareAgain, [bareAgain, ...others], OTHER_ROUNDS);
    await durable.stop();
    await listed.stop();
  }
  for (const s of [bareServer, referenceServer, plain]) await s.stop();

  console.log('');
  console.log('| scenario | round | req/s | p50 ms | p99 ms | ratio to the bare 302 |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, runs] of results) {
    for (const r of runs) console.log(`| ${name} | ${r.round} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.ratio, 2)} |`);
  }
  console.log('');
  const medianRps = (s) => median(perRound(s).map((r) => r.rps));
  console.log(`median req/s over ${ROUNDS} rounds: bare ${fmt(medianRps(bare))}, reference ${fmt(medianRps(reference))}, redirect ${fmt(medianRps(redirect))}`);
  console.log(`redirect / reference, per round: ${toReference.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(toReference), 3)}`);
  console.log(`redirect / bare 302, per round: ${toBare.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(toBare), 3)}`);
  console.log(`reference / bare 302, median: ${fmt(median(perRound(reference).map((r) => r.ratio)), 3)}`);
  if (sideBySide.length > 0) {
    const ratios = sideBySide.map((r) => r.ratio);
    console.log(
      `side by side (both on CPU ${SERVER_CPU} at once, ${SECONDS} s a round; reference + redirect req/s per round: ` +
        `${sideBySide.map((r) => `${fmt(r.reference)} + ${fmt(r.redirect)}`).join(', ')}): redirect / reference, per round: ` +
        `${ratios.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(ratios), 3)}`,
    );
  }
  for (const s of others) {
    if (s.ratio !== false) console.log(`median ratio to the bare 302 (same round): ${fmt(median(perRound(s).map((r) => r.ratio)), 2)}  ${s.name}`);
  }

  if (process.env.BENCH_HTTP_ONLY === '1') return;
  console.log('');
  await reportDomains();
  await reportRules();
  console.log('');
  await reportListing();
  console.log('');
  await reportTransfer();
  await reportImportStall();
  console.log('');
  const durableCreates = others.find((s) => s.name.includes('FSYNC=always'));
  await reportPostgres(durableCreates ? { redirect: medianRps(redirect), create: median(perRound(durableCreates).map((r) => r.rps)) } : undefined);
  if (failed) process.exitCode = 1;
  if (process.env.BENCH_ANALYTICS !== '0') {
    console.log('');
    await reportAnalyticsSection();
  }
}

await main();
