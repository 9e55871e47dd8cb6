/**
 * `url-shortener export-visits` and `import-visits` as processes: a move from the log store to
 * PostgreSQL (`export` + `export-visits` from one, `import` + `import-visits` into the other) keeps
 * the history — the same events in the same order, the same stats but for unique visitors (visitor
 * ids are never exported), and events + untracked = visit_count for every link. On the log store
 * both refuse a data dir a server holds; usage errors exit 2.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseTransferCommand } from '../../src/cli/transfer-commands.ts';
import { createLogger } from '../../src/log.ts';
import type { LinkStore } from '../../src/store/link-store.ts';
import { LogLinkStore } from '../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';
import { openPostgresStore } from '../../src/store/postgres/connect.ts';
import type { VisitStats } from '../../src/visits/event.ts';
import { parseStatsRange } from '../../src/visits/range.ts';
import { dataDir, ROOT, runCli, tempDir } from '../support/helpers.ts';
import { pgServer } from '../support/pg.ts';
import { serverBundle } from '../support/server-entry.ts';

const KEY = 'admin-key';
const BASE = 'https://s.example';
/** 2024-05-01T12:00:00Z. */
const NOW = 1714564800;
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'curl/8.5.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
];
const CODES = ['mover1', 'mover2', 'mover3'];

/** `runCli` with `input` on stdin. */
function runCliWith(args: readonly string[], input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [serverBundle(), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

async function ok(run: Promise<{ code: number | null; out: string; err: string }>): Promise<string> {
  const r = await run;
  assert.equal(r.code, 0, r.err);
  return r.out;
}

/** The events of each link (from the store's own export) against its counts: the invariant. */
async function checkInvariant(store: LinkStore, now: number): Promise<void> {
  const events = new Map<string, number>();
  for await (const { code } of store.exportVisits({ from: 0, to: 2 ** 32, bots: 'include' }, now)) events.set(code, (events.get(code) ?? 0) + 1);
  for (const code of CODES) {
    const rec = await store.get(code, now);
    assert.ok(rec, code);
    assert.equal((events.get(code) ?? 0) + rec.untracked, rec.visits, `${code}: events + untracked = visits`);
  }
}

const withoutUniques = (s: VisitStats) => ({ ...s, uniqueVisitors: 0, series: s.series.map((b) => ({ ...b, uniqueVisitors: 0 })) });

test('log store → PostgreSQL with export, export-visits, import, import-visits: the history moves', { timeout: 120_000 }, async (t) => {
  const pg = await pgServer(t);
  if (!pg) return;
  const url = await pg.createDatabase();
  const dir = dataDir(t);
  let clock = NOW * 1000;
  const h = await dir.start({ apiKeys: [KEY], baseUrl: BASE, now: () => clock });
  // mover1 comes with 5 visits of its own (untracked), of which the history holds none.
  const imported = await h.req('/api/import', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
    body: '{"short_code":"mover1","url":"https://example.com/1","created_at":1700000000,"visit_count":5}\n',
  });
  assert.equal(imported.status, 200);
  for (const code of CODES.slice(1)) {
    assert.equal(
      (
        await h.req('/api/shorten', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: `https://example.com/${code}`, code }),
        })
      ).status,
      201,
    );
  }
  // 60 visits over three days, some within one second, from four agents and three referrers.
  for (let i = 0; i < 60; i++) {
    clock = (NOW + Math.floor(i / 3) * 3600 + (i % 7 === 0 ? 0 : i)) * 1000;
    const headers: Record<string, string> = { 'user-agent': AGENTS[i % AGENTS.length]! };
    if (i % 3 !== 0) headers['referer'] = `https://site${i % 3}.example/page`;
    assert.equal((await h.req(`/${CODES[i % CODES.length]}`, { headers })).status, 302);
  }
  clock = (NOW + 4 * 86400) * 1000;

  // A server holds the data dir: the visits commands refuse it, naming the holder. (Commands that
  // cannot get in each other's way run at once: a process starts slowly.)
  const held = [
    ['export-visits', '--data-dir', dir.dir],
    ['import-visits', '-', '--data-dir', dir.dir],
  ];
  for (const refused of await Promise.all(held.map((args) => runCliWith(args, '')))) {
    assert.equal(refused.code, 1, refused.err);
    assert.equal(refused.out, '');
    assert.match(refused.err, /is in use by another server \(PID \d+ on host /);
  }
  const httpExport = (await h.req('/api/visits/export', { headers: { 'x-api-key': KEY } })).body;
  await h.close(true);

  const files = tempDir(t);
  // One at a time: export-visits opens the store as a server does, its lock included.
  const links = await ok(runCli(['export', '--data-dir', dir.dir, '--base-url', BASE]));
  const visits = await ok(runCli(['export-visits', '--data-dir', dir.dir]));
  assert.equal(visits, httpExport, 'the command writes what the route answers');
  assert.equal(visits.split('\n').filter(Boolean).length, 60);
  const csv = await ok(
    runCli(['export-visits', '--data-dir', dir.dir, '--format', 'csv', '--code', 'mover2', '--from', String(NOW + 3600), '--bots', 'exclude']),
  );
  const expectedCsv = visits
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { short_code: string; time: number; bot: boolean })
    .filter((e) => e.short_code === 'mover2' && e.time >= NOW + 3600 && !e.bot);
  assert.equal(csv.split('\r\n').filter(Boolean).length, 1 + expectedCsv.length);
  assert.ok(csv.startsWith('short_code,time,referrer,country,browser,os,device,bot,domain,rule\r\n'));
  assert.ok(
    csv
      .split('\r\n')
      .filter(Boolean)
      .slice(1)
      .every((row) => row.startsWith('mover2,') && row.endsWith(',')),
    'each row: the bare code, and an empty domain cell (the default domain)',
  );
  writeFileSync(join(files, 'links.jsonl'), links);
  writeFileSync(join(files, 'visits.jsonl'), visits);

  await ok(runCli(['import', join(files, 'links.jsonl'), '--database-url', url]));
  // From stdin, as `export-visits … | import-visits - …` would.
  const loaded = await runCliWith(['import-visits', '-', '--database-url', url], readFileSync(join(files, 'visits.jsonl'), 'utf8'));
  assert.equal(loaded.code, 0, loaded.err);
  const log = loaded.err
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    log.map((l) => [l['level'], l['msg'], l['imported'], l['skipped'], l['format']]),
    [['info', 'imported', 60, 0, 'jsonl']],
  );
  assert.equal(loaded.out, '');

  const [visitsAfter, linksAfter] = await Promise.all([
    ok(runCli(['export-visits', '--database-url', url])),
    ok(runCli(['export', '--database-url', url, '--base-url', BASE])),
  ]);
  assert.equal(visitsAfter, visits, 'the same events, in the same order');
  assert.equal(linksAfter, links, 'the same links and visit counts');

  // The stats: equal in everything but unique visitors, which the move cannot keep.
  const now = NOW + 4 * 86400;
  const from = new LogLinkStore(new LogEngine({ dir: dir.dir, fsync: 'always', log: createLogger('silent') }));
  t.after(() => from.close());
  const to = await openPostgresStore({ url, poolSize: 2, log: createLogger('silent'), now: () => now * 1000 });
  t.after(() => to.close());
  for (const bots of ['exclude', 'include', 'only']) {
    const range = parseStatsRange({ from: String(NOW - 86400), to: String(now), interval: 'hour', bots }, now);
    assert.ok(!('parameter' in range));
    for (const code of [...CODES, null]) {
      const before: VisitStats = (await from.visitStats(code, range, now))!;
      const after: VisitStats = (await to.visitStats(code, range, now))!;
      assert.ok(before.visits > 0 || bots === 'only', `${code} ${bots}`);
      assert.deepEqual(withoutUniques(after), withoutUniques(before), `${code ?? 'every link'} (bots ${bots}): visits, series, top lists, counts`);
      // Every imported event has no visitor id, so each counts one: as many unique visitors as visits.
      assert.equal(after.uniqueVisitors, after.visits);
      assert.ok(before.uniqueVisitors <= after.uniqueVisitors);
      assert.ok(before.uniqueVisitors < before.visits || before.visits === 0, 'the same agent and address came back: fewer visitors than visits before');
    }
  }
  await checkInvariant(from, now);
  await checkInvariant(to, now);
  const mover1 = (await to.get('mover1', now))!;
  assert.equal(mover1.untracked, 5, 'the untracked visits stay untracked');
});

