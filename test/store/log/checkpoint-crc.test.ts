/**
 * A checkpoint's checksums checked on another thread (checkpoint-crc.ts): the same verdict as
 * checking them here, section by section; no verdict when the thread cannot read the file, and
 * then the check here gives it. Only a checkpoint of 64 MiB or more is worth the thread.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import { checkpointPath, loadCheckpoint, PREAMBLE } from '../../../src/store/log/checkpoint.ts';
import { type Checked, checkHere, checkInParallel, THREAD_MIN_BYTES, worthAThread } from '../../../src/store/log/checkpoint-crc.ts';
import { crc32 } from '../../../src/store/log/crc32.ts';
import { nodeFs } from '../../../src/store/log/fs.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';
import { TS_IMPORT } from '../../support/ts-import.ts';

/** A file of three sections (one larger than the thread's 8 MiB reads), and their true checksums. */
function file(t: Parameters<typeof tempDir>[0]): { path: string; sections: Checked[] } {
  const parts = [randomBytes(1000), randomBytes(9 << 20), randomBytes(24)];
  const path = join(tempDir(t), 'sections');
  writeFileSync(path, Buffer.concat([Buffer.alloc(40), ...parts]));
  let at = 40;
  const sections: Checked[] = parts.map((part) => {
    const section: Checked = [at, part.length, crc32(part)];
    at += part.length;
    return section;
  });
  return { path, sections };
}

function here(path: string, sections: Checked[]): number {
  const fd = openSync(path, 'r');
  try {
    return checkHere(nodeFs, fd, sections);
  } finally {
    closeSync(fd);
  }
}

test('every section good: -1, from the thread and from the check here', (t) => {
  const { path, sections } = file(t);
  assert.equal(checkInParallel(path, sections)?.verdict(), -1);
  assert.equal(here(path, sections), -1);
});

test('a section whose checksum differs: its index, from both', (t) => {
  const { path, sections } = file(t);
  for (const bad of [0, 1, 2]) {
    const wrong = sections.map((s, i): Checked => (i === bad ? [s[0], s[1], (s[2] + 1) >>> 0] : s));
    assert.equal(checkInParallel(path, wrong)?.verdict(), bad, `section ${bad}`);
    assert.equal(here(path, wrong), bad, `section ${bad}`);
  }
});

test('a section past the end of the file: no verdict from the thread (it could not check), the index from the check here', (t) => {
  const { path, sections } = file(t);
  const past: Checked[] = [...sections, [sections[2]![0] + 24, 100, 0]];
  assert.equal(checkInParallel(path, past)?.verdict(), undefined);
  assert.equal(here(path, past), 3);
  assert.equal(checkInParallel(join(path, 'none'), sections)?.verdict(), undefined, 'no file');
});

test("the thread gets none of its process's flags: a process of ES module text, with a loader, gets the verdict too", (t) => {
  const { path, sections } = file(t);
  // A process as a test harness starts one (`--input-type=module -e`): a thread that took its
  // flags would read the CommonJS text as a module and die without a word.
  const child = `
    const { checkInParallel } = await import(process.argv[1]);
    process.stdout.write(String(checkInParallel(process.argv[2], JSON.parse(process.argv[3]))?.verdict()));
  `;
  const module = new URL('../../../src/store/log/checkpoint-crc.ts', import.meta.url).href;
  const out = execFileSync(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', child, module, path, JSON.stringify(sections)], { encoding: 'utf8' });
  assert.equal(out, '-1');
});

test('only 64 MiB of sections or more are worth a thread', () => {
  assert.equal(worthAThread([[0, THREAD_MIN_BYTES - 1, 0]]), false);
  assert.equal(
    worthAThread([
      [0, THREAD_MIN_BYTES >> 1, 0],
      [THREAD_MIN_BYTES >> 1, THREAD_MIN_BYTES >> 1, 0],
    ]),
    true,
  );
  assert.equal(worthAThread([[0, 1, 0]], 1), true, "the size is the caller's to choose");
});

test('a start-up checkpoint read with its checksums on the thread or here: the same links, the same bad block named', async (t) => {
  const dir = tempDir(t);
  const store = new LogEngine({
    dir,
    fsync: 'off',
    log: createLogger('info', new LogCapture()),
    checkpointMinBytes: 0,
    compactMinBytes: Number.MAX_SAFE_INTEGER,
  });
  for (let i = 0; i < 3000; i++) {
    await store.create({
      code: `c${i}`,
      url: `https://example.com/${i}`,
      createdAt: 1_790_000_000 + i,
      retentionDays: 0,
      visits: 0,
      untracked: 0,
      maxVisits: null,
    });
  }
  await store.close();
  const logPath = join(dir, LOG_FILE);
  const load = (threadMinBytes: number) => {
    const fd = openSync(logPath, 'r');
    try {
      const loaded = loadCheckpoint(nodeFs, logPath, fd, threadMinBytes);
      assert.ok(loaded, 'a checkpoint was written');
      return 'reason' in loaded ? loaded.reason : [...loaded.records.keys()].map((code) => loaded.records.get(code)!.url).sort();
    } finally {
      closeSync(fd);
    }
  };
  const onThread = load(0);
  assert.equal((onThread as string[]).length, 3000);
  assert.deepEqual(load(THREAD_MIN_BYTES), onThread);
  // A byte of the first block's links flipped.
  const path = checkpointPath(logPath);
  const bytes = readFileSync(path);
  bytes[PREAMBLE + 100] = bytes[PREAMBLE + 100]! ^ 0x01;
  writeFileSync(path, bytes);
  assert.equal(load(0), `it is damaged (bad checksum of the block at byte ${PREAMBLE})`);
  assert.equal(load(THREAD_MIN_BYTES), load(0));
});
