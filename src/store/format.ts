/**
 * The log format and its replay, as pure functions over bytes.
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
import { Keydir, type StoredRecord } from './keydir.ts';

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
const MAX_LIMIT = 0xffffffff;

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

export interface Damage {
  /** 1-based line number. */
  line: number;
  reason: string;
  /**
   * The line's checksum is right but this build does not know its shape: not damage but an entry
   * of a newer format (or written by hand). Never dropped: neither start-up nor `--repair` goes on.
   */
  unknown?: boolean;
}

/** Why a line is not applied: its checksum is right but its shape unknown. */
const UNKNOWN = 'unknown entry';

export interface ReplayResult {
  /** Live records in creation order: newest last. Expired records are kept; the service hides them. */
  records: Keydir;
  /** Number of intact entries read. */
  entries: number;
  /** Bytes of the intact prefix: where the next append goes. */
  validBytes: number;
  /**
   * A last line without its newline: a crash mid-append, to be cut off. A write lands as a prefix of
   * its bytes, so a tear can never leave a complete line behind.
   */
  tornTail: Damage | undefined;
  /** A complete line that is not an intact entry, last or not: never dropped silently; the caller must refuse to start. */
  damage: Damage | undefined;
  /**
   * The log's format version: the version line's, 1 for a log without one, `FORMAT_VERSION` for an
   * empty log. Above `FORMAT_VERSION`, replay stopped at the version line: the caller must refuse.
   */
  version: number;
  /** The intact prefix starts with the version line. */
  header: boolean;
}

const NL = 0x0a;
const TAB = 0x09;
const SPACE = 0x20;

