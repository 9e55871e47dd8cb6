/**
 * The log format, as pure functions: an entry to the bytes of its line, a payload back to an entry.
 * Reading a whole log is `replay.ts`; one line read straight from its bytes, `replay-line.ts`.
 *
 * One entry per line: `<crc32 as 8 hex digits> <payload>\n`, the checksum covering the payload's
 * bytes. Payload fields are tab-separated; a WHATWG-serialized URL never contains a tab, CR or LF
 * (the URL parser strips them), and codes are alphanumeric, so no escaping is needed:
 *
 *   F url-shortener-log <version>                                      the first line: format and version
 *   C <code> <created_at> <retention_days> <visit_count> <url>         create (visit_count > 0 after compaction)
 *   C <code> <created_at> <retention_days> <visit_count> <max> <url>   create of a link with a visit limit
 *   E <code> <retention_days> <max> <url>                              edit: the link's new values (max 0 = no limit)
 *   D <code>                                                           delete (tombstone)
 *   V <code> <count> [<code> <count> …]                                count batch: visit counts, absolute
 *
 * The version line names the format so that a build meeting a log written by a newer one says so
 * instead of calling the lines it cannot read damage. Version 1 logs (the first format) have no
 * version line and only the six-field create, `D` and `V`; they replay as they are, and the store
 * rewrites one with the version line before it appends anything (`log-writer.ts`), so that a build
 * reading only version 1 never meets an entry it cannot read in a log that claims to be version 1.
 *
 * Count batches carry absolute counts, not increments: replaying one twice changes nothing, and a
 * later batch for a code makes every earlier one dead weight for compaction to drop. The last entry
 * for a code wins (Bitcask). Visit counts and edits of codes that no longer exist are ignored. An
 * edit changes a link in place: it keeps its place in the newest-first order.
 */
import { crc32 } from './crc32.ts';
import type { StoredRecord } from './keydir.ts';

export type { StoredRecord } from './keydir.ts';

/** The format this build writes, and the newest it reads. */
export const FORMAT_VERSION = 2;
/** The name in the version line: a log of this service, not some other checksummed file. */
export const FORMAT_NAME = 'url-shortener-log';

export type Entry =
  /** `maxVisits`: absent, null or 0 for no limit. */
  | { op: 'C'; code: string; url: string; createdAt: number; retentionDays: number; visits: number; maxVisits?: number | null | undefined }
  | { op: 'E'; code: string; url: string; retentionDays: number; maxVisits: number | null }
  | { op: 'D'; code: string }
  /** A count batch: the visit counts of some codes (a *visit* is one counted redirect). */
  | { op: 'V'; counts: [code: string, count: number][] }
  /** The version line, only ever the first line of a log. */
  | { op: 'F'; name: string; version: number };

function payload(entry: Entry): string {
  switch (entry.op) {
    case 'C':
      return entry.maxVisits
        ? `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.maxVisits}\t${entry.url}`
        : `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.url}`;
    case 'E':
      return `E\t${entry.code}\t${entry.retentionDays}\t${entry.maxVisits ?? 0}\t${entry.url}`;
    case 'F':
      return `F\t${entry.name}\t${entry.version}`;
    case 'D':
      return `D\t${entry.code}`;
    case 'V':
      return `V\t${entry.counts.map(([code, count]) => `${code}\t${count}`).join('\t')}`;
  }
}

/** The bytes of one log line, newline included. */
export function encodeEntry(entry: Entry): Buffer {
  const text = payload(entry);
  const line = Buffer.allocUnsafe(Buffer.byteLength(text) + 10);
  line.write(text, 9, 'utf8');
  const sum = crc32(line.subarray(9, line.length - 1));
  line.write(sum.toString(16).padStart(8, '0'), 0, 'latin1');
  line[8] = 0x20;
  line[line.length - 1] = 0x0a;
  return line;
}

/** The first line of every log this build starts. */
export const HEADER: Buffer = encodeEntry({ op: 'F', name: FORMAT_NAME, version: FORMAT_VERSION });

/** The create entry that carries a record whole (compaction writes one per live record, an edited one too). */
export function recordEntry(rec: StoredRecord): Entry {
  return { op: 'C', code: rec.code, url: rec.url, createdAt: rec.createdAt, retentionDays: rec.retentionDays, visits: rec.visits, maxVisits: rec.maxVisits };
}

/** What start-up and `--repair` say of a log of a newer format: not damage, an older build. */
export function newerFormatMessage(file: string, version: number): string {
  return (
    `${file} was written by a newer version of url-shortener (format ${version}, this build reads up to ${FORMAT_VERSION}); upgrade. ` +
    'Nothing was changed: the log is not damaged, and neither start-up nor --repair touches it.'
  );
}

// Expiry is part of the storage contract; the log store's code imports it from here.
export { isExpired, isExpiredAt } from './link-store.ts';

const INT = /^(0|[1-9]\d{0,15})$/;
/** Largest visit limit a log line may hold (the keydir keeps it in 32 bits). */
export const MAX_LIMIT = 0xffffffff;

/** Parses one checksummed payload string; `undefined` when it is well-formed text of no known shape. */
export function decodePayload(text: string): Entry | undefined {
  const f = text.split('\t');
  switch (f[0]) {
    case 'C': {
      if (f.length === 7) {
        if (!f[1] || !INT.test(f[2]!) || !INT.test(f[3]!) || !INT.test(f[4]!) || !INT.test(f[5]!) || Number(f[5]) > MAX_LIMIT || !f[6]) return undefined;
        return { op: 'C', code: f[1], createdAt: Number(f[2]), retentionDays: Number(f[3]), visits: Number(f[4]), maxVisits: Number(f[5]) || null, url: f[6] };
      }
      if (f.length !== 6 || !f[1] || !INT.test(f[2]!) || !INT.test(f[3]!) || !INT.test(f[4]!) || !f[5]) return undefined;
      return { op: 'C', code: f[1], createdAt: Number(f[2]), retentionDays: Number(f[3]), visits: Number(f[4]), maxVisits: null, url: f[5] };
    }
    case 'E': {
      if (f.length !== 5 || !f[1] || !INT.test(f[2]!) || !INT.test(f[3]!) || Number(f[3]) > MAX_LIMIT || !f[4]) return undefined;
      return { op: 'E', code: f[1], retentionDays: Number(f[2]), maxVisits: Number(f[3]) || null, url: f[4] };
    }
    case 'F':
      return f.length === 3 && f[1] && INT.test(f[2]!) ? { op: 'F', name: f[1], version: Number(f[2]) } : undefined;
    case 'D':
      return f.length === 2 && f[1] ? { op: 'D', code: f[1] } : undefined;
    case 'V': {
      if (f.length < 3 || f.length % 2 === 0) return undefined;
      const counts: [string, number][] = [];
      for (let i = 1; i < f.length; i += 2) {
        if (!f[i] || !INT.test(f[i + 1]!)) return undefined;
        counts.push([f[i]!, Number(f[i + 1])]);
      }
      return { op: 'V', counts };
    }
    default:
      return undefined;
  }
}
