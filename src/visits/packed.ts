/**
 * An event as four 32-bit words, the way the log store keeps events in memory and the stats count
 * them: `[time, visitor, referrer, attrs]`, one event after another in a `Uint32Array` (stride 4).
 * Sixteen bytes an event: ten million events are 160 MB.
 *
 * - `time`: Unix seconds (unsigned; good until 2106).
 * - `visitor`: the daily visitor id's 32 bits (read back signed); meaningful only with `HAS_VISITOR`.
 * - `referrer`: an index into the store's table of referrer hosts; 0 = none.
 * - `attrs`: bits 0–9 the country (0 = none, else 1 + 26 × letter + letter), 10–12 the browser,
 *   13–15 the OS, 16–18 the device (each 0 = none, else 1 + its index in the lists below), bit 19
 *   the bot flag, bit 20 set when `visitor` holds an id, bits 21–24 the redirect rule that sent the
 *   visitor (0 = none, else 1 + its index; older logs hold 0 there).
 */
import type { Browser, Device, Os, VisitEvent } from './event.ts';

export const STRIDE = 4;
export const TIME = 0;
export const VISITOR = 1;
export const REFERRER = 2;
export const ATTRS = 3;

/**
 * The first event of `data[from, to)` (event indices, time-ordered) whose time is at least `time`,
 * or `to`: a run of events cut to a range by binary search.
 */
export function firstAtOrAfter(data: Uint32Array, from: number, to: number, time: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (data[mid * STRIDE + TIME]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const BROWSERS: readonly Browser[] = ['Chrome', 'Safari', 'Firefox', 'Edge', 'Opera', 'Samsung Internet', 'Other'];
export const SYSTEMS: readonly Os[] = ['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'ChromeOS', 'Other'];
export const DEVICES: readonly Device[] = ['desktop', 'mobile', 'tablet', 'other'];

export const COUNTRY_BITS = 0x3ff;
/** The numbers the country's bits can hold: 1,024. */
export const COUNTRY_SPAN = COUNTRY_BITS + 1;
export const BROWSER_SHIFT = 10;
export const OS_SHIFT = 13;
export const DEVICE_SHIFT = 16;
export const FAMILY_BITS = 0x7;
/** Browser, OS and device together: the 9 bits from `BROWSER_SHIFT` on, as one number below this. */
export const FAMILIES = 1 << (DEVICE_SHIFT + 3 - BROWSER_SHIFT);
export const BOT_SHIFT = 19;
export const BOT = 1 << BOT_SHIFT;
export const HAS_VISITOR_SHIFT = 20;
export const HAS_VISITOR = 1 << HAS_VISITOR_SHIFT;
export const RULE_SHIFT = 21;
export const RULE_BITS = 0xf;

/** Country codes: 1 + 26 × first letter + second letter, for the 676 pairs of `A`–`Z`. */
export const COUNTRY_CODES = 677;

const A = 65;

/** `XY` → its number (1–676); 0 for null or anything that is not two letters `A`–`Z`. */
export function countryNumber(country: string | null): number {
  if (country === null || country.length !== 2) return 0;
  const a = country.charCodeAt(0) - A;
  const b = country.charCodeAt(1) - A;
  return a >= 0 && a < 26 && b >= 0 && b < 26 ? 1 + a * 26 + b : 0;
}

/** Each number's country, made once: a country read from a number is never a new string. */
const COUNTRY_NAMES: readonly (string | null)[] = Array.from({ length: COUNTRY_CODES }, (_, n) =>
  n === 0 ? null : String.fromCharCode(A + Math.floor((n - 1) / 26), A + ((n - 1) % 26)),
);

/** The country of number `n` (0 = null). */
export function countryOf(n: number): string | null {
  return COUNTRY_NAMES[n] ?? null;
}

function indexOf<T>(list: readonly T[], value: T | null): number {
  return value === null ? 0 : list.indexOf(value) + 1;
}

/** The attrs word of an event. */
export function packAttrs(event: VisitEvent): number {
  return (
    (countryNumber(event.country) |
      (indexOf(BROWSERS, event.browser) << BROWSER_SHIFT) |
      (indexOf(SYSTEMS, event.os) << OS_SHIFT) |
      (indexOf(DEVICES, event.device) << DEVICE_SHIFT) |
      (event.bot ? BOT : 0) |
      (event.visitor !== null ? HAS_VISITOR : 0) |
      (event.rule === undefined ? 0 : ((event.rule + 1) & RULE_BITS) << RULE_SHIFT)) >>>
    0
  );
}

/** The browser, OS or device (`list`) at `shift` of an attrs word; a number past the list (a damaged or newer word) reads as none. */
function familyOf<T>(list: readonly T[], attrs: number, shift: number): T | null {
  const n = (attrs >>> shift) & FAMILY_BITS;
  return n === 0 ? null : (list[n - 1] ?? null);
}

/** What an attrs word says of a visit: its country, browser, OS, device and bot flag. */
export function attrsOf(attrs: number): Pick<VisitEvent, 'country' | 'browser' | 'os' | 'device' | 'bot'> {
  return {
    country: countryOf(attrs & COUNTRY_BITS),
    browser: familyOf(BROWSERS, attrs, BROWSER_SHIFT),
    os: familyOf(SYSTEMS, attrs, OS_SHIFT),
    device: familyOf(DEVICES, attrs, DEVICE_SHIFT),
    bot: (attrs & BOT) !== 0,
  };
}

/**
 * The event of the four words at `at` of `data`; `referrer` names the referrer index. Its fields
 * written out, not spread from `attrsOf`: an export unpacks millions.
 */
export function unpack(data: Uint32Array, at: number, referrer: (index: number) => string | null): VisitEvent {
  const attrs = data[at + ATTRS]!;
  const rule = (attrs >>> RULE_SHIFT) & RULE_BITS;
  const event: VisitEvent = {
    time: data[at + TIME]!,
    referrer: referrer(data[at + REFERRER]!),
    country: countryOf(attrs & COUNTRY_BITS),
    browser: familyOf(BROWSERS, attrs, BROWSER_SHIFT),
    os: familyOf(SYSTEMS, attrs, OS_SHIFT),
    device: familyOf(DEVICES, attrs, DEVICE_SHIFT),
    bot: (attrs & BOT) !== 0,
    visitor: (attrs & HAS_VISITOR) !== 0 ? data[at + VISITOR]! | 0 : null,
  };
  return rule === 0 ? event : { ...event, rule: rule - 1 };
}
