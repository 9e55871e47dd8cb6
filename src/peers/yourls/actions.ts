/**
 * YOURLS' API actions (docs/compat.md#yourls-api) as a table: each reads YOURLS' parameter names,
 * asks the service, and returns the result `shapes.ts` builds. No rule is decided here: a code, a
 * URL or a title is the service's to accept or refuse.
 */
import type { UrlRecord } from '../../links/record.ts';
import type { Service, VisitRequest } from '../../links/service.ts';
import { phpInt } from './params.ts';
import * as shape from './shapes.ts';
import { selector, statsFilter, type Selector } from './stats.ts';
import type { YourlsResult } from './output.ts';

/** An action: the request's parameters, and the request itself (whose client a create counts against). */
export type Action = (params: ReadonlyMap<string, string>, from: VisitRequest) => Promise<YourlsResult>;

export interface ActionDeps {
  service: Service;
  baseUrl: string;
}

/** Links read per slice of the list, with a turn of the event loop between slices. */
const SLICE = 1000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * YOURLS tidies a title before storing it: whitespace runs become one space, and the ends are
 * trimmed (PHP's `\s`, ASCII only). An empty title is no title.
 */
function tidyTitle(raw: string | undefined): string | undefined {
  const title = raw?.replace(/[ \t\n\v\f\r]+/g, ' ').replace(/^ | $/g, '');
  return title === '' ? undefined : title;
}

export function yourlsActions({ service, baseUrl }: ActionDeps): Readonly<Record<string, Action>> {
  /** Every live link, newest first, to `visit`; the totals of `stats` and `db-stats` on the way. */
  async function eachLink(visit?: Selector): Promise<shape.Totals> {
    const page = await service.listing({ limit: undefined, offset: 0 });
    let clicks = 0;
    try {
      for (let from = 0; from < page.count; from += SLICE) {
        if (from > 0) await nextTurn();
        const records: UrlRecord[] = await page.slice(from, Math.min(from + SLICE, page.count));
        for (const record of records) {
          clicks += record.visit_count;
          visit?.add(record);
        }
      }
      return { links: page.count, clicks };
    } finally {
      page.release();
    }
  }

  async function find(params: ReadonlyMap<string, string>): Promise<{ keyword: string; record: UrlRecord | undefined }> {
    const keyword = shape.keywordOf(params.get('shorturl') ?? '', baseUrl);
    const found = await service.get(keyword);
    return { keyword, record: found.ok ? found.record : undefined };
  }

  return {
    async shorturl(params, from) {
      const url = params.get('url') ?? '';
      const keyword = params.get('keyword') ?? '';
      // One short URL per long URL, as YOURLS by default: the newest link of it answers instead.
      const existing = await service.lookup(url);
      if (!existing.ok && existing.error === 'invalid') return shape.NO_URL();
      if (existing.ok) return shape.alreadyStored(existing.record, baseUrl);
      const outcome = await service.shorten({ url, code: keyword, title: tidyTitle(params.get('title')), from });
      if (outcome.ok) return shape.added(outcome.record);
      if (outcome.error === 'rate_limited') return shape.flooded(outcome.retryAfter);
      if (outcome.error === 'conflict') return shape.KEYWORD_TAKEN(keyword);
      if (outcome.error === 'unavailable') return shape.shortenFailed('error:db', outcome.detail, '503');
      return shape.refusal(outcome.detail, keyword);
    },

    async expand(params) {
      const { keyword, record } = await find(params);
      return record === undefined ? shape.notExpanded(keyword) : shape.expanded(record);
    },

    async 'url-stats'(params) {
      return shape.urlStats((await find(params)).record);
    },

    async stats(params) {
      const picking = selector(statsFilter(params.get('filter')), phpInt(params.get('start')), phpInt(params.get('limit')));
      const totals = await eachLink(picking);
      return shape.stats(picking.picked(), totals);
    },

    async 'db-stats'() {
      return shape.dbStats(await eachLink());
    },

    async version(params) {
      // PHP's `== 1`: a numeric string equal to one.
      const db = params.get('db');
      return shape.version(db !== undefined && /^[ \t\n\r\v\f]*\+?0*1(\.0*)?[ \t\n\r\v\f]*$/.test(db));
    },
  };
}
