/**
 * What the store writes, every reader reads back: every field of a record driven over its whole
 * accepted range (docs/storage.md, "Every number has one limit"), through the log writer, replay at
 * start-up, compaction, the offline snapshot read by `url-shortener export`, `--repair`, and
 * export → import → export in both formats. A regression of the 15- vs 16-digit count, which left
 * a data dir that could not be opened, fails here.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../src/log.ts';
import { checkCustomCode, checkUrl, MAX_RETENTION_DAYS, MAX_VISITS } from '../../../src/links/validate.ts';
import type { LinkRecord } from '../../../src/store/link-store.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { MAX_COUNT } from '../../../src/store/record-limits.ts';
import { repairLog } from '../../../src/store/log/repair.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { readLogSnapshot } from '../../../src/transfer/log-snapshot.ts';
import { createTransfer } from '../../../src/transfer/transfer.ts';
import type { ExportFormat } from '../../../src/transfer/export.ts';
import { tempDir } from '../../support/helpers.ts';
import { anyChar } from '../../support/any-char.ts';

const quiet = createLogger('silent');
const NOW = 1_790_000_000;
const DAY = 86400;
/** The widest settings: codes of 1 to 64 characters, URLs up to the largest `max_url_length`. */
const RULES = { minShortLength: 1, maxShortLength: 64, maxLength: 65536, baseUrl: 'https://s.example/' };

const CODE_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const code = fc
  .string({ unit: fc.constantFrom(...CODE_CHARS), minLength: RULES.minShortLength, maxLength: RULES.maxShortLength })
  .filter((c) => checkCustomCode(c, RULES.minShortLength, RULES.maxShortLength) === c);

/**
 * An accepted URL of any characters (every Unicode code point, controls and the URL's own
 * delimiters included), normalized as a create stores it, and sometimes padded to exactly a target
 * length up to `maxLength`, so the longest accepted URL is reached.
 */
const url = fc
  .tuple(
    fc.constantFrom('http://', 'https://', 'HTTPS://'),
    fc.constantFrom('example.com', 'xn--bcher-kva.example', '[2001:db8::1]:8080', '192.0.2.7', 'ünï.example'),
    fc.string({ unit: anyChar, maxLength: 40 }),
    fc.option(fc.integer({ min: 16, max: RULES.maxLength }), { freq: 3 }),
  )
  .map(([scheme, host, rest, target]) => {
    const href = checkUrl(`${scheme}${host}/${rest}`, RULES);
    if (typeof href !== 'string') return undefined;
    if (target === null || target <= href.length) return href;
    const padded = checkUrl(href + 'a'.repeat(target - href.length), RULES);
    if (typeof padded !== 'string') throw new Error(`a URL padded to ${target} characters was refused: ${padded.detail}`);
    return padded;
  })
  .filter((u): u is string => u !== undefined);

const count = fc.oneof(fc.constantFrom(0, 1, 10 ** 15 - 1, 10 ** 15, MAX_COUNT - 1, MAX_COUNT), fc.maxSafeNat());
const limit = fc.option(fc.oneof(fc.constantFrom(1, MAX_VISITS), fc.integer({ min: 1, max: MAX_VISITS })), { freq: 2 });
const retention = fc.oneof(fc.constantFrom(0, 1, MAX_RETENTION_DAYS), fc.integer({ min: 0, max: MAX_RETENTION_DAYS }));

/** A record live at `NOW`: a retention's window still open, created from 1970 to a day ahead (import's slack). */
const record = fc
  .tuple(code, url, retention, count, limit, fc.integer({ min: 0, max: NOW + DAY }))
  .map(([c, u, retentionDays, visits, maxVisits, created]): LinkRecord => {
    const earliest = retentionDays > 0 ? NOW - retentionDays * DAY + 1 : 0;
    return { code: c, url: u, createdAt: Math.max(created, earliest), retentionDays, visits, untracked: visits, maxVisits };
  });

type Op =
  | { op: 'edit'; at: number; url?: string; retentionDays?: number; maxVisits?: number | null }
  | { op: 'delete'; at: number }
  | { op: 'visit'; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record(
    { op: fc.constant('edit' as const), at: fc.nat(), url: url, retentionDays: fc.constantFrom(0, MAX_RETENTION_DAYS), maxVisits: limit },
    { requiredKeys: ['op', 'at'] },
  ),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('visit' as const), at: fc.nat() }),
);

