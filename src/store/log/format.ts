/**
 * The log format, as pure functions: an entry to the bytes of its line here, a payload back to an
 * entry in `format-decode.ts`. Reading a whole log is `replay.ts`; one line read straight from its
 * bytes, `replay-line.ts`.
 *
 * One entry per line: `<crc32 as 8 hex digits> <payload>\n`, the checksum covering the payload's
 * bytes. Payload fields are tab-separated; a WHATWG-serialized URL never contains a tab, CR or LF
 * (the URL parser strips them), and codes are alphanumeric, so no escaping is needed:
 *
 *   F url-shortener-log <version>                                      the first line: format and version
 *   C <code> <created_at> <retention_days> <untracked> <url>           create (untracked > 0 after compaction)
 *   C <code> <created_at> <retention_days> <untracked> <max> <url>     create of a link with a visit limit
 *   C <code> <created_at> <retention_days> <untracked> <max> <url> <labels>
 *                                                                      create of a link with a title, tags or an author (max 0 = no limit)
 *   E <code> <retention_days> <max> <url> [<labels>]                   edit: the link's new values (max 0 = no limit)
 *   D <code>                                                           delete (tombstone)
 *   V <code> <count> [<code> <count> …]                                count batch: untracked visits, absolute
 *   R, X, Y, K, J, Z, T                                                visit events (`event-format.ts`)
 *   A, W, U                                                            stored API keys (`key-format.ts`)
 *   H                                                                  a domain's redirects (`domain-format.ts`)
 *   O                                                                  an orphan visit (`orphan-log.ts`)
 *   S, Q, N, M                                                         webhooks (`webhook-format.ts`)
 *
 * `<labels>` (format 4) is the JSON array `[title, tags]` (title a string or null, tags an array of
 * strings), a create's `[title, tags, author]` for a link with an author (format 5), and with the
 * link's routing last (format 7: `[title, tags, author, routing]` in a create, `[title, tags,
 * routing]` in an edit; `link-labels.ts`). A link without any has no such field, in a create or an
 * edit: an edit carries the link's title, tags and routing whole, so one without labels clears
 * them; it never changes the author.
 *
 * A link's visit count is its untracked visits (the count of its create or count batch) plus its
 * events; in a log before format 3 every visit was an untracked one.
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
import { orphanPayload, orphanWritable, type OrphanEntry } from './orphan-log.ts';
import { crc32 } from './crc32.ts';
import {
  EVENT_OPS,
  eventPayload,
  eventsPayloadBound,
  eventWritable,
  hasEvents,
  writeEventsPayload,
  type EventEntry,
  type EventsEntry,
} from './event-format.ts';
import { domainPayload, domainWritable, type DomainEntry } from './domain-format.ts';
import { WEBHOOK_OPS, webhookPayload, webhookWritable, type WebhookEntry } from './webhook-format.ts';
import { KEY_OPS, keyPayload, keyWritable, type KeyEntry } from './key-format.ts';
import type { StoredRecord } from './keydir.ts';
import { encodeLabels, slotLabels, type LabelSource } from './link-labels.ts';
import { STRIDE } from '../../visits/packed.ts';
import { isRecordInteger, MAX_COUNT } from '../record-limits.ts';

/** The format this build writes, and the newest it reads. */
export const FORMAT_VERSION = 8;
/** The name in the version line: a log of this service, not some other checksummed file. */
export const FORMAT_NAME = 'url-shortener-log';

