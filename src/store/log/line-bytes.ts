/**
 * The fields of a log line read straight from its bytes, with no string made: hex and decimal and
 * base-36 numbers, the next tab. Start-up's inner loop (`replay-line.ts`) is made of these.
 */
import { MAX_DIGITS } from '../record-limits.ts';

export const TAB = 0x09;

/** The value of 8 lower-case hex digits at `pos`, or -1. */
export function hex8(buf: Buffer, pos: number): number {
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
export function int(buf: Buffer, start: number, end: number): number {
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
export function tab(buf: Buffer, after: number, end: number): number {
  if (after < 0) return -1;
  const at = buf.indexOf(TAB, after + 1);
  return at !== -1 && at < end ? at : -1;
}

/** The position of the next `byte` in [pos, end), or `end`. */
export function next(buf: Buffer, byte: number, pos: number, end: number): number {
  const at = buf.indexOf(byte, pos);
  return at === -1 || at > end ? end : at;
}

/** The value of base-36 digits (0-9, a-z) at [start, end), or -1; at most 7 digits (32 bits). */
export function b36(buf: Buffer, start: number, end: number): number {
  if (end <= start || end - start > 7) return -1;
  let v = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x7a ? c - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 36 + d;
  }
  return v;
}
