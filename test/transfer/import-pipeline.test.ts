/**
 * The import pipeline over a store that answers with promises, as a database does: writes are
 * pipelined (many in flight at once, never more than the window), a taken code reported, a
 * generated code refused late tried again, and the answer waits for every write.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importLinks } from '../../src/transfer/import.ts';
import type { LinkRecord, LinkStore } from '../../src/store/link-store.ts';

const RULES = { baseUrl: 'https://s.example', maxLength: 8192, minShortLength: 6, maxShortLength: 12 };

/**
 * A store whose inserts settle later, in order; `refuse` codes answer false. The oldest write
 * settles once a turn of the event loop has passed with no new write, that is once the import
 * waits (on its window, or for its last writes): never on a timer, which a loaded machine beat
 * (writes settled 2 ms later, and a slow parse then had only 100 at once in flight).
 */
function slowStore(refuse: Set<string>) {
  const stored: LinkRecord[] = [];
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let writes = 0;
  let watching = false;
  const settleWhenIdle = (): void => {
    watching = true;
    const before = writes;
    setImmediate(() => {
      watching = false;
      if (writes === before) waiting.shift()!();
      if (waiting.length > 0) settleWhenIdle();
    });
  };
  const store = {
    insert(record: LinkRecord): Promise<boolean> {
      inFlight++;
      writes++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve) => {
        waiting.push(() => {
          inFlight--;
          if (refuse.delete(record.code)) return resolve(false);
          stored.push(record);
          resolve(true);
        });
        if (!watching) settleWhenIdle();
      });
    },
  } as unknown as LinkStore;
  return { store, stored, maxInFlight: () => maxInFlight, inFlight: () => inFlight };
}

async function* chunks(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

test('writes are pipelined within the window, kept in order, and all settled before the answer', async () => {
  const s = slowStore(new Set(['taken1']));
  const lines = Array.from({ length: 2000 }, (_, i) =>
    JSON.stringify({ code: i === 10 ? 'taken1' : `c${String(i).padStart(5, '0')}`, url: `https://example.com/${i}` }),
  );
  const result = await importLinks(chunks(lines.join('\n'), 1000), 'jsonl', {
    store: s.store,
    rules: RULES,
    now: () => 1714564800_000,
    randomCode: () => 'unused',
  });
  assert.deepEqual(result, { ok: true, imported: 1999, skipped: 1, errors: [{ line: 11, detail: 'code already in use' }] });
  assert.equal(s.inFlight(), 0, 'answered only once every write settled');
  assert.ok(s.maxInFlight() > 100, `pipelined: ${s.maxInFlight()} writes at once`);
  assert.ok(s.maxInFlight() <= 512, `bounded: ${s.maxInFlight()} writes at once`);
  assert.deepEqual(
    s.stored.map((r) => r.url),
    lines.filter((_, i) => i !== 10).map((l) => (JSON.parse(l) as { url: string }).url),
  );
});

test('a generated code the store refuses late is replaced by another', async () => {
  const s = slowStore(new Set(['AAAAAA']));
  const codes = ['AAAAAA', 'BBBBBB'];
  const result = await importLinks(chunks('url\nhttps://example.com/x\n', 4), 'csv', {
    store: s.store,
    rules: RULES,
    now: () => 1714564800_000,
    randomCode: () => codes.shift()!,
  });
  assert.deepEqual(result, { ok: true, imported: 1, skipped: 0, errors: [] });
  assert.deepEqual(
    s.stored.map((r) => [r.code, r.url, r.createdAt, r.visits, r.maxVisits]),
    [['BBBBBB', 'https://example.com/x', 1714564800, 0, null]],
  );
});
