/**
 * The log entries of visit events (format 3, docs/storage.md), as pure functions: an entry's
 * payload and back. The line around a payload (checksum, newline) is `format.ts`'s.
 *
 *   R <n> <host>                                  referrer host number n (before any event using it)
 *   X <code> <seq> <event> [<event> …]            visits with their events, numbered from seq
 *   Y <code> <seq> <event> [<event> …]            imported events (each takes an untracked visit's place)
 *   K <code> <seq> [<event> …]                    compaction: the link's events are these, numbered below seq
 *   J <code> <event> [<event> …]                  compaction: more events of the link the last K named
 *   Z <code> <seq>                                the link's events removed (those numbered below seq,
 *                                                 wherever they are in the log), its counts set to 0
 *   T <before> <code> <untracked> […]             retention: events before `before` removed, the
 *                                                 untracked visits of the links that had some, absolute;
 *                                                 the orphan visits before `before` removed too
 *
 * An event is four comma-separated numbers in base 36: its time (the first event of a line: Unix
 * seconds; each later one: the difference from the one before, `-` when earlier), the visitor id
 * (unsigned), the referrer number and the attrs word of `visits/packed.ts`. About 17 bytes an
 * event where a line holds many (a compacted log), so ten million events take some 170 MB.
 *
 * A visit and its event are one line: the count of a link is its untracked visits plus its events,
 * so replay or a torn tail keeps both or neither (docs/analytics.md).
 */
import { ATTRS, REFERRER, STRIDE, TIME, VISITOR } from '../../visits/packed.ts';

export type EventEntry =
  | { op: 'R'; n: number; host: string }
  | { op: 'X' | 'Y' | 'K'; code: string; seq: number; events: Uint32Array }
  | { op: 'J'; code: string; events: Uint32Array }
  | { op: 'Z'; code: string; seq: number }
  | { op: 'T'; before: number; counts: [code: string, untracked: number][] };

export const EVENT_OPS: ReadonlySet<string> = new Set(['R', 'X', 'Y', 'K', 'J', 'Z', 'T']);

/** Largest sequence number or count a field holds: what a double counts exactly. */
const MAX_FIELD = Number.MAX_SAFE_INTEGER;

/** The entries whose payload ends in events: written as bytes by `writeEventsPayload`. */
export type EventsEntry = Extract<EventEntry, { events: Uint32Array }>;

export function hasEvents(entry: { op: string }): entry is EventsEntry {
  return entry.op === 'X' || entry.op === 'Y' || entry.op === 'K' || entry.op === 'J';
}

/** Bytes an event takes at most: a signed time difference (8), three words (7 each), 3 commas, a tab. */
const EVENT_BYTES = 33;
/** Bytes of the payload before the events at most, but the code: op, tabs, a 16-digit seq. */
const HEAD_BYTES = 20;

/** An upper bound of the payload bytes of `count` events of `code` (a UTF-16 unit is at most 3 bytes of UTF-8). */
export function eventsPayloadBound(code: string, count: number): number {
  return HEAD_BYTES + code.length * 3 + count * EVENT_BYTES;
}

const DIGITS = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz', 'latin1');
/** Base-36 digits of one number, least significant first (a word has at most 7). */
const scratch = new Uint8Array(8);

/** Writes `n` (a whole number below 2^32) in base 36 at `at`; returns where it ends. */
function writeBase36(buf: Buffer, at: number, n: number): number {
  let k = 0;
  do {
    const q = Math.floor(n / 36);
    scratch[k++] = DIGITS[n - q * 36]!;
    n = q;
  } while (n > 0);
  while (k > 0) buf[at++] = scratch[--k]!;
  return at;
}

/**
 * Writes the payload `<op>\t<code>[\t<seq>]\t<event>…` of the `count` events of `events` from
 * event `first` into `buf` at `at` (room for `eventsPayloadBound` bytes); returns where it ends.
 * Written straight as bytes, without making the text first: a busy server writes one
 * of these lines per link per flush, and making the text first was a third of what an event cost
 * a redirect. `seq` is not written for `J`.
 */
export function writeEventsPayload(
  buf: Buffer,
  at: number,
  op: EventsEntry['op'],
  code: string,
  seq: number,
  events: Uint32Array,
  first: number,
  count: number,
): number {
  buf[at++] = op.charCodeAt(0);
  buf[at++] = 0x09;
  at += buf.write(code, at, 'utf8');
  if (op !== 'J') {
    buf[at++] = 0x09;
    at += buf.write(String(seq), at, 'latin1');
  }
  let last = 0;
  for (let w = first * STRIDE, end = (first + count) * STRIDE; w < end; w += STRIDE) {
    buf[at++] = 0x09;
    const time = events[w + TIME]!;
    if (w === first * STRIDE) at = writeBase36(buf, at, time);
    else if (time >= last) at = writeBase36(buf, at, time - last);
    else {
      buf[at++] = 0x2d;
      at = writeBase36(buf, at, last - time);
    }
    last = time;
    buf[at++] = 0x2c;
    at = writeBase36(buf, at, events[w + VISITOR]!);
    buf[at++] = 0x2c;
    at = writeBase36(buf, at, events[w + REFERRER]!);
    buf[at++] = 0x2c;
    at = writeBase36(buf, at, events[w + ATTRS]!);
  }
  return at;
}

