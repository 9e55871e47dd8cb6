/**
 * The records of a log store's data dir, read without its lock: what `url-shortener export` reads
 * while a server may be writing (docs/operations.md, hot backup). The server only appends to
 * `urls.log` (or atomically renames a compacted copy over it), so the file as opened, up to its
 * last complete line, is a state the server was in: a consistent snapshot. A last line without
 * its newline is a write in progress, left out; a damaged complete line is refused, as start-up
 * refuses it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_FILE } from '../store/log/files.ts';
import { isExpired, type LinkRecord } from '../store/link-store.ts';
import { Replayer } from '../store/log/replay.ts';

/** Bytes read at a time. */
const CHUNK = 4 << 20;

export class LogSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogSnapshotError';
  }
}

/** The live records of the log in `dir` (expired by `now`, Unix seconds, left out), oldest first. */
export async function* readLogSnapshot(dir: string, now: number): AsyncGenerator<LinkRecord> {
  const path = join(dir, LOG_FILE);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new LogSnapshotError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const replayer = new Replayer();
  try {
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let position = 0; ; ) {
      const n = readSync(fd, chunk, 0, chunk.length, position);
      if (n === 0) break;
      replayer.push(chunk.subarray(0, n));
      position += n;
    }
  } finally {
    closeSync(fd);
  }
  const { records, damage } = replayer.finish();
  if (damage) throw new LogSnapshotError(`${path} is damaged at line ${damage.line} (${damage.reason}); see --repair`);
  for (let s = 0; s < records.end; s++) {
    if (!records.isLive(s)) continue;
    const rec = records.record(s);
    if (!isExpired(rec, now)) yield rec;
  }
}