test('usage: bad filters and a missing file exit 2 with one line; parseTransferCommand reads the visits options', async () => {
  const cases: [string[], RegExp][] = [
    [['export-visits', '--from', 'yesterday'], /^url-shortener: invalid --from: from must be Unix seconds or an ISO 8601 date or time/],
    [['export-visits', '--bots', 'some'], /^url-shortener: invalid --bots: bots must be one of exclude, include, only\n$/],
    [['export-visits', '--code', 'a.b'], /^url-shortener: invalid --code: code must be a short code/],
    [['export-visits', '--format', 'xml'], /^url-shortener: invalid --format "xml": must be jsonl or csv\n$/],
    [['import-visits'], /^url-shortener: import-visits needs the file to read: node dist\/server\.js import-visits FILE\|- \[--data-dir D\]\n$/],
  ];
  // Each its own process, all at once: they share nothing.
  const runs = await Promise.all(cases.map(([args]) => runCli(args)));
  for (const [i, [args, err]] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.out, '');
    assert.match(r.err, err, args.join(' '));
  }
  assert.deepEqual(
    parseTransferCommand(['export-visits', '--code=abc', '--from', '2024-01-01', '--to', '1714564800', '--bots', 'only', '--data-dir', 'd', '--format', 'csv']),
    {
      command: 'export-visits',
      file: undefined,
      format: 'csv',
      databaseUrl: undefined,
      fromLine: 1,
      settings: ['--data-dir', 'd'],
      visits: { code: 'abc', from: '2024-01-01', to: '1714564800', bots: 'only' },
    },
  );
  assert.deepEqual(parseTransferCommand(['import-visits', '-', '--from-line', '7', '--database-url', 'postgres://x']), {
    command: 'import-visits',
    file: '-',
    format: undefined,
    databaseUrl: 'postgres://x',
    fromLine: 7,
    settings: [],
  });
  // `--code` belongs to export-visits alone: elsewhere it is a setting, which the configuration refuses.
  assert.deepEqual(parseTransferCommand(['export', '--code', 'x'])?.settings, ['--code', 'x']);
  // `-` (stdin) is for import-visits only.
  assert.throws(() => parseTransferCommand(['import', '-']), /^ConfigError: import needs the file to read/);
});
