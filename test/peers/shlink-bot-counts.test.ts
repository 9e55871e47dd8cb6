/**
 * Shlink's lists count each link's bot visits through the service's visit page. When the store
 * cannot answer that (a database gone between the list and the counts), the list is that failure —
 * Shlink's 503 — and never a summary that silently counts the bots as 0. A link deleted in between
 * has 0 bot visits: that is no failure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENV_ADMIN } from '../../src/links/access.ts';
import type { UrlRecord } from '../../src/links/record.ts';
import type { Service } from '../../src/links/service.ts';
import { listShortUrls, summaries, tagTable } from '../../src/peers/shlink/lists.ts';
import { parseListParams, type ListParams } from '../../src/peers/shlink/params.ts';

const record = (code: string, visits: number): UrlRecord =>
  ({ short_code: code, visit_count: visits, untracked_visits: 0, tags: ['t'], created_at: 1_790_000_000, title: null }) as unknown as UrlRecord;

const RECORDS = [record('a', 3), record('b', 5)];
const DOWN = { ok: false, error: 'unavailable', detail: 'the database is not answering' } as const;

/** A service whose list answers but whose visit pages answer `page` (by code). */
function serviceWith(page: (code: string) => unknown): Service {
  return {
    listing: async () => ({
      ok: true,
      total: RECORDS.length,
      count: RECORDS.length,
      slice: (from: number, to: number) => RECORDS.slice(from, to),
      release() {},
    }),
    visits: async (code: string) => page(code),
  } as unknown as Service;
}

const params = (query: string): ListParams => parseListParams(new URLSearchParams(query)) as ListParams;

test('a visits summary whose bot count the store cannot give is the failure, not a count of 0', async () => {
  const down = serviceWith(() => DOWN);
  assert.deepEqual(await summaries(down, RECORDS), DOWN);
  assert.deepEqual(await listShortUrls(down, params('orderBy=nonBotVisits-DESC'), ENV_ADMIN, 1_790_000_000), DOWN);
  assert.deepEqual(await tagTable(down, true, ENV_ADMIN), DOWN);
  // Without visits asked, the tag table needs no counts and answers.
  assert.ok(Array.isArray(await tagTable(down, false, ENV_ADMIN)));
});

test('a link gone since it was listed has 0 bot visits; a readable one its count', async () => {
  const mixed = serviceWith((code) => (code === 'a' ? { ok: false, error: 'not_found' } : { ok: true, total: 2, visits: [] }));
  const got = await summaries(mixed, RECORDS);
  assert.ok(Array.isArray(got));
  assert.deepEqual(
    got.map((s) => [s.total, s.bots]),
    [
      [3, 0],
      [5, 2],
    ],
  );
});
