/**
 * The log format and its replay, as pure functions over bytes.
 *
 * One entry per line: `<crc32 as 8 hex digits> <payload>\n`, the checksum covering the payload's
 * bytes. Payload fields are tab-separated; a WHATWG-serialized URL never contains a tab, CR or LF
 * (the URL parser strips them), and codes are alphanumeric, so no escaping is needed:
 *
 *   C <code> <created_at> <retention_days> <visit_count> <url>   create (visit_count > 0 after compaction)
 *   D <code>                                                     delete (tombstone)
 *   V <code> <count> [<code> <count> …]                          visit counts, absolute
 *
 * Visit batches carry absolute counts, not increments: replaying one twice changes nothing, and a
 * later batch for a code makes every earlier one dead weight for compaction to drop. The last entry
 * for a code wins (Bitcask). Visit counts of codes that no longer exist are ignored.
 */
import { crc32 } from './crc32.ts';

export interface StoredRecord {
  code: string;
  url: string;
  /** Unix seconds. */
  createdAt: number;
  /** 0 = forever. */
  retentionDays: number;
  visits: number;
  /** True while the visit count differs from the last one written (see `Store.flushVisits`). */
  dirty: boolean;
}

export type Entry =
  | { op: 'C'; code: string; url: string; createdAt: number; retentionDays: number; visits: number }
  | { op: 'D'; code: string }
  | { op: 'V'; counts: [code: string, count: number][] };

function payload(entry: Entry): string {
  switch (entry.op) {
    case 'C':
      return `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.url}`;
    case 'D':
      return `D\t${entry.code}`;
    case 'V':
      return `V\t${entry.counts.map(([code, count]) => `${code}\t${count}`).join('\t')}`;
  }
}

/** The bytes of one log line, newline included. */
export function encodeEntry(entry: Entry): Buffer {
  const body = Buffer.from(payload(entry), 'utf8');
  const head = crc32(body).toString(16).padStart(8, '0');
  return Buffer.concat([Buffer.from(head + ' ', 'latin1'), body, Buffer.from('\n', 'latin1')]);
}

const INT = /^(0|[1-9]\d{0,15})$/;

/** Parses one checksummed payload string; `undefined` when it is well-formed text of no known shape. */
export function decodePayload(text: string): Entry | undefined {
  const f = text.split('\t');
  switch (f[0]) {
    case 'C': {
      if (f.length !== 6 || !f[1] || !INT.test(f[2]!) || !INT.test(f[3]!) || !INT.test(f[4]!) || !f[5]) return undefined;
      return { op: 'C', code: f[1], createdAt: Number(f[2]), retentionDays: Number(f[3]), visits: Number(f[4]), url: f[5] };
    }
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

export interface Damage {
  /** 1-based line number. */
  line: number;
  reason: string;
}

export interface ReplayResult {
  /** Live records in creation order (Map order): newest last. Expired records are kept; the service hides them. */
  records: Map<string, StoredRecord>;
  /** Number of intact entries read. */
  entries: number;
  /** Bytes of the intact prefix: where the next append goes. */
  validBytes: number;
  /** A torn or damaged last line, cut off (a crash mid-append). */
  tornTail: Damage | undefined;
  /** Damage followed by intact entries: never dropped silently; the caller must refuse to start. */
  damage: Damage | undefined;
}

const NL = 0x0a;
const SPACE = 0x20;
const HEX8 = /^[0-9a-f]{8}$/;

/** Why a line is not an intact entry, or the entry. */
function readLine(buf: Buffer, start: number, end: number): Entry | string {
  if (end - start < 10 || buf[start + 8] !== SPACE) return 'not an entry';
  const head = buf.toString('latin1', start, start + 8);
  if (!HEX8.test(head)) return 'not an entry';
  const body = buf.subarray(start + 9, end);
  if (crc32(body) !== parseInt(head, 16)) return 'bad checksum';
  return decodePayload(body.toString('utf8')) ?? 'unknown entry';
}

export function apply(records: Map<string, StoredRecord>, entry: Entry): void {
  switch (entry.op) {
    case 'C':
      // A code re-created after a delete moves to the end, as a new link would.
      records.delete(entry.code);
      records.set(entry.code, {
        code: entry.code,
        url: entry.url,
        createdAt: entry.createdAt,
        retentionDays: entry.retentionDays,
        visits: entry.visits,
        dirty: false,
      });
      break;
    case 'D':
      records.delete(entry.code);
      break;
    case 'V':
      for (const [code, count] of entry.counts) {
        const rec = records.get(code);
        if (rec) rec.visits = count;
      }
      break;
  }
}

/**
 * Replays a whole log. Every line must be intact except the last, which a crash can leave torn
 * (no newline, or a checksum that does not match): that one is reported in `tornTail` and not
 * applied. Anything damaged before the last line stops replay and is reported in `damage`.
 */
export function replay(buf: Buffer): ReplayResult {
  const records = new Map<string, StoredRecord>();
  let entries = 0;
  let pos = 0;
  let line = 0;
  while (pos < buf.length) {
    line++;
    const nl = buf.indexOf(NL, pos);
    const end = nl === -1 ? buf.length : nl;
    const entry = nl === -1 ? 'incomplete line (no newline)' : readLine(buf, pos, end);
    if (typeof entry === 'string') {
      const damage = { line, reason: entry };
      const last = nl === -1 || nl === buf.length - 1;
      return last
        ? { records, entries, validBytes: pos, tornTail: damage, damage: undefined }
        : { records, entries, validBytes: pos, tornTail: undefined, damage };
    }
    apply(records, entry);
    entries++;
    pos = end + 1;
  }
  return { records, entries, validBytes: pos, tornTail: undefined, damage: undefined };
}