/** The payload of an event entry without events (no checksum, no newline); those with events are `writeEventsPayload`'s. */
export function eventPayload(entry: Exclude<EventEntry, EventsEntry>): string {
  switch (entry.op) {
    case 'R':
      return `R\t${entry.n}\t${entry.host}`;
    case 'Z':
      return `Z\t${entry.code}\t${entry.seq}`;
    case 'T':
      return `T\t${entry.before}${entry.counts.map(([code, n]) => `\t${code}\t${n}`).join('')}`;
  }
}

/** What an event entry's fields must be for a reader to read them back (`format.ts` checks before a write). */
export function eventWritable(entry: EventEntry): boolean {
  const texts: string[] = [];
  const ints: number[] = [];
  switch (entry.op) {
    case 'R':
      texts.push(entry.host);
      ints.push(entry.n);
      break;
    case 'X':
    case 'Y':
    case 'K':
      texts.push(entry.code);
      ints.push(entry.seq);
      break;
    case 'J':
      texts.push(entry.code);
      if (entry.events.length === 0) return false;
      break;
    case 'Z':
      texts.push(entry.code);
      ints.push(entry.seq);
      break;
    case 'T':
      ints.push(entry.before);
      for (const [code, n] of entry.counts) {
        texts.push(code);
        ints.push(n);
      }
      break;
  }
  if ('events' in entry && entry.events.length % STRIDE !== 0) return false;
  return texts.every((t) => t !== '' && !/[\t\r\n,]/.test(t)) && ints.every((n) => Number.isInteger(n) && n >= 0 && n <= MAX_FIELD);
}

const DEC = /^(0|[1-9]\d{0,15})$/;
const B36 = /^-?[0-9a-z]{1,7}$/;

function dec(text: string | undefined): number {
  if (text === undefined || !DEC.test(text)) return -1;
  const n = Number(text);
  return n <= MAX_FIELD ? n : -1;
}

/** A base-36 word of 32 bits, or -1; `signed` lets a time difference be negative. */
function word(text: string | undefined, signed = false): number {
  if (text === undefined || !B36.test(text) || (!signed && text[0] === '-')) return -1;
  const n = parseInt(text, 36);
  return Math.abs(n) <= 0xffffffff ? n : -1;
}

/** The events of fields `f[from…]`, or undefined when one is not an event. */
function parseEvents(f: string[], from: number): Uint32Array | undefined {
  const events = new Uint32Array((f.length - from) * STRIDE);
  let time = 0;
  for (let i = from, w = 0; i < f.length; i++, w += STRIDE) {
    const parts = f[i]!.split(',');
    if (parts.length !== 4) return undefined;
    const t = word(parts[0], i !== from);
    const visitor = word(parts[1]);
    const referrer = word(parts[2]);
    const attrs = word(parts[3]);
    if ((i === from && t < 0) || visitor < 0 || referrer < 0 || attrs < 0) return undefined;
    time = i === from ? t : time + t;
    if (time < 0 || time > 0xffffffff) return undefined;
    events[w + TIME] = time;
    events[w + VISITOR] = visitor;
    events[w + REFERRER] = referrer;
    events[w + ATTRS] = attrs;
  }
  return events;
}

/** The event entry of payload fields `f` (split on tabs), or undefined when it is none. */
export function decodeEventFields(f: string[]): EventEntry | undefined {
  switch (f[0]) {
    case 'R': {
      const n = dec(f[1]);
      return f.length === 3 && n > 0 && f[2] ? { op: 'R', n, host: f[2] } : undefined;
    }
    case 'X':
    case 'Y':
    case 'K': {
      const seq = dec(f[2]);
      if (f.length < 3 || !f[1] || seq < 0 || (f[0] !== 'K' && f.length < 4)) return undefined;
      const events = parseEvents(f, 3);
      return events && { op: f[0], code: f[1], seq, events };
    }
    case 'J': {
      if (f.length < 3 || !f[1]) return undefined;
      const events = parseEvents(f, 2);
      return events && { op: 'J', code: f[1], events };
    }
    case 'Z': {
      const seq = dec(f[2]);
      return f.length === 3 && f[1] && seq >= 0 ? { op: 'Z', code: f[1], seq } : undefined;
    }
    case 'T': {
      const before = dec(f[1]);
      if (f.length % 2 !== 0 || before < 0) return undefined;
      const counts: [string, number][] = [];
      for (let i = 2; i < f.length; i += 2) {
        const n = dec(f[i + 1]);
        if (!f[i] || n < 0) return undefined;
        counts.push([f[i]!, n]);
      }
      return { op: 'T', before, counts };
    }
    default:
      return undefined;
  }
}
