/**
 * The log format read back (its lines are described in `format.ts`): a checksummed payload's text
 * to the entry it holds, or undefined when it is well-formed text of no known shape. Event entries
 * are read by `event-format.ts`, those of stored keys by `key-format.ts`, a `<labels>` field by
 * `link-labels.ts`; the hot shapes of a replay straight from bytes by `replay-line.ts`.
 */
import { decodeOrphanFields } from './orphan-log.ts';
import { decodeEventFields } from './event-format.ts';
import type { Entry } from './format.ts';
import { decodeDomainFields } from './domain-format.ts';
import { decodeWebhookFields } from './webhook-format.ts';
import { decodeKeyFields, KEY_OPS } from './key-format.ts';
import { decodeLabels } from './link-labels.ts';
import { MAX_COUNT, MAX_DIGITS } from '../record-limits.ts';

/** A number field: decimal, no sign or leading zero, at most `MAX_DIGITS` digits (checked ≤ `MAX_COUNT` below). */
const INT = new RegExp(`^(0|[1-9]\\d{0,${MAX_DIGITS - 1}})$`);

/**
 * The value of a number field, or -1. A count above `MAX_COUNT` (16 digits: an older build counted
 * past it) is read as `MAX_COUNT`, where counting now stops; any other field above it is no entry.
 */
function int(text: string | undefined, clamp = false): number {
  if (text === undefined || !INT.test(text)) return -1;
  const n = Number(text);
  return n <= MAX_COUNT ? n : clamp ? MAX_COUNT : -1;
}

/** Largest visit limit or retention a log line may hold (the keydir keeps them in 32 bits). */
export const MAX_LIMIT = 0xffffffff;

/** Parses one checksummed payload string; `undefined` when it is well-formed text of no known shape. */
export function decodePayload(text: string): Entry | undefined {
  const f = text.split('\t');
  switch (f[0]) {
    case 'C': {
      if (f.length < 6 || f.length > 8) return undefined;
      // The URL is the last field but for labels, the eighth.
      const url = f.length === 8 ? f[6] : f[f.length - 1];
      const labels = f.length === 8 ? decodeLabels(f[7]!, true) : {};
      if (!f[1] || !url || labels === undefined) return undefined;
      const createdAt = int(f[2]);
      const retentionDays = int(f[3]);
      const visits = int(f[4], true);
      const maxVisits = f.length >= 7 ? int(f[5]) : 0;
      if (createdAt < 0 || retentionDays < 0 || retentionDays > MAX_LIMIT || visits < 0 || maxVisits < 0 || maxVisits > MAX_LIMIT) return undefined;
      return { op: 'C', code: f[1], createdAt, retentionDays, visits, maxVisits: maxVisits || null, url, ...labels };
    }
    case 'E': {
      if ((f.length !== 5 && f.length !== 6) || !f[1] || !f[4]) return undefined;
      const labels = f.length === 6 ? decodeLabels(f[5]!, false) : {};
      const retentionDays = int(f[2]);
      const maxVisits = int(f[3]);
      if (labels === undefined || retentionDays < 0 || retentionDays > MAX_LIMIT || maxVisits < 0 || maxVisits > MAX_LIMIT) return undefined;
      return { op: 'E', code: f[1], retentionDays, maxVisits: maxVisits || null, url: f[4], ...labels };
    }
    case 'F': {
      const version = int(f[2]);
      return f.length === 3 && f[1] && version >= 0 ? { op: 'F', name: f[1], version } : undefined;
    }
    case 'D':
      return f.length === 2 && f[1] ? { op: 'D', code: f[1] } : undefined;
    case 'V': {
      if (f.length < 3 || f.length % 2 === 0) return undefined;
      const counts: [string, number][] = [];
      for (let i = 1; i < f.length; i += 2) {
        const count = int(f[i + 1], true);
        if (!f[i] || count < 0) return undefined;
        counts.push([f[i]!, count]);
      }
      return { op: 'V', counts };
    }
    case 'H':
      return decodeDomainFields(f);
    case 'O':
      return decodeOrphanFields(f);
    case 'S':
    case 'Q':
    case 'N':
    case 'L':
    case 'M':
      return decodeWebhookFields(f);
    default:
      return KEY_OPS.has(f[0]!) ? decodeKeyFields(f) : decodeEventFields(f);
  }
}