const records = fc.uniqueArray(record, { selector: (r) => r.code, minLength: 1, maxLength: 12 });

async function all(source: AsyncIterable<LinkRecord>): Promise<LinkRecord[]> {
  const out: LinkRecord[] = [];
  for await (const r of source) out.push({ ...r });
  return out;
}

async function text(source: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const piece of source) out += piece;
  return out;
}

async function* pieces(body: string): AsyncGenerator<string> {
  yield body;
}

function openStore(dir: string): { store: LogEngine; links: LogLinkStore } {
  const store = new LogEngine({ dir, fsync: 'off', log: quiet, now: () => NOW * 1000 });
  return { store, links: new LogLinkStore(store) };
}

/** Applies `op` to the store and to the model (what the store's records must be afterwards). */
async function apply(links: LogLinkStore, model: Map<string, LinkRecord>, o: Op): Promise<void> {
  const codes = [...model.keys()];
  if (codes.length === 0) return;
  const c = codes[o.at % codes.length]!;
  const rec = model.get(c)!;
  if (o.op === 'delete') {
    assert.equal(await links.delete(c, NOW), true);
    model.delete(c);
  } else if (o.op === 'edit') {
    const changes = {
      ...(o.url !== undefined && { url: o.url }),
      ...(o.retentionDays !== undefined && { retentionDays: o.retentionDays }),
      ...(o.maxVisits !== undefined && { maxVisits: o.maxVisits }),
    };
    assert.deepEqual(await links.update(c, changes, NOW), { ...rec, ...changes });
    model.set(c, { ...rec, ...changes });
  } else {
    const decision = await links.countVisit(c, () => NOW, true);
    const usedUp = rec.maxVisits !== null && rec.visits >= rec.maxVisits;
    assert.equal(decision.kind, usedUp ? 'limit_reached' : 'found');
    // Counting stops at MAX_COUNT rather than pass what a record may hold.
    if (!usedUp && rec.visits < MAX_COUNT) model.set(c, { ...rec, visits: rec.visits + 1, untracked: rec.untracked + 1 });
  }
}

test('every record the store writes, within every limit, replay, compaction, the snapshot and --repair read back identically', async () => {
  await fc.assert(
    fc.asyncProperty(records, fc.array(op, { maxLength: 12 }), async (recs, ops) => {
      const dir = tempDir();
      try {
        let { store, links } = openStore(dir);
        const model = new Map<string, LinkRecord>();
        for (const r of recs) {
          assert.equal(await links.insert(r, NOW), true);
          model.set(r.code, r);
        }
        for (const o of ops) await apply(links, model, o);
        const expected = [...model.values()].sort((a, b) => recs.findIndex((r) => r.code === a.code) - recs.findIndex((r) => r.code === b.code));
        assert.deepEqual(await all(links.exportAll(NOW)), expected);
        await store.close();

        ({ store, links } = openStore(dir));
        assert.deepEqual(await all(links.exportAll(NOW)), expected, 'replay');
        await store.compact();
        await store.close();
        assert.deepEqual(await all(readLogSnapshot(dir, NOW)), expected, 'the offline snapshot of the compacted log');
        assert.deepEqual(repairLog(dir).lost, [], '--repair finds nothing damaged');

        ({ store, links } = openStore(dir));
        assert.deepEqual(await all(links.exportAll(NOW)), expected, 'replay of the compacted log');
        await store.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: 60 },
  );
});

for (const format of ['jsonl', 'csv'] as const satisfies readonly ExportFormat[]) {
  test(`export → import → export is byte-identical in ${format}, every field across its whole range`, async () => {
    await fc.assert(
      fc.asyncProperty(records, async (recs) => {
        const dirs = [tempDir(), tempDir()];
        const stores = dirs.map(openStore);
        try {
          const [from, to] = stores.map(({ links }) => createTransfer({ store: links, rules: RULES, now: () => NOW * 1000, randomCode: () => 'unused' }));
          for (const r of recs) assert.equal(await stores[0]!.links.insert(r, NOW), true);
          const first = await text(from!.exportText(format));
          const report = await to!.importLinks(pieces(first), format);
          assert.deepEqual(report, { ok: true, imported: recs.length, skipped: 0, errors: [] });
          assert.equal(await text(to!.exportText(format)), first);
          assert.deepEqual(await all(stores[1]!.links.exportAll(NOW)), recs);
        } finally {
          for (const { store } of stores) await store.close();
          for (const dir of dirs) await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  });
}
