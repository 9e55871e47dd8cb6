/**
 * `url-shortener export` and `url-shortener import FILE` as processes: export of a data dir a
 * running server holds (a hot backup) gives what the HTTP export gives; import refuses while a
 * server holds the dir, naming it; logs go to stderr only, stdout is the clean export.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseTransferCommand } from '../../src/cli/transfer-commands.ts';
import { encodeEntry, HEADER } from '../../src/store/log/format.ts';
import { LOG_FILE } from '../../src/store/log/log-engine.ts';
import { request, ROOT, runCli, serverProcessOn, tempDir } from '../support/helpers.ts';
import { serverBundle } from '../support/server-entry.ts';

const KEY = 'admin-key';

const LINES = [
  { short_code: 'backup1', original_url: 'https://example.com/1', created_at: 1700000000, visit_count: 4 },
  { short_code: 'backup2', original_url: 'https://example.com/2?a=b,c', created_at: 1700000500, retention_days: 36500 },
  { original_url: 'https://example.com/3' },
];

function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('export of a data dir a running server holds: the HTTP export, on stdout alone', { timeout: 60_000 }, async (t) => {
  const s = await serverProcessOn(t, { API_KEYS: KEY });
  const loaded = await request(s.port, '/api/import', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'x-api-key': KEY },
    body: LINES.map((l) => JSON.stringify(l)).join('\n'),
  });
  assert.equal(loaded.status, 200);
  // A visit the server has counted in memory and written in its count batch (at most a second
  // later): the batch is the log's next write, one append, which is waited for.
  const log = watch(join(s.dir, LOG_FILE));
  const written = once(log, 'change');
  assert.equal((await request(s.port, '/backup1')).status, 302);
  await written;
  log.close();
  const base = `http://localhost:${s.port}`;
  for (const format of ['jsonl', 'csv'] as const) {
    const http = await request(s.port, `/api/export?format=${format}`, { headers: { 'x-api-key': KEY } });
    const cli = await runCli(['export', '--data-dir', s.dir, '--base-url', base, '--format', format]);
    assert.equal(cli.code, 0, cli.err);
    assert.equal(cli.out, http.body, `${format}: stdout is exactly the export`);
    const logs = logLines(cli.err);
    assert.deepEqual(
      logs.map((l) => [l['level'], l['msg'], l['records'], l['format']]),
      [['info', 'exported', 3, format]],
    );
  }
  const first = JSON.parse((await runCli(['export', '--data-dir', s.dir])).out.split('\n')[0]!) as Record<string, unknown>;
  assert.equal(first['visit_count'], 5, 'the counted visit is in the backup');
  assert.equal(first['short_url'], 'http://localhost:3000/backup1', 'the default base URL, as the server would have it');
});

test('import refuses a data dir a server holds, naming the holder; imports into a free one', { timeout: 60_000 }, async (t) => {
  const s = await serverProcessOn(t, { API_KEYS: KEY });
  const dir = tempDir(t);
  const file = join(dir, 'links.jsonl');
  writeFileSync(file, `${LINES.map((l) => JSON.stringify(l)).join('\n')}\n{"url":"nope"}\n`);
  const refused = await runCli(['import', file, '--data-dir', s.dir]);
  assert.equal(refused.code, 1);
  assert.equal(refused.out, '');
  const [line] = logLines(refused.err);
  assert.equal(line!['level'], 'error');
  assert.match(String(line!['msg']), new RegExp(`is in use by another server \\(PID ${s.child.pid} on host `));
  assert.equal((await request(s.port, '/api/export', { headers: { 'x-api-key': KEY } })).body, '', 'nothing was written');

  const free = join(dir, 'data');
  const done = await runCli(['import', '--data-dir', free, file]);
  assert.equal(done.code, 0, done.err);
  assert.equal(done.out, '', 'nothing on stdout');
  assert.deepEqual(
    logLines(done.err).map((l) => [l['level'], l['msg'], l['line'] ?? l['imported'], l['detail'] ?? l['skipped']]),
    [
      ['warn', 'row skipped', 4, 'url must be an absolute URL such as https://example.com/page'],
      ['info', 'imported', 3, 1],
    ],
  );
  // A .csv file is read as CSV.
  const csv = join(dir, 'links.csv');
  writeFileSync(csv, 'keyword,url\r\nfromcsv,https://example.com/csv\r\n');
  assert.equal((await runCli(['import', csv, '--data-dir', free])).code, 0);

  // One export for both imports: the JSON Lines file's links, then the CSV file's.
  const back = (await runCli(['export', '--data-dir', free])).out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { short_code: string; original_url: string });
  assert.deepEqual(
    back.map((l) => l.original_url),
    [...LINES.map((l) => l.original_url), 'https://example.com/csv'],
  );
  assert.equal(back.at(-1)?.short_code, 'fromcsv');
});

test('usage errors exit 2 with one line; a missing data dir or file exits 1', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const cases: [string[], number, RegExp][] = [
    [['import'], 2, /^url-shortener: import needs the file to read/],
    [
      ['export', '--database-url', 'mysql://u:secret@db/x'],
      2,
      /^url-shortener export: invalid --database-url: must be a postgres:\/\/ or postgresql:\/\/ URL \(or empty for the log store\)\n$/,
    ],
    // Nothing listens on port 1: the database cannot be reached, named by host and name only.
    [
      ['export', '--database-url', 'postgres://u:secret@127.0.0.1:1/x'],
      1,
      /"level":"error","msg":"cannot reach the database x on 127\.0\.0\.1:1: database unavailable \(ECONNREFUSED\)"/,
    ],
    [['import', 'x.jsonl', '--database-url=postgres://u:secret@127.0.0.1:1/x'], 1, /"msg":"cannot reach the database x on 127\.0\.0\.1:1/],
    [['export', '--format', 'xml'], 2, /^url-shortener: invalid --format "xml": must be jsonl or csv\n$/],
    [['export', '--nope'], 2, /^url-shortener export: unknown option --nope/],
    [['export', '--data-dir', join(dir, 'none')], 1, /"level":"error","msg":"cannot read .*urls\.log: ENOENT"/],
    [['import', join(dir, 'missing.jsonl'), '--data-dir', dir], 1, /"msg":"cannot read .*missing\.jsonl: ENOENT"/],
  ];
  // Each its own process, all at once: they share nothing.
  const runs = await Promise.all(cases.map(([args]) => runCli(args)));
  for (const [i, [args, code, err]] of cases.entries()) {
    const r = runs[i]!;
    assert.equal(r.code, code, args.join(' '));
    assert.match(r.err, err, args.join(' '));
    assert.equal(r.out, '');
    assert.doesNotMatch(r.err, /secret/);
  }
});

test('parseTransferCommand: the command, its file and options, and the settings passed on', () => {
  assert.equal(parseTransferCommand([]), undefined);
  assert.equal(parseTransferCommand(['--port', '3']), undefined);
  assert.deepEqual(parseTransferCommand(['import', '--data-dir', 'd', 'f.csv', '--format=jsonl', '--fsync=off']), {
    command: 'import',
    file: 'f.csv',
    format: 'jsonl',
    databaseUrl: undefined,
    fromLine: 1,
    settings: ['--data-dir', 'd', '--fsync=off'],
  });
  assert.deepEqual(parseTransferCommand(['export', '--database-url', 'postgres://x']), {
    command: 'export',
    file: undefined,
    format: undefined,
    databaseUrl: 'postgres://x',
    fromLine: 1,
    settings: [],
  });
  // The resume of a failed import (docs/operations.md, export and import commands).
  assert.equal(parseTransferCommand(['import', 'f.csv', '--from-line', '15875'])?.fromLine, 15875);
  assert.equal(parseTransferCommand(['import', 'f.csv', '--from-line=2'])?.fromLine, 2);
  for (const bad of ['0', '-1', '1.5', 'x', '', '01', '9999999999999999']) {
    assert.throws(
      () => parseTransferCommand(['import', 'f.csv', `--from-line=${bad}`]),
      { name: 'ConfigError', message: `invalid --from-line ${JSON.stringify(bad)}: must be an integer of 1 or more (the line to resume the import from)` },
      bad,
    );
  }
});

test('export into a pipe closed early (| head -1) stops, says so on stderr, exits 1', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  // 5000 links, more than one piece of the export, written straight to the log (what an import
  // would write; the imports have the other tests).
  writeFileSync(
    join(dir, LOG_FILE),
    Buffer.concat([
      HEADER,
      ...Array.from({ length: 5000 }, (_, i) =>
        encodeEntry({ op: 'C', code: `many${i}`, url: `https://example.com/many/${i}/${'x'.repeat(100)}`, createdAt: 1700000000, retentionDays: 0, visits: 0 }),
      ),
    ]),
  );
  const child = spawn(process.execPath, [serverBundle(), 'export', '--data-dir', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  await once(child.stdout, 'data');
  child.stdout.destroy();
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 1);
  const [line] = logLines(err);
  assert.equal(line!['msg'], 'stdout was closed; the export is incomplete');
});

test('import --from-line resumes: the rows that start before the line are neither stored nor reported', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'resume.csv');
  // Line 1 the header, line 3 an invalid row: a resume from line 4 neither checks nor reports it.
  writeFileSync(file, 'url\nhttps://example.com/1\nnot a url\nhttps://example.com/3\nhttps://example.com/4\n');
  const r = await runCli(['import', file, '--data-dir', dir, '--fsync', 'off', '--from-line', '4']);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(
    logLines(r.err).map((l) => [l['msg'], l['imported'], l['skipped']]),
    [['imported', 2, 0]],
  );
  const exported = await runCli(['export', '--data-dir', dir]);
  assert.deepEqual(
    exported.out
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { original_url: string }).original_url),
    ['https://example.com/3', 'https://example.com/4'],
  );
});
