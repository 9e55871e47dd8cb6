/**
 * Crash cycles against the real server process (docs/storage.md, the promise): concurrent writes
 * and visits, `kill -9` at a random moment, restart on the same data dir, and check what came back.
 * The server runs on faster store clocks (`server-fast-clocks.ts`: visits flushed every 100 ms, a
 * compaction once the log passes 256 KiB), so that a load of about a second runs past several
 * flushes and compactions, where the defaults (1 s, 1 MiB) needed two or three seconds of it for
 * one of each.
 *
 * The promise under test: a create answered 201 or a delete answered 204 survives the kill; visit
 * counts lose at most about the last second, never go down, and never exceed the visits sent.
 * A request cut off by the kill was not acknowledged, so either outcome is fine for it.
 *
 * Kill delays and each worker's choice of operations come from a seeded PRNG, so a failing run can
 * be replayed with its seed (the interleaving of requests still depends on timing).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request, tempDir } from './helpers.ts';
import { FAST_CLOCKS, fastClocksServer } from './server-entry.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'k';
/** Settings the parent's environment must not leak into the child. */
const CONFIG_ENV = [
  'BASE_URL',
  'HOST',
  'PORT',
  'PRODUCTION',
  'MIN_SHORT_LENGTH',
  'MAX_SHORT_LENGTH',
  'API_KEYS',
  'API_TOKEN',
  'DATA_DIR',
  'FSYNC',
  'MAX_URL_LENGTH',
  'LOG_LEVEL',
  'MCP_ALLOWED_ORIGINS',
];
const START_TIMEOUT_MS = 30_000;
/**
 * Visits answered this long before the kill must be in the restarted count: the flush interval
 * plus slack for a busy event loop and a batch queued behind a create's fsync.
 */
const VISIT_WINDOW_MS = FAST_CLOCKS.visitFlushMs + 500;
/** The first links of the pool are visited most and never deleted. */
const HOT = 8;
/** Requests a long cycle answers before its kill, however slow the machine (at full speed it answers thousands). */
const LONG_LEAST_ANSWERED = 600;

export interface CrashOptions {
  cycles: number;
  /** Replays a run; a random one by default (always reported). */
  seed?: number;
  /** One line of progress per cycle. */
  log?: (line: string) => void;
  /** Concurrent clients during the load; 12 by default. */
  workers?: number;
}

export interface CrashSummary {
  cycles: number;
  seed: number;
  /** Creates answered 201, deletes answered 204, visits answered 302. */
  creates: number;
  deletes: number;
  visits: number;
  /** Requests cut off by a kill: sent (or being sent) and never answered. */
  unacknowledged: number;
  /** Cycles whose kill cut off at least one request in flight. */
  killedInFlight: number;
  /** Restarts that found a torn last line (a kill during a write) and cut it off. */
  tornTails: number;
  /** Automatic compactions finished before a kill (more may have been cut off by one). */
  compactions: number;
  /** Links and summed visit counts in the last restarted server. */
  links: number;
  visitCounts: number;
  /** Visits whose survival was required (answered over VISIT_WINDOW_MS before a kill). */
  visitsChecked: number;
  ms: number;
}

