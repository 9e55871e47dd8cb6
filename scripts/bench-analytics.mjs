#!/usr/bin/env node
// The goals of visit analytics (docs/performance.md, "Visit analytics"), part of
// `npm run bench` (last in a full run; BENCH_ANALYTICS_ONLY=1 for this alone, BENCH_ANALYTICS=0 to
// leave it out), or on its own: `npm run build && node scripts/bench-analytics.mjs`.
//
// 1. Redirects with VISIT_TRACKING=events against the same server with `counts`, over a realistic
//    mix: every request of a wrk Lua script picks a User-Agent among more than 1,000 real ones
//    (`user-agents`, plus the crawlers of `crawler-user-agents`), a client address among 12,000
//    (IPv4 and IPv6, in X-Forwarded-For, TRUST_PROXY=1), a referrer or none, and one of 1,000
//    links; the country database (GEOIP_DB, `@ip-location-db/geo-whois-asn-country-mmdb`) is loaded
//    by both. On the log store (server and wrk pinned to different cores, as the redirect
//    comparison of bench.mjs), then over PostgreSQL with WORKERS=2 (nothing pinned). Each round
//    starts both servers anew on fresh data, alternates which runs first, and gives a ratio; the
//    result is the median of the rounds' ratios.
// 2. Stats, in a child process of their own (the HTTP stats routes are not there yet, so the
//    store's `visitStats` is asked directly, as a route would): one link's stats over 1M events
//    (30 daily buckets, every top list), warm, on the log store and on PostgreSQL; the stats of
//    every link over 10M events (100k links) on the log store, with the event loop's longest stall
//    meanwhile (`monitorEventLoopDelay`).
// 3. Storage: 10M events over 100k links in the log: bytes an event on disk, and the server's
//    start-up time and RSS against the same links without events, started alternately.
//
// Data is seeded fast: a data dir's log is written directly (format 3: the `C` lines, then `R` and
// the `K`/`J` lines a compaction writes), and on PostgreSQL one `INSERT … SELECT generate_series`
// fills the `visits` table the store migrated.
//
// It judges nothing: each figure is printed beside its goal, and the exit code is non-zero only
// when a run fails.
//
// BENCH_ANALYTICS_AGAINST=<another build's dist/server.js> compares, in the redirect part, this
// build's events with that build's, side by side and nothing else: a change's own effect, which
// two runs of events against counts an hour apart cannot show (the machine's speed moves more).
// BENCH_ANALYTICS_ROUNDS (default 5) rounds of each comparison; BENCH_ANALYTICS_PARTS (default
// `redirect,pg,stats,storage`) picks the parts (`pg-stats`: one link's stats on PostgreSQL alone); BENCH_SECONDS, BENCH_PAUSE_MS and BENCH_CONNECTIONS
// as in bench.mjs; BENCH_CPU_PROF=<dir> starts every server with `--cpu-prof` into a folder of that
// dir per scenario (a profile is written when the process exits), profiles the stats questions
// alone with the inspector, has PostgreSQL log the stats statement's plan (`auto_explain`), and
// names the functions with the most self time of each scenario; `node scripts/bench-analytics.mjs
// --profiles <dir>` names them again.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runWrkAsync, runWrkSync } from './wrk.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const dist = (p) => pathToFileURL(join(ROOT, 'dist', 'lib', p)).href;

const ROUNDS = Number(process.env.BENCH_ANALYTICS_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PARTS = new Set((process.env.BENCH_ANALYTICS_PARTS ?? 'redirect,pg,stats,storage').split(',').map((s) => s.trim()));
const AGAINST = process.env.BENCH_ANALYTICS_AGAINST ? resolve(process.env.BENCH_ANALYTICS_AGAINST) : undefined;
const CPU_PROF = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const API_KEY = 'bench-key';

const DAY = 86_400;
/** The links of the redirect mix. */
const MIX_LINKS = 1_000;
/** Client addresses of the redirect mix. */
const MIX_ADDRESSES = 12_000;
/** Requests the Lua script prepares; each run cycles through them. */
const MIX_REQUESTS = 32_768;
/** Times a server serves the whole mix before it is measured (`eventsAgainstCounts`). */
const WARM_PASSES = 3;

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const PINNED = has('taskset') && cpus().length >= 2;
const [SERVER_CPU, LOAD_CPU] = ['0', '1'];
const pin = (cpu, cmd, args) => (PINNED ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args]);
/** With BENCH_CPU_PROF, a process's profile goes to a folder named for what it ran. */
const nodeFlags = (label) => (CPU_PROF && label ? ['--cpu-prof', '--cpu-prof-dir', join(CPU_PROF, label)] : []);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—');
const pause = (ms) => new Promise((done) => setTimeout(done, ms));
/** "0.93× (goal ≥ 0.9×: met)" */
const verdict = (ok) => (ok ? 'met' : 'MISSED');

// ---- processes -----------------------------------------------------------------------------------

const children = new Set();
const dirs = new Set();
const cleanups = [];
function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const f of cleanups) f();
}
process.on('exit', cleanup);

function tempDir(prefix = 'bench-analytics-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

/** A process started; resolves once a stdout line makes `portOf` return a port. */
function startProcess(bin, argv, env, portOf) {
  const started = performance.now();
  const child = spawn(bin, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  return new Promise((resolvePort, reject) => {
    let buffered = '';
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const port = portOf(line);
        if (!port) continue;
        child.stdout.resume();
        resolvePort({
          port,
          pid: child.pid,
          startMs: performance.now() - started,
          stop: () =>
            new Promise((done) => {
              child.removeAllListeners('exit');
              child.once('exit', done);
              // SIGINT: a server stops as on Ctrl-C, so --cpu-prof writes its profile.
              child.kill('SIGINT');
              children.delete(child);
            }),
        });
      }
    });
  });
}

/** `node dist/server.js` with `env`; with `pinned`, on the server's core. */
function startServer(env, { pinned = false, workers = 1, profile, bundle = 'dist/server.js' } = {}) {
  const args = [...nodeFlags(profile), bundle];
  const [bin, argv] = pinned ? pin(SERVER_CPU, process.execPath, args) : [process.execPath, args];
  return startProcess(
    bin,
    argv,
    { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: API_KEY, API_TOKEN: '', FSYNC: 'off', WORKERS: String(workers), ...env },
    (line) => {
      try {
        const entry = JSON.parse(line);
        if (workers > 1) return entry.msg === 'workers listening' ? entry.port : undefined;
        return entry.msg === 'listening' ? Number(new URL(entry.url).port) : undefined;
      } catch {
        return undefined;
      }
    },
  );
}