export type Entry =
  /** `maxVisits`: absent, null or 0 for no limit. */
  | ({ op: 'C'; code: string; url: string; createdAt: number; retentionDays: number; visits: number; maxVisits?: number | null | undefined } & LabelSource)
  /** An edit's labels are its title and tags: an edit never changes a link's author. */
  | ({ op: 'E'; code: string; url: string; retentionDays: number; maxVisits: number | null } & Omit<LabelSource, 'author'>)
  | { op: 'D'; code: string }
  /** A count batch: the visit counts of some codes (a *visit* is one counted redirect). */
  | { op: 'V'; counts: [code: string, count: number][] }
  /** The version line, only ever the first line of a log. */
  | { op: 'F'; name: string; version: number }
  /** Visit events and what changes them (format 3, `event-format.ts`). */
  | EventEntry
  /** Stored API keys (format 5, `key-format.ts`). */
  | KeyEntry
  /** A domain's redirects (format 6, `domain-format.ts`). */
  | DomainEntry
  /** An orphan visit (format 6, `orphan-log.ts`). */
  | OrphanEntry
  /** Webhooks: subscriptions, outbox rows, attempts (format 8, `webhook-format.ts`). */
  | WebhookEntry;

/** The payload of an entry without events (those are written as bytes, `writeEventLine`). */
function payload(entry: Exclude<Entry, EventsEntry>): string {
  switch (entry.op) {
    case 'C': {
      const labels = encodeLabels(entry, true);
      if (labels !== undefined)
        return `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.maxVisits ?? 0}\t${entry.url}\t${labels}`;
      return entry.maxVisits
        ? `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.maxVisits}\t${entry.url}`
        : `C\t${entry.code}\t${entry.createdAt}\t${entry.retentionDays}\t${entry.visits}\t${entry.url}`;
    }
    case 'E': {
      const labels = encodeLabels(entry, false);
      const edit = `E\t${entry.code}\t${entry.retentionDays}\t${entry.maxVisits ?? 0}\t${entry.url}`;
      return labels === undefined ? edit : `${edit}\t${labels}`;
    }
    case 'F':
      return `F\t${entry.name}\t${entry.version}`;
    case 'D':
      return `D\t${entry.code}`;
    case 'V':
      return `V\t${entry.counts.map(([code, count]) => `${code}\t${count}`).join('\t')}`;
    case 'A':
    case 'W':
    case 'U':
      return keyPayload(entry);
    case 'H':
      return domainPayload(entry);
    case 'O':
      return orphanPayload(entry);
    case 'S':
    case 'Q':
    case 'N':
    case 'L':
    case 'M':
      return webhookPayload(entry);
    default:
      return eventPayload(entry);
  }
}

/**
 * Throws when an entry holds what no reader of this format reads back: a number outside 0 to
 * `MAX_COUNT` or not whole, an empty code or URL, or a tab or line break in one. The doors refuse
 * such values long before; this is the last guard against a log that cannot be opened again, and
 * a write it stops is a `500`, never a `201` for a line that would stop the next start.
 */
function checkWritable(entry: Entry): void {
  if (EVENT_OPS.has(entry.op)) {
    if (!eventWritable(entry as EventEntry)) throw new RangeError(`log entry ${entry.op}: a field no reader reads back`);
    return;
  }
  if (KEY_OPS.has(entry.op)) {
    if (!keyWritable(entry as KeyEntry)) throw new RangeError(`log entry ${entry.op}: a field no reader reads back`);
    return;
  }
  if (WEBHOOK_OPS.has(entry.op)) {
    if (!webhookWritable(entry as WebhookEntry)) throw new RangeError(`log entry ${entry.op}: a field no reader reads back`);
    return;
  }
  if (entry.op === 'H' || entry.op === 'O') {
    if (!(entry.op === 'H' ? domainWritable(entry) : orphanWritable(entry))) throw new RangeError(`log entry ${entry.op}: a field no reader reads back`);
    return;
  }
  const ints: number[] = [];
  const texts: string[] = [];
  switch (entry.op) {
    case 'C':
      ints.push(entry.createdAt, entry.retentionDays, entry.visits, entry.maxVisits ?? 0);
      texts.push(entry.code, entry.url);
      break;
    case 'E':
      ints.push(entry.retentionDays, entry.maxVisits ?? 0);
      texts.push(entry.code, entry.url);
      break;
    case 'D':
      texts.push(entry.code);
      break;
    case 'V':
      for (const [code, count] of entry.counts) {
        texts.push(code);
        ints.push(count);
      }
      break;
    case 'F':
      ints.push(entry.version);
      texts.push(entry.name);
      break;
  }
  for (const n of ints) if (!isRecordInteger(n)) throw new RangeError(`log entry ${entry.op}: ${n} is not an integer from 0 to ${MAX_COUNT}`);
  for (const t of texts) if (t === '' || /[\t\r\n]/.test(t)) throw new RangeError(`log entry ${entry.op}: an empty field, or a tab or line break in one`);
}

