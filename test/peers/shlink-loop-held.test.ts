/**
 * Regression: Shlink's tag stats and its ordered lists walked every link in slices that the log
 * store has ready at once, so the walk went from microtask to microtask and held the event loop,
 * and every redirect, for the whole of it: over a second for 100k links. They now walk with
 * `links/walk.ts`, which gives the loop a turn every few milliseconds, sort in turns, and keep only
 * a position and a key per link (100k records kept alive made each young-generation collection
 * copy them). Over 100k links no request holds the loop more than 50 ms at a time, as the native
 * list promises (docs/performance.md).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeEntry, HEADER } from '../../src/store/log/format.ts';
import { onOneProcess } from '../support/cluster.ts';
import { start, tempDir } from '../support/helpers.ts';
import { TS_IMPORT } from '../support/ts-import.ts';

const LINKS = 100_000;
const TAGS = 500;
/** The longest the loop may be held at a time, ms, on a machine as fast as `REFERENCE_MS` says. */
const HELD_MS = 50;
/** What `reference()` takes, ms of the thread's CPU, on the machine where `HELD_MS` was set. */
const REFERENCE_MS = 130;

/** A data dir whose log holds `LINKS` links, each with two tags, every third without a title. */
function seeded(): string {
  const dir = tempDir();
  const lines: Buffer[] = [HEADER];
  for (let i = 0; i < LINKS; i++) {
    lines.push(
      encodeEntry({
        op: 'C',
        code: `k${i.toString(36)}`,
        url: `https://example.com/${(i * 7919) % LINKS}`,
        createdAt: 1_790_000_000 + i,
        retentionDays: 0,
        visits: i % 7,
        title: i % 3 === 0 ? undefined : `title ${(i * 31) % LINKS}`,
        tags: [`tag${i % TAGS}`, `group${i % 13}`],
      }),
    );
  }
  writeFileSync(join(dir, 'urls.log'), Buffer.concat(lines));
  return dir;
}

/**
 * The main thread's time on a CPU, ms, where Linux tells it (the first field of the thread's
 * `schedstat`, in ns); else the process's, which counts the collector's helper threads too and so
 * errs on the strict side.
 */
function threadCpu(): () => number {
  let fd: number;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
  }
  const buf = Buffer.alloc(64);
  process.once('exit', () => closeSync(fd));
  return () => Number(buf.toString('latin1', 0, readSync(fd, buf, 0, 64, 0)).split(' ')[0]) / 1e6;
}
const cpuNow = threadCpu();

/**
 * How long the loop is held at a time while `work` runs: a timer ticks every millisecond, and each
 * gap between two ticks is work that held the loop. The gap counts as the main thread's time on a
 * CPU within it, not the time on the clock: the tests run four files at a time on two cores, and a
 * thread that waits for a core holds nothing. Returns the longest, ms, and the work's result.
 */
async function longestHold<T>(work: () => Promise<T>): Promise<{ held: number; result: T }> {
  let wall = performance.now();
  let cpu = cpuNow();
  let held = 0;
  const timer = setInterval(() => {
    const [w, c] = [performance.now(), cpuNow()];
    held = Math.max(held, Math.min(w - wall, c - cpu));
    [wall, cpu] = [w, c];
  }, 1);
  try {
    const result = await work();
    held = Math.max(held, Math.min(performance.now() - wall, cpuNow() - cpu));
    return { held, result };
  } finally {
    clearInterval(timer);
  }
}

/**
 * The machine's pace: the least of five runs of a fixed job like a walk's own (100k small records
 * made, sorted by code and summed into a map), in ms of the thread's CPU. These virtual machines
 * differ by two to three times, and a hold is a time, so the bound is `HELD_MS` scaled by how much
 * slower than the reference machine this one is (never looser on a faster one). Without the scale a
 * step plus a scavenge came to 65 ms on a slower machine for 24 ms here; with it, the regression
 * this guards against (a walk that holds the loop for over a second) still fails by far.
 */
