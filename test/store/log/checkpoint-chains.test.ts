/**
 * The hash chains of the start-up checkpoint (checkpoint-chains.ts): written when the checkpoint's
 * slots are memory's slots, read back as the very chains a full replay builds, left out otherwise,
 * and a damaged section is a damaged checkpoint (not used: the whole log is replayed).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { checkpointPath, type Footer, MAGIC, PREAMBLE } from '../../../src/store/log/checkpoint.ts';
import { crc32 } from '../../../src/store/log/crc32.ts';
import { HashChains } from '../../../src/store/log/hash-chains.ts';
import { LOG_FILE, LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogCapture, tempDir } from '../../support/helpers.ts';

const T = 1_790_000_000;
const MANUAL = { compactMinBytes: Number.MAX_SAFE_INTEGER, visitFlushMs: 60_000 };
const USED = 'log replayed from its start-up checkpoint';

function open(dir: string, logs = new LogCapture()): LogEngine {
  return new LogEngine({ dir, fsync: 'off', log: createLogger('info', logs), checkpointMinBytes: 0, ...MANUAL });
}

const link = (i: number): LinkRecord => ({
  code: `c${i.toString(36)}`,
  // Every 7th link shares its URL with another: URL chains of several slots.
  url: `https://example.com/${i % 7 === 0 ? 'shared' : i}`,
  createdAt: T + i,
  retentionDays: 0,
  visits: 0,
  untracked: 0,
  maxVisits: null,
});

/** The checkpoint's footer, and where it starts. */
function footerOf(dir: string): { footer: Footer; at: number } {
  const bytes = readFileSync(checkpointPath(join(dir, LOG_FILE)));
  const length = bytes.readUInt32LE(MAGIC.length + 4);
  const at = bytes.readDoubleLE(MAGIC.length + 16);
  return { footer: JSON.parse(bytes.subarray(at, at + length).toString('utf8')) as Footer, at };
}

/** Takes the chains section out of the checkpoint, as a checkpoint written without it would be. */
function withoutChains(dir: string): void {
  const path = checkpointPath(join(dir, LOG_FILE));
  const bytes = readFileSync(path);
  const { footer, at } = footerOf(dir);
  const end = at - footer.chains!.bytes;
  delete footer.chains;
  const json = Buffer.from(JSON.stringify(footer), 'utf8');
  const preamble = Buffer.from(bytes.subarray(0, PREAMBLE));
  preamble.writeUInt32LE(json.length, MAGIC.length + 4);
  preamble.writeUInt32LE(crc32(json), MAGIC.length + 8);
  preamble.writeDoubleLE(end, MAGIC.length + 16);
  writeFileSync(path, Buffer.concat([preamble, bytes.subarray(PREAMBLE, end), json]));
}

async function storeOf(dir: string, n: number, deleted: number[] = []): Promise<void> {
  const store = open(dir);
  for (let i = 0; i < n; i++) await store.create(link(i));
  for (const i of deleted) await store.delete(link(i).code);
  await store.close();
}

/** Both indexes of an open store, as arrays. */
function chainsOf(store: LogEngine): Int32Array[] {
  const image = store.keydir.chainsImage();
  assert.ok(image, 'every slot is live');
  return [image.code.heads, image.code.next, image.url.heads, image.url.next].map((a) => a.slice());
}

test('a checkpoint of a keydir whose slots are all live holds its chains; a start reads them, and they are what a full replay builds', async (t) => {
  const dir = tempDir(t);
  await storeOf(dir, 3000);
  const { footer } = footerOf(dir);
  assert.ok(footer.chains, 'the chains are in the checkpoint');
  assert.equal(footer.chains.capacity, 4096);
  assert.equal(footer.chains.bytes, (2 * 4096 + 2 * 3000) * 4);

  const logs = new LogCapture();
  // Nothing is built: a build now would throw.
  const build = HashChains.build;
  HashChains.build = () => {
    throw new Error('built');
  };
  let started: LogEngine;
  try {
    started = open(dir, logs);
  } finally {
    HashChains.build = build;
  }
  const read = chainsOf(started);
  assert.ok(logs.find(USED));
  assert.equal(read[0]!.length, 4096, 'at the capacity memory had');
  // Every code and URL is found through them.
  for (const i of [0, 1, 7, 1234, 2999]) assert.equal(started.get(link(i).code)?.url, link(i).url);
  assert.equal([...started.keydir.slotsWithUrl('https://example.com/shared')].length, Math.ceil(3000 / 7));
  await started.close();

  // The same checkpoint without its chains: the start builds them, under the same seed.
  withoutChains(dir);
  const built = open(dir);
  assert.deepEqual(chainsOf(built), read, 'the same chains, link for link');
  await built.close();
});

test('a keydir with a deleted link writes no chains: the start builds them, and finds every live link', async (t) => {
  const dir = tempDir(t);
  await storeOf(dir, 500, [3, 250]);
  assert.equal(footerOf(dir).footer.chains, undefined);
  const logs = new LogCapture();
  const store = open(dir, logs);
  assert.ok(logs.find(USED));
  assert.equal(store.get(link(3).code), undefined);
  assert.equal(store.get(link(499).code)?.url, link(499).url);
  assert.equal(store.count, 498);
  await store.close();
});

test('a keydir a little short of its capacity keeps it: the chains are of that capacity', async (t) => {
  const dir = tempDir(t);
  // 2,000 slots grew the keydir to 2,048; a replay would leave room for a quarter more (4,096).
  await storeOf(dir, 2000);
  assert.equal(footerOf(dir).footer.chains?.capacity, 2048);
  const store = open(dir);
  assert.equal(chainsOf(store)[0]!.length, 2048);
  // It grows as memory would have: past 2,048 links.
  for (let i = 2000; i < 2100; i++) await store.create(link(i));
  for (const i of [0, 1999, 2047, 2099]) assert.equal(store.get(link(i).code)?.url, link(i).url);
  await store.close();
});

test('a damaged chains section makes the checkpoint damaged: not used, and the whole log replayed', async (t) => {
  const dir = tempDir(t);
  await storeOf(dir, 2000);
  const path = checkpointPath(join(dir, LOG_FILE));
  const { footer, at } = footerOf(dir);
  assert.ok(footer.chains);
  const bytes = readFileSync(path);
  // A byte in the URL index's links, just before the footer.
  bytes[at - 5] = bytes[at - 5]! ^ 0x40;
  writeFileSync(path, bytes);
  const logs = new LogCapture();
  const store = open(dir, logs);
  assert.equal(logs.find(USED), undefined);
  assert.ok(
    logs.lines.some((l) => String(l['msg']).includes('the start-up checkpoint is not used: it is damaged (bad checksum of its hash chains)')),
    logs.raw,
  );
  assert.equal(store.count, 2000);
  assert.equal(store.get(link(1999).code)?.url, link(1999).url);
  await store.close();
});
