/**
 * kill -9 while stored API keys are added, used and revoked, and links created with them, from
 * many concurrent loops, with compactions running by themselves in between (docs/storage.md, the
 * promise): after each restart every acknowledged `addKey` is there (unless a revoke of it was
 * asked), every acknowledged revoke stays revoked, a key's last use is at least the last
 * acknowledged one, and every acknowledged link has its author.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { createLogger } from '../../../src/log.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import { LogEngine } from '../../../src/store/log/log-engine.ts';
import { LogLinkStore } from '../../../src/store/log/log-link-store.ts';
import { tempDir } from '../../support/helpers.ts';
import { bundled } from '../../support/server-entry.ts';

const T = 1_790_000_000;
const CYCLES = 6;
const LOOPS = 8;

/**
 * The child: opens the store (compacting once its log passes 8 KiB and dead lines outweigh live
 * ones, checked every 20 ms; each compaction said on stdout) and runs `LOOPS` loops of key writes, saying each on stdout only once
 * it resolved (a revoke and a use are said before they are asked too), straight into the pipe so
 * that a kill loses no line already acknowledged. Ids are the cycle's, so no two cycles share one.
 */
const CHILD = `
const { LogEngine, LogLinkStore, createLogger } = await import(process.argv[1]);
const { writeSync } = await import('node:fs');
const [dir, cycle, loops] = process.argv.slice(2);
const say = (line) => void writeSync(1, line + '\\n');
const log = createLogger('info', { write: (chunk) => (chunk.includes('"log compacted"') && say('compacted'), true) });
const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log, compactMinBytes: 8192, checkpointMinBytes: 4096, visitFlushMs: 20 }));
const keys = store.accessKeys;
const mine = [];
let used = 0;
async function loop(n) {
  for (let i = 0; ; i++) {
    const pick = mine[(i * 7 + n) % Math.max(1, mine.length)];
    if (i % 6 === 0 || pick === undefined) {
      const id = 'c' + cycle + 'l' + n + 'i' + i;
      await keys.addKey({ id, name: 'loop ' + n, role: 'creator', domain: null, digest: 'e'.repeat(64), createdAt: ${T}, expiresAt: null, lastUsedAt: null });
      mine.push(id);
      say('added ' + id);
    } else if (i % 13 === 1) {
      say('revoking ' + pick);
      if (await keys.revokeKey(pick)) say('revoked ' + pick);
    } else if (i % 6 === 3) {
      const code = 'c' + cycle + 'l' + n + 'k' + i;
      await store.insert({ code, url: 'https://example.com/' + code, createdAt: ${T}, retentionDays: 0, visits: 0, untracked: 0, maxVisits: null, author: pick }, ${T});
      say('link ' + code + ' ' + pick);
    } else {
      const at = ${T} + ++used;
      await keys.touchKey(pick, at);
      say('used ' + pick + ' ' + at);
    }
  }
}
say('ready');
await Promise.all(Array.from({ length: Number(loops) }, (_, n) => loop(n)));
`;

interface Model {
  added: Set<string>;
  revoking: Set<string>;
  revoked: Set<string>;
  used: Map<string, number>;
  links: Map<string, string>;
  compactions: number;
}

/**
 * Runs the child until it is killed, once it has said `killAfter` lines (an event, not a clock: on a
 * busy machine a child writes fewer lines a second) and, when `afterCompaction`, a compaction too;
 * adds what it acknowledged to `model`. Killed after 30 s whatever it said.
 */
async function cycle(dir: string, n: number, killAfter: number, afterCompaction: boolean, model: Model): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', CHILD, bundled('test/support/log-store-modules.ts', 'mjs'), dir, String(n), String(LOOPS)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // 'close', not 'exit': the lines a killed child wrote are still being read after it exited.
  const closed = new Promise<string | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
  let lines = 0;
  let compacted = !afterCompaction;
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines++;
    const [what, id, more] = line.split(' ') as [string, string, string];
    if (what === 'added') model.added.add(id);
    else if (what === 'revoking') model.revoking.add(id);
    else if (what === 'revoked') model.revoked.add(id);
    else if (what === 'used') model.used.set(id, Math.max(model.used.get(id) ?? 0, Number(more)));
    else if (what === 'link') model.links.set(id, more);
    else if (what === 'compacted') {
      model.compactions++;
      // Counted from the compaction on, so the kill lands anywhere after it, the next one included.
      if (!compacted) [compacted, lines] = [true, 0];
    }
    if (compacted && lines >= killAfter) child.kill('SIGKILL');
  });
  assert.equal(await closed, 'SIGKILL', `cycle ${n}: killed`);
  clearTimeout(timer);
  return lines;
}

test('kill -9 during key writes and compactions: every acknowledged key, use, revoke and author survives', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const model: Model = { added: new Set(), revoking: new Set(), revoked: new Set(), used: new Map(), links: new Map(), compactions: 0 };
  for (let n = 0; n < CYCLES; n++) {
    // The last cycle waits for a compaction if none ran yet, so that one always does.
    const lines = await cycle(dir, n, randomInt(40, 400), n === CYCLES - 1 && model.compactions === 0, model);
    const engine = new LogEngine({ dir, fsync: 'always', log: createLogger('silent'), compactMinBytes: Number.MAX_SAFE_INTEGER });
    try {
      const store = new LogLinkStore(engine);
      const held = new Map((store.accessKeys.keys() as readonly KeyRecord[]).map((k) => [k.id, k]));
      for (const id of model.added) {
        if (model.revoked.has(id)) assert.equal(held.has(id), false, `cycle ${n}: ${id} was revoked`);
        else if (!model.revoking.has(id)) assert.ok(held.has(id), `cycle ${n}: ${id} was added`);
        const key = held.get(id);
        if (key !== undefined && model.used.has(id)) assert.ok(key.lastUsedAt! >= model.used.get(id)!, `cycle ${n}: ${id} was used`);
      }
      for (const [code, author] of model.links) assert.equal(store.get(code, T)?.author, author, `cycle ${n}: ${code}`);
      t.diagnostic(`cycle ${n}: ${lines} lines, ${held.size} keys held, ${model.links.size} links, ${model.compactions} compactions so far`);
    } finally {
      await engine.close();
    }
  }
  assert.ok(model.added.size > 0 && model.revoked.size > 0 && model.used.size > 0 && model.links.size > 0, 'every kind of write was acknowledged');
  assert.ok(model.compactions > 0, 'compactions ran between the writes');
});