function reference(): number {
  let least = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 5; run++) {
    const began = cpuNow();
    const records = Array.from({ length: 100_000 }, (_, i) => ({ code: `k${((i * 7919) % 100_000).toString(36)}`, visits: i % 7 }));
    records.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
    const sums = new Map<string, number>();
    for (const r of records) sums.set(r.code, (sums.get(r.code) ?? 0) + r.visits);
    least = Math.min(least, cpuNow() - began);
  }
  return least;
}

test(
  'over 100k links, tag stats and ordered lists of Shlink never hold the event loop more than 50 ms at a time',
  onOneProcess('it seeds its log file directly'),
  async (t) => {
    if (process.env['NODE_V8_COVERAGE'] && process.env['LOOP_HELD_CHILD'] === undefined) {
      // Under coverage every block the walk and the store run is counted, which makes each step
      // two to three times as long as in the service people run (measured: a 45–65 ms hold here
      // for 20–35 ms without). The hold is measured where it means something: this file again, in
      // a process without coverage.
      // An empty NODE_V8_COVERAGE (not an absent one: Node would copy its own to the child) turns
      // coverage off; the second variable keeps the child from starting another.
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_V8_COVERAGE: '', LOOP_HELD_CHILD: '1' };
      delete env['NODE_TEST_CONTEXT'];
      const child = spawn(process.execPath, [...TS_IMPORT, '--test-reporter=tap', new URL(import.meta.url).pathname], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      assert.equal(code, 0, output);
      assert.match(output, /^# pass 1$/m, output);
      return;
    }
    const bound = HELD_MS * Math.max(1, reference() / REFERENCE_MS);
    t.diagnostic(`BOUND ${bound.toFixed(1)}`);
    const h = await start(t, { dataDir: seeded(), apiKeys: ['k'], shlinkApi: true, logLevel: 'warn' });
    const get = (path: string) => h.req(`/rest/v3/${path}`, { headers: { 'x-api-key': 'k' } });

    const stats = await longestHold(() => get('tags/stats'));
    assert.equal(stats.result.status, 200);
    const tags = (JSON.parse(stats.result.body) as { tags: { data: { tag: string; shortUrlsCount: number }[] } }).tags.data;
    assert.equal(tags.length, TAGS + 13);
    assert.equal(
      tags.reduce((sum, row) => sum + row.shortUrlsCount, 0),
      2 * LINKS,
    );
    t.diagnostic(`HELD ${stats.held.toFixed(1)}`);
    assert.ok(stats.held <= bound, `tag stats held the loop ${stats.held.toFixed(1)} ms, over ${bound.toFixed(1)}`);

    for (const [order, first] of [
      ['shortCode-ASC', 'k0'],
      ['longUrl-DESC', undefined],
      ['title-ASC', undefined],
      ['visits-DESC', undefined],
      ['nonBotVisits-DESC', undefined],
    ] as const) {
      const list = await longestHold(() => get(`short-urls?orderBy=${order}&excludeTags[]=group3&itemsPerPage=20`));
      assert.equal(list.result.status, 200, order);
      const body = JSON.parse(list.result.body) as { shortUrls: { data: { shortCode: string; tags: string[] }[]; pagination: { totalItems: number } } };
      assert.equal(body.shortUrls.data.length, 20, order);
      assert.ok(
        body.shortUrls.data.every((r) => !r.tags.includes('group3')),
        order,
      );
      assert.equal(body.shortUrls.pagination.totalItems, LINKS - Math.ceil((LINKS - 3) / 13), order);
      if (first !== undefined) assert.equal(body.shortUrls.data[0]!.shortCode, first, order);
      t.diagnostic(`HELD ${order} ${list.held.toFixed(1)}`);
      assert.ok(list.held <= bound, `the list ordered by ${order} held the loop ${list.held.toFixed(1)} ms, over ${bound.toFixed(1)}`);
    }
  },
);