/** VmRSS and VmHWM of a process, MB (Linux). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Every process as [pid, ppid, comm, CPU seconds (user + system)], from /proc (Linux). */
function processes() {
  const out = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      out.push([Number(pid), Number(fields[1]), stat.slice(stat.indexOf('(') + 1, close), (Number(fields[11]) + Number(fields[12])) / 100]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds so far of `pid` and its children (the workers). */
const treeCpu = (pid) =>
  processes()
    .filter(([p, ppid]) => p === pid || ppid === pid)
    .reduce((n, p) => n + p[3], 0);

/** A process's command line, or '' once it is gone. */
function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** CPU seconds of the backends of database `name` now (their process titles name it). */
const backendsCpu = (name) => {
  const postmaster = Number(process.env.BENCH_PG_PID ?? 0);
  const title = new RegExp(`^postgres: \\S+ ${name} `);
  return processes()
    .filter(([pid, ppid]) => ppid === postmaster && title.test(commandLine(pid)))
    .reduce((n, p) => n + p[3], 0);
};

/**
 * CPU seconds so far of our PostgreSQL server's processes (its postmaster, named by BENCH_PG_PID,
 * and the backends it forked): other PostgreSQL servers on the machine are not ours to count.
 * 0 without one.
 */
const databaseCpu = () => {
  const postmaster = Number(process.env.BENCH_PG_PID ?? 0);
  if (!postmaster) return 0;
  return processes()
    .filter(([pid, ppid]) => pid === postmaster || ppid === postmaster)
    .reduce((n, p) => n + p[3], 0);
};
/** The load average of the last minute: how busy the machine was (/proc/loadavg). */
const load = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** Runs this file as a child (`--child <mode> <args…>`) and returns the JSON it prints last. */
function runChild(mode, ...args) {
  const profile = CPU_PROF && join(CPU_PROF, `${mode}${args[1] === 'all' ? '-all' : ''}`);
  const env = { ...process.env, ...(profile && { BENCH_PROFILE_DIR: profile }) };
  const r = spawnSync(process.execPath, ['--expose-gc', SELF, '--child', mode, ...args], {
    env,
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`child ${mode} failed (exit ${r.status})`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// ---- seeded data --------------------------------------------------------------------------------

/** A seeded generator: every run writes the same data. */
function xorshift(seed) {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** `n` distinct codes of the service's alphabet (so the redirect's fast path takes them). */
async function codes(n, length) {
  const { createCodeSource } = await import(dist('links/codes.js'));
  const next = createCodeSource();
  const seen = new Set();
  while (seen.size < n) seen.add(next(length));
  return [...seen];
}

/** The 30 whole UTC days before the day of `now`: where the seeded events are, and what the stats ask. */
function thirtyDays(now) {
  const to = Math.floor(now / DAY) * DAY;
  return { from: to - 30 * DAY, to };
}

/** Referrer hosts of the seeded events; event referrer n (1-based) is REFERRER_HOSTS[n - 1]. */
const REFERRER_HOSTS = Array.from({ length: 200 }, (_, i) =>
  i < 8
    ? ['google.com', 't.co', 'news.ycombinator.com', 'www.reddit.com', 'duckduckgo.com', 'www.bing.com', 'lnkd.in', 'www.facebook.com'][i]
    : `site-${i}.example`,
);

/**
 * `count` events of one link in time order over `[from, to)`, packed (visits/packed.ts): visitors
 * from a pool of `pool` a day, a referrer for 2 in 3, 1 in 10 a bot, 1 in 17 without a visitor id.
 */
function packedEvents(packed, next, count, from, to, pool) {
  const { STRIDE, BOT, HAS_VISITOR } = packed;
  const data = new Uint32Array(count * STRIDE);
  const span = to - from;
  for (let i = 0; i < count; i++) {
    const at = i * STRIDE;
    data[at] = from + Math.floor((i * span) / count);
    data[at + 1] = next() % pool;
    data[at + 2] = next() % 3 === 0 ? 0 : 1 + (next() % REFERRER_HOSTS.length);
    const r = next();
    // Country 1–676, browser 1–7, OS 1–7, device 1–4 (0 would be "none").
    data[at + 3] =
      ((1 + (r % 676)) |
        ((1 + ((r >>> 10) % 7)) << 10) |
        ((1 + ((r >>> 13) % 7)) << 13) |
        ((1 + ((r >>> 16) % 4)) << 16) |
        (r % 10 === 0 ? BOT : 0) |
        (r % 17 === 0 ? 0 : HAS_VISITOR)) >>>
      0;
  }
  return data;
}

/**
 * A data dir whose log holds `links` links (codes of `codeLength`) and, with `eventsPerLink` > 0,
 * that many events each over the 30 days before `now`: written straight to `urls.log` as format 3.
 * Returns the dir, the codes and the log's size.
 */
async function seedLog({ links, eventsPerLink = 0, codeLength = 7, now, dir = tempDir(), linkCodes }) {
  const { encodeEntry, HEADER } = await import(dist('store/log/format.js'));
  const packed = await import(dist('visits/packed.js'));
  const list = linkCodes ?? (await codes(links, codeLength));
  const path = join(dir, 'urls.log');
  const fd = openSync(path, 'w');
  let pending = [HEADER];
  let bytes = HEADER.length;
  const put = (buf) => {
    pending.push(buf);
    bytes += buf.length;
    if (pending.length >= 4096) flush();
  };
  const flush = () => {
    writeSync(fd, Buffer.concat(pending));
    pending = [];
  };
  const createdAt = now - 40 * DAY;
  for (let i = 0; i < list.length; i++) {
    put(
      encodeEntry({
        op: 'C',
        code: list[i],
        url: `https://example.com/analytics/${i}/${'x'.repeat(40)}`,
        createdAt: createdAt + (i % 1000),
        retentionDays: 0,
        visits: 0,
      }),
    );
  }
  if (eventsPerLink > 0) {
    REFERRER_HOSTS.forEach((host, i) => {
      put(encodeEntry({ op: 'R', n: i + 1, host }));
    });
    const next = xorshift(42);
    const { from, to } = thirtyDays(now);
    // 4,096 events a line, as a compaction writes them.
    const PER_LINE = 4096;
    for (const code of list) {
      const data = packedEvents(packed, next, eventsPerLink, from, to, eventsPerLink >= 100_000 ? 50_000 : 1_000_000);
      for (let i = 0; i < eventsPerLink; i += PER_LINE) {
        const part = data.subarray(i * packed.STRIDE, Math.min(eventsPerLink, i + PER_LINE) * packed.STRIDE);
        put(encodeEntry(i === 0 ? { op: 'K', code, seq: eventsPerLink, events: part } : { op: 'J', code, events: part }));
      }
    }
  }
  flush();
  closeSync(fd);
  return { dir, codes: list, bytes };
}

// ---- 1. redirects: events against counts ----------------------------------------------------------

/** A string as a Lua literal (printable ASCII only: the caller filters). */
const lua = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** More than 1,000 distinct real User-Agents: every browser of `user-agents`, and crawlers (about 1 in 8). */
async function userAgents() {
  const require = createRequire(join(ROOT, 'package.json'));
  const printable = (s) => typeof s === 'string' && /^[\x20-\x7e]{1,512}$/.test(s);
  const rows = JSON.parse(readFileSync(join(dirname(require.resolve('user-agents')), 'user-agents.json'), 'utf8'));
  const browsers = [...new Set(rows.map((u) => u.userAgent))].filter(printable);
  const { default: list } = await import('crawler-user-agents');
  const crawlers = [...new Set(list.flatMap((c) => c.instances))].filter(printable);
  return { browsers, crawlers: crawlers.slice(0, Math.ceil(browsers.length / 7)) };
}

/** 12,000 public client addresses, 1 in 10 IPv6, from a seeded generator. */
function clientAddresses() {
  const next = xorshift(7);
  const out = new Set();
  while (out.size < MIX_ADDRESSES) {
    if (out.size % 10 === 9) {
      const groups = [0x2000 + (next() % 0x0fff), ...Array.from({ length: 3 }, () => next() % 0x10000)];
      out.add(`${groups.map((g) => g.toString(16)).join(':')}::${(next() % 0xffff).toString(16)}`);
      continue;
    }
    const a = 1 + (next() % 223);
    // Not private, loopback, link-local, multicast or shared: a country is found for most.
    if (a === 10 || a === 127 || a === 100 || a === 169 || a === 172 || a === 192) continue;
    out.add(`${a}.${next() % 256}.${next() % 256}.${1 + (next() % 254)}`);
  }
  return [...out];
}

/** The wrk script of the mix: the tables, then MIX_REQUESTS requests made from them at start. */
async function mixScript(linkCodes) {
  const { browsers, crawlers } = await userAgents();
  const agents = [...browsers, ...crawlers];
  const addresses = clientAddresses();
  const referrers = REFERRER_HOSTS.map((h, i) => (i % 4 === 0 ? `https://${h}/` : `https://${h}/some/page?q=${i}`));
  const table = (name, xs) => `local ${name} = {\n${xs.map(lua).join(',\n')}\n}\n`;
  const script = `${table('agents', agents)}${table('addresses', addresses)}${table('referrers', referrers)}${table(
    'paths',
    linkCodes.map((c) => `/${c}`),
  )}
local requests = {}
init = function(args)
  math.randomseed(42)
  for i = 1, ${MIX_REQUESTS} do
    local h = {}
    h["User-Agent"] = agents[math.random(#agents)]
    -- Every address in turn; now and then behind a second proxy (TRUST_PROXY=1 takes the last).
    local address = addresses[((i - 1) % #addresses) + 1]
    if i % 5 == 0 then address = "198.51.100." .. (i % 250) .. ", " .. address end
    h["X-Forwarded-For"] = address
    -- A referrer for 6 in 10, Do Not Track for 1 in 30.
    if math.random(10) <= 6 then h["Referer"] = referrers[math.random(#referrers)] end
    if i % 30 == 0 then h["DNT"] = "1" end
    h["Accept"] = "text/html,application/xhtml+xml"
    h["Accept-Language"] = "en-US,en;q=0.9"
    requests[i] = wrk.format("GET", paths[math.random(#paths)], h)
  end
end
local n = 0
request = function()
  n = n % ${MIX_REQUESTS} + 1
  return requests[n]
end
`;
  const dir = tempDir('bench-wrk-');
  const file = join(dir, 'mix.lua');
  writeFileSync(file, script);
  return { file, agents: agents.length, crawlers: crawlers.length, addresses: addresses.length, referrers: referrers.length };
}

/** One wrk run of the mix against `port`: requests/s, p99, failures (anything but a 302 is one). */
function runMix(port, script, seconds, { pinned }) {
  return runWrkSync(mixCommand(port, script, seconds, { pinned }));
}

/** `runMix`, not blocking: two run at once side by side. */
function runMixAsync(port, script, seconds, { pinned }) {
  return runWrkAsync(mixCommand(port, script, seconds, { pinned }), children);
}

function mixCommand(port, script, seconds, { pinned }) {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', script, `http://127.0.0.1:${port}/`];
  return pinned ? pin(LOAD_CPU, 'wrk', args) : ['wrk', args];
}

function geoipDb() {
  const require = createRequire(join(ROOT, 'package.json'));
  return join(dirname(require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json')), 'geo-whois-asn-country.mmdb');
}

/**
 * Rounds of events against counts: each round starts both servers anew (`start(tracking)`),
 * warms each up until it has served the mix `WARM_PASSES` times (at least a second), then measures
 * them in turn, the order alternating by round.
 */
async function eventsAgainstCounts(label, start, script, { pinned }) {
  const runs = [];
  let failed = false;
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['events', 'counts'] : ['counts', 'events'];
    const result = {};
    for (const tracking of order) {
      const server = await start(tracking);
      // Warm-up (JIT, connections, caches) until the server has seen the mix three times over: a
      // server that has run a while knows its clients, and a first visit of each (its country,
      // its hashes) is a cost of the first minutes, not of the steady state measured here.
      const first = runMix(server.port, script, 1, { pinned });
      const more = Math.ceil((WARM_PASSES * MIX_REQUESTS) / Math.max(first.rps, 1)) - 1;
      if (more > 0) runMix(server.port, script, more, { pinned });
      await pause(PAUSE_MS);
      const [app, db] = [treeCpu(server.pid), databaseCpu()];
      const r = runMix(server.port, script, SECONDS, { pinned });
      // CPU per request, µs: what a saturated core can carry is 1e6 / this, however busy the machine.
      r.appUs = ((treeCpu(server.pid) - app) / (r.rps * SECONDS)) * 1e6;
      r.dbUs = ((databaseCpu() - db) / (r.rps * SECONDS)) * 1e6;
      await server.stop();
      if (r.failures > 0) {
        failed = true;
        console.error(`run failed: ${label}, ${tracking}: ${r.failures} errors or statuses other than 302`);
      }
      result[tracking] = r;
      process.stderr.write(
        `${label} round ${round + 1}: ${tracking} ${fmt(r.rps)} req/s, node ${fmt(r.appUs, 1)} µs CPU a request, database ${fmt(r.dbUs, 1)} µs\n`,
      );
    }
    runs.push({
      ...result,
      ratio: result.events.rps / result.counts.rps,
      cpuRatio: (result.counts.appUs + result.counts.dbUs) / (result.events.appUs + result.events.dbUs),
    });
  }
  return { runs, failed };
}

/**
 * Rounds of events against counts side by side, as `npm run bench` compares its pairs: both servers
 * started anew on CPU 0 at once, a wrk each on CPU 1, warmed up together as above, then measured
 * together. Whatever else the machine does then slows both alike, so the ratio of their requests/s
 * is the ratio of their CPU cost a request; one after the other, as above, it also holds how the
 * machine's speed changed between the two runs. Over PostgreSQL (`pinned` false) nothing is
 * pinned, each server has a database of its own (its `database`), and each one's database time is
 * that of its database's backends.
 */
async function eventsBesideCounts(label, start, script, { pinned = true } = {}) {
  const runs = [];
  let failed = false;
  for (let round = 0; round < ROUNDS; round++) {
    const servers = await Promise.all([start('events'), start('counts')]);
    const both = (seconds) => Promise.all(servers.map((server) => runMixAsync(server.port, script, seconds, { pinned })));
    const first = await both(1);
    const more = Math.ceil((WARM_PASSES * MIX_REQUESTS) / Math.max(Math.min(...first.map((r) => r.rps)), 1)) - 1;
    if (more > 0) await both(more);
    await pause(PAUSE_MS);
    const cpu = () => servers.map((server) => [treeCpu(server.pid), server.database === undefined ? 0 : backendsCpu(server.database)]);
    const before = cpu();
    const [events, counts] = await both(SECONDS);
    const after = cpu();
    for (const [i, r] of [events, counts].entries()) {
      r.appUs = ((after[i][0] - before[i][0]) / (r.rps * SECONDS)) * 1e6;
      r.dbUs = ((after[i][1] - before[i][1]) / (r.rps * SECONDS)) * 1e6;
    }
    await Promise.all(servers.map((server) => server.stop()));
    if (events.failures + counts.failures > 0) {
      failed = true;
      console.error(`run failed: ${label}, side by side: ${events.failures + counts.failures} errors or statuses other than 302`);
    }
    process.stderr.write(`${label} side by side, round ${round + 1}: events ${fmt(events.rps)} req/s, counts ${fmt(counts.rps)} req/s\n`);
    runs.push({ events, counts, ratio: events.rps / counts.rps, cpuRatio: (counts.appUs + counts.dbUs) / (events.appUs + events.dbUs) });
  }
  return { runs, failed };
}

function printComparison(label, { runs }, goal, { database = false } = {}) {
  const ratios = runs.map((r) => r.ratio);
  const ratio = median(ratios);
  const cpuRatio = median(runs.map((r) => r.cpuRatio));
  const side = (t) => {
    const m = (key) => median(runs.map((r) => r[t][key]));
    return `${t} ${fmt(m('rps'))} req/s (p99 ${fmt(m('p99'), 2)} ms; node ${fmt(m('appUs'), 1)} µs CPU a request${database ? `, database ${fmt(m('dbUs'), 1)} µs` : ''})`;
  };
  console.log(
    `${label}: ${side('events')}, ${side('counts')}; events / counts per round: ${ratios.map((r) => fmt(r, 3)).join(', ')}; ` +
      `median ${fmt(ratio, 3)} (goal ≥ ${goal}: ${verdict(ratio >= goal)}); by CPU a request (counts / events${database ? ', node and database' : ''}), per round: ` +
      `${runs.map((r) => fmt(r.cpuRatio, 3)).join(', ')}; median ${fmt(cpuRatio, 3)}`,
  );
  return ratio;
}

async function reportRedirects(now) {
  if (!has('wrk')) {
    console.log('visit analytics, redirects: wrk is not installed (apt-get install wrk), skipped');
    return false;
  }
  const { codes: linkCodes } = await seedLog({ links: MIX_LINKS, now, codeLength: 6, dir: tempDir() });
  const mix = await mixScript(linkCodes);
  const GEOIP_DB = geoipDb();
  console.log(
    `mix: ${fmt(mix.agents)} distinct User-Agents (${fmt(mix.crawlers)} of them crawlers), ${fmt(mix.addresses)} client addresses in X-Forwarded-For (TRUST_PROXY=1), ` +
      `${mix.referrers} referrers (6 requests in 10), ${MIX_LINKS} links, ${fmt(MIX_REQUESTS)} requests prepared; GEOIP_DB loaded; ` +
      `${ROUNDS} rounds of ${SECONDS} s, both servers started anew each round, order alternating; ${CONNECTIONS} connections`,
  );
  let failed = false;
  if (PARTS.has('redirect')) {
    // Every server start gets a copy of the same seeded log: the events of one run never grow the next's.
    const seed = join(tempDir(), 'seed');
    mkdirSync(seed);
    await seedLog({ links: MIX_LINKS, now, linkCodes, dir: seed });
    const start = (tracking, bundle) => {
      const dir = tempDir();
      cpSync(join(seed, 'urls.log'), join(dir, 'urls.log'));
      return startServer(
        { DATA_DIR: dir, VISIT_TRACKING: tracking, TRUST_PROXY: '1', GEOIP_DB },
        { pinned: true, profile: `redirect-log-${tracking}`, bundle },
      );
    };
    if (AGAINST && PINNED) {
      // Two builds with events, side by side: the "counts" server runs the other bundle, with events.
      const against = await eventsBesideCounts('log store', (t) => (t === 'events' ? start('events') : start('events', AGAINST)), mix.file);
      const ratios = against.runs.map((r) => r.ratio);
      console.log(
        `redirects with events, this build / ${AGAINST}, side by side: per round ${ratios.map((r) => fmt(r, 3)).join(', ')}; median ${fmt(median(ratios), 3)}; ` +
          `by CPU a request, per round ${against.runs.map((r) => fmt(r.cpuRatio, 3)).join(', ')}; median ${fmt(median(against.runs.map((r) => r.cpuRatio)), 3)}`,
      );
      return against.failed;
    }
    const result = await eventsAgainstCounts('log store', start, mix.file, { pinned: true });
    failed ||= result.failed;
    printComparison(`redirects, log store (${PINNED ? `server on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}` : 'not pinned'})`, result, 0.9);
    if (PINNED) {
      const beside = await eventsBesideCounts('log store', start, mix.file);
      failed ||= beside.failed;
      printComparison(`redirects, log store, side by side (both servers on CPU ${SERVER_CPU} at once, a wrk each on CPU ${LOAD_CPU})`, beside, 0.9);
    }
  }
  if (PARTS.has('pg')) {
    const pg = startPostgres();
    if (!pg) {
      console.log('redirects over PostgreSQL: PostgreSQL is not installed (apt-get install postgresql), skipped');
      return failed;
    }
    let db = 0;
    const start = async (tracking) => {
      // A database of its own per start: the events of one run never grow the next's table.
      const database = `mix${++db}`;
      const url = await createDatabase(pg.url, database);
      const server = await startServer(
        { DATABASE_URL: url, VISIT_TRACKING: tracking, TRUST_PROXY: '1', GEOIP_DB },
        { workers: 2, profile: `redirect-pg-${tracking}` },
      );
      await insertLinks(url, linkCodes, now);
      return { ...server, database };
    };
    const result = await eventsAgainstCounts('PostgreSQL', start, mix.file, { pinned: false });
    failed ||= result.failed;
    printComparison('redirects, PostgreSQL, WORKERS=2 (nothing pinned)', result, 0.85, { database: true });
    const beside = await eventsBesideCounts('PostgreSQL', start, mix.file, { pinned: false });
    failed ||= beside.failed;
    printComparison('redirects, PostgreSQL, WORKERS=2, side by side (both servers at once, a wrk each, nothing pinned)', beside, 0.85, { database: true });
  }
  return failed;
}

// ---- PostgreSQL ----------------------------------------------------------------------------------

const PG_SCRIPT = join(ROOT, 'scripts', 'pg-test-server.sh');
let postgresServer;

/** A throwaway PostgreSQL server (scripts/pg-test-server.sh), one per run; undefined when none is installed. */
function startPostgres() {
  if (postgresServer !== undefined) return postgresServer || undefined;
  const r = spawnSync(PG_SCRIPT, ['start'], { encoding: 'utf8' });
  if (r.status !== 0) {
    postgresServer = false;
    return undefined;
  }
  const dir = r.stderr.trim().split('\n').pop();
  cleanups.push(() => spawnSync(PG_SCRIPT, ['stop', dir]));
  postgresServer = { url: r.stdout.trim(), dir };
  // The postmaster's pid, for `databaseCpu` here and in the children.
  process.env.BENCH_PG_PID = readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8')
    .split('\n')[0]
    .trim();
  return postgresServer;
}

/** Runs `fn(sql)` on a connection to `url`. */
async function withSql(url, fn) {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function createDatabase(serverUrl, name) {
  await withSql(serverUrl, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  return serverUrl.replace(/\/postgres$/, `/${name}`);
}

/** The links of `codes`, inserted into a database the service has migrated. */
async function insertLinks(url, linkCodes, now) {
  await withSql(url, async (sql) => {
    const rows = linkCodes.map((code, i) => ({
      code,
      url: `https://example.com/analytics/${i}/${'x'.repeat(40)}`,
      created_at: now - 40 * DAY,
      retention_days: 0,
    }));
    await sql`INSERT INTO links ${sql(rows, 'code', 'url', 'created_at', 'retention_days')}`;
  });
}

/** The last plan auto_explain logged (the stats statement), saved beside the profiles; its slowest nodes printed. */
function savePlan(pgDir) {
  const log = readFileSync(join(pgDir, 'server.log'), 'utf8');
  const start = log.lastIndexOf('LOG:  duration:');
  if (start === -1) return;
  const plan = log.slice(start);
  writeFileSync(join(CPU_PROF, 'pg-stats-plan.txt'), plan);
  const nodes = plan.split('\n').filter((l) => /->|^\s*(Append|Sort|Aggregate|GroupAggregate|HashAggregate)/.test(l) && /actual time=/.test(l));
  const slowest = nodes
    .map((l) => ({ l: l.trim().replace(/\s+/g, ' '), t: Number(/actual time=[\d.]+\.\.([\d.]+)/.exec(l)?.[1] ?? 0) }))
    .sort((a, b) => b.t - a.t)
    .slice(0, 12);
  console.log(
    `plan of the stats statement (auto_explain, ${join(CPU_PROF, 'pg-stats-plan.txt')}): ${plan.split('\n')[0].trim()}; its slowest nodes (inclusive time):`,
  );
  for (const { l } of slowest) console.log(`  ${l.slice(0, 220)}`);
}

// ---- 2. stats ------------------------------------------------------------------------------------

/**
 * With BENCH_PROFILE_DIR (a stats child under BENCH_CPU_PROF), `fn` runs under the inspector's
 * profiler and its profile is written there: the questions alone, without the store's start-up.
 */
async function profiled(fn) {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return fn();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `questions-${process.pid}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/** CPU ms of this process (every thread) since `since` (a `process.cpuUsage()`). */
const cpuMs = (since) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

/**
 * Times `ask()` `n` times after `warm` unmeasured runs: wall-clock ms and CPU ms of each, each
 * sorted. CPU time too: on a shared machine the wall clock says as much about the neighbours.
 */
async function timed(ask, warm, n) {
  for (let i = 0; i < warm; i++) await ask();
  return profiled(() => timedRuns(ask, n));
}

async function timedRuns(ask, n) {
  const ms = [];
  const cpu = [];
  for (let i = 0; i < n; i++) {
    const used = process.cpuUsage();
    const t = performance.now();
    await ask();
    ms.push(performance.now() - t);
    cpu.push(cpuMs(used));
  }
  return { ms: ms.sort((a, b) => a - b), cpu: cpu.sort((a, b) => a - b) };
}

/** The stats query of the 30 UTC days before today, in daily buckets, bots excluded: where the events are. */
async function statsQuery(now) {
  const { parseStatsRange, RangeRefusal } = await import(dist('visits/range.js'));
  const { from, to } = thirtyDays(now);
  const query = parseStatsRange({ from: String(from), to: String(to), interval: 'day', tz: 'UTC' }, now);
  if (query instanceof RangeRefusal) throw new Error(query.detail);
  return query;
}

/** Child: the log store on `dir`, one link's stats (`code`) or every link's (`all`). */
async function childLogStats(dir, what, now) {
  const { LogEngine } = await import(dist('store/log/log-engine.js'));
  const { LogLinkStore } = await import(dist('store/log/log-link-store.js'));
  const { createLogger } = await import(dist('log.js'));
  const store = new LogEngine({ dir, fsync: 'off', log: createLogger('silent'), visitFlushMs: 3_600_000 });
  const links = new LogLinkStore(store);
  const query = await statsQuery(now);
  const code = what === 'all' ? null : what;
  let result;
  const ask = async () => (result = await links.visitStats(code, query, now));
  if (code !== null) {
    const { ms, cpu } = await timed(ask, 5, 21);
    return { ms, cpu, visits: result.visits, buckets: result.series.length, tops: result.referrers.top.length };
  }
  // Every link: the loop's longest stall while each run is under way.
  await ask();
  const ms = [];
  const cpu = [];
  const stalls = [];
  const cpuStalls = [];
  await profiled(async () => {
    for (let i = 0; i < 7; i++) {
      globalThis.gc?.();
      const histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      // A timer that keeps asking for a turn: the longest gap between two of its calls is the longest
      // the loop was held, by the wall clock and by the CPU this process used meanwhile (which a
      // neighbour taking the core does not inflate).
      let ticking = true;
      let lastCpu = process.cpuUsage();
      let cpuStall = 0;
      const tick = () => {
        if (!ticking) return;
        const now = process.cpuUsage();
        cpuStall = Math.max(cpuStall, (now.user - lastCpu.user + now.system - lastCpu.system) / 1000);
        lastCpu = now;
        setTimeout(tick, 1);
      };
      tick();
      const used = process.cpuUsage();
      const t = performance.now();
      await ask();
      ms.push(performance.now() - t);
      cpu.push(cpuMs(used));
      await pause(5);
      ticking = false;
      histogram.disable();
      stalls.push(histogram.max / 1e6);
      cpuStalls.push(cpuStall);
    }
  });
  return {
    ms: ms.sort((a, b) => a - b),
    cpu: cpu.sort((a, b) => a - b),
    stalls,
    cpuStalls,
    visits: result.visits,
    links: result.links.length,
    buckets: result.series.length,
  };
}

/** Child: one link's stats on PostgreSQL (`url`, seeded), warm. */
async function childPgStats(url, code, now) {
  const { openPostgresStore } = await import(dist('store/postgres/connect.js'));
  const { createLogger } = await import(dist('log.js'));
  const store = await openPostgresStore({
    url,
    poolSize: 4,
    log: createLogger('silent'),
    readyCheckMs: 0,
    reapIntervalMs: 0,
    countRefreshMs: 0,
    visitJobsMs: 0,
    timeoutMs: 60_000,
  });
  try {
    const query = await statsQuery(now);
    let result;
    const ask = async () => (result = await store.visitStats(code, query, now));
    // The first question builds the summaries of the 30 closed days (day-summaries.ts); the warm ones read them.
    const first = performance.now();
    await ask();
    const firstMs = performance.now() - first;
    const summaries = await withSql(url, async (sql) => Number((await sql`SELECT count(*) AS n FROM visit_days`)[0].n));
    for (let i = 0; i < 2; i++) await ask();
    // The database's CPU while its connections to this process are open (a backend that exits takes its figure along).
    const before = databaseCpu();
    const { ms, cpu } = await timed(ask, 0, 7);
    const dbMs = ((databaseCpu() - before) * 1000) / 7;
    const visits = result.visits;
    // The raw statement alone, for comparison (what every question cost before the summaries); the same answer.
    const raw = await timed(async () => (result = await store.rawVisitStats(code, query, now)), 1, 3);
    if (result.visits !== visits) throw new Error(`the raw statement counts ${result.visits} visits, the summaries ${visits}`);
    // Other shapes of the same 30 days: Berlin's days cut UTC days (prefix and suffix of the
    // summaries, the range's partial days raw); hour buckets lie inside days (read raw).
    const { parseStatsRange } = await import(dist('visits/range.js'));
    const { from, to } = thirtyDays(now);
    const shapes = {};
    for (const [name, params] of [
      ['Berlin days', { interval: 'day', tz: 'Europe/Berlin' }],
      ['UTC hours', { interval: 'hour', tz: 'UTC' }],
    ]) {
      const shaped = parseStatsRange({ from: String(from), to: String(to), ...params }, now);
      const summarised = await store.visitStats(code, shaped, now);
      const [fast, slow] = [await timedRuns(() => store.visitStats(code, shaped, now), 3), await timedRuns(() => store.rawVisitStats(code, shaped, now), 3)];
      if (JSON.stringify(summarised) !== JSON.stringify(await store.rawVisitStats(code, shaped, now)))
        throw new Error(`${name}: the summaries and the raw statement disagree`);
      shapes[name] = { summaries: median(fast.ms), raw: median(slow.ms) };
    }
    return { ms, cpu, dbMs, firstMs, summaries, raw, shapes, visits, buckets: result.series.length };
  } finally {
    await store.close();
  }
}

/** A database with one link of `events` events over the 30 days before `now`, made as the store migrates it. */
async function seedPgEvents(serverUrl, code, events, now) {
  const url = await createDatabase(serverUrl, 'stats1m');
  // The store's own migrations and months.
  runChild('pg-open', url);
  await insertLinks(url, [code], now);
  await withSql(url, async (sql) => {
    const [{ seq }] = await sql`SELECT seq FROM links WHERE code = ${code}`;
    // The months the events fall in, as the store names them (it creates the current ones ahead).
    const { monthOf, monthRange, partitionName, addMonths } = await import(dist('store/postgres/partitions.js'));
    for (let m = monthOf(thirtyDays(now).from); ; m = addMonths(m, 1)) {
      const { from, to } = monthRange(m);
      await sql.unsafe(`CREATE TABLE IF NOT EXISTS ${partitionName(m)} PARTITION OF visits FOR VALUES FROM (${from}) TO (${to})`);
      if (to > now) break;
    }
    const hosts = sql.array(REFERRER_HOSTS);
    // The same mix as the log store's seeded events: a referrer for 2 in 3, 1 in 10 a bot, 1 in 17
    // without a visitor id, visitors from a pool of 50,000 a day.
    await sql`
      INSERT INTO visits (link_seq, time, referrer, country, browser, os, device, bot, visitor)
      SELECT ${seq}, ${thirtyDays(now).from} + (g::bigint * ${30 * DAY}) / ${events},
             CASE WHEN h % 3 = 0 THEN NULL ELSE (${hosts}::text[])[1 + (h / 3) % ${REFERRER_HOSTS.length}] END,
             chr((65 + (h / 7) % 26)::int) || chr((65 + (h / 191) % 26)::int),
             ((h / 11) % 7)::smallint, ((h / 13) % 7)::smallint, ((h / 17) % 4)::smallint,
             h % 10 = 0,
             CASE WHEN h % 17 = 0 THEN NULL ELSE ((h / 23) % 50000)::int END
      FROM (SELECT g, ((g::bigint * 2654435761) % 4294967291) AS h FROM generate_series(0, ${events - 1}) g) s`;
    await sql`UPDATE links SET visit_count = ${events} WHERE seq = ${seq}`;
    await sql`VACUUM ANALYZE visits`;
    // Under BENCH_CPU_PROF the database logs the plan of every slow statement, with its timings.
    if (CPU_PROF)
      await sql.unsafe(
        `ALTER DATABASE stats1m SET session_preload_libraries = 'auto_explain'; ALTER DATABASE stats1m SET auto_explain.log_min_duration = '1s'; ALTER DATABASE stats1m SET auto_explain.log_analyze = on`,
      );
  });
  return url;
}

/** "median 12.3 ms (CPU 11.0 ms), fastest …, slowest … of n" */
const spread = (r, digits) =>
  `median ${fmt(median(r.ms), digits)} ms (CPU ${fmt(median(r.cpu), digits)} ms), fastest ${fmt(r.ms[0], digits)}, slowest ${fmt(r.ms.at(-1), digits)} of ${r.ms.length}`;

async function reportStats(now) {
  if (PARTS.has('stats')) await reportLogStats(now);
  const pg = startPostgres();
  if (!pg) console.log('stats over PostgreSQL: PostgreSQL is not installed, skipped');
  else {
    const [code] = await codes(1, 7);
    const t = performance.now();
    const url = await seedPgEvents(pg.url, code, 1_000_000, now);
    const seeded = performance.now() - t;
    const r = runChild('pg-stats', url, code, String(now));
    if (CPU_PROF) savePlan(pg.dir);
    console.log(
      `stats of one link over 1M events, PostgreSQL (visitStats in-process, ${r.buckets} daily buckets, every top list, warm; seeded in ${fmt(seeded / 1000, 1)} s; ` +
        `the first question, which built ${r.summaries} day summaries, ${fmt(r.firstMs)} ms): ` +
        `${spread(r, 0)}, the database's CPU ${fmt(r.dbMs)} ms a question (goal ≤ 200 ms: ${verdict(median(r.ms) <= 200)}); ` +
        `the raw statement alone (no summaries): ${spread(r.raw, 0)}; ` +
        Object.entries(r.shapes)
          .map(([name, m]) => `${name}: ${fmt(m.summaries)} ms, raw ${fmt(m.raw)} ms`)
          .join('; ') +
        ' (medians of 3)',
    );
  }
}

async function reportLogStats(now) {
  const oneLink = await seedLog({ links: 1, eventsPerLink: 1_000_000, now });
  const one = runChild('log-stats', oneLink.dir, oneLink.codes[0], String(now));
  console.log(
    `stats of one link over 1M events, log store (visitStats in-process, ${one.buckets} daily buckets, every top list, warm): ${spread(one, 1)} ` +
      `(goal ≤ 20 ms: ${verdict(median(one.ms) <= 20)}; by CPU time ${verdict(median(one.cpu) <= 20)})`,
  );
  rmSync(oneLink.dir, { recursive: true, force: true });
}

// ---- 3. 10M events over 100k links: stats of every link, storage ---------------------------------

async function reportStorage(now) {
  try {
    await storage(now);
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs.clear();
  }
}

async function storage(now) {
  const links = 100_000;
  const perLink = 100;
  const events = links * perLink;
  let t = performance.now();
  const withEvents = await seedLog({ links, eventsPerLink: perLink, now });
  const seedMs = performance.now() - t;
  const without = await seedLog({ links, now, linkCodes: withEvents.codes });
  const perEvent = (withEvents.bytes - without.bytes) / events;
  console.log(
    `10M events over 100k links (100 each, seeded in ${fmt(seedMs / 1000, 1)} s): log ${fmt(withEvents.bytes / 1e6)} MB, the same links without events ${fmt(without.bytes / 1e6)} MB: ` +
      `${fmt(perEvent, 1)} bytes an event (goal ≤ 32: ${verdict(perEvent <= 32)})`,
  );

  if (PARTS.has('stats')) {
    const all = runChild('log-stats', withEvents.dir, 'all', String(now));
    const stall = Math.max(...all.stalls);
    const cpuStall = Math.max(...all.cpuStalls);
    console.log(
      `stats of every link over 10M events (the /api/stats question, visitStats in-process, ${all.buckets} daily buckets, every top list and the links top ${all.links}): ` +
        `${spread(all, 0)} (goal ≤ 200 ms: ${verdict(median(all.ms) <= 200)}; by CPU time ${verdict(median(all.cpu) <= 200)}); ` +
        `longest event-loop stall meanwhile ${fmt(stall, 1)} ms (median of the runs' longest ${fmt(median(all.stalls), 1)} ms), ` +
        `in CPU time ${fmt(cpuStall, 1)} ms (median ${fmt(median(all.cpuStalls), 1)} ms) (goal ≤ ~50 ms: ${verdict(stall <= 55)}; by CPU time ${verdict(cpuStall <= 55)})`,
    );
  }

  if (!PARTS.has('storage')) return;
  // Start-up: the server on each dir in turn, alternating, each start on the same log.
  const runs = { events: [], none: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['events', 'none'] : ['none', 'events'];
    for (const which of order) {
      const dir = which === 'events' ? withEvents.dir : without.dir;
      t = performance.now();
      const server = await startServer({ DATA_DIR: dir }, { profile: `start-up-${which}` });
      const startMs = performance.now() - t;
      // CPU seconds to get there: what a busy machine does not inflate.
      const startCpuMs = treeCpu(server.pid) * 1000;
      // Settled: the URL index is built in the background after start-up.
      await pause(2000);
      const mem = memory(server.pid);
      await server.stop();
      runs[which].push({ startMs, startCpuMs, ...mem });
      process.stderr.write(
        `start-up round ${round + 1}: ${which === 'events' ? '10M events' : 'no events'}: ${fmt(startMs)} ms (CPU ${fmt(startCpuMs)} ms), RSS ${fmt(mem.rss)} MB\n`,
      );
    }
  }
  const m = (which, key) => median(runs[which].map((r) => r[key]));
  const dStart = m('events', 'startMs') - m('none', 'startMs');
  const dCpu = m('events', 'startCpuMs') - m('none', 'startCpuMs');
  const dRss = m('events', 'rss') - m('none', 'rss');
  console.log(
    `server start-up (spawn to listening, medians of ${ROUNDS}, alternating): 100k links with 10M events ${fmt(m('events', 'startMs'))} ms, without ${fmt(m('none', 'startMs'))} ms: ` +
      `+${fmt(dStart / 1000, 2)} s (goal ≤ +5 s: ${verdict(dStart <= 5000)}); CPU time to listening ${fmt(m('events', 'startCpuMs'))} ms against ${fmt(m('none', 'startCpuMs'))} ms: ` +
      `+${fmt(dCpu / 1000, 2)} s (${verdict(dCpu <= 5000)}); RSS 2 s after listening ${fmt(m('events', 'rss'))} MB against ${fmt(m('none', 'rss'))} MB: ` +
      `+${fmt(dRss)} MB (goal ≤ +200 MB: ${verdict(dRss <= 200)}); peak RSS during start-up ${fmt(m('events', 'peak'))} MB against ${fmt(m('none', 'peak'))} MB`,
  );
}

// ---- profiles ------------------------------------------------------------------------------------

/** Base-64 VLQ segments of a source map's `mappings` (the bundle's `server.js.map`). */
function sourceMapper(mapFile) {
  if (!existsSync(mapFile)) return () => undefined;
  const map = JSON.parse(readFileSync(mapFile, 'utf8'));
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const lines = [];
  let src = 0;
  let srcLine = 0;
  for (const line of map.mappings.split(';')) {
    const segments = [];
    let col = 0;
    for (const seg of line.split(',')) {
      if (!seg) continue;
      const values = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const digit = B64.indexOf(ch);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      col += values[0];
      if (values.length >= 4) {
        src += values[1];
        srcLine += values[2];
        segments.push([col, src, srcLine]);
      }
    }
    lines.push(segments);
  }
  // The source line of a generated position (0-based line and column), as `src/…:line`.
  return (line, column) => {
    const segments = lines[line];
    if (!segments) return undefined;
    let found;
    for (const seg of segments) {
      if (seg[0] > column) break;
      found = seg;
    }
    return found && `${map.sources[found[1]].replace(/^(\.\.\/)+/, '')}:${found[2] + 1}`;
  };
}

/**
 * The functions with the most self time in each folder of profiles (`--cpu-prof`), the folder's
 * processes added up, as shares of the time they were not idle: where that scenario's time goes.
 */
function summarizeProfiles(root, top = 15) {
  const bundle = sourceMapper(join(ROOT, 'dist', 'server.js.map'));
  for (const label of readdirSync(root).sort()) {
    const folder = join(root, label);
    if (!statSync(folder).isDirectory()) continue;
    const files = readdirSync(folder).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) continue;
    const self = new Map();
    let busy = 0;
    for (const file of files) {
      const profile = JSON.parse(readFileSync(join(folder, file), 'utf8'));
      const names = new Map(
        profile.nodes.map((n) => {
          const { functionName, url, lineNumber, columnNumber } = n.callFrame;
          const where = url.endsWith('dist/server.js')
            ? bundle(lineNumber, columnNumber)
            : url && `${url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}`;
          return [n.id, `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`];
        }),
      );
      profile.samples.forEach((id, i) => {
        const name = names.get(id);
        if (name === '(idle)') return;
        const dt = profile.timeDeltas[i] ?? 0;
        busy += dt;
        self.set(name, (self.get(name) ?? 0) + dt);
      });
    }
    console.log(`profile ${label} (${files.length} processes, ${fmt(busy / 1e6, 2)} s not idle): self time, top ${top}`);
    for (const [name, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${fmt((100 * t) / busy, 1).padStart(5)} %  ${name}`);
  }
}

// ---- main ------------------------------------------------------------------------------------------

/** The whole section, as `npm run bench` calls it. Resolves to true when a run failed. */
export async function reportAnalytics() {
  if (!existsSync(join(ROOT, 'dist', 'server.js'))) throw new Error('no build: run npm run build first');
  if (CPU_PROF) mkdirSync(CPU_PROF, { recursive: true });
  const now = Math.floor(Date.now() / 1000);
  console.log(
    `visit analytics (the goals): node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; parts: ${[...PARTS].join(', ')}; load average ${fmt(load(), 1)}`,
  );
  let failed = false;
  if (PARTS.has('redirect') || PARTS.has('pg')) failed = await reportRedirects(now);
  if (PARTS.has('stats') || PARTS.has('pg-stats')) await reportStats(now);
  if (PARTS.has('storage') || PARTS.has('stats')) await reportStorage(now);
  if (CPU_PROF) summarizeProfiles(CPU_PROF);
  console.log(`visit analytics done; load average ${fmt(load(), 1)}`);
  return failed;
}

async function child(mode, args) {
  switch (mode) {
    case 'log-stats':
      return childLogStats(args[0], args[1], Number(args[2]));
    case 'pg-stats':
      return childPgStats(args[0], args[1], Number(args[2]));
    case 'pg-open': {
      const { openPostgresStore } = await import(dist('store/postgres/connect.js'));
      const { createLogger } = await import(dist('log.js'));
      const store = await openPostgresStore({ url: args[0], poolSize: 1, log: createLogger('silent') });
      await store.close();
      return {};
    }
    default:
      throw new Error(`unknown child mode ${mode}`);
  }
}

if (process.argv[2] === '--child') {
  process.stdout.write(`${JSON.stringify(await child(process.argv[3], process.argv.slice(4)))}\n`);
  process.exit(0);
} else if (process.argv[2] === '--profiles') {
  summarizeProfiles(resolve(process.argv[3]));
} else if (process.argv[1] === SELF) {
  if (await reportAnalytics()) process.exitCode = 1;
}