/** A broken promise: names the cycle (whose kill preceded the failed check), the seed and the property. */
export class CrashViolation extends Error {
  constructor(
    readonly cycle: number,
    readonly seed: number,
    readonly property: string,
    detail: string,
  ) {
    super(`crash cycle ${cycle} (seed ${seed}): ${property}: ${detail}`);
    this.name = 'CrashViolation';
  }
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return function next(): number {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const mix = (seed: number, a: number, b: number): number => (seed ^ Math.imul(a + 1, 0x9e3779b1) ^ Math.imul(b + 1, 0x85ebca6b)) >>> 0;

/**
 * What the clients know of one code. `maybe`: a delete was sent but not answered; the next restart
 * decides. `sent` counts visit requests written (an upper bound on the count), `seen` the count at
 * the last restart, `floor` what the next restart must show at least.
 */
interface Link {
  url: string;
  state: 'present' | 'absent' | 'maybe';
  sent: number;
  seen: number;
  floor: number;
}

interface Listed {
  short_code: string;
  original_url: string;
  visit_count: number;
}

interface ServerProcess {
  proc: ChildProcess;
  port: number;
  lines: Record<string, unknown>[];
  output(): string;
  exited: Promise<void>;
}

function spawnServer(dir: string): Promise<ServerProcess> {
  const server = fastClocksServer();
  const env: NodeJS.ProcessEnv = { ...process.env, ...server.env };
  for (const name of CONFIG_ENV) delete env[name];
  const proc = spawn(process.execPath, [server.entry, '--port', '0', '--data-dir', dir, '--api-keys', KEY, '--fsync', 'always', '--log-level', 'info'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let text = '';
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const output = (): string => text.trim();
  return new Promise<ServerProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not listen within ${START_TIMEOUT_MS} ms: ${output()}`));
    }, START_TIMEOUT_MS);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening (${proc.exitCode ?? proc.signalCode}): ${output()}`));
    });
    createInterface({ input: proc.stdout! }).on('line', (raw) => {
      text += `${raw}\n`;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return;
      }
      lines.push(line);
      if (line['msg'] === 'listening') {
        clearTimeout(timer);
        resolve({ proc, port: Number(new URL(String(line['url'])).port), lines, output, exited });
      }
    });
  });
}

/** SIGKILLs a child that still runs and waits until it is reaped (its lock is stale only then). */
async function kill(server: ServerProcess | undefined): Promise<void> {
  if (!server) return;
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
  await server.exited;
}

interface Answer {
  status: number;
  body: string;
}

/** One request on the cycle's keep-alive agent; `written` runs once its bytes are on the socket. */
function send(agent: Agent, port: number, method: string, path: string, body?: string, written?: () => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'x-api-key': KEY };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
      written?.();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
      res.on('close', () => {
        if (!res.complete) reject(new Error('response cut off'));
      });
    });
    if (written) req.once('finish', written);
    req.on('error', reject);
    req.end(body);
  });
}

const once = (f: () => void): (() => void) => {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      f();
    }
  };
};

