#!/usr/bin/env node
// `npm run bench`: the service against the ceiling. In one run it starts the real server
// (`node dist/server.js`) and a bare node:http server that answers a fixed 302, drives both with a
// load generator (wrk when installed, else autocannon), alternating baseline and server, and
// prints requests/s, p50, p99 and the ratio to the baseline runs just before and after each run.
// Server and load generator are pinned to different cores when `taskset` exists.
//
// It judges nothing: the exit code is non-zero only when a run fails (errors or unexpected
// statuses), never because a figure is low.
//
// BENCH_SECONDS (default 5) per run, BENCH_ROUNDS (default 2), BENCH_CONNECTIONS (default 50),
// BENCH_LOADGEN=autocannon to use autocannon even when wrk is installed, BENCH_LIST_ONLY=1 for
// the event-loop stall while listing alone.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
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
function startProcess(cmd, args, env, portOf) {
  const [bin, argv] = pin(SERVER_CPU, cmd, args);
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

// The ceiling: a bare node:http server answering a fixed 302. With HEADERS set it also sends the
// CORS and security headers every response of ours must carry (SPEC §3.7): what node:http costs
// for those alone, with no routing or lookup at all.
const BASELINE = `
const http = require('node:http');
const extra = JSON.parse(process.env.HEADERS || '[]');
const location = process.env.LOCATION;
const headers = [...extra, 'Location', location, 'Cache-Control', 'private, no-store', 'Content-Length', '0'];
const server = http.createServer((req, res) => {
  res.writeHead(302, extra.length ? headers : { Location: location });
  res.end();
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

async function startBaseline(withHeaders) {
  const { baseHeaders, flatten } = await import(new URL('../dist/http/headers.js', import.meta.url).href);
  const env = { HEADERS: withHeaders ? JSON.stringify(flatten(baseHeaders({ https: false }))) : '[]', LOCATION: TARGET };
  return startProcess(process.execPath, ['-e', BASELINE], env, (line) => Number(/^port (\d+)$/.exec(line)?.[1]) || undefined);
}

/** The real server on a fresh (or given) data dir. */
function startServer({ fsync = 'off', dir } = {}) {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'bench-'));
  dirs.add(dataDir);
  return startProcess(
    process.execPath,
    ['dist/server.js'],
    { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, FSYNC: fsync, LOG_LEVEL: 'info', API_KEYS: API_KEY, API_TOKEN: '' },
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
  const { encodeEntry } = await import(new URL('../dist/store/format.js', import.meta.url).href);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  dirs.add(dir);
  const lines = [];
  for (let i = 0; i < n; i++) {
    const code = `b${i.toString(36).padStart(5, '0')}`;
    lines.push(encodeEntry({ op: 'C', code, url: `https://example.com/bench/${i}/${'x'.repeat(40)}`, createdAt: 1_790_000_000 + i, retentionDays: 0, visits: i % 100 }));
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
  return dir;
}

// ---- load generators ---------------------------------------------------------------------------

/** "412.00us" / "1.23ms" / "2.00s" → ms */
function wrkMs(text) {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}

