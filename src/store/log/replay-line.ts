/**
 * One line of the log read from its bytes and applied to a keydir (the format is `format.ts`):
 * the checksum, the byte-level parse of creates and of event lines (their fields read by
 * `line-bytes.ts`), the version line. Its own file because it is the inner loop of start-up,
 * shared by replay and by `--repair` (`replay.ts`), and written for speed rather than for reading
 * like the rest of the format.
 */
import { crc32 } from './crc32.ts';
import { FORMAT_NAME, type Entry } from './format.ts';
import { decodePayload, MAX_LIMIT } from './format-decode.ts';
import type { Keydir } from './keydir.ts';
import type { EventEntry } from './event-format.ts';
import { KEY_OPS, type KeyEntry } from './key-format.ts';
import { STRIDE } from '../../visits/packed.ts';
import { b36, hex8, int, next, TAB, tab } from './line-bytes.ts';
import { authorOnly } from './link-labels.ts';
import { MAX_COUNT } from '../record-limits.ts';

/** Why a line is not applied: its checksum is right but its shape unknown. */
export const UNKNOWN = 'unknown entry';

export const NL = 0x0a;
const SPACE = 0x20;

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
  const op = buf[body];
  // Lines of events, nearly all of a log with many visits, are read on bytes too.
  if ((op === 0x58 /* X */ || op === 0x4b /* K */ || op === 0x4a) /* J */ && applyEventLine(records, buf, body, end)) return undefined;
  if (op !== 0x43 /* C */) return applyText(records, buf, body, end);
  const t1 = body + 1;
  const t2 = tab(buf, t1, end);
  const t3 = tab(buf, t2, end);
  const t4 = tab(buf, t3, end);
  const t5 = tab(buf, t4, end);
  if (buf[t1] !== TAB || t2 <= t1 + 1 || t5 === -1 || t5 === end - 1) return UNKNOWN;
  // A seventh field: the link's visit limit, before the URL. An eighth, its labels (JSON): read as
  // text, but for the labels of a link with an author and nothing else, which every link created
  // with a stored key may have (`link-labels.ts`).
  const t6 = tab(buf, t5, end);
  const t7 = tab(buf, t6, end);
  const author = t7 === -1 ? undefined : authorOnly(buf, t7 + 1, end);
  if (t7 !== -1 && author === undefined) return applyText(records, buf, body, end);
  if (t6 === end - 1 || t7 === t6 + 1) return UNKNOWN;
  const createdAt = int(buf, t2 + 1, t3);
  const retentionDays = int(buf, t3 + 1, t4);
  // A count past MAX_COUNT (an older build counted on) reads as MAX_COUNT, where counting stops.
  const visits = Math.min(int(buf, t4 + 1, t5), MAX_COUNT);
  const maxVisits = t6 === -1 ? 0 : int(buf, t5 + 1, t6);
  if (createdAt < 0 || createdAt > MAX_COUNT || retentionDays < 0 || retentionDays > MAX_LIMIT || visits < 0 || maxVisits < 0 || maxVisits > MAX_LIMIT)
    return UNKNOWN;
  // The last entry for a code wins and a (re-)created code is the newest: it moves to the end.
  const s = records.addBytes(buf, t1 + 1, t2, (t6 === -1 ? t5 : t6) + 1, t7 === -1 ? end : t7, createdAt, retentionDays, visits, maxVisits);
  if (author !== undefined) records.setLabels(s, { author });
  return undefined;
}

/** Applies the payload at [body, end) decoded as text (`decodePayload`), or returns why not. */
function applyText(records: Keydir, buf: Buffer, body: number, end: number): string | undefined {
  const entry = decodePayload(buf.toString('utf8', body, end));
  // A version line anywhere but first is not one this build wrote.
  if (!entry || entry.op === 'F') return UNKNOWN;
  apply(records, entry);
  return undefined;
}

