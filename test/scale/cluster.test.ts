/**
 * `WORKERS=N` (docs/scale-out.md) on real processes: refused without a database; with one, N
 * workers share the port, `/metrics` answers the sum over the workers whichever worker takes the
 * scrape (and `promtool` finds it clean), a worker killed with SIGKILL is replaced while the others
 * serve, and SIGTERM drains every worker and ends the primary with 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { codeOf, request, runCli, serverProcess, type ServerProcess } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';
import { pgServer } from '../support/pg.ts';

const server = await pgServer();
const skip = server === undefined ? 'PostgreSQL is not installed' : false;

/** Waits until `proc` has logged a line with `msg` (and `more` fields), at most 20 s. */
async function logged(proc: ServerProcess, msg: string, count = 1): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = proc.lines.filter((l) => l['msg'] === msg);
    if (found.length >= count) return found;
    assert.ok(Date.now() < deadline, `no ${count} × "${msg}" logged; lines: ${JSON.stringify(proc.lines)} ${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The PIDs of the children of `pid` (the workers of a primary). */
function childrenOf(pid: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
}

async function cluster(env: Record<string, string> = {}): Promise<ServerProcess> {
  const databaseUrl = await server!.createDatabase();
  const proc = await serverProcess({ DATABASE_URL: databaseUrl, WORKERS: '2', ...env });
  await logged(proc, 'workers listening');
  return proc;
}

/** The sum of a counter's samples in a scrape, leaving out the samples whose labels match `except`. */
function total(text: string, name: string, except?: RegExp): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (except?.test(line)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

test('more than one worker without DATABASE_URL is refused with one line and exit 2', async () => {
  const r = await runCli(['--workers', '2']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.equal(r.err, 'url-shortener: WORKERS=2 needs DATABASE_URL: the log store has one writer process (set WORKERS=1, or DATABASE_URL)\n');
  const range = await runCli(['--workers', '65']);
  assert.equal(range.code, 2);
  assert.equal(range.err, 'url-shortener: invalid --workers "65": must be an integer from 1 to 64\n');
});

test('/metrics answers the sum over both workers, whichever worker takes the scrape', { skip }, async (t) => {
  const proc = await cluster();
  t.after(() => proc.stop());
  assert.equal(childrenOf(proc.child.pid!).length, 2);
  const N = 40;
  // A new connection each time: the primary hands connections to the workers in turn.
  const answers = await Promise.all(
    Array.from({ length: N }, (_, i) => request(proc.port, `/api/shorten?url=${encodeURIComponent(`https://example.com/w/${i}`)}`, { method: 'POST' })),
  );
  assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([201]));
  const code = codeOf(answers[0]!);
  for (let i = 0; i < 10; i++) assert.equal((await request(proc.port, `/${code}`)).status, 302);

  const scrapes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await request(proc.port, '/metrics');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    scrapes.push(r.body);
  }
  for (const text of scrapes) {
    assert.equal(total(text, 'shortener_http_requests_total', /route="\/metrics"/), N + 10);
    assert.equal(total(text, 'shortener_links_created_total'), N);
    assert.equal(total(text, 'shortener_redirects_total'), 10);
    assert.match(text, new RegExp(`^shortener_http_request_duration_seconds_count\\{route="/api/shorten"\\} ${N}$`, 'm'));
  }
  // Every scrape but the first sees the scrapes before it, as one process would.
  assert.equal(total(scrapes[5]!, 'shortener_http_requests_total'), N + 10 + 5);

  // A test of its own, so that without promtool the run lists it as not run.
  await t.test('promtool finds the summed scrape clean', (st) => {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: scrapes[5], encoding: 'utf8' });
    if (check.error)
      return void st.skip(missingTool('PROMTOOL CHECK', 'promtool not found (apt-get install prometheus): the summed /metrics cannot be checked'));
    assert.deepEqual({ status: check.status, output: check.stdout + check.stderr }, { status: 0, output: '' });
  });
});

test('a worker killed with SIGKILL is replaced, logged, and the service keeps answering', { skip }, async (t) => {
  const proc = await cluster();
  t.after(() => proc.stop());
  const [victim, survivor] = childrenOf(proc.child.pid!);
  process.kill(victim!, 'SIGKILL');
  const [died] = await logged(proc, 'worker died; starting another');
  assert.equal(died!['level'], 'warn');
  assert.equal(died!['pid'], victim);
  assert.equal(died!['signal'], 'SIGKILL');
  // The replacement logs its start-up line: three in all.
  await logged(proc, 'listening', 3);
  const workers = childrenOf(proc.child.pid!);
  assert.equal(workers.length, 2);
  assert.ok(workers.includes(survivor!) && !workers.includes(victim!));
  for (let i = 0; i < 6; i++) {
    const r = await request(proc.port, '/api/shorten?url=https%3A%2F%2Fexample.com%2Fafter', { method: 'POST' });
    assert.equal(r.status, 201);
  }
});

test('SIGTERM drains every worker and the primary exits 0', { skip }, async () => {
  const proc = await cluster();
  const workers = childrenOf(proc.child.pid!);
  assert.equal((await request(proc.port, '/healthz?ready')).status, 200);
  const exit = await proc.stop();
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.equal(proc.lines.filter((l) => l['msg'] === 'stopped' && l['workers'] === undefined).length, 2, 'each worker stopped cleanly');
  const last = proc.lines.at(-1)!;
  assert.deepEqual([last['msg'], last['workers']], ['stopped', 2]);
  for (const pid of workers) assert.throws(() => process.kill(pid, 0), /ESRCH/);
  assert.equal(proc.lines.filter((l) => l['msg'] === 'worker died; starting another').length, 0);
});