function runWrk(port, scenario, seconds = SECONDS) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  dirs.add(dir);
  const lua = join(dir, 'req.lua');
  const headers = Object.entries(scenario.headers ?? {})
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  writeFileSync(lua, `wrk.method = ${JSON.stringify(scenario.method ?? 'GET')}\n${scenario.body ? `wrk.body = ${JSON.stringify(scenario.body)}\n` : ''}${headers}\n`);
  const [bin, argv] = pin(LOAD_CPU, 'wrk', ['-t1', `-c${scenario.connections ?? CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', lua, `http://127.0.0.1:${port}${scenario.path}`]);
  const r = spawnSync(bin, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const out = r.stdout;
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    failures: bad + errors,
  };
}

function runAutocannon(port, scenario, seconds = SECONDS) {
  const args = [join(ROOT, 'node_modules', 'autocannon', 'autocannon.js'), '-j', '-c', String(scenario.connections ?? CONNECTIONS), '-t', '10', '-d', String(seconds), '-m', scenario.method ?? 'GET'];
  for (const [k, v] of Object.entries(scenario.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (scenario.body) args.push('-b', scenario.body);
  args.push(`http://127.0.0.1:${port}${scenario.path}`);
  const [bin, argv] = pin(LOAD_CPU, process.execPath, args);
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
  const { createShortener } = await import(new URL('../dist/app.js', import.meta.url).href);
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

async function main() {
  if (process.env.BENCH_LIST_ONLY === '1') return reportListing();
  const cpu = cpus()[0]?.model ?? 'cpu';
  console.log(`node ${process.version}; ${cpus().length} × ${cpu}; load generator ${WRK ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds; ${PINNED ? `server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}` : 'not pinned (no taskset or one core)'}`);

  const baseline = await startBaseline(false);
  const headered = await startBaseline(true);
  const plain = await startServer({ fsync: 'off' });
  const durable = await startServer({ fsync: 'always' });
  const listed = await startServer({ dir: await seededDir(10_000) });
  const code = await shorten(plain.port, TARGET);
  const create = { method: 'POST', path: '/api/shorten', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://example.com/bench/created' }), expect: 201 };

  const bare = { name: 'baseline: bare node:http, fixed 302', server: baseline, path: '/', expect: 302 };
  const referenced = { name: 'reference: node:http, fixed 302 with our CORS and security headers', server: headered, path: '/', expect: 302 };
  const redirect = { name: 'redirect GET /<code> (visit counted)', server: plain, path: `/${code}`, expect: 302 };
  const scenarios = [
    referenced,
    redirect,
    { name: 'metadata GET /api/urls/<code>', server: plain, path: `/api/urls/${code}` },
    { name: 'create POST /api/shorten, FSYNC=always', server: durable, ...create },
    { name: 'create POST /api/shorten, FSYNC=off', server: plain, ...create },
    // Each answer is about 2 MB: a few connections keep the server busy, and a ratio to a fixed
    // 302 would mean nothing.
    { name: 'list GET /api/urls, 10k links', server: listed, path: '/api/urls', headers: { 'x-api-key': API_KEY }, connections: 4, ratio: false },
  ];
  // Warm-up: one short run of each (JIT, connection setup), not reported.
  for (const s of [bare, ...scenarios]) load(s.server.port, s, 1);

  const results = new Map([bare, ...scenarios].map((s) => [s.name, []]));
  let failed = false;
  const measure = (s, round) => {
    const r = load(s.server.port, s);
    if (r.failures > 0) {
      failed = true;
      console.error(`run failed: ${s.name}: ${r.failures} errors or unexpected statuses`);
    }
    r.round = round + 1;
    results.get(s.name).push(r);
    process.stderr.write(`round ${round + 1}: ${s.name}: ${fmt(r.rps)} req/s\n`);
    return r;
  };
  for (let round = 0; round < ROUNDS; round++) {
    // The baseline runs before and after every scenario, and each ratio divides by the mean of
    // those two runs: a shared machine drifts by 10 % and more within a minute, and one baseline
    // per round put that drift straight into the ratios.
    let before = measure(bare, round).rps;
    for (const s of scenarios) {
      const r = measure(s, round);
      if (s.ratio === false) continue;
      const after = measure(bare, round).rps;
      r.ratio = r.rps / ((before + after) / 2);
      before = after;
    }
  }

  console.log('');
  console.log('| scenario | round | req/s | p50 ms | p99 ms | ratio to baseline |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, runs] of results) {
    runs.forEach((r) => console.log(`| ${name} | ${r.round} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.ratio, 2)} |`));
  }
  console.log('');
  const ratios = (s) => results.get(s.name).map((r) => r.ratio);
  for (const s of scenarios) {
    if (s.ratio !== false) console.log(`median ratio to baseline: ${fmt(median(ratios(s)), 2)}  ${s.name}`);
  }
  // What node:http allows for a response carrying our headers is the redirect's own ceiling.
  const toReference = ratios(redirect).map((r, i) => r / ratios(referenced)[i]);
  console.log(`median ratio of the redirect to the reference: ${fmt(median(toReference), 2)}`);

  for (const s of [baseline, headered, plain, durable, listed]) await s.stop();

  console.log('');
  await reportListing();
  if (failed) process.exitCode = 1;
}

await main();