function apply(records: Keydir, entry: Entry): void {
  switch (entry.op) {
    case 'C':
      // A code re-created after a delete moves to the end, as a new link would.
      records.add(entry.code, entry.url, entry.createdAt, entry.retentionDays, entry.visits, entry.maxVisits ?? 0, entry);
      break;
    case 'E': {
      const s = records.find(entry.code);
      if (s !== -1) records.edit(s, entry.url, entry.retentionDays, entry.maxVisits, entry);
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
    case 'H':
      records.domains.apply(entry);
      break;
    case 'O':
      records.orphans.apply(entry);
      break;
    case 'S':
    case 'Q':
    case 'N':
    case 'L':
    case 'M':
      records.webhooks.apply(entry);
      break;
    default:
      if (KEY_OPS.has(entry.op)) records.accessKeys.apply(entry as KeyEntry);
      else applyEvents(records, entry as EventEntry);
  }
}

/** An entry of visit events (`event-format.ts`); events of codes that no longer exist are ignored. */
function applyEvents(records: Keydir, entry: EventEntry): void {
  if (entry.op === 'R') {
    records.events.referrers.define(entry.n, entry.host);
    return;
  }
  if (entry.op === 'T') {
    // Retention removes the orphan visits older too (format 6).
    records.orphans.expire(entry.before);
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
      events.addAll(s, entry.events);
      events.setNextSeq(s, entry.seq);
      return;
    case 'J': {
      // More of the events the `K` before it numbered: they add no numbers of their own. (Counted
      // on, the link's next number ran past the lines written after the compaction, and replay
      // skipped their visits as already applied.)
      const next = events.nextSeq(s);
      events.addAll(s, entry.events);
      events.setNextSeq(s, next);
      return;
    }
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

/**
 * The words of the event line being read, reused for every line: ten million events read at start-up
 * make no garbage of their own (a fresh array a line was hundreds of megabytes of it, most of which
 * the process kept as resident memory).
 */
let scratch = new Uint32Array(4096 * STRIDE);

/**
 * An `X`, `K` or `J` line (`event-format.ts`) read on bytes and applied by the rules of
 * `applyEvents`; false when the line is not one this reads (the caller then decodes it the slow
 * way, which also tells damage from an unknown shape). Nothing is applied before the whole line
 * has been read.
 */
function applyEventLine(records: Keydir, buf: Buffer, body: number, end: number): boolean {
  const op = buf[body]!;
  if (buf[body + 1] !== TAB) return false;
  const codeEnd = next(buf, TAB, body + 2, end);
  if (codeEnd === end || codeEnd === body + 2) return false;
  let pos = codeEnd + 1;
  let seq = -1;
  if (op !== 0x4a /* J */) {
    const seqEnd = next(buf, TAB, pos, end);
    seq = int(buf, pos, seqEnd);
    if (seq < 0) return false;
    pos = seqEnd + 1;
  }
  let words = 0;
  let time = 0;
  for (let first = true; pos < end; first = false) {
    const stop = next(buf, TAB, pos, end);
    const c1 = next(buf, 0x2c, pos, stop);
    const c2 = next(buf, 0x2c, c1 + 1, stop);
    const c3 = next(buf, 0x2c, c2 + 1, stop);
    if (c3 >= stop) return false;
    const negative = !first && buf[pos] === 0x2d;
    const dt = b36(buf, negative ? pos + 1 : pos, c1);
    const visitor = b36(buf, c1 + 1, c2);
    const referrer = b36(buf, c2 + 1, c3);
    const attrs = b36(buf, c3 + 1, stop);
    if (dt < 0 || visitor < 0 || visitor > 0xffffffff || referrer < 0 || attrs < 0 || attrs > 0xffffffff) return false;
    time = first ? dt : negative ? time - dt : time + dt;
    if (time < 0 || time > 0xffffffff) return false;
    if (words + STRIDE > scratch.length) {
      const grown = new Uint32Array(scratch.length * 2);
      grown.set(scratch);
      scratch = grown;
    }
    scratch[words] = time;
    scratch[words + 1] = visitor;
    scratch[words + 2] = referrer;
    scratch[words + 3] = attrs;
    words += STRIDE;
    pos = stop + 1;
  }
  if (words === 0 && op !== 0x4b /* K */) return false;
  const code = buf.toString('latin1', body + 2, codeEnd);
  // A view of the scratch words: applying copies them into the link's own array.
  const events = scratch.subarray(0, words);
  applyEvents(records, op === 0x58 ? { op: 'X', code, seq, events } : op === 0x4b ? { op: 'K', code, seq, events } : { op: 'J', code, events });
  return true;
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
