/** The entries of a data dir's log, decoded: for tests that check what is on disk line by line. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePayload, type Entry } from '../../src/store/format.ts';
import { LOG_FILE } from '../../src/store/store.ts';

/** Every line of a log (the bytes, or the log file in a data dir), decoded; the log must be whole and intact. */
export function logEntries(log: Buffer | string): Entry[] {
  const text = (typeof log === 'string' ? readFileSync(join(log, LOG_FILE)) : log).toString('utf8');
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), 'the log ends with a whole line');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const entry = decodePayload(line.slice(9));
      assert.ok(entry, `an intact entry: ${JSON.stringify(line)}`);
      return entry;
    });
}
