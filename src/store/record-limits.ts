/**
 * The one limit of every number a link record holds. Each door (create, edit, import of JSON Lines
 * and CSV, MCP) accepts a value only within it, the log writes nothing outside it, and every
 * reader (replay, `--repair`, the offline export, PostgreSQL rows) reads all of it back: a log that
 * this build wrote and cannot read must never exist. `test/store/log/record-range.test.ts` drives every
 * field over its whole range through the writer, replay and export → import.
 */

/** `retention_days`: 0 (forever) to a hundred years. */
export const MAX_RETENTION_DAYS = 36500;

/** `max_visits`: 1 to 2^31 − 1 (a signed 32-bit column in PostgreSQL). */
export const MAX_VISITS = 2147483647;

/**
 * `visit_count`: 0 to 2^53 − 1, the largest integer a JSON number carries exactly (what import has
 * always accepted). Counting stops there rather than pass it: a count one higher could not be
 * exported and imported back.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** Decimal digits of the largest number a log line may hold (`MAX_COUNT` has 16). */
export const MAX_DIGITS = String(MAX_COUNT).length;

/** True for an integer a record may hold in a count, a time or a retention: 0 to `MAX_COUNT`. */
export function isRecordInteger(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}
