/**
 * One line of the log read from its bytes and applied to a keydir (the format is `format.ts`):
 * the checksum, the byte-level parse of creates, the version line. Its own file because it is the
 * inner loop of start-up, shared by replay and by `--repair` (`replay.ts`), and written for speed
 * rather than for reading like the rest of the format.
 */
import { crc32 } from './crc32.ts';
import { decodePayload, FORMAT_NAME, MAX_LIMIT, type Entry } from './format.ts';
import type { Keydir } from './keydir.ts';
import type { EventEntry } from './event-format.ts';
import { STRIDE } from '../../visits/packed.ts';
import { MAX_COUNT, MAX_DIGITS } from '../record-limits.ts';

/** Why a line is not applied: its checksum is right but its shape unknown. */
export const UNKNOWN = 'unknown entry';

export const NL = 0x0a;
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

/**
 * A decimal integer in [start, end) without sign or leading zeros, of at most `MAX_DIGITS` digits
 * (what the writer writes, `record-limits.ts`), or -1. The caller checks the value's range.
 */
function int(buf: Buffer, start: number, end: number): number {
  if (end <= start || end - start > MAX_DIGITS || (buf[start] === 0x30 && end - start > 1)) return -1;
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
export function applyLine(records: Keydir, buf: Buffer, start: number, end: number): string | undefined {
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
  // A count past MAX_COUNT (an older build counted on) reads as MAX_COUNT, where counting stops.
  const visits = Math.min(int(buf, t4 + 1, t5), MAX_COUNT);
  const maxVisits = t6 === -1 ? 0 : int(buf, t5 + 1, t6);
  if (createdAt < 0 || createdAt > MAX_COUNT || retentionDays < 0 || retentionDays > MAX_LIMIT || visits < 0 || maxVisits < 0 || maxVisits > MAX_LIMIT) return UNKNOWN;
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
      // Absolute untracked visits (in a log before format 3, every visit was one).
      for (const [code, count] of entry.counts) {
        const s = records.find(code);
        if (s !== -1) records.setUntracked(s, count);
      }
      break;
    case 'F':
      break;
    default:
      applyEvents(records, entry);
  }
}

/** An entry of visit events (`event-format.ts`); events of codes that no longer exist are ignored. */
function applyEvents(records: Keydir, entry: EventEntry): void {
  if (entry.op === 'R') {
    records.events.referrers.define(entry.n, entry.host);
    return;
  }
  if (entry.op === 'T') {
    for (const [code, untracked] of entry.counts) {
      const s = records.find(code);
      if (s === -1) continue;
      records.events.cut(s, entry.before);
      records.setUntracked(s, untracked);
    }
    return;
  }
  const s = records.find(entry.code);
  if (s === -1) return;
  const events = records.events;
  switch (entry.op) {
    case 'Z':
      // Events numbered below its number are gone; later lines may still carry some of them.
      records.resetVisits(s);
      events.setNextSeq(s, Math.max(events.nextSeq(s), entry.seq));
      return;
    case 'K':
      // A compacted link: its create set the untracked visits, these are all its events.
      events.clear(s);
      records.setUntracked(s, records.untracked(s));
      addAll(records, s, entry.events);
      events.setNextSeq(s, entry.seq);
      return;
    case 'J':
      addAll(records, s, entry.events);
      return;
    case 'X':
    case 'Y': {
      // Events numbered below the link's next number are in the log already (a compaction wrote
      // them, and this line was written meanwhile and copied onto the compacted log).
      const data = entry.events;
      for (let w = 0, seq = entry.seq; w < data.length; w += STRIDE, seq++) {
        if (seq < events.nextSeq(s)) continue;
        if (entry.op === 'X') records.addEvent(s, data[w]!, data[w + 1]!, data[w + 2]!, data[w + 3]!);
        else records.importEvent(s, data[w]!, data[w + 1]!, data[w + 2]!, data[w + 3]!);
        events.setNextSeq(s, seq + 1);
      }
      return;
    }
  }
}

function addAll(records: Keydir, s: number, data: Uint32Array): void {
  for (let w = 0; w < data.length; w += STRIDE) records.addEvent(s, data[w]!, data[w + 1]!, data[w + 2]!, data[w + 3]!);
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
export function firstLine(buf: Buffer, start: number, end: number, found: { version: number }): boolean {
  const version = checksummed(buf, start, end) ? headerVersion(buf, start, end) : undefined;
  found.version = version ?? 1;
  return version !== undefined;
}