/** The bytes of one log line, newline included. */
export function encodeEntry(entry: Entry): Buffer {
  checkWritable(entry);
  if (hasEvents(entry)) {
    const n = entry.events.length / STRIDE;
    const room = Buffer.allocUnsafe(eventLineBound(entry.code, n));
    return room.subarray(0, writeEventLine(room, 0, entry.op, entry.code, entry.op === 'J' ? 0 : entry.seq, entry.events, 0, n));
  }
  const text = payload(entry);
  const line = Buffer.allocUnsafe(Buffer.byteLength(text) + 10);
  line.write(text, 9, 'utf8');
  frame(line, 0, line.length - 1);
  return line;
}

/** Bytes of the line of `count` events of `code` at most (`writeEventLine`). */
export function eventLineBound(code: string, count: number): number {
  return eventsPayloadBound(code, count) + 10;
}

/**
 * Writes the line of `count` events of `events` from event `first` into `buf` at `at` (room for
 * `eventLineBound` bytes); returns where the line ends, after its newline. Events are written
 * straight as bytes (`writeEventsPayload`): the flush of a busy second writes thousands. The
 * caller vouches for `code` (a live link's) and `seq`: `checkWritable`'s rules hold for them.
 */
export function writeEventLine(
  buf: Buffer,
  at: number,
  op: EventsEntry['op'],
  code: string,
  seq: number,
  events: Uint32Array,
  first: number,
  count: number,
): number {
  const end = writeEventsPayload(buf, at + 9, op, code, seq, events, first, count);
  frame(buf, at, end);
  return end + 1;
}

/** Puts the checksum of the payload `buf[at + 9, end)` before it and a newline at `end`. */
function frame(buf: Buffer, at: number, end: number): void {
  const sum = crc32(buf.subarray(at + 9, end));
  for (let i = 7, n = sum; i >= 0; i--, n >>>= 4) buf[at + i] = HEX[n & 15]!;
  buf[at + 8] = 0x20;
  buf[end] = 0x0a;
}

const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** The first line of every log this build starts. */
export const HEADER: Buffer = encodeEntry({ op: 'F', name: FORMAT_NAME, version: FORMAT_VERSION });

/** The create entry that carries a record whole (compaction writes one per live record, an edited one too). */
export function recordEntry(rec: StoredRecord): Entry {
  // The count a create carries is the untracked visits: the link's events follow it (`K`, `J`).
  return {
    op: 'C',
    code: rec.code,
    url: rec.url,
    createdAt: rec.createdAt,
    retentionDays: rec.retentionDays,
    visits: rec.untracked,
    maxVisits: rec.maxVisits,
    ...slotLabels(rec),
  };
}

/** What start-up and `--repair` say of a log of a newer format: not damage, an older build. */
export function newerFormatMessage(file: string, version: number): string {
  return (
    `${file} was written by a newer version of url-shortener (format ${version}, this build reads up to ${FORMAT_VERSION}); upgrade. ` +
    'Nothing was changed: the log is not damaged, and neither start-up nor --repair touches it.'
  );
}

// Expiry is part of the storage contract; the log store's code imports it from here.
export { isExpired, isExpiredAt } from '../link-store.ts';
