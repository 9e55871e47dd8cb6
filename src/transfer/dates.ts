/**
 * The creation times an import accepts (docs/api.md, export and import): Unix seconds (this
 * service's exports), ISO 8601 (Shlink), or `YYYY-MM-DD HH:MM:SS` (YOURLS, MySQL DATETIME), which
 * carries no zone and is read as UTC. A date or time that does not exist (`2023-02-29`, `24:00`,
 * `23:59:60`) is refused in every form, never rolled over to the next day or month.
 */

/** `2024-05-01 12:30:00`, the `T` form without a zone, with optional fractions: read as UTC. */
const ZONELESS = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;
/** ISO 8601 with a zone (`Z`, `+02:00`, `+0200`), or a date alone (midnight UTC). */
const ISO_ZONED = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|([+-])(\d{2}):?(\d{2})))?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Unix seconds of a UTC wall time, or undefined when it does not exist. Fields are checked here
 * because `Date.UTC` and `Date.parse` roll `2024-02-30` over to 1 March and `24:00` to the next
 * day, and `Date.UTC` reads the years 0–99 as 1900–1999.
 */
function utcSeconds(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second);
  return date.getTime() / 1000;
}

/** Unix seconds of a creation time given as text, or undefined when it is none of the forms above. */
export function parseCreatedText(text: string): number | undefined {
  const s = text.trim();
  if (/^\d{1,12}$/.test(s)) return Number(s);
  const plain = ZONELESS.exec(s);
  if (plain) {
    const [, y, mo, d, h, mi, se] = plain.map(Number) as [number, number, number, number, number, number, number];
    return utcSeconds(y, mo, d, h, mi, se);
  }
  const zoned = ISO_ZONED.exec(s);
  if (zoned) {
    const [, y, mo, d, h = '0', mi = '0', se = '0', sign, oh = '0', om = '0'] = zoned;
    const local = utcSeconds(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(se));
    if (local === undefined || Number(oh) > 23 || Number(om) > 59) return undefined;
    const offset = (Number(oh) * 3600 + Number(om) * 60) * (sign === '-' ? -1 : 1);
    return local - offset;
  }
  return undefined;
}
