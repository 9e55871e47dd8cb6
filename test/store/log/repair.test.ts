import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createShortener } from '../../../src/app.ts';
import { createLogger } from '../../../src/log.ts';
import { encodeEntry } from '../../../src/store/log/format.ts';
import { replay, salvage } from '../../../src/store/log/replay.ts';
import { repairLog } from '../../../src/store/log/repair.ts';
import { StoreOpenError } from '../../../src/store/log/log-engine.ts';
import { ROOT, runCli, tempDir } from '../../support/helpers.ts';
import { serverBundle } from '../../support/server-entry.ts';

const create = (code: string): Buffer =>
  encodeEntry({ op: 'C', code, url: `https://example.com/${code}`, createdAt: 1_700_000_000, retentionDays: 0, visits: 0 });

/** A log whose line 3 is damaged (a flipped byte), with intact entries before and after it. */
function damagedLog(): Buffer {
  const bad = Buffer.from(create('ccc'));
  bad[20] = bad[20]! ^ 0x01;
  return Buffer.concat([create('aaa'), create('bbb'), bad, create('ddd'), encodeEntry({ op: 'D', code: 'aaa' })]);
}

test('salvage keeps intact lines verbatim and lists damaged ones', () => {
  const log = Buffer.concat([damagedLog(), Buffer.from('torn tail without newline')]);
  const { intact, lost } = salvage(log);
  assert.equal(intact.length, 4);
  assert.deepEqual(
    lost.map((l) => [l.line, l.reason]),
    [
      [3, 'bad checksum'],
      [6, 'incomplete line (no newline)'],
    ],
  );
  assert.equal(lost[1]!.bytes, 'torn tail without newline'.length);
  const replayed = replay(Buffer.concat(intact));
  assert.equal(replayed.damage, undefined);
  assert.deepEqual([...replayed.records.keys()], ['bbb', 'ddd']);
});

test('repairLog keeps every intact entry, moves the damaged file aside unchanged, and reports the loss', (t) => {
  const dir = tempDir(t);
  const original = damagedLog();
  writeFileSync(join(dir, 'urls.log'), original);
  const report = repairLog(dir, new Date('2026-01-02T03:04:05Z'));
  assert.equal(report.kept, 4);
  assert.deepEqual(
    report.lost.map((l) => l.line),
    [3],
  );
  assert.equal(report.movedTo, join(dir, 'urls.log.damaged-2026-01-02T03-04-05-000Z'));
  assert.deepEqual(readFileSync(report.movedTo), original, 'the damaged copy is byte-for-byte the original');
  const repaired = replay(readFileSync(join(dir, 'urls.log')));
  assert.equal(repaired.damage, undefined);
  assert.equal(repaired.tornTail, undefined);
  assert.deepEqual([...repaired.records.keys()], ['bbb', 'ddd']);
  // An intact log is left alone.
  const again = repairLog(dir);
  assert.equal(again.movedTo, undefined);
  assert.equal(readdirSync(dir).filter((f) => f.startsWith('urls.log.damaged-')).length, 1);
});

test('CLI: a damaged log stops start-up naming the line and --repair; --repair fixes it; then it starts', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'urls.log'), damagedLog());
  const refused = await runCli(['--port', '0', '--data-dir', dir]);
  assert.equal(refused.code, 1);
  const error = refused.out.split('\n').find((l) => l.includes('"level":"error"'))!;
  assert.match(error, /line 3 \(bad checksum\)/);
  assert.match(error, /--repair/);

  const repaired = await runCli(['--repair', '--data-dir', dir]);
  assert.equal(repaired.code, 0, repaired.out + repaired.err);
  const lines = repaired.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    lines.map((l) => l['msg']),
    ['dropped a damaged line', 'log repaired'],
  );
  assert.equal(lines[0]!['line'], 3);
  assert.equal(lines[1]!['kept'], 4);
  assert.equal(lines[1]!['lost'], 1);

  const child = spawn(process.execPath, [serverBundle(), '--port', '0', '--data-dir', dir], { cwd: ROOT });
  t.after(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  assert.equal(listening['records'], 2);
});

test('a complete last line with a bad checksum: start-up refuses naming the line, --repair keeps the rest, then it starts', async (t) => {
  const dir = tempDir(t);
  const bad = Buffer.from(create('ccc'));
  bad[20] = bad[20]! ^ 0x01;
  const original = Buffer.concat([create('aaa'), create('bbb'), bad]);
  writeFileSync(join(dir, 'urls.log'), original);
  const quiet = createLogger('silent');
  assert.throws(
    () => createShortener({ dataDir: dir, fsync: 'off', logger: quiet }),
    (err: unknown) => err instanceof StoreOpenError && /line 3 \(bad checksum\)/.test(err.message) && /--repair/.test(err.message),
  );
  assert.deepEqual(readFileSync(join(dir, 'urls.log')), original, 'the refused start cut nothing');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('.torn-')),
    [],
    'nor treated it as a torn tail',
  );

  const report = repairLog(dir, new Date('2026-01-02T03:04:05Z'));
  assert.deepEqual(
    report.lost.map((l) => [l.line, l.reason]),
    [[3, 'bad checksum']],
  );
  assert.equal(report.kept, 2);
  assert.deepEqual(readFileSync(report.movedTo!), original);

  const shortener = createShortener({ dataDir: dir, fsync: 'off', logger: quiet });
  t.after(() => shortener.close());
  assert.equal(shortener.count, 2);
  assert.ok((await shortener.service.get('aaa')).ok && (await shortener.service.get('bbb')).ok);
});