export async function runCrashCycles(options: CrashOptions): Promise<CrashSummary> {
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
  const workers = options.workers ?? 12;
  const log = options.log ?? (() => undefined);
  const began = performance.now();
  const links = new Map<string, Link>();
  /** Codes known present and not being deleted: what workers visit and delete. */
  const pool: string[] = [];
  /** URLs of creates not answered in this cycle: such a link may or may not be there after the restart. */
  const pending = new Set<string>();
  const summary: CrashSummary = {
    cycles: 0,
    seed,
    creates: 0,
    deletes: 0,
    visits: 0,
    unacknowledged: 0,
    killedInFlight: 0,
    tornTails: 0,
    compactions: 0,
    links: 0,
    visitCounts: 0,
    visitsChecked: 0,
    ms: 0,
  };
  const dir = tempDir('shortener-crash-');
  let server: ServerProcess | undefined;

  /** Restarts on the data dir (as `server`) and checks it against what the clients were told. */
  async function restart(after: number): Promise<ServerProcess> {
    const fail = (property: string, detail: string): CrashViolation => new CrashViolation(after, seed, property, detail);
    let next: ServerProcess;
    try {
      next = server = await spawnServer(dir);
    } catch (err) {
      throw fail('the server restarts after a kill', (err as Error).message);
    }
    if (next.lines.some((l) => l['level'] === 'warn' && /torn/.test(String(l['msg'])))) summary.tornTails++;
    const r = await request(next.port, '/api/urls', { headers: { 'x-api-key': KEY } });
    if (r.status !== 200) throw fail('the listing answers', `GET /api/urls: ${r.status} ${r.body}`);
    const listed = new Map((JSON.parse(r.body) as { urls: Listed[] }).urls.map((u) => [u.short_code, u]));

    for (const [code, got] of listed) {
      const link = links.get(code);
      if (link && (link.state !== 'absent' || got.original_url === link.url)) continue;
      // A create cut off by the kill that made it to disk anyway: it is a link from now on.
      if (!pending.has(got.original_url)) {
        throw fail('no link appears that was never requested', `${code} → ${got.original_url}${link ? ` (deleted earlier: ${link.url})` : ''}`);
      }
      links.set(code, { url: got.original_url, state: 'present', sent: 0, seen: 0, floor: 0 });
      pool.push(code);
    }
    pending.clear();

    let visitCounts = 0;
    for (const [code, link] of links) {
      const got = listed.get(code);
      if (link.state === 'present' && !got) throw fail('an acknowledged create survives', `${code} → ${link.url} (answered 201) is missing`);
      if (link.state === 'absent' && got) throw fail('an acknowledged delete survives', `${code} (answered 204) is back`);
      if (link.state === 'maybe') {
        link.state = got ? 'present' : 'absent';
        if (got) pool.push(code);
      }
      if (!got) continue;
      if (got.original_url !== link.url) throw fail('a link keeps its URL', `${code}: ${got.original_url}, created as ${link.url}`);
      const n = got.visit_count;
      if (n < link.seen) throw fail('visit counts never go down', `${code}: ${n} after ${link.seen} at the previous restart`);
      if (n > link.sent) throw fail('visit counts never exceed the visits sent', `${code}: ${n}, but ${link.sent} visit requests were sent`);
      if (n < link.floor) {
        throw fail(`a crash loses at most the last ~${VISIT_WINDOW_MS} ms of visits`, `${code}: ${n}, but ${link.floor} visits were answered before that`);
      }
      link.seen = n;
      link.floor = n;
      visitCounts += n;
    }
    summary.links = listed.size;
    summary.visitCounts = visitCounts;
    return next;
  }

  /** Load until the kill, then SIGKILL: returns the progress line. */
  async function cycle(n: number, live: ServerProcess): Promise<string> {
    const fail = (property: string, detail: string): CrashViolation => new CrashViolation(n, seed, property, detail);
    const rand = prng(mix(seed, n, 0));
    // Most kills land in the first burst of writes; one in three runs past the visit window, and so
    // past several flushes, and no sooner than `LONG_LEAST_ANSWERED` requests are answered: a busy
    // machine then writes as much of the log before such a kill (and compacts it) as a fast one.
    const long = rand() >= 2 / 3;
    const killAfter = long ? 900 + Math.floor(rand() * 600) : 50 + Math.floor(rand() * 350);
    let answered = 0;
    let enough = (): void => undefined;
    const worked = long ? new Promise<void>((resolve) => (enough = resolve)) : Promise.resolve();
    const agent = new Agent({ keepAlive: true, maxSockets: workers });
    const port = live.port;
    let killed = false;
    let inFlight = 0;
    let violation: CrashViolation | undefined;
    const done = { creates: 0, deletes: 0, visits: 0, cut: 0 };
    const visitAcks: { code: string; at: number }[] = [];

    /** Runs one request; undefined when the kill cut it off. */
    async function exchange(method: string, path: string, body?: string, written?: () => void): Promise<Answer | undefined> {
      inFlight++;
      try {
        const answer = await send(agent, port, method, path, body, written);
        if (++answered === LONG_LEAST_ANSWERED) enough();
        return answer;
      } catch (err) {
        if (!killed) throw fail('the server answers until it is killed', `${method} ${path}: ${(err as Error).message}\n${live.output()}`);
        done.cut++;
        return undefined;
      } finally {
        inFlight--;
      }
    }

    async function create(w: number, i: number, pad: number): Promise<void> {
      const url = `https://example.com/crash/${seed}/${n}/${w}/${i}/${'x'.repeat(pad)}`;
      pending.add(url);
      const r = await exchange('POST', '/api/shorten', JSON.stringify({ url }));
      if (!r) return;
      if (r.status !== 201) throw fail('a create is answered 201', `${url}: ${r.status} ${r.body}`);
      pending.delete(url);
      const code = r.body.slice(r.body.lastIndexOf('/') + 1);
      links.set(code, { url, state: 'present', sent: 0, seen: 0, floor: 0 });
      pool.push(code);
      done.creates++;
    }

    async function remove(pick: number): Promise<void> {
      // Swap-remove, so that no other worker visits or deletes it meanwhile.
      const code = pool[pick]!;
      pool[pick] = pool[pool.length - 1]!;
      pool.pop();
      const link = links.get(code)!;
      link.state = 'maybe';
      const r = await exchange('DELETE', `/api/urls/${code}`);
      if (!r) return;
      if (r.status !== 204) throw fail('a delete of an acknowledged link is answered 204', `${code}: ${r.status} ${r.body}`);
      link.state = 'absent';
      done.deletes++;
    }

    async function visit(code: string): Promise<void> {
      const link = links.get(code)!;
      const r = await exchange(
        'GET',
        `/${code}`,
        undefined,
        once(() => link.sent++),
      );
      if (!r) return;
      if (r.status === 302) {
        visitAcks.push({ code, at: performance.now() });
        done.visits++;
      } else if (r.status !== 404 || link.state === 'present') {
        // A 404 is fine only when a delete raced the visit; for a link known present it is a lost link.
        throw fail('an acknowledged link redirects', `GET /${code}: ${r.status}`);
      }
    }

    async function worker(w: number): Promise<void> {
      const choose = prng(mix(seed, n, w + 1));
      for (let i = 0; !killed && !violation; i++) {
        const r = choose();
        // Deletes catch up with creates once there are plenty of links, so the listing each restart
        // checks stays a few thousand long however many cycles run.
        const deleteShare = pool.length > 2000 ? 0.4 : 0.15;
        try {
          // Long URLs of random length: the log passes the compaction floor within a long cycle, so
          // kills land before, during and after automatic compactions too.
          if (pool.length === 0 || r < 0.4) await create(w, i, Math.floor(choose() * 600));
          else if (r < 0.4 + deleteShare && pool.length > HOT) await remove(HOT + Math.floor(choose() * (pool.length - HOT)));
          // Half the visits go to the first few links, never deleted, so their counts grow across cycles.
          else await visit(pool[Math.floor(choose() * (choose() < 0.5 ? Math.min(pool.length, HOT) : pool.length))]!);
        } catch (err) {
          violation ??= err instanceof CrashViolation ? err : fail('the load runs', (err as Error).stack ?? String(err));
        }
      }
    }

    const start = performance.now();
    const running = Array.from({ length: workers }, (_, w) => worker(w));
    // The workers only stop by themselves on a violation; then the kill comes at once.
    const timer = new AbortController();
    await Promise.race([Promise.all([delay(killAfter, undefined, { signal: timer.signal }), worked]), Promise.all(running)]);
    timer.abort();
    killed = true;
    const cutInFlight = inFlight;
    live.proc.kill('SIGKILL');
    const killAt = performance.now();
    await Promise.all(running);
    await live.exited;
    agent.destroy();
    if (violation) throw violation;

    for (const { code, at } of visitAcks) {
      if (at < killAt - VISIT_WINDOW_MS) {
        links.get(code)!.floor++;
        summary.visitsChecked++;
      }
    }
    summary.creates += done.creates;
    summary.deletes += done.deletes;
    summary.visits += done.visits;
    summary.unacknowledged += done.cut;
    if (done.cut > 0) summary.killedInFlight++;
    const compactions = live.lines.filter((l) => l['msg'] === 'log compacted').length;
    summary.compactions += compactions;
    summary.cycles = n;
    return (
      `cycle ${n}/${options.cycles}: killed after ${Math.round(killAt - start)} ms with ${cutInFlight} in flight; ` +
      `+${done.creates} creates, +${done.deletes} deletes, +${done.visits} visits, ${done.cut} cut off, ${compactions} compactions`
    );
  }

  try {
    server = await restart(0);
    for (let n = 1; n <= options.cycles; n++) {
      const line = await cycle(n, server);
      server = await restart(n);
      log(`${line}; restart ok, ${summary.links} links`);
    }
    server.proc.kill('SIGTERM');
    await server.exited;
    summary.ms = Math.round(performance.now() - began);
    return summary;
  } finally {
    await kill(server);
    rmSync(dir, { recursive: true, force: true });
  }
}
