/**
 * Replay: a whole log, fed in chunks, read back into a keydir, with what start-up must know of it
 * (where the intact prefix ends, a torn last line, damage, the format version); and `salvage`, the
 * same reading for `--repair`, which keeps going past damage. Its own file: this is what a log is
 * to start-up and repair, apart from how one line is written (`format.ts`) or read
 * (`replay-line.ts`).
 */
import type { Covered } from './checkpoint.ts';
import { FORMAT_VERSION } from './format.ts';
import { Keydir } from './keydir.ts';
import { applyLine, firstLine, NL, UNKNOWN } from './replay-line.ts';

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

/**
 * Replays a log fed in chunks of any size (a multi-gigabyte log never has to fit in one Buffer).
 * Every complete line must be intact. Only the last line may lack its newline (a crash during an
 * append): that one is reported in `tornTail` and not applied. A complete line that is not intact
 * (a bad checksum, garbage), even the last one, cannot come from a torn append: it stops replay and
 * is reported in `damage`. A version line naming a newer format stops replay at once (`version`).
 */
export class Replayer {
  readonly records: Keydir;
  private entries = 0;
  private line = 0;
  /** Absolute offset of the end of the intact prefix. */
  private validBytes = 0;
  /** Bytes of an unfinished line carried over from the previous chunk. */
  private carry: Buffer | undefined;
  private damage: Damage | undefined;
  private readonly format = { version: FORMAT_VERSION };
  private header = false;

  /**
   * A replay from the log's start, or, `from` a start-up checkpoint, of the log after the bytes it
   * covers (`checkpoint.ts`): those start with the version line and hold `covered.entries` entries.
   */
  constructor(from?: { records: Keydir; covered: Covered }, logBytes = 0) {
    this.records = from?.records ?? new Keydir(...sizedFor(logBytes));
    if (from) {
      this.entries = from.covered.entries;
      this.line = from.covered.entries + 1;
      this.validBytes = from.covered.offset;
      this.header = true;
    }
  }

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

/**
 * The keydir's capacity and arena bytes for a log of `logBytes`, assuming about 128 bytes a link
 * (a compacted log of 60-100 character URLs): sized once rather than grown by doubling from small,
 * a large replay leaves none of the copies behind, which the allocator would keep as resident
 * memory. Too large costs little: only the hash heads (4 bytes a slot each) are written before use.
 */
function sizedFor(logBytes: number): [number, number] {
  const capacity = 2 ** Math.ceil(Math.log2(Math.max(1024, logBytes / 128)));
  return [capacity, Math.max(capacity * 64, logBytes)];
}

/** Replays a whole log held in one buffer (see `Replayer`). */
export function replay(buf: Buffer): ReplayResult {
  const replayer = new Replayer();
  replayer.push(buf);
  return replayer.finish();
}

interface Salvage {
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
