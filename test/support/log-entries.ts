/** The entries of a data dir's log, decoded: for tests that check what is on disk line by line. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from '../../src/store/log/crc32.ts';
import type { Entry } from '../../src/store/log/format.ts';
import { decodePayload } from '../../src/store/log/format-decode.ts';
import { LOG_FILE } from '../../src/store/log/log-engine.ts';

function lines(log: Buffer | string): string[] {
  const text = (typeof log === 'string' ? readFileSync(join(log, LOG_FILE)) : log).toString('utf8');
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), 'the log ends with a whole line');
  return text.slice(0, -1).split('\n');
}

function decoded(line: string): Entry {
  const entry = decodePayload(line.slice(9));
  assert.ok(entry, `an intact entry: ${JSON.stringify(line)}`);
  return entry;
}

/**
 * Every entry of a log (the bytes, or the log file in a data dir), decoded, without its version
 * line; the log must be whole and intact.
 */
export function logEntries(log: Buffer | string): Entry[] {
  const entries = lines(log).map(decoded);
  if (entries[0]?.op === 'F') entries.shift();
  for (const e of entries) assert.notEqual(e.op, 'F', 'a version line only ever comes first');
  return entries;
}

/** The format version the log's first line names; undefined for a log without a version line. */
export function logVersion(log: Buffer | string): number | undefined {
  const first = lines(log)[0];
  if (first === undefined) return undefined;
  const entry = decoded(first);
  return entry.op === 'F' ? entry.version : undefined;
}

/** A checksummed line of the payload `text`, as every build writes one: for logs a test writes by hand. */
export function checksummedLine(text: string): Buffer {
  return Buffer.from(`${crc32(Buffer.from(text)).toString(16).padStart(8, '0')} ${text}\n`);
}
