/**
 * The creation times an import accepts (docs/api.md, export and import): Unix seconds (this
 * service's exports), ISO 8601 (Shlink), or `YYYY-MM-DD HH:MM:SS` (YOURLS, MySQL DATETIME), which
 * carries no zone and is read as UTC.
 */

/** `2024-05-01 12:30:00`, the `T` form without a zone, with optional fractions: read as UTC. */
const ZONELESS = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;
/** ISO 8601 with a zone (`Z`, `+02:00`, `+0200`), or a date alone. */
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))?$/;

/** Unix seconds of a creation time given as text, or undefined when it is none of the forms above. */
export function parseCreatedText(text: string): number | undefined {
  const s = text.trim();
  if (/^\d{1,12}$/.test(s)) return Number(s);
  const plain = ZONELESS.exec(s);
  if (plain) {
    const [, y, mo, d, h, mi, se] = plain.map(Number) as [number, number, number, number, number, number, number];
    const ms = Date.UTC(y, mo - 1, d, h, mi, se);
    // Date.UTC rolls 2024-02-31 over to March: a date that does not exist is refused instead.
    const back = new Date(ms);
    if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) return undefined;
    return Math.floor(ms / 1000);
  }
  if (ISO_ZONED.test(s)) {
    const ms = Date.parse(s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
  }
  return undefined;
}
