/**
 * YOURLS' API actions (docs/compat.md#yourls-api) as a table: each reads YOURLS' parameter names,
 * asks the service, and returns the result `shapes.ts` builds. No rule is decided here: a code, a
 * URL or a title is the service's to accept or refuse.
 */
import type { Action as KeyAction, Principal } from '../../links/access.ts';
import type { UrlRecord } from '../../links/record.ts';
import type { Service, Unavailable, VisitRequest } from '../../links/service.ts';
import type { Domain } from '../../links/domains.ts';
import { Refusal } from '../../links/refusal.ts';
import { walk } from '../../links/walk.ts';
import { phpInt } from './params.ts';
import * as shape from './shapes.ts';
import { selector, statsFilter, type Selector } from './stats.ts';
import type { YourlsResult } from './output.ts';

/**
 * An action: the request's parameters, the request itself (whose client a create counts against),
 * and who signed it (a stored key is the author of the link it creates).
 */
export type Action = (params: ReadonlyMap<string, string>, from: VisitRequest, who: Principal) => Promise<YourlsResult>;

/**
 * What each action does, as the roles table names it (`src/links/access.ts`), so a signature is
 * held to its key's role as on every door: a create; a read of one link (its stats, and `expand`,
 * which needs a key here like everything else); a list of the links (`stats`, `db-stats`: an
 * editor's totals are those of its own links).
 * `version` reads nothing of the links: any good key. An action not listed is unknown, to any
 * good key.
 */
export const ACCESS: Readonly<Record<string, KeyAction | 'any'>> = {
  shorturl: 'create',
  expand: 'read',
  'url-stats': 'read',
  stats: 'list',
  'db-stats': 'list',
  version: 'any',
};

export interface ActionDeps {
  service: Service;
}

/**
 * YOURLS tidies a title before storing it: whitespace runs become one space, and the ends are
 * trimmed (PHP's `\s`, ASCII only). An empty title is no title.
 */
function tidyTitle(raw: string | undefined): string | undefined {
  const title = raw?.replace(/[ \t\n\v\f\r]+/g, ' ').replace(/^ | $/g, '');
  return title === '' ? undefined : title;
}

/**
 * The domain a call acts on: the one it was sent to, or the one its key acts on (docs/compat.md).
 * (A key's host the instance no longer serves acts on none: the calls' checks refuse it.)
 */
function callDomain(service: Service, who: Principal, from: VisitRequest): Domain {
  const own = who.domain === undefined ? undefined : service.domains.named(who.domain);
  return own === undefined || own instanceof Refusal ? service.domains.ofRequest(from) : own;
}

/**
 * Every live link `who` may list (an editor: its own), newest first, to `visit`, sharing the
 * event loop (`links/walk.ts`); the totals of `stats` and `db-stats` on the way, or the store's
 * failure to be read.
 */
async function eachLink(service: Service, who: Principal, from: VisitRequest, visit?: Selector): Promise<shape.Totals | Unavailable> {
  const domain = callDomain(service, who, from);
  const page = await service.listing({ domain: domain ?? 'default' }, who);
  // The list's query is fixed here: only a store that cannot be read refuses it.
  if (!page.ok) return { ok: false, error: 'unavailable', detail: page.detail };
  let clicks = 0;
  try {
    await walk(page, (records: UrlRecord[]) => {
      for (const record of records) {
        clicks += record.visit_count;
        visit?.add(record);
      }
    });
    return { links: page.count, clicks };
  } finally {
    page.release();
  }
}

/** The live link `shorturl` names (a keyword or a whole short URL), if `who` reaches it (an editor: only its own). */
async function find(
  service: Service,
  params: ReadonlyMap<string, string>,
  from: VisitRequest,
  who: Principal,
): Promise<{ keyword: string; record: UrlRecord | undefined } | Unavailable> {
  const domain = callDomain(service, who, from);
  const keyword = shape.keywordOf(params.get('shorturl') ?? '', service.domains.origin(domain));
  const may = await service.mayTouch(who, keyword, domain);
  if (may !== true) return may.error === 'unavailable' ? may : { keyword, record: undefined };
  const found = await service.get(keyword, domain);
  if (found.ok) return { keyword, record: found.record };
  return found.error === 'unavailable' ? found : { keyword, record: undefined };
}

export function yourlsActions({ service }: ActionDeps): Readonly<Record<string, Action>> {
  return {
    async shorturl(params, from, who) {
      const url = params.get('url') ?? '';
      const keyword = params.get('keyword') ?? '';
      // One short URL per long URL, as YOURLS by default: the newest link of it answers instead
      // (of the domain the request was sent to: a link of another one is another short URL).
      const domain = callDomain(service, who, from);
      const existing = await service.lookup(url, domain ?? 'default');
      if (existing.ok) return shape.alreadyStored(existing.record, service.domains.origin(domain));
      if (existing.error === 'invalid') return shape.NO_URL();
      if (existing.error === 'unavailable') return shape.unavailable('shorturl', existing.detail);
      const outcome = await service.shorten({ url, code: keyword, title: tidyTitle(params.get('title')), from, author: who.id, keyDomain: who.domain, domain });
      if (outcome.ok) return shape.added(outcome.record);
      if (outcome.error === 'rate_limited') return shape.flooded(outcome.retryAfter);
      if (outcome.error === 'conflict') return shape.KEYWORD_TAKEN(keyword);
      if (outcome.error === 'unavailable') return shape.shortenFailed('error:db', outcome.detail, '503');
      return shape.refusal(outcome.detail, keyword);
    },

    async expand(params, from, who) {
      const found = await find(service, params, from, who);
      if ('error' in found) return shape.unavailable('expand', found.detail);
      return found.record === undefined ? shape.notExpanded(found.keyword) : shape.expanded(found.record);
    },

    async 'url-stats'(params, from, who) {
      const found = await find(service, params, from, who);
      return 'error' in found ? shape.unavailable('url-stats', found.detail) : shape.urlStats(found.record);
    },

    async stats(params, from, who) {
      const picking = selector(statsFilter(params.get('filter')), phpInt(params.get('start')), phpInt(params.get('limit')));
      const totals = await eachLink(service, who, from, picking);
      return 'error' in totals ? shape.unavailable('stats', totals.detail) : shape.stats(picking.picked(), totals);
    },

    async 'db-stats'(_params, from, who) {
      const totals = await eachLink(service, who, from);
      return 'error' in totals ? shape.unavailable('db-stats', totals.detail) : shape.dbStats(totals);
    },

    async version(params) {
      // PHP's `== 1`: a numeric string equal to one.
      const db = params.get('db');
      return shape.version(db !== undefined && /^[ \t\n\r\v\f]*\+?0*1(\.0*)?[ \t\n\r\v\f]*$/.test(db));
    },
  };
}
