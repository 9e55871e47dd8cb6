/**
 * The service's own deprecations (docs/api.md), as data: each deprecated usage with its RFC 9745 date
 * and its `DeprecationNoticeNotification`. `GET /api/deprecations` serves the notices, `/docs`
 * lists them, and a response to a deprecated usage carries `Deprecation` and `Link` headers.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HeaderPair } from '../http/headers.ts';
import type { Logger } from '../log.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

/** A notice as `schemas/v2/DeprecationNoticeNotification.json` describes it. */
export interface DeprecationNoticeNotification {
  summary: string;
  details?: string | null;
}

export type DeprecatedUsage = 'shorten-with-get' | 'api-key-query';

export interface Deprecation {
  usage: DeprecatedUsage;
  /** Since when the usage is deprecated, Unix seconds (the `Deprecation: @<seconds>` value). */
  since: number;
  notice: DeprecationNoticeNotification;
}

/** 2026-11-21T00:00:00Z: the release that published the contracts announced both deprecations. */
export const SHORTEN_WITH_GET_SINCE = 1_795_219_200;
export const API_KEY_QUERY_SINCE = 1_795_219_200;

const day = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

export const DEPRECATIONS: readonly Deprecation[] = [
  {
    usage: 'shorten-with-get',
    since: SHORTEN_WITH_GET_SINCE,
    notice: {
      summary: 'Creating a link with GET /api/shorten is deprecated; use POST /api/shorten.',
      details:
        `Deprecated since ${day(SHORTEN_WITH_GET_SINCE)}. A GET that creates links is unsafe: link previewers, ` +
        'prefetchers and crawlers follow URLs and create links nobody asked for. GET keeps working exactly as ' +
        'before, and its responses carry Deprecation and Link headers (HEAD /api/shorten is 405: a HEAD must ' +
        'change nothing). Send the same url and retention_days with POST, as a JSON or form body or as query ' +
        'parameters.',
    },
  },
  {
    usage: 'api-key-query',
    since: API_KEY_QUERY_SINCE,
    notice: {
      summary: 'The api_key query parameter is deprecated; send the admin key in the X-API-Key header.',
      details:
        `Deprecated since ${day(API_KEY_QUERY_SINCE)}. Query strings leak into access logs, proxy logs and ` +
        'browser history. ?api_key= keeps working on GET /api/urls and DELETE /api/urls/{code}, and those ' +
        'responses carry Deprecation and Link headers. When both are sent, the X-API-Key header is used and ' +
        'the request is not a deprecated usage.',
    },
  },
];

/** The schema file shipped in the package (`schemas/` beside `src/` and `dist/`). */
export const NOTICE_SCHEMA_FILE = fileURLToPath(new URL('schemas/v2/DeprecationNoticeNotification.json', PACKAGE_ROOT));

/** The schema's bytes, served as they are: what a client fetches is exactly the file in the repo. */
export function loadNoticeSchema(file: string = NOTICE_SCHEMA_FILE): Buffer {
  return readFileSync(file);
}

export interface Deprecations {
  /** The headers of a response to `usage`. The first use per instance is logged as a warning. */
  headers(usage: DeprecatedUsage): readonly HeaderPair[];
}

export function createDeprecations(baseUrl: string, log: Logger): Deprecations {
  const link = `<${baseUrl}/docs#deprecations>; rel="deprecation"`;
  const byUsage = new Map(DEPRECATIONS.map((d) => [d.usage, d]));
  const headers = new Map(
    DEPRECATIONS.map((d): [DeprecatedUsage, HeaderPair[]] => [
      d.usage,
      [
        ['Deprecation', `@${d.since}`],
        ['Link', link],
      ],
    ]),
  );
  // Once per usage, not per request: a client stuck on the old way would otherwise flood the log.
  const warned = new Set<DeprecatedUsage>();
  return {
    headers(usage) {
      if (!warned.has(usage)) {
        warned.add(usage);
        const { summary, details } = byUsage.get(usage)!.notice;
        log.warn('deprecated usage', { usage, summary, details });
      }
      return headers.get(usage)!;
    },
  };
}