/** The value of 8 lower-case hex digits at `pos`, or -1. */
function hex8(buf: Buffer, pos: number): number {
  let v = 0;
  for (let i = pos; i < pos + 8; i++) {
    const c = buf[i]!;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** A decimal integer in [start, end) without sign or leading zeros, or -1. */
function int(buf: Buffer, start: number, end: number): number {
  if (end <= start || end - start > 15 || (buf[start] === 0x30 && end - start > 1)) return -1;
  let v = 0;
  for (let i = start; i < end; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** The position of the first tab after `after` and before `end`, or -1 (also when `after` is -1). */
function tab(buf: Buffer, after: number, end: number): number {
  if (after < 0) return -1;
  const at = buf.indexOf(TAB, after + 1);
  return at !== -1 && at < end ? at : -1;
}

/**
 * Applies the line at [start, end) to `records`, or returns why it is not an intact entry.
 * Creates, nearly all of a compacted log, are parsed on bytes and copied into the keydir: no
 * per-line string, split or intermediate entry.
 */
function applyLine(records: Keydir, buf: Buffer, start: number, end: number): string | undefined {
  if (end - start < 12 || buf[start + 8] !== SPACE) return 'not an entry';
  const sum = hex8(buf, start);
  if (sum < 0) return 'not an entry';
  const body = start + 9;
  if (crc32(buf.subarray(body, end)) !== sum) return 'bad checksum';
  if (buf[body] !== 0x43 /* C */) {
    const entry = decodePayload(buf.toString('utf8', body, end));
    // A version line anywhere but first is not one this build wrote.
    if (!entry || entry.op === 'F') return UNKNOWN;
    apply(records, entry);
    return undefined;
  }
  const t1 = body + 1;
  const t2 = tab(buf, t1, end);
  const t3 = tab(buf, t2, end);
  const t4 = tab(buf, t3, end);
  const t5 = tab(buf, t4, end);
  if (buf[t1] !== TAB || t2 <= t1 + 1 || t5 === -1 || t5 === end - 1) return UNKNOWN;
  // A seventh field: the link's visit limit, before the URL.
  const t6 = tab(buf, t5, end);
  if (t6 !== -1 && (t6 === end - 1 || tab(buf, t6, end) !== -1)) return UNKNOWN;
  const createdAt = int(buf, t2 + 1, t3);
  const retentionDays = int(buf, t3 + 1, t4);
  const visits = int(buf, t4 + 1, t5);
  const maxVisits = t6 === -1 ? 0 : int(buf, t5 + 1, t6);
  if (createdAt < 0 || retentionDays < 0 || visits < 0 || maxVisits < 0 || maxVisits > MAX_LIMIT) return UNKNOWN;
  // The last entry for a code wins and a (re-)created code is the newest: it moves to the end.
  records.addBytes(buf, t1 + 1, t2, (t6 === -1 ? t5 : t6) + 1, end, createdAt, retentionDays, visits, maxVisits);
  return undefined;
}

function apply(records: Keydir, entry: Entry): void {
  switch (entry.op) {
    case 'C':
      // A code re-created after a delete moves to the end, as a new link would.
      records.add(entry.code, entry.url, entry.createdAt, entry.retentionDays, entry.visits, entry.maxVisits ?? 0);
      break;
    case 'E': {
      const s = records.find(entry.code);
      if (s !== -1) records.edit(s, entry.url, entry.retentionDays, entry.maxVisits);
      break;
    }
    case 'D':
      records.delete(entry.code);
      break;
    case 'V':
      for (const [code, count] of entry.counts) {
        const s = records.find(code);
        if (s !== -1) records.setVisits(s, count);
      }
      break;
    case 'F':
      break;
  }
}

/**
 * The version named by a version line at [start, end) (its checksum already checked), or
 * `undefined` when the line is not a version line.
 */
function headerVersion(buf: Buffer, start: number, end: number): number | undefined {
  if (buf[start + 9] !== 0x46 /* F */) return undefined;
  const entry = decodePayload(buf.toString('utf8', start + 9, end));
  return entry?.op === 'F' && entry.name === FORMAT_NAME ? entry.version : undefined;
}

/** A line's checksum is right. */
function checksummed(buf: Buffer, start: number, end: number): boolean {
  if (end - start < 10 || buf[start + 8] !== SPACE) return false;
  const sum = hex8(buf, start);
  return sum >= 0 && crc32(buf.subarray(start + 9, end)) === sum;
}

/**
 * The first line: the version line (true: read, not an entry), or an entry of a version 1 log
 * (false). Sets `found.version`; above `FORMAT_VERSION` the caller stops.
 */
function firstLine(buf: Buffer, start: number, end: number, found: { version: number }): boolean {
  const version = checksummed(buf, start, end) ? headerVersion(buf, start, end) : undefined;
  found.version = version ?? 1;
  return version !== undefined;
}

/**
 * Replays a log fed in chunks of any size (a multi-gigabyte log never has to fit in one Buffer).
 * Every complete line must be intact. Only the last line may lack its newline (a crash during an
 * append): that one is reported in `tornTail` and not applied. A complete line that is not intact
 * (a bad checksum, garbage), even the last one, cannot come from a torn append: it stops replay and
 * is reported in `damage`. A version line naming a newer format stops replay at once (`version`).
 */
export class Replayer {
  readonly records = new Keydir();
  private entries = 0;
  private line = 0;
  /** Absolute offset of the end of the intact prefix. */
  private validBytes = 0;
  /** Bytes of an unfinished line carried over from the previous chunk. */
  private carry: Buffer | undefined;
  private damage: Damage | undefined;
  private readonly format = { version: FORMAT_VERSION };
  private header = false;

  /** Replay stopped: damage, or a newer format. */
  private get stopped(): boolean {
    return this.damage !== undefined || this.format.version > FORMAT_VERSION;
  }

  push(chunk: Buffer): void {
    if (this.stopped || chunk.length === 0) return;
    let pos = 0;
    if (this.carry) {
      // Only the line split across chunks is joined: concatenating whole chunks would leave
      // megabytes of garbage per chunk that the allocator keeps long after replay.
      const nl = chunk.indexOf(NL);
      if (nl === -1) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return;
      }
      const joined = Buffer.concat([this.carry, chunk.subarray(0, nl + 1)]);
      this.carry = undefined;
      if (!this.lines(joined, 0)) return;
      pos = nl + 1;
    }
    this.lines(chunk, pos);
  }

  /** Applies the lines of `buf` from `pos` on; false once damage (or a newer format) stops the replay. */
  private lines(buf: Buffer, pos: number): boolean {
    while (pos < buf.length) {
      const nl = buf.indexOf(NL, pos);
      if (nl === -1) {
        // Copied: the caller may reuse its chunk buffer.
        this.carry = Buffer.from(buf.subarray(pos));
        return true;
      }
      this.line++;
      if (this.line === 1 && firstLine(buf, pos, nl, this.format)) {
        if (this.stopped) {
          this.carry = undefined;
          return false;
        }
        this.header = true;
        this.validBytes += nl + 1 - pos;
        pos = nl + 1;
        continue;
      }
      const failure = applyLine(this.records, buf, pos, nl);
      if (failure !== undefined) {
        this.damage = { line: this.line, reason: failure, ...(failure === UNKNOWN && { unknown: true }) };
        this.carry = undefined;
        return false;
      }
      this.entries++;
      this.validBytes += nl + 1 - pos;
      pos = nl + 1;
    }
    return true;
  }

  finish(): ReplayResult {
    const { records, entries, validBytes, damage, header } = this;
    const tornTail = this.carry ? { line: this.line + 1, reason: 'incomplete line (no newline)' } : undefined;
    // No whole line at all: a new log (a torn first line is cut, and the version line written then).
    const version = this.line === 0 ? FORMAT_VERSION : this.format.version;
    return { records, entries, validBytes, tornTail, damage, version, header };
  }
}

/** Replays a whole log held in one buffer (see `Replayer`). */
export function replay(buf: Buffer): ReplayResult {
  const replayer = new Replayer();
  replayer.push(buf);
  return replayer.finish();
}

export interface Salvage {
  /** Every intact line, verbatim, in order (the version line too). */
  intact: Buffer[];
  /** Every damaged line: its number, reason and size (`unknown`: intact but of an unknown shape). */
  lost: (Damage & { bytes: number })[];
  /** The log's format version (see `ReplayResult.version`); above `FORMAT_VERSION` nothing else was read. */
  version: number;
}

/** Splits a damaged log into its intact lines and its damaged ones (for `--repair`). */
export function salvage(buf: Buffer): Salvage {
  const scratch = new Keydir();
  const intact: Buffer[] = [];
  const lost: Salvage['lost'] = [];
  const format = { version: FORMAT_VERSION };
  let line = 0;
  for (let pos = 0; pos < buf.length; ) {
    line++;
    const nl = buf.indexOf(NL, pos);
    const end = nl === -1 ? buf.length : nl;
    if (line === 1 && nl !== -1 && firstLine(buf, pos, end, format)) {
      if (format.version > FORMAT_VERSION) return { intact: [], lost: [], version: format.version };
      intact.push(buf.subarray(pos, end + 1));
      pos = end + 1;
      continue;
    }
    const failure = nl === -1 ? 'incomplete line (no newline)' : applyLine(scratch, buf, pos, end);
    if (failure === undefined) intact.push(buf.subarray(pos, end + 1));
    else lost.push({ line, reason: failure, bytes: end + (nl === -1 ? 0 : 1) - pos, ...(failure === UNKNOWN && { unknown: true }) });
    pos = end + 1;
  }
  return { intact, lost, version: line === 0 ? FORMAT_VERSION : format.version };
}
